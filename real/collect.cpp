// The real platform's results: every thread's statistics merged after the run.
#include "real/state.h"

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
            kernel::OpStats &o = ops[i];
            const kernel::OpStats &s = st.ops[i];
            o.completed += s.completed;
            o.latency.merge(s.latency);
            o += s;
            o.caused_wait_ns += s.caused_wait_ns;
            o.peak_live_bytes = std::max(o.peak_live_bytes, s.peak_live_bytes);
            o.open_at_end.insert(o.open_at_end.end(), s.open_at_end.begin(), s.open_at_end.end());
        }
        if (st.compute_ns.size() > compute.size()) compute.resize(st.compute_ns.size(), 0);
        for (size_t i = 0; i < st.compute_ns.size(); ++i)
            compute[i] += st.compute_ns[i];
        for (size_t i = 0; i < st.locks.size() && i < locks.size(); ++i)
            for (int m = 0; m < 2; ++m) {
                locks[i].acquisitions[m] += st.locks[i].acquisitions[m];
                locks[i].contended[m] += st.locks[i].contended[m];
                locks[i].wait[m].merge(st.locks[i].wait[m]);
                locks[i].hold[m].merge(st.locks[i].hold[m]);
                locks[i].wait_open_at_end[m].insert(locks[i].wait_open_at_end[m].end(),
                                                    st.locks[i].wait_open_at_end[m].begin(),
                                                    st.locks[i].wait_open_at_end[m].end());
            }
        for (size_t i = 0; i < st.cpus.size(); ++i) {
            kernel::CpuStats &c = cpus[i % cpus.size()];
            c.preempt_off_ns += st.cpus[i].preempt_off_ns;
            c.irqs_off_ns += st.cpus[i].irqs_off_ns;
        }
        r.preempt_off.length.merge(st.preempt_off);
        r.preempt_off.total += st.preempt_off_total;
        r.irqs_off.length.merge(st.irqs_off);
        r.irqs_off.total += st.irqs_off_total;
        r.preempt_off.open_at_end.insert(r.preempt_off.open_at_end.end(),
                                         st.preempt_off_open.begin(), st.preempt_off_open.end());
        r.irqs_off.open_at_end.insert(r.irqs_off.open_at_end.end(), st.irqs_off_open.begin(),
                                      st.irqs_off_open.end());
        for (const auto &[name, h] : st.wakeup)
            r.wakeup_latency[name].merge(h);
        for (const auto &[name, late] : st.wakeup_open)
            r.wakeup_open_at_end[name] = late;
        r.rcu.grace_periods += st.rcu.grace_periods;
        r.rcu.expedited_grace_periods += st.rcu.expedited_grace_periods;
        r.rcu.callbacks_invoked += st.rcu.callbacks_invoked;
        r.rcu.grace_period_ns.merge(st.rcu.grace_period_ns);
        r.rcu.expedited_grace_period_ns.merge(st.rcu.expedited_grace_period_ns);
        r.memory.allocs_atomic += st.allocs_atomic;
        r.memory.allocs_sleeping += st.allocs_sleeping;
        r.memory.bytes_atomic += st.bytes_atomic;
        r.memory.bytes_sleeping += st.bytes_sleeping;
        r.memory.frees += st.frees;
        dropped += st.samples_dropped;
    }
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
    r.memory.live_bytes = live_bytes.load();
    r.memory.peak_bytes = peak_bytes.load();
    r.config["samples_dropped"] = std::to_string(dropped);
    {
        std::lock_guard g(mu);
        r.violations = violations;
    }
    return r;
}

}  // namespace locksim::real
