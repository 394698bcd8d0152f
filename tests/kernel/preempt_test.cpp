// kernel/preempt.h on the simulator: preempt_disable nests and holds a wake-up back until the
// outermost preempt_enable, local_irq_save / restore give back the caller's state, softirqs off
// is a preempt-off section without PREEMPT_RT, and an unbalanced preempt_enable is reported.
#include "kernel/preempt.h"

#include <gtest/gtest.h>

#include "tests/kernel/kernel_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::kernel::testing::config;
using locksim::kernel::testing::run_alone;
using locksim::sim::SimPlatform;

// On one CPU: the task's preempt-off section runs from 0 to 100 us, with a nested one inside;
// a FIFO task due at 10 us runs when the outer one ends.
TEST(PreemptIrq, PreemptDisableNestsAndHoldsAWakeupToTheOutermostEnable) {
    SimPlatform sim(config(1));
    Time high_in = -1;
    sim.create_task({"low", Sched::Other, 0, 0, false}, [&] {
        preempt_disable();
        preempt_disable();
        ndelay(50 * kUsec);
        preempt_enable();
        ndelay(50 * kUsec);
        preempt_enable();
    });
    sim.create_task({"high", Sched::Fifo, 50, 0, false}, [&] {
        sleep_until(10 * kUsec);
        high_in = now();
    });
    auto r = sim.run();
    EXPECT_EQ(high_in, 100 * kUsec);
    ASSERT_EQ(r.preempt_off.longest.size(), 1u);  // one section: the outermost
    EXPECT_EQ(r.preempt_off.longest[0].length, 100 * kUsec);
    EXPECT_TRUE(r.violations.empty());
}

TEST(PreemptIrq, LocalIrqSaveAndRestoreGiveBackTheCallersState) {
    bool inner_off = false, outer_off_after_inner = false, on_at_end = false;
    auto r = run_alone([&] {
        unsigned long outer = local_irq_save();
        unsigned long inner = local_irq_save();
        inner_off = irqs_disabled();
        ndelay(10 * kUsec);
        local_irq_restore(inner);
        outer_off_after_inner = irqs_disabled();
        ndelay(10 * kUsec);
        local_irq_restore(outer);
        on_at_end = !irqs_disabled();
    });
    EXPECT_TRUE(inner_off);
    EXPECT_TRUE(outer_off_after_inner);
    EXPECT_TRUE(on_at_end);
    ASSERT_EQ(r.irqs_off.longest.size(), 1u);
    EXPECT_EQ(r.irqs_off.longest[0].length, 20 * kUsec);
    EXPECT_TRUE(r.violations.empty());
}

TEST(PreemptIrq, SoftirqsOffIsAPreemptOffSection) {
    auto r = run_alone([] {
        local_bh_disable();
        ndelay(30 * kUsec);
        local_bh_enable();
    });
    ASSERT_EQ(r.preempt_off.longest.size(), 1u);
    EXPECT_EQ(r.preempt_off.longest[0].length, 30 * kUsec);
    EXPECT_EQ(r.irqs_off.length.count(), 0u);
    EXPECT_TRUE(r.violations.empty());
}

TEST(PreemptIrq, AnUnbalancedPreemptEnableIsReported) {
    auto r = run_alone([] { preempt_enable(); });
    EXPECT_EQ(r.count_violations("preempt_count_underflow"), 1u);
}
