// kernel/rcu.h on the simulator: a grace period waits for the readers that began before it,
// a pointer replaced under RCU is handed back for freeing after one, and the misuses
// CONFIG_PROVE_RCU and might_sleep catch are reported.
#include "kernel/rcu.h"

#include <gtest/gtest.h>

#include "tests/kernel/kernel_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::kernel::testing::run_alone;
using locksim::sim::SimPlatform;

// The reader is inside from 0 to 30 ms, several scheduler ticks (a grace period with no reader
// ends within two); the updater publishes at 10 us and waits.
TEST(RcuApi, SynchronizeRcuWaitsForAPreExistingReader) {
    SimPlatform sim(sim::testing::zero_config(2, 100 * kMsec));
    RcuPointer<int> ptr;
    int first = 1, second = 2;
    ptr.raw().store(&first);  // published before the run
    int seen = 0;
    int *old = nullptr;
    Time gp_done = -1;
    sim.create_task({"reader", Sched::Other, 0, 0, false}, [&] {
        rcu_read_lock();
        const int *p = rcu_dereference(ptr);
        ndelay(30 * kMsec);
        seen = *p;
        rcu_read_unlock();
    });
    sim.create_task({"updater", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        old = rcu_replace_pointer(ptr, &second);
        synchronize_rcu();
        gp_done = now();
    });
    auto r = sim.run();
    EXPECT_EQ(seen, 1);  // the reader kept the version it found
    EXPECT_EQ(old, &first);
    EXPECT_EQ(rcu_dereference_protected(ptr), &second);
    EXPECT_GE(gp_done, 30 * kMsec);
    EXPECT_EQ(r.rcu.grace_periods, 1u);
    EXPECT_TRUE(r.violations.empty());
}

TEST(RcuApi, DereferenceOutsideAReaderIsReported) {
    int x = 1;
    auto r = run_alone([&] {
        RcuPointer<int> ptr;
        rcu_assign_pointer(ptr, &x);
        (void)rcu_dereference(ptr);
    });
    EXPECT_EQ(r.count_violations("suspicious_rcu_usage"), 1u);
}

TEST(RcuApi, SynchronizeRcuInsideAReaderIsReported) {
    auto r = run_alone([] {
        rcu_read_lock();
        synchronize_rcu();
        rcu_read_unlock();
    });
    EXPECT_EQ(r.count_violations("synchronize_rcu_in_reader"), 1u);
}

TEST(RcuApi, CallRcuRunsAfterTheReadersOfItsTime) {
    SimPlatform sim(sim::testing::zero_config(2, 100 * kMsec));
    Time reader_out = -1, callback_at = -1;
    sim.create_task({"reader", Sched::Other, 0, 0, false}, [&] {
        rcu_read_lock();
        ndelay(30 * kMsec);
        reader_out = now();
        rcu_read_unlock();
    });
    sim.create_task({"updater", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        call_rcu([&] { callback_at = now(); });
    });
    auto r = sim.run();
    EXPECT_EQ(reader_out, 30 * kMsec);
    EXPECT_GE(callback_at, reader_out);
    EXPECT_EQ(r.rcu.callbacks_invoked, 1u);
    EXPECT_TRUE(r.violations.empty());
}
