// The real platform's results: every thread's statistics merged after the run.
#include "real/platform_state.h"

namespace locksim::real {

// ---------------------------------------------------------------- results

kernel::RunResults RealPlatform::State::collect(Time duration) {
    kernel::RunResults r;
    r.platform = "real";
    r.duration_ns = duration;
    r.seed = cfg.seed;
    const unsigned host = std::max(1u, std::thread::hardware_concurrency());
    r.config = {
        {"cpus", std::to_string(p.ncpus_)},
        {"host_cpus", std::to_string(host)},
        {"cost_model", "host time"},
        {"atomic_sections",
         "would-be-atomic: preemption and interrupts stay on in user space; the sections are "
         "timed as if they were atomic"},
        {"rcu", "liburcu memb (expedited grace periods are normal ones)"},
        {"pin", cfg.pin ? "true" : "false"},
        {"checks", cfg.checks ? "true" : "false"},
        {"sched_fifo", fifo_note.empty() ? "as requested" : fifo_note},
    };
    std::vector<kernel::OpStats> ops;
    std::vector<uint8_t> used;
    std::vector<Time> compute;
    std::vector<kernel::LockStats> locks(classes.size());
    std::vector<kernel::CpuStats> cpus(static_cast<size_t>(p.ncpus_));
    uint64_t dropped = 0;
    for (ThreadStats &st : stats) {
        if (st.ops.size() > ops.size()) {
            ops.resize(st.ops.size());
            used.resize(st.ops.size(), 0);
        }
        for (size_t i = 0; i < st.ops.size(); ++i) {
            if (!st.op_used[i]) continue;
            used[i] = 1;
            ops[i].merge(st.ops[i]);
        }
        if (st.compute_ns.size() > compute.size()) compute.resize(st.compute_ns.size(), 0);
        for (size_t i = 0; i < st.compute_ns.size(); ++i)
            compute[i] += st.compute_ns[i];
        for (size_t i = 0; i < st.locks.size() && i < locks.size(); ++i)
            locks[i].merge(st.locks[i]);
        for (size_t i = 0; i < st.cpus.size(); ++i)
            cpus[i % cpus.size()].merge(st.cpus[i]);
        r.preempt_off.merge(st.preempt_off);
        r.irqs_off.merge(st.irqs_off);
        for (const auto &[name, h] : st.wakeup)
            r.wakeup_latency[name].merge(h);
        for (const auto &[name, late] : st.wakeup_open)
            r.wakeup_open_at_end[name] = late;
        if (!st.wakeup.empty())
            r.wakeup_causes_absent =
                "host threads: the host kernel decides when a woken probe runs, and the "
                "would-be-atomic sections never hold a host CPU, so nothing here can say what "
                "delayed a wake-up (run cyclictest with ftrace's wakeup_rt tracer on the host, "
                "and read it with `locksim import`)";
        r.rcu.merge(st.rcu);
        r.memory.merge(st.memory);
        dropped += st.samples_dropped;
    }
    r.cpu_held_absent =
        "host threads: the host kernel's non-preemptible stretches are not visible to a "
        "process, and the would-be-atomic sections never hold a host CPU";
    for (size_t i = 0; i < ops.size(); ++i)
        if (used[i]) r.ops[std::string(kernel::label_name(static_cast<uint32_t>(i)))] = ops[i];
    for (size_t i = 0; i < compute.size(); ++i)
        if (compute[i])
            r.compute_ns[std::string(kernel::label_name(static_cast<uint32_t>(i)))] = compute[i];
    for (size_t i = 0; i < classes.size(); ++i) {
        locks[i].kind = std::string(kernel::lock_kind_name(classes[i].second));
        r.locks[classes[i].first] = locks[i];
    }
    for (auto &t : tasks) {
        if (t->external) continue;
        kernel::CpuStats &c = cpus[static_cast<size_t>(t->last_cpu) % cpus.size()];
        c.busy_ns += t->cpu_time;
        c.context_switches += t->switches;
    }
    r.cpus = std::move(cpus);
    r.preempt_off.keep = kept_poff.keep;
    r.preempt_off.longest = kept_poff.longest;
    r.irqs_off.keep = kept_ioff.keep;
    r.irqs_off.longest = kept_ioff.longest;
    // What each thread has not folded in yet (the threads that ran the platform's tasks folded
    // theirs as they ended; the main thread's and liburcu's may hold some).
    r.memory.live_bytes = live_bytes.load();
    r.memory.peak_bytes = peak_bytes.load();
    {
        std::lock_guard g(mu);
        for (auto &t : tasks) {
            r.memory.live_bytes += t->mem_unflushed.load(std::memory_order_relaxed);
            r.memory.peak_bytes =
                std::max(r.memory.peak_bytes, t->mem_peak_seen.load(std::memory_order_relaxed));
        }
    }
    r.memory.peak_bytes = std::max(r.memory.peak_bytes, r.memory.live_bytes);
    r.config["samples_dropped"] = std::to_string(dropped);
    {
        std::lock_guard g(mu);
        r.violations = violations;
    }
    return r;
}

}  // namespace locksim::real
