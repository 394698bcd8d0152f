// Configuration of the simulated platform (sim/sim_platform.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel/kernel.h"
#include "sim/profile.h"

namespace locksim::sim {

enum class CostModel : uint8_t { Counted, Measured };
// Full: CONFIG_PREEMPT. None: CONFIG_PREEMPT_NONE, kernel code is left only at an operation's
// end (the return to user space), cond_resched or a sleep. Voluntary: CONFIG_PREEMPT_VOLUNTARY
// (v6.6, include/linux/kernel.h), None plus a preemption point at every might_sleep(): the
// explicit ones, a sleeping lock's acquisition and a sleeping allocation.
enum class PreemptModel : uint8_t { Full, None, Voluntary };

struct SimConfig {
    int cpus = 4;
    Time duration = kernel::kSec;
    // Statistics gathered before this time are dropped (self-check violations are kept): the
    // caches and queues settle first. Part of `duration`, not added to it.
    Time warmup = 0;
    uint64_t seed = 1;
    CpuProfile profile;  // default: zero work costs, default primitive costs
    CostModel cost_model = CostModel::Counted;
    PreemptModel preempt = PreemptModel::Full;
    bool preempt_rcu = true;
    int hz = 250;
    // RCU as user space has it (liburcu, for comparing with the real-thread platform): when
    // >= 0, a normal grace period waits only for readers that predate it, not for every CPU to
    // pass a quiescent state, and ends this long after the last of them left instead of at
    // the next jiffy. -1: the kernel's RCU.
    Time userspace_rcu_gp = -1;
    Time sched_slice = 3 * kernel::kMsec;
    // After the duration no task starts new work; the work in flight runs on and is measured in
    // full for up to this long. What is still open then is censored ("at least" its elapsed
    // part); a task still running outside any operation then is reported as task_stuck.
    Time drain_limit = kernel::kSec;
    size_t keep_longest = 20;
    size_t stack_size = 256 * 1024;
    bool trace = false;  // keep an event trace (golden tests, debugging)
};

}  // namespace locksim::sim
