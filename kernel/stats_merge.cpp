#include "kernel/stats_merge.h"

#include <algorithm>

namespace locksim::kernel {

namespace {

void append(std::vector<Time> &into, const std::vector<Time> &part) {
    into.insert(into.end(), part.begin(), part.end());
}

}  // namespace

void merge(IntervalStats &into, const IntervalStats &part) {
    into.length.merge(part.length);
    into.total += part.total;
    for (const AtomicInterval &iv : part.longest) {
        if (!into.worth_keeping(iv.length)) continue;
        auto pos =
            std::upper_bound(into.longest.begin(), into.longest.end(), iv.length,
                             [](Time len, const AtomicInterval &e) { return len > e.length; });
        into.longest.insert(pos, iv);
        if (into.longest.size() > into.keep) into.longest.pop_back();
    }
    append(into.open_at_end, part.open_at_end);
}

void merge(OpStats &into, const OpStats &part) {
    into.completed += part.completed;
    into.latency.merge(part.latency);
    into += part;
    into.caused_wait_ns += part.caused_wait_ns;
    into.peak_live_bytes = std::max(into.peak_live_bytes, part.peak_live_bytes);
    append(into.open_at_end, part.open_at_end);
}

void merge(LockStats &into, const LockStats &part) {
    for (int m = 0; m < 2; ++m) {
        into.acquisitions[m] += part.acquisitions[m];
        into.contended[m] += part.contended[m];
        into.wait[m].merge(part.wait[m]);
        into.hold[m].merge(part.hold[m]);
        append(into.wait_open_at_end[m], part.wait_open_at_end[m]);
    }
}

void merge(RcuStats &into, const RcuStats &part) {
    into.grace_periods += part.grace_periods;
    into.expedited_grace_periods += part.expedited_grace_periods;
    into.callbacks_invoked += part.callbacks_invoked;
    into.grace_period_ns.merge(part.grace_period_ns);
    into.expedited_grace_period_ns.merge(part.expedited_grace_period_ns);
}

void merge(MemStats &into, const MemStats &part) {
    into.live_bytes += part.live_bytes;
    into.peak_bytes = std::max(into.peak_bytes, part.peak_bytes);
    into.allocs_atomic += part.allocs_atomic;
    into.allocs_sleeping += part.allocs_sleeping;
    into.bytes_atomic += part.bytes_atomic;
    into.bytes_sleeping += part.bytes_sleeping;
    into.frees += part.frees;
}

void merge(CpuStats &into, const CpuStats &part) {
    into.busy_ns += part.busy_ns;
    into.context_switches += part.context_switches;
    into.preempt_off_ns += part.preempt_off_ns;
    into.irqs_off_ns += part.irqs_off_ns;
    into.irq_ns += part.irq_ns;
    into.softirq_ns += part.softirq_ns;
}

}  // namespace locksim::kernel
