// The real platform's accounting: would-be-atomic sections (preemption and interrupts "off"),
// charged work, operations, and the collector's side of the sample queues.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>

#include "real/platform_state.h"

namespace locksim::real {

// ---------------------------------------------------------------- would-be-atomic sections

void RealPlatform::State::open_section(TaskState &t, Section &s, const Site &site, Time at) {
    s.start = at;
    s.cpu = cpu_now();
    s.site = site;
    s.label = t.label();
    urcu_memb_read_lock();  // an atomic section is an RCU reader
}
void RealPlatform::State::close_section(TaskState &t, Section &s, bool irq, const Site &end,
                                        Time at) {
    urcu_memb_read_unlock();
    tsan_rcu_reader_exit();
    Time len = at - s.start;
    ThreadStats &st = *t.stats;
    const std::optional<Time> open = open_part(s.start);
    if (!recording() && !open) return;
    Site closed_by = end;
    if (open) {
        len = *open;
        (irq ? st.irqs_off : st.preempt_off).open_at_end.push_back(len);
        closed_by = Site{"(open at the end)", {}};
    }
    kernel::IntervalStats &iv = irq ? st.irqs_off : st.preempt_off;
    iv.length.record(len);
    iv.total += len;
    kernel::CpuStats &c = st.cpu(s.cpu);
    (irq ? c.irqs_off_ns : c.preempt_off_ns) += len;
    if (!s.label.empty()) {
        kernel::OpStats &o = st.op(s.label);
        (irq ? o.irqs_off_ns : o.preempt_off_ns) += len;
    }
    if (len > keep_threshold.load(std::memory_order_relaxed) &&
        !t.samples.push(Sample{irq, s.cpu, t.id, s.label.id(), s.start, len, s.site, closed_by}))
        ++st.samples_dropped;
}
void RealPlatform::State::preempt_inc(TaskState &t, const Site &site, Time at) {
    if (t.preempt_count++ == 0) open_section(t, t.poff, site, at);
}
void RealPlatform::State::preempt_dec(TaskState &t, const Site &site, Time at) {
    if (t.preempt_count == 0) {
        violation(&t, "preempt_unbalanced",
                  fmt::format("{} in {} with preemption on", site.str(), t.name));
        return;
    }
    if (--t.preempt_count == 0) close_section(t, t.poff, false, site, at);
}

void RealPlatform::State::drain() {
    std::vector<TaskState *> all;
    {
        std::lock_guard g(mu);
        for (auto &t : tasks)
            all.push_back(t.get());
    }
    for (TaskState *t : all) {
        Sample s;
        while (t->samples.pop(s)) {
            ++samples_seen;
            kernel::IntervalStats &k = s.irq ? kept_ioff : kept_poff;
            if (!k.worth_keeping(s.length)) continue;
            k.add(kernel::AtomicInterval{s.cpu, s.start, s.length, t->name,
                                         std::string(kernel::label_name(s.label)),
                                         s.start_site.str(), s.end_site.str()});
        }
    }
    auto full = [](const kernel::IntervalStats &k) {
        return k.longest.size() >= k.keep ? k.longest.back().length : Time{0};
    };
    keep_threshold.store(std::min(full(kept_poff), full(kept_ioff)), std::memory_order_relaxed);
}

// ---------------------------------------------------------------- cost of work

void RealPlatform::charge(Label label, const WorkCounts &, Time host_ns) {
    TaskState &t = s_->me();
    if (!s_->recording()) return;
    ThreadStats &st = *t.stats;
    if (label.id() >= st.compute_ns.size()) st.compute_ns.resize(label.id() + 1, 0);
    st.compute_ns[label.id()] += host_ns;
    if (!t.ops.empty()) st.op(t.label()).compute_ns += host_ns;
}

void RealPlatform::ndelay(Time ns, Label label) {
    const Time start = s_->now();
    while (s_->now() - start < ns)
        cpu_relax();
    if (!label.empty()) charge(label, {}, s_->now() - start);
}

// ---------------------------------------------------------------- preemption, interrupts

void RealPlatform::preempt_disable(Site site) {
    TaskState &t = s_->me();
    s_->preempt_inc(t, site, s_->now());
}

void RealPlatform::preempt_enable(Site site) {
    TaskState &t = s_->me();
    s_->preempt_dec(t, site, s_->now());
}

void RealPlatform::local_irq_disable(Site site) {
    TaskState &t = s_->me();
    if (t.irqs_off) return;
    t.irqs_off = true;
    s_->open_section(t, t.ioff, site, s_->now());
}

void RealPlatform::local_irq_enable(Site site) {
    TaskState &t = s_->me();
    if (!t.irqs_off) return;
    t.irqs_off = false;
    s_->close_section(t, t.ioff, true, site, s_->now());
}

bool RealPlatform::irqs_disabled() {
    return s_->me().irqs_off;
}

// ---------------------------------------------------------------- operations

HostClock HostClock::now() {
    HostClock c;
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    c.cpu_ns = static_cast<Time>(ts.tv_sec) * kernel::kSec + ts.tv_nsec;
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    c.voluntary_switches = static_cast<uint64_t>(ru.ru_nvcsw);
    c.involuntary_switches = static_cast<uint64_t>(ru.ru_nivcsw);
    c.read = true;
    return c;
}

void RealPlatform::op_begin(Label label) {
    TaskState &t = s_->me();
    const std::vector<Label> &timed = cfg_.host_clock_ops;
    // The host's clock is read last at the start and first at the end, so that neither read
    // is inside the other's interval more than it must be.
    t.ops.push_back(OpFrame{label, s_->now(),
                            s_->live_bytes.load(std::memory_order_relaxed) +
                                t.mem_unflushed.load(std::memory_order_relaxed)});
    if (std::find(timed.begin(), timed.end(), label) != timed.end())
        t.ops.back().host = HostClock::now();
}

void RealPlatform::op_end(Label label) {
    TaskState &t = s_->me();
    const HostClock host_end =
        !t.ops.empty() && t.ops.back().host.read ? HostClock::now() : HostClock{};
    const Time end = s_->now();
    if (t.ops.empty() || t.ops.back().label != label) {
        s_->violation(&t, "op_scope_mismatch",
                      fmt::format("operation '{}' ended in {} while another was innermost",
                                  label.name(), t.name));
        return;
    }
    OpFrame f = t.ops.back();
    t.ops.pop_back();
    if (s_->bytes_to_fold(t)) s_->fold_bytes(t);
    if (!s_->recording()) {
        if (auto open = s_->open_part(f.start)) {
            kernel::OpStats &s = t.stats->op(label);
            s.latency.record(*open);
            s.open_at_end.push_back(*open);
        }
        return;
    }
    kernel::OpStats &s = t.stats->op(label);
    ++s.completed;
    s.latency.record(end - f.start);
    s.peak_live_bytes = std::max(s.peak_live_bytes, f.peak_live);
    if (host_end.read) {
        s.host_cpu_ns += host_end.cpu_ns - f.host.cpu_ns;
        s.host_preemptions += host_end.involuntary_switches - f.host.involuntary_switches;
    }
}

}  // namespace locksim::real
