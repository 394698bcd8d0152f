// Helpers shared by the kernel primitives' tests: each runs its primitive on the simulator with
// a profile where only explicit work costs time (tests/sim/sim_test_util.h), so the timelines are
// computed by hand.
#pragma once

#include <functional>

#include "kernel/platform.h"
#include "sim/sim_platform.h"
#include "tests/sim/sim_test_util.h"

namespace locksim::kernel::testing {

// A configuration of `cpus` CPUs and 10 ms, with `preempt` as the preemption model.
inline sim::SimConfig config(int cpus, sim::PreemptModel preempt = sim::PreemptModel::Full) {
    sim::SimConfig c = sim::testing::zero_config(cpus, 10 * kMsec);
    c.preempt = preempt;
    return c;
}

// The results of one task running `body` on CPU 0 of a one-CPU machine.
inline RunResults run_alone(const std::function<void()> &body,
                            sim::PreemptModel preempt = sim::PreemptModel::Full) {
    sim::SimPlatform sim(config(1, preempt));
    sim.create_task({"task", Sched::Other, 0, 0, false}, body);
    return sim.run();
}

}  // namespace locksim::kernel::testing
