// The cost of a boolean toggle, decomposed, from a run's results: what the commit's operation
// (kernel::op::kSetBools: setsebool's commit, syscall start to return) cost its writer and
// everyone else, and the AVC refill (kernel::op::kAvcRefill: the misses that re-populate what
// its flush removed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "record/run_results.h"

namespace locksim::analysis {

struct ToggleCost {
    uint64_t toggles = 0;
    // Per toggle (means over the run):
    Time latency_ns = 0;           // writer latency, syscall start to return
    Time max_latency_ns = 0;       // the worst toggle
    Time compute_ns = 0;           // the writer's charged core work (copies included)
    Time caused_wait_ns = 0;       // time other tasks waited (spinning or asleep) for locks it held
    Time writer_lock_wait_ns = 0;  // time the writer itself waited for locks (readers to leave)
    Time preempt_off_ns = 0;       // preempt-off time of its own sections
    Time irqs_off_ns = 0;          // IRQs-off time of its own sections
    Time gp_wait_ns = 0;           // time it waited for RCU grace periods
    double grace_periods = 0;      // grace periods it waited for
    int64_t bytes_allocated = 0;   // bytes it allocated
    int64_t peak_live_bytes = 0;   // highest live bytes seen during any toggle
    // The AVC refill after the flushes, per toggle:
    uint64_t refill_misses = 0;
    Time refill_ns = 0;  // summed latency of those misses
};

// The decomposition from a run that toggled; zeros when it did not.
ToggleCost toggle_cost(const kernel::RunResults &r);

// A fixed-width table, one row per (name, cost), times in microseconds and bytes in KiB.
std::string toggle_cost_table(const std::vector<std::pair<std::string, ToggleCost>> &rows);

}  // namespace locksim::analysis
