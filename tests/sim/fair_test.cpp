// SCHED_OTHER as CFS (v6.5 fair.c), SCHED_RR, affinity and periodic load balancing, from short
// simulated runs on a profile where only explicit work costs time.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

namespace {

// A CPU-bound task: work in 50 us pieces until the run stops; returns the work done.
std::function<void()> hog(Time *done) {
    return [done] {
        while (!kthread_should_stop()) {
            ndelay(50 * kUsec);
            *done += 50 * kUsec;
        }
    };
}

TaskParams other(std::string name, int nice, int cpu) {
    TaskParams p{std::move(name), Sched::Other, 0, cpu, false};
    p.nice = nice;
    return p;
}

// Two CPUs at HZ 1000: `setup` makes its tasks first, then a SCHED_OTHER worker (any CPU) runs
// for `work`, and a SCHED_FIFO task on CPU 0 wakes at `rt_at` and runs for `rt_work`. Returns
// when the worker finished and on which CPU.
struct WorkerEnd {
    Time done = -1;
    int cpu = -1;
};
WorkerEnd preempted_worker(const std::function<void(SimPlatform &)> &setup, Time work, Time rt_at,
                           Time rt_work) {
    auto cfg = zero_config(2, 100 * kMsec);
    cfg.hz = 1000;
    SimPlatform sim(cfg);
    WorkerEnd end;
    setup(sim);
    sim.create_task(other("worker", 0, -1), [&] {
        ndelay(work);
        end.done = now();
        end.cpu = smp_processor_id();
    });
    sim.create_task({"rt", Sched::Fifo, 50, 0, false}, [&] {
        sleep_until(rt_at);
        ndelay(rt_work);
    });
    sim.run();
    return end;
}

}  // namespace

// The kernel's weights: nice 0 is 1024, nice 5 is 335, so two CPU-bound tasks sharing a CPU get
// 1024:335 of it (75.3% and 24.7%).
TEST(Fair, NiceLevelsShareACpuInTheKernelsWeightRatio) {
    SimPlatform sim(zero_config(2, 2 * kSec));
    Time nice0 = 0, nice5 = 0;
    sim.create_task(other("nice0", 0, 1), hog(&nice0));
    sim.create_task(other("nice5", 5, 1), hog(&nice5));
    auto r = sim.run();
    ASSERT_GT(nice5, 0);
    const double ratio = static_cast<double>(nice0) / static_cast<double>(nice5);
    EXPECT_NEAR(ratio, 1024.0 / 335.0, 0.05 * 1024.0 / 335.0)
        << "nice 0 did " << nice0 << " ns, nice 5 " << nice5 << " ns";
    EXPECT_EQ(r.cpus[0].busy_ns, 0);  // pinned: CPU 0 stays idle
    EXPECT_TRUE(r.violations.empty());
}

TEST(Fair, EqualNiceTasksShareACpuEqually) {
    SimPlatform sim(zero_config(1, 1 * kSec));
    Time a = 0, b = 0;
    sim.create_task(other("a", 0, 0), hog(&a));
    sim.create_task(other("b", 0, 0), hog(&b));
    sim.run();
    // Turns end at ticks (4 ms at HZ 250), so the two differ by at most one turn.
    EXPECT_LE(std::abs(a - b), 8 * kMsec) << a << " vs " << b;
    EXPECT_GE(a + b, 1 * kSec - 50 * kUsec);
}

// A task that slept has the smaller virtual runtime: on waking it preempts the CPU hog at
// once, since it trails by more than the wake-up granularity.
TEST(Fair, WakingTaskWithSmallerVruntimePreemptsAtOnce) {
    SimPlatform sim(zero_config(1, 100 * kMsec));
    Time hog_done = 0, woke = -1, ran = -1;
    sim.create_task(other("hog", 0, 0), hog(&hog_done));
    sim.create_task(other("sleeper", 0, 0), [&] {
        sleep_until(30 * kMsec);
        woke = now();
        ndelay(100 * kUsec);
        ran = now();
    });
    sim.run();
    EXPECT_EQ(woke, 30 * kMsec);
    EXPECT_EQ(ran, 30 * kMsec + 100 * kUsec);
}

// Two CPU-bound tasks at one level: a hand-computed CFS timeline (one CPU: latency 6 ms, so
// each task's slice is 3 ms, checked at 1 ms ticks). "b", placed after "a" with the smaller
// virtual runtime (START_DEBIT gives each new task one virtual slice: 6 ms alone, 3 ms with
// "a" there), preempts it at once; then each turn lasts until a tick finds it over its slice
// (4 ms) and the other task behind: b 0-4, a 4-8, b 8-12, a 12-16, b 16-18, a 18-20.
TEST(Fair, OtherTasksTakeTurnsOfTheirSlice) {
    auto cfg = zero_config(1, 100 * kMsec);
    cfg.hz = 1000;
    SimPlatform sim(cfg);
    Time a_done = -1, b_done = -1;
    sim.create_task(other("a", 0, 0), [&] {
        ndelay(10 * kMsec);
        a_done = now();
    });
    sim.create_task(other("b", 0, 0), [&] {
        ndelay(10 * kMsec);
        b_done = now();
    });
    sim.run();
    EXPECT_EQ(b_done, 18 * kMsec);
    EXPECT_EQ(a_done, 20 * kMsec);
}

// SCHED_RR: tasks of one priority take turns every 100 ms (RR_TIMESLICE); SCHED_FIFO ones run
// to completion.
TEST(Fair, RoundRobinTasksTakeTurnsEvery100ms) {
    for (Sched policy : {Sched::Rr, Sched::Fifo}) {
        auto cfg = zero_config(1, 2 * kSec);
        cfg.hz = 1000;
        SimPlatform sim(cfg);
        Time a_done = -1, b_done = -1;
        sim.create_task({"a", policy, 10, 0, false}, [&] {
            ndelay(250 * kMsec);
            a_done = now();
        });
        sim.create_task({"b", policy, 10, 0, false}, [&] {
            ndelay(250 * kMsec);
            b_done = now();
        });
        sim.run();
        if (policy == Sched::Rr) {
            // a 0-100, b 100-200, a 200-300, b 300-400, a 400-450, b 450-500
            EXPECT_EQ(a_done, 450 * kMsec);
            EXPECT_EQ(b_done, 500 * kMsec);
        } else {
            EXPECT_EQ(a_done, 250 * kMsec);
            EXPECT_EQ(b_done, 500 * kMsec);
        }
    }
}

TEST(Fair, TasksRunOnlyOnTheirAffinity) {
    SimPlatform sim(zero_config(4, 50 * kMsec));
    std::set<int> seen;
    for (int i = 0; i < 5; ++i) {
        TaskParams p = other("t" + std::to_string(i), 0, -1);
        p.cpus = {1, 2};
        sim.create_task(std::move(p), [&] {
            for (int k = 0; k < 200 && !kthread_should_stop(); ++k) {
                seen.insert(smp_processor_id());
                ndelay(100 * kUsec);
                if (k % 7 == 0) sleep_until(now() + 300 * kUsec);
            }
        });
    }
    auto r = sim.run();
    EXPECT_EQ(seen, (std::set<int>{1, 2}));
    EXPECT_EQ(r.cpus[0].busy_ns, 0);
    EXPECT_EQ(r.cpus[3].busy_ns, 0);
    EXPECT_GT(r.cpus[1].busy_ns, 0);
    EXPECT_GT(r.cpus[2].busy_ns, 0);
}

// A SCHED_OTHER task preempted by a real-time one waits in its CPU's queue while the other CPU
// idles; the idle CPU's periodic balancing (every sd_weight = 2 ms here, the first one interval
// after boot) pulls it over.
TEST(Fair, PeriodicBalancingMovesAQueuedTaskToAnIdleCpu) {
    WorkerEnd end = preempted_worker([](SimPlatform &) {}, 20 * kMsec, 1500 * kUsec, 30 * kMsec);
    EXPECT_EQ(end.cpu, 1);
    // Preempted at 1.5 ms, pulled by CPU 1 at its first balancing tick (2 ms).
    EXPECT_EQ(end.done, 20500 * kUsec);
}

// The balancing interval is that of the CPU's state at each tick (rebalance_domains'
// get_sd_balance_interval(sd, busy)): a CPU that was busy and has gone idle balances at the idle
// interval, not 16 times that (31 ticks here). CPU 1 runs a pinned task until 5 ms and then
// idles: it balances at 5 ms, finds nothing to move and doubles its interval to 4 ms (the
// domain's maximum, 2 x sd_weight), balances again at 9 ms; at 10 ms a real-time task preempts
// the worker on CPU 0, and CPU 1 pulls the worker at 13 ms.
TEST(Fair, AnIdleCpuBalancesAtTheIdleIntervalAfterABusyOne) {
    WorkerEnd end = preempted_worker(
        [](SimPlatform &sim) { sim.create_task(other("busy1", 0, 1), [] { ndelay(5 * kMsec); }); },
        40 * kMsec, 10 * kMsec, 50 * kMsec);
    EXPECT_EQ(end.cpu, 1);
    EXPECT_EQ(end.done, 43 * kMsec);  // 10 ms before the preemption, 30 ms after the pull at 13 ms
}

// A nice -5 SCHED_OTHER task preempted by two SCHED_RR tasks pinned to its CPU is not left
// starving beside an idle CPU: v6.5's periodic balancing on the idle CPU (load_balance from
// rebalance_domains, can_migrate_task: the task is queued, not running, and may run there)
// pulls it. Only an affinity that forbids the idle CPU keeps it waiting for the RR tasks.
TEST(Fair, AQueuedTaskBesidePinnedRoundRobinTasksMovesToAnIdleCpu) {
    auto starved = [](std::vector<int> affinity) {
        auto cfg = zero_config(2, 100 * kMsec);
        cfg.hz = 1000;
        SimPlatform sim(cfg);
        WorkerEnd end;
        TaskParams w = other("worker", -5, -1);
        w.cpus = std::move(affinity);
        sim.create_task(std::move(w), [&] {
            ndelay(20 * kMsec);
            end.done = now();
            end.cpu = smp_processor_id();
        });
        for (int i = 0; i < 2; ++i)
            sim.create_task({"rr" + std::to_string(i), Sched::Rr, 50, 0, false}, [] {
                sleep_until(1500 * kUsec);
                ndelay(30 * kMsec);
            });
        sim.run();
        return end;
    };
    const WorkerEnd free = starved({});
    EXPECT_EQ(free.cpu, 1);
    EXPECT_EQ(free.done, 20500 * kUsec);  // preempted at 1.5 ms, pulled at 2 ms
    const WorkerEnd pinned = starved({0});
    EXPECT_EQ(pinned.cpu, 0);
    EXPECT_EQ(pinned.done, 80 * kMsec);  // after both RR tasks' 30 ms (1.5 + 60 + 18.5)
}
