// kernel/rwlock.h on the simulator: readers share the lock, a writer excludes readers and
// writers, a reader arriving while a writer waits queues behind it (qrwlock), and the _irq and
// _irqsave forms turn interrupts off for the section.
#include "kernel/rwlock.h"

#include <gtest/gtest.h>

#include "kernel/preempt.h"
#include "tests/kernel/kernel_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::kernel::testing::config;
using locksim::kernel::testing::run_alone;
using locksim::kernel::testing::try_while_held;
using locksim::sim::SimPlatform;
using locksim::sim::testing::rwlock_reader_writer_reader;
using locksim::sim::testing::zero_config;

TEST(Rwlock, ReadersShare) {
    SimPlatform sim(config(2));
    RwLock lock("l", sim);
    Time second_in = -1;
    sim.create_task({"first", Sched::Other, 0, 0, false}, [&] {
        read_lock(lock);
        ndelay(100 * kUsec);
        read_unlock(lock);
    });
    sim.create_task({"second", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        read_lock(lock);
        second_in = now();
        read_unlock(lock);
    });
    auto r = sim.run();
    EXPECT_EQ(second_in, 10 * kUsec);
    EXPECT_EQ(r.locks.at("l").contended[1], 0u);
    EXPECT_TRUE(r.violations.empty());
}

// The writer has it from 0 to 100 us; a reader asking at 10 us and a writer asking at 20 us
// get in after it, one after the other (FIFO hand-off).
TEST(Rwlock, AWriterExcludesReadersAndWriters) {
    SimPlatform sim(config(3));
    RwLock lock("l", sim);
    Time reader_in = -1, writer2_in = -1;
    sim.create_task({"writer", Sched::Other, 0, 0, false}, [&] {
        write_lock(lock);
        ndelay(100 * kUsec);
        write_unlock(lock);
    });
    sim.create_task({"reader", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        read_lock(lock);
        reader_in = now();
        ndelay(10 * kUsec);
        read_unlock(lock);
    });
    sim.create_task({"writer2", Sched::Other, 0, 2, false}, [&] {
        ndelay(20 * kUsec);
        write_lock(lock);
        writer2_in = now();
        write_unlock(lock);
    });
    auto r = sim.run();
    EXPECT_EQ(reader_in, 100 * kUsec);
    EXPECT_EQ(writer2_in, 110 * kUsec);
    EXPECT_EQ(r.locks.at("l").contended[0], 1u);
    EXPECT_EQ(r.locks.at("l").contended[1], 1u);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Rwlock, WriteTrylockFailsUnderAReader) {
    auto [got, r] =
        try_while_held<RwLock>([](RwLock &l) { read_lock(l); }, [](RwLock &l) { read_unlock(l); },
                               [](RwLock &l) {
                                   const bool got = write_trylock(l);
                                   if (got) write_unlock(l);
                                   return got;
                               });
    EXPECT_FALSE(got);
    EXPECT_TRUE(r.violations.empty());
}

// qrwlock: a reader arriving while a writer waits queues behind the writer.
TEST(Rwlock, ReadersQueueBehindAWaitingWriter) {
    auto [writer_in, reader2_in, r] = rwlock_reader_writer_reader(zero_config(3, 10 * kMsec));
    EXPECT_EQ(writer_in, 100 * kUsec);
    EXPECT_EQ(reader2_in, 150 * kUsec);
    const LockStats &ls = r.locks.at("policy_rwlock");
    EXPECT_EQ(ls.kind, "rwlock");
    EXPECT_EQ(ls.contended[0], 1u);
    EXPECT_EQ(ls.contended[1], 1u);
    EXPECT_EQ(ls.wait[1].max(), 130 * kUsec);
    EXPECT_EQ(ls.hold[0].max(), 50 * kUsec);
    // The writer spun with interrupts off from 10 us and held the lock until 150 us.
    EXPECT_EQ(r.irqs_off.longest.front().length, 140 * kUsec);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Rwlock, IrqFormsTurnInterruptsOffForTheirSection) {
    bool write_inside = false, read_inside = false, nested_after = false, after = true;
    auto r = run_alone([&] {
        RwLock l("l");
        write_lock_irq(l);
        write_inside = irqs_disabled();
        ndelay(20 * kUsec);
        write_unlock_irq(l);
        unsigned long flags = read_lock_irqsave(l);
        read_inside = irqs_disabled();
        ndelay(10 * kUsec);
        read_unlock_irqrestore(l, flags);
        after = irqs_disabled();
        local_irq_disable();
        flags = write_lock_irqsave(l);
        write_unlock_irqrestore(l, flags);
        nested_after = irqs_disabled();
        local_irq_enable();
    });
    EXPECT_TRUE(write_inside);
    EXPECT_TRUE(read_inside);
    EXPECT_FALSE(after);
    EXPECT_TRUE(nested_after);
    ASSERT_GE(r.irqs_off.longest.size(), 2u);
    EXPECT_EQ(r.irqs_off.longest[0].length, 20 * kUsec);
    EXPECT_EQ(r.irqs_off.longest[1].length, 10 * kUsec);
    EXPECT_TRUE(r.violations.empty());
}
