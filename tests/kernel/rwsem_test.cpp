// kernel/rwsem.h on the simulator: readers share the semaphore, a writer excludes them, a
// waiting writer is not starved by later readers, waiters sleep (no preempt-off time), and
// taking it where sleeping is not allowed is reported.
#include "kernel/rwsem.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel/spinlock.h"
#include "tests/kernel/kernel_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::kernel::testing::config;
using locksim::kernel::testing::run_alone;
using locksim::sim::SimPlatform;

TEST(Rwsem, ReadersShareAndAWriterExcludesThem) {
    SimPlatform sim(config(3));
    RwSem sem("s", sim);
    Time second_reader_in = -1, writer_in = -1;
    sim.create_task({"reader", Sched::Other, 0, 0, false}, [&] {
        down_read(sem);
        ndelay(100 * kUsec);
        up_read(sem);
    });
    sim.create_task({"reader2", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        down_read(sem);
        second_reader_in = now();
        ndelay(10 * kUsec);
        up_read(sem);
    });
    sim.create_task({"writer", Sched::Other, 0, 2, false}, [&] {
        ndelay(30 * kUsec);
        down_write(sem);
        writer_in = now();
        up_write(sem);
    });
    auto r = sim.run();
    EXPECT_EQ(second_reader_in, 10 * kUsec);
    EXPECT_EQ(writer_in, 100 * kUsec);
    EXPECT_EQ(r.locks.at("s").kind, "rwsem");
    EXPECT_EQ(r.locks.at("s").contended[0], 1u);
    EXPECT_TRUE(r.violations.empty());
}

// Readers sleep behind a waiting writer; the writer is not starved by new readers.
TEST(Rwsem, WriterIsNotStarved) {
    SimPlatform sim(config(4));
    RwSem sem("policy_rwsem", sim);
    Time writer_in = -1;
    std::vector<Time> reader_in;
    for (int i = 0; i < 3; ++i)
        sim.create_task({"reader" + std::to_string(i), Sched::Other, 0, i, false}, [&, i] {
            ndelay(i * 40 * kUsec);  // 0, 40, 80 us: overlapping readers
            down_read(sem);
            reader_in.push_back(now());
            ndelay(60 * kUsec);
            up_read(sem);
        });
    sim.create_task({"writer", Sched::Other, 0, 3, false}, [&] {
        ndelay(30 * kUsec);
        down_write(sem);
        writer_in = now();
        ndelay(100 * kUsec);
        up_write(sem);
    });
    auto r = sim.run();
    // reader0 [0,60), reader1 arrives at 40 behind the writer (queued at 30): writer 60..160,
    // then reader1 and reader2 together.
    EXPECT_EQ(writer_in, 60 * kUsec);
    EXPECT_EQ(reader_in, (std::vector<Time>{0, 160 * kUsec, 160 * kUsec}));
    EXPECT_TRUE(r.violations.empty());
    // Sleeping waits are not preempt-off time.
    EXPECT_EQ(r.preempt_off.length.count(), 0u);
}

TEST(Rwsem, TakingItUnderASpinlockIsReported) {
    auto r = run_alone([] {
        Spinlock l("l");
        RwSem sem("s");
        spin_lock(l);
        down_read(sem);
        up_read(sem);
        spin_unlock(l);
    });
    EXPECT_EQ(r.count_violations("sleep_in_atomic"), 1u);
}
