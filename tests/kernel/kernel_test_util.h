// Helpers shared by the kernel primitives' tests: each runs its primitive on the simulator with
// a profile where only explicit work costs time (tests/sim/sim_test_util.h), so the timelines are
// computed by hand.
#pragma once

#include <functional>
#include <utility>

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

// A trylock against a held lock, on two CPUs: a task on CPU 0 holds a `Lock` named "l" for
// 100 us (`take`, then `drop`); 10 us in, a task on CPU 1 calls `attempt`, which drops the lock
// again if it got it. What `attempt` returned, and the run's results.
template <class Lock>
std::pair<bool, RunResults> try_while_held(const std::function<void(Lock &)> &take,
                                           const std::function<void(Lock &)> &drop,
                                           const std::function<bool(Lock &)> &attempt) {
    sim::SimPlatform sim(config(2));
    Lock lock("l", sim);
    bool got = true;
    sim.create_task({"holder", Sched::Other, 0, 0, false}, [&] {
        take(lock);
        ndelay(100 * kUsec);
        drop(lock);
    });
    sim.create_task({"trier", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        got = attempt(lock);
    });
    RunResults r = sim.run();
    return {got, std::move(r)};
}

}  // namespace locksim::kernel::testing
