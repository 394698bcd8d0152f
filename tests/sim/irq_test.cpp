// Interrupt load as work: handlers and softirq work take their time from the tasks, wait while
// interrupts are off, and hold off preemption until they end. Short simulated runs on a profile
// where only explicit work costs time.
#include <gtest/gtest.h>

#include "sim/sim_platform.h"
#include "sim_test_util.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::IrqSource;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

namespace {

// Work done by a CPU-bound task on CPU 0 in one simulated second, under `irqs`.
struct HogRun {
    Time work = 0;
    RunResults results;
};

HogRun hog_under(std::vector<IrqSource> irqs) {
    auto cfg = zero_config(1, 1 * kSec);
    cfg.irqs = std::move(irqs);
    SimPlatform sim(cfg);
    HogRun run;
    sim.create_task({"hog", Sched::Other, 0, 0, false}, [&] {
        while (!kthread_should_stop()) {
            ndelay(25 * kUsec);
            run.work += 25 * kUsec;
        }
    });
    run.results = sim.run();
    return run;
}

}  // namespace

// Handlers of 10 us at 10 kHz take 10% of the CPU: the task does 90% of a second's work. The
// last piece started before the end finishes in the drain, so the work is 900 ms to within one
// piece.
TEST(Irq, LoadLowersThroughputByItsCpuShare) {
    const HogRun idle = hog_under({});
    const HogRun loaded =
        hog_under({{.kind = "timer", .cpus = {}, .period = 100 * kUsec, .handler = 10 * kUsec}});
    EXPECT_EQ(idle.work, 1 * kSec);
    EXPECT_GE(loaded.work, 900 * kMsec);
    EXPECT_LE(loaded.work, 900 * kMsec + 25 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].irq_ns, 10000 * 10 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].softirq_ns, 0);
}

// The softirq work after the handler takes its time too: 4 us + 6 us at 20 kHz is 20%.
TEST(Irq, SoftirqWorkTakesItsShareToo) {
    const HogRun loaded = hog_under({{.kind = "network",
                                      .cpus = {},
                                      .period = 50 * kUsec,
                                      .handler = 4 * kUsec,
                                      .softirq = 6 * kUsec}});
    EXPECT_GE(loaded.work, 800 * kMsec);
    EXPECT_LE(loaded.work, 800 * kMsec + 25 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].irq_ns, 20000 * 4 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].softirq_ns, 20000 * 6 * kUsec);
}

// Only the CPUs a source names take its interrupts.
TEST(Irq, OnlyTheNamedCpusTakeTheLoad) {
    auto cfg = zero_config(2, 100 * kMsec);
    cfg.irqs = {{.kind = "block", .cpus = {1}, .period = 1 * kMsec, .handler = 50 * kUsec}};
    SimPlatform sim(cfg);
    auto r = sim.run();
    EXPECT_EQ(r.cpus[0].irq_ns, 0);
    EXPECT_EQ(r.cpus[1].irq_ns, 99 * 50 * kUsec);  // at 1, 2, ... 99 ms: no task runs past 100
}

// A real-time task whose timer fires while the CPU is in a handler and its softirq work starts
// when they end: the interrupt return is the preemption point.
TEST(Irq, WakeupDuringInterruptWorkWaitsForItsEnd) {
    auto cfg = zero_config(1, 20 * kMsec);
    cfg.irqs = {{.kind = "network",
                 .cpus = {},
                 .period = 1 * kMsec,
                 .handler = 20 * kUsec,
                 .softirq = 30 * kUsec}};
    SimPlatform sim(cfg);
    Time hog_work = 0, woke = -1;
    sim.create_task({"hog", Sched::Other, 0, 0, false}, [&] {
        while (!kthread_should_stop()) {
            ndelay(10 * kUsec);
            hog_work += 10 * kUsec;
        }
    });
    sim.create_task({"rt", Sched::Fifo, 80, 0, true}, [&] {
        sleep_until(5 * kMsec + 10 * kUsec);  // 10 us into the interrupt at 5 ms
        woke = now();
    });
    auto r = sim.run();
    EXPECT_EQ(woke, 5 * kMsec + 50 * kUsec);
    EXPECT_EQ(r.wakeup_latency.at("rt").max(), 40 * kUsec);
}

// An interrupt arriving while interrupts are off on its CPU is handled at local_irq_enable.
TEST(Irq, HandlerWaitsWhileInterruptsAreOff) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.irqs = {{.kind = "timer", .cpus = {}, .period = 1 * kMsec, .handler = 100 * kUsec}};
    SimPlatform sim(cfg);
    Time after_enable = -1, next_done = -1;
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        sleep_until(1500 * kUsec);  // after the first handler (1.0-1.1 ms)
        local_irq_disable();
        ndelay(1 * kMsec);  // 1.5-2.5 ms: the 2 ms interrupt waits
        local_irq_enable();
        after_enable = now();
        ndelay(100 * kUsec);  // runs after the handler: 2.6-2.7 ms
        next_done = now();
    });
    auto r = sim.run();
    EXPECT_EQ(after_enable, 2500 * kUsec);
    EXPECT_EQ(next_done, 2700 * kUsec);
    EXPECT_EQ(r.irqs_off.longest.front().length, 1 * kMsec);
}

// Interrupt work that would leave its CPU no time is refused (as the scenario file's
// [[machine.irq]] is, with its place).
TEST(Irq, LoadThatLeavesNoTimeIsAUserError) {
    auto cfg = zero_config(2, 10 * kMsec);
    cfg.irqs = {{.kind = "network",
                 .cpus = {1},
                 .period = 100 * kUsec,
                 .handler = 60 * kUsec,
                 .softirq = 40 * kUsec}};
    EXPECT_THROW(SimPlatform{cfg}, UserError);
    cfg.irqs[0].softirq = 39 * kUsec;
    EXPECT_NO_THROW(SimPlatform{cfg});
}
