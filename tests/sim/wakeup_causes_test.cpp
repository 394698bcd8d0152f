// What delayed each probe wake-up: timelines computed by hand on a profile where only explicit
// work costs time, each with one known holder of the probe's CPU.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kernel/preempt.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::PreemptModel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

namespace {

constexpr Time kLong = 400 * kUsec, kGap = 600 * kUsec, kPeriod = kLong + kGap;

// A probe on CPU 0 due 1 ns after each section of `holder` begins (sections at 0, kPeriod, ...),
// from the second on (at the first, both start at once and the probe is not yet asleep).
void aligned_probe(SimPlatform &sim, int prio = 99) {
    sim.create_task({"probe", Sched::Fifo, prio, 0, true}, [] {
        for (Time t = kPeriod + 1; !kthread_should_stop(); t += kPeriod)
            sleep_until(t);
    });
}

// Runs `step` over and over as task "holder" (SCHED_OTHER on CPU 0) beside the aligned probe.
RunResults beside_probe(const sim::SimConfig &cfg, const std::function<void()> &step) {
    SimPlatform sim(cfg);
    sim.create_task({"holder", Sched::Other, 0, 0, false}, [&] {
        while (!kthread_should_stop())
            step();
    });
    aligned_probe(sim);
    return sim.run();
}

std::string here(int line) {
    return "@ wakeup_causes_test.cpp:" + std::to_string(line);
}

}  // namespace

TEST(WakeupCause, PreemptOffSectionNamedWithItsLabelAndSite) {
    int line = 0;
    const RunResults r = beside_probe(zero_config(1, 30 * kMsec), [&] {
        {
            OpScope op("long_section_op");
            line = __LINE__ + 1;
            preempt_disable();
            ndelay(kLong);
            preempt_enable();
        }
        ndelay(kGap);
    });
    ASSERT_FALSE(r.wakeup_worst.empty());
    const WakeupRecord &w = r.wakeup_worst.front();
    EXPECT_EQ(w.probe, "probe");
    EXPECT_EQ(w.late, kLong - 1);
    EXPECT_EQ(w.late, r.wakeup_latency.at("probe").max());
    ASSERT_EQ(w.delays.size(), 1u);
    const WakeupDelay &d = w.delays.front();
    EXPECT_EQ(d.kind, "preempt_off");
    EXPECT_EQ(d.task, "holder");
    EXPECT_EQ(d.label, "long_section_op");
    EXPECT_EQ(d.site, "preempt_disable " + here(line));
    EXPECT_EQ(d.start, w.due - 1);
    EXPECT_EQ(d.length, kLong);
    EXPECT_EQ(d.delayed_ns, kLong - 1);
    EXPECT_EQ(w.cause(), &d);
    // Every wake-up is as late: the list keeps the configured number, the earliest first.
    EXPECT_EQ(r.wakeup_worst.size(), sim::SimConfig{}.keep_longest);
    EXPECT_EQ(r.wakeup_worst.front().due, kPeriod + 1);
}

TEST(WakeupCause, IrqsOffSectionHoldsTheTimer) {
    int line = 0;
    const RunResults r = beside_probe(zero_config(1, 10 * kMsec), [&] {
        {
            OpScope op("irq_op");
            line = __LINE__ + 1;
            local_irq_disable();
            ndelay(kLong);
            local_irq_enable();
        }
        ndelay(kGap);
    });
    ASSERT_FALSE(r.wakeup_worst.empty());
    const WakeupRecord &w = r.wakeup_worst.front();
    EXPECT_EQ(w.late, kLong - 1);
    ASSERT_EQ(w.delays.size(), 1u);
    EXPECT_EQ(w.delays[0].kind, "irqs_off");
    EXPECT_EQ(w.delays[0].label, "irq_op");
    EXPECT_EQ(w.delays[0].site, "local_irq_disable " + here(line));
    EXPECT_EQ(w.delays[0].delayed_ns, kLong - 1);
}

TEST(WakeupCause, HigherPriorityTaskNamed) {
    SimPlatform sim(zero_config(1, 10 * kMsec));
    sim.create_task({"rt-hog", Sched::Fifo, 50, 0, false}, [] {
        while (!kthread_should_stop()) {
            {
                OpScope op("hog_op");
                ndelay(kLong);
            }
            sleep_until(now() + kGap);
        }
    });
    aligned_probe(sim, 10);
    const RunResults r = sim.run();
    ASSERT_FALSE(r.wakeup_worst.empty());
    const WakeupRecord &w = r.wakeup_worst.front();
    EXPECT_EQ(w.late, kLong - 1);
    ASSERT_EQ(w.delays.size(), 1u);
    EXPECT_EQ(w.delays[0].kind, "task");
    EXPECT_EQ(w.delays[0].task, "rt-hog");
    EXPECT_EQ(w.delays[0].label, "hog_op");
    EXPECT_EQ(w.delays[0].site, "");
}

// A wake-up due before the probe went to sleep for it (here: the probe could not run before a
// higher-priority task slept) is overdue, not on time.
TEST(WakeupCause, OverdueWakeupIsNotOnTime) {
    SimPlatform sim(zero_config(1, 5 * kMsec));
    sim.create_task({"rt-hog", Sched::Fifo, 50, 0, false}, [] { ndelay(kLong); });
    sim.create_task({"probe", Sched::Fifo, 10, 0, true}, [] { sleep_until(1); });
    const RunResults r = sim.run();
    ASSERT_EQ(r.wakeup_worst.size(), 1u);
    const WakeupRecord &w = r.wakeup_worst.front();
    EXPECT_EQ(w.late, kLong - 1);
    ASSERT_NE(w.cause(), nullptr);
    EXPECT_EQ(w.cause()->kind, "overdue");
    EXPECT_EQ(w.cause()->delayed_ns, kLong - 1);
}

TEST(WakeupCause, NonPreemptibleKernelCodeUnderPreemptNone) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.preempt = PreemptModel::None;
    const RunResults r = beside_probe(cfg, [] {
        {
            OpScope op("long_syscall");
            ndelay(kLong);
        }
        ndelay(kGap);
    });
    ASSERT_FALSE(r.wakeup_worst.empty());
    const WakeupRecord &w = r.wakeup_worst.front();
    EXPECT_EQ(w.late, kLong - 1);
    ASSERT_EQ(w.delays.size(), 1u);
    EXPECT_EQ(w.delays[0].kind, "kernel_code");
    EXPECT_EQ(w.delays[0].label, "long_syscall");
    EXPECT_EQ(w.delays[0].delayed_ns, kLong - 1);
}

// Kernel code that ends in a short IRQs-off section (an AVC refill under its spinlock at the end
// of a long system call): the wait is the kernel code's up to the section, the section's after.
TEST(WakeupCause, KernelCodeEndingInAShortSectionIsNamedForItsPart) {
    constexpr Time kShort = 400;
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.preempt = PreemptModel::None;
    const RunResults r = beside_probe(cfg, [] {
        {
            OpScope op("long_syscall");
            ndelay(kLong - kShort);
            local_irq_disable();
            ndelay(kShort);
            local_irq_enable();
        }
        ndelay(kGap);
    });
    ASSERT_FALSE(r.wakeup_worst.empty());
    const WakeupRecord &w = r.wakeup_worst.front();
    EXPECT_EQ(w.late, kLong - 1);
    ASSERT_EQ(w.delays.size(), 2u);
    EXPECT_EQ(w.delays[0].kind, "kernel_code");
    EXPECT_EQ(w.delays[0].label, "long_syscall");
    EXPECT_EQ(w.delays[0].delayed_ns, kLong - kShort - 1);
    EXPECT_EQ(w.delays[1].kind, "irqs_off");
    EXPECT_EQ(w.delays[1].delayed_ns, kShort);
    EXPECT_EQ(w.cause(), &w.delays[0]);
}

// Nothing else on the CPU: every wake-up is on time, no stretch recorded (not a made-up cause).
TEST(WakeupCause, OnTimeWhenNothingHeldTheCpu) {
    SimPlatform sim(zero_config(2, 10 * kMsec));
    sim.create_task({"other-cpu", Sched::Other, 0, 1, false}, [] {
        while (!kthread_should_stop()) {
            preempt_disable();
            ndelay(kLong);
            preempt_enable();
        }
    });
    aligned_probe(sim);
    const RunResults r = sim.run();
    ASSERT_FALSE(r.wakeup_worst.empty());
    for (const WakeupRecord &w : r.wakeup_worst) {
        EXPECT_EQ(w.late, 0);
        EXPECT_TRUE(w.delays.empty());
        EXPECT_EQ(w.cause(), nullptr);
    }
}

// The worst wake-ups are kept per probe, worst first; keep_longest bounds each probe's list.
TEST(WakeupCause, KeepsTheWorstPerProbeWorstFirst) {
    auto cfg = zero_config(1, 20 * kMsec);
    cfg.keep_longest = 3;
    Time len = 0;
    const RunResults r = beside_probe(cfg, [&] {
        len += 10 * kUsec;
        preempt_disable();
        ndelay(len);
        preempt_enable();
        ndelay(kPeriod - len);
    });
    ASSERT_EQ(r.wakeup_worst.size(), 3u);
    EXPECT_EQ(r.wakeup_worst[0].late, r.wakeup_latency.at("probe").max());
    EXPECT_GT(r.wakeup_worst[0].late, r.wakeup_worst[1].late);
    EXPECT_GT(r.wakeup_worst[1].late, r.wakeup_worst[2].late);
    for (const WakeupRecord &w : r.wakeup_worst)
        EXPECT_EQ(w.late, w.delays.at(0).delayed_ns);
}
