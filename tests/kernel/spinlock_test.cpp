// kernel/spinlock.h on the simulator: a spinlock excludes, its holder and its waiters run with
// preemption off, its _irq forms turn interrupts off for the section (except spinlock_t under
// PREEMPT_RT, a sleeping lock there) and _irqsave restores the caller's state.
#include "kernel/spinlock.h"

#include <gtest/gtest.h>

#include "kernel/preempt.h"
#include "tests/kernel/kernel_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::kernel::testing::config;
using locksim::kernel::testing::run_alone;
using locksim::kernel::testing::try_while_held;
using locksim::sim::PreemptModel;
using locksim::sim::SimPlatform;

// The holder has it from 0 to 100 us; the waiter asks at 10 us and spins until then.
TEST(Spinlock, ExcludesAndSpinsWithPreemptionOff) {
    SimPlatform sim(config(2));
    Spinlock lock("l", sim);
    Time waiter_in = -1;
    sim.create_task({"holder", Sched::Other, 0, 0, false}, [&] {
        spin_lock(lock);
        ndelay(100 * kUsec);
        spin_unlock(lock);
    });
    sim.create_task({"waiter", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        spin_lock(lock);
        waiter_in = now();
        ndelay(5 * kUsec);
        spin_unlock(lock);
    });
    auto r = sim.run();
    EXPECT_EQ(waiter_in, 100 * kUsec);
    EXPECT_EQ(r.locks.at("l").contended[0], 1u);
    // The holder's section, then the waiter's: 90 us spinning and 5 us holding.
    ASSERT_EQ(r.preempt_off.longest.size(), 2u);
    EXPECT_EQ(r.preempt_off.longest[0].length, 100 * kUsec);
    EXPECT_EQ(r.preempt_off.longest[1].length, 95 * kUsec);
    EXPECT_NE(r.preempt_off.longest[0].start_site.find("spin_lock @ spinlock_test.cpp:"),
              std::string::npos);
    EXPECT_EQ(r.irqs_off.length.count(), 0u);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Spinlock, TrylockFailsWhenHeld) {
    auto [second, r] = try_while_held<Spinlock>([](Spinlock &l) { spin_lock(l); },
                                                [](Spinlock &l) { spin_unlock(l); },
                                                [](Spinlock &l) {
                                                    const bool got = spin_trylock(l);
                                                    if (got) spin_unlock(l);
                                                    return got;
                                                });
    EXPECT_FALSE(second);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Spinlock, IrqFormTurnsInterruptsOffForItsSection) {
    bool inside = false, after = true;
    auto r = run_alone([&] {
        Spinlock l("l");
        spin_lock_irq(l);
        inside = irqs_disabled();
        ndelay(30 * kUsec);
        spin_unlock_irq(l);
        after = irqs_disabled();
    });
    EXPECT_TRUE(inside);
    EXPECT_FALSE(after);
    ASSERT_EQ(r.irqs_off.longest.size(), 1u);
    EXPECT_EQ(r.irqs_off.longest[0].length, 30 * kUsec);
    EXPECT_TRUE(r.violations.empty());
}

// spin_lock_irqsave inside an irqs-off section leaves interrupts off at its unlock; outside
// one it turns them back on.
TEST(Spinlock, IrqsaveRestoresTheCallersState) {
    bool off_after_nested = false, on_after_plain = false;
    auto r = run_alone([&] {
        Spinlock l("l");
        local_irq_disable();
        unsigned long flags = spin_lock_irqsave(l);
        spin_unlock_irqrestore(l, flags);
        off_after_nested = irqs_disabled();
        local_irq_enable();
        flags = spin_lock_irqsave(l);
        spin_unlock_irqrestore(l, flags);
        on_after_plain = !irqs_disabled();
    });
    EXPECT_TRUE(off_after_nested);
    EXPECT_TRUE(on_after_plain);
    EXPECT_TRUE(r.violations.empty());
}

// Under PREEMPT_RT spinlock_t is an rt_mutex: its _irq form leaves interrupts on, while
// raw_spinlock_t's turns them off as without RT.
TEST(Spinlock, UnderRtOnlyTheRawIrqFormTurnsInterruptsOff) {
    bool spin_off = true, raw_off = false;
    auto r = run_alone(
        [&] {
            Spinlock l("l");
            RawSpinlock raw("raw");
            spin_lock_irq(l);
            spin_off = irqs_disabled();
            spin_unlock_irq(l);
            raw_spin_lock_irq(raw);
            raw_off = irqs_disabled();
            raw_spin_unlock_irq(raw);
        },
        PreemptModel::Rt);
    EXPECT_FALSE(spin_off);
    EXPECT_TRUE(raw_off);
    EXPECT_TRUE(r.violations.empty());
}
