// kernel/percpu_rwsem.h on the simulator: readers on the fast path touch no shared lock and
// no grace period; a writer pays a grace period, shuts new readers out, waits for the readers
// inside to leave, and lets the shut-out readers in when it is done; a grace period after the
// last writer, readers are back on the fast path.
#include <gtest/gtest.h>

#include <vector>

#include "kernel/percpu_rwsem.h"
#include "sim/sim_platform.h"
#include "tests/sim/sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

TEST(PercpuRwsem, ReadersOnTheFastPathShareNothing) {
    SimPlatform sim(zero_config(3, 10 * kMsec));
    PercpuRwSemaphore sem("test_percpu_rwsem", sim);
    std::vector<Time> in;
    for (int i = 0; i < 3; ++i)
        sim.create_task({"reader" + std::to_string(i), Sched::Other, 0, i, false}, [&] {
            percpu_down_read(sem);
            in.push_back(now());
            ndelay(100 * kUsec);
            percpu_up_read(sem);
        });
    auto r = sim.run();
    ASSERT_EQ(in.size(), 3u);
    for (Time t : in)
        EXPECT_EQ(t, 0);  // all three hold it at once, without waiting
    EXPECT_EQ(r.rcu.grace_periods, 0u);
    // The wait queue was never used.
    auto it = r.locks.find("test_percpu_rwsem");
    EXPECT_TRUE(it == r.locks.end() ||
                it->second.acquisitions[0] + it->second.acquisitions[1] == 0);
    EXPECT_TRUE(r.violations.empty());
}

TEST(PercpuRwsem, WriterDrainsReadersAndShutsNewOnesOut) {
    SimPlatform sim(zero_config(3, 100 * kMsec));
    PercpuRwSemaphore sem("test_percpu_rwsem", sim);
    Time early_out = -1, writer_in = -1, writer_out = -1, late_in = -1;
    bool reader_inside_write = false;
    bool writing = false;
    sim.create_task({"early", Sched::Other, 0, 0, false}, [&] {
        percpu_down_read(sem);
        ndelay(30 * kMsec);  // longer than the writer's grace period
        early_out = now();
        percpu_up_read(sem);
    });
    sim.create_task({"writer", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        percpu_down_write(sem);
        writer_in = now();
        writing = true;
        ndelay(1 * kMsec);
        writing = false;
        writer_out = now();
        percpu_up_write(sem);
    });
    sim.create_task({"late", Sched::Other, 0, 2, false}, [&] {
        ndelay(20 * kUsec);  // after the writer entered rcu_sync
        while (writer_in < 0)
            sleep_for(100 * kUsec);
        percpu_down_read(sem);
        late_in = now();
        reader_inside_write = writing;
        percpu_up_read(sem);
    });
    auto r = sim.run();
    EXPECT_GE(r.rcu.grace_periods, 1u);  // rcu_sync_enter's
    EXPECT_GE(writer_in, early_out);     // the reader inside drained first
    EXPECT_GE(late_in, writer_out);      // the shut-out reader waited for percpu_up_write
    EXPECT_FALSE(reader_inside_write);
    EXPECT_GT(r.locks.at("test_percpu_rwsem").acquisitions[1], 0u);  // it slept on the queue
    EXPECT_TRUE(r.violations.empty());
}

// rcu_sync: a writer right after another finds the readers still on the slow path and waits
// no grace period; once the exit's grace period has passed, the next writer waits one again.
TEST(PercpuRwsem, OnlyAWriterAfterTheExitGracePeriodWaitsForOne) {
    SimPlatform sim(zero_config(2, 200 * kMsec));
    PercpuRwSemaphore sem("test_percpu_rwsem", sim);
    // Nothing costs time in this profile but the grace periods waited for.
    std::vector<Time> took;
    auto write = [&] {
        Time t0 = now();
        percpu_down_write(sem);
        percpu_up_write(sem);
        took.push_back(now() - t0);
    };
    sim.create_task({"writer", Sched::Other, 0, 0, false}, [&] {
        write();
        write();
        sleep_for(100 * kMsec);  // many grace periods: the exit's callback has run
        write();
    });
    auto r = sim.run();
    ASSERT_EQ(took.size(), 3u);
    EXPECT_GT(took[0], 0);
    EXPECT_EQ(took[1], 0);
    EXPECT_GT(took[2], 0);
    const LockStats &ls = r.locks.at("test_percpu_rwsem");
    EXPECT_EQ(ls.acquisitions[0], 3u);  // the writer side, once per writer
    EXPECT_EQ(ls.acquisitions[1], 0u);  // no reader slept
    EXPECT_TRUE(r.violations.empty());
}
