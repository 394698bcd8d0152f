// kernel/mutex.h on the simulator: a mutex hands off in arrival order, a trylock fails while it
// is held, and locking it where sleeping is not allowed, or unlocking one not held, is reported.
#include "kernel/mutex.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel/rcu.h"
#include "tests/kernel/kernel_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::kernel::testing::config;
using locksim::kernel::testing::run_alone;
using locksim::kernel::testing::try_while_held;
using locksim::sim::SimPlatform;

TEST(Mutex, HandsOffInArrivalOrder) {
    SimPlatform sim(config(4));
    Mutex m("policy_mutex", sim);
    std::vector<int> order;
    for (int i = 0; i < 4; ++i)
        sim.create_task({"t" + std::to_string(i), Sched::Other, 0, i, false}, [&, i] {
            ndelay(i * kUsec);
            mutex_lock(m);
            order.push_back(i);
            ndelay(10 * kUsec);
            mutex_unlock(m);
        });
    auto r = sim.run();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(r.locks.at("policy_mutex").kind, "mutex");
    EXPECT_EQ(r.locks.at("policy_mutex").contended[0], 3u);
    EXPECT_EQ(r.preempt_off.length.count(), 0u);  // the waiters slept
}

TEST(Mutex, TrylockFailsWhenHeld) {
    auto [got, r] =
        try_while_held<Mutex>([](Mutex &m) { mutex_lock(m); }, [](Mutex &m) { mutex_unlock(m); },
                              [](Mutex &m) {
                                  const bool got = mutex_trylock(m);
                                  if (got) mutex_unlock(m);
                                  return got;
                              });
    EXPECT_FALSE(got);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Mutex, LockingItInAnRcuReaderIsReported) {
    auto r = run_alone([] {
        Mutex m("m");
        rcu_read_lock();
        mutex_lock(m);
        mutex_unlock(m);
        rcu_read_unlock();
    });
    EXPECT_EQ(r.count_violations("sleep_in_atomic"), 1u);
}

TEST(Mutex, UnlockingOneNotHeldIsReported) {
    auto r = run_alone([] {
        Mutex m("m");
        mutex_unlock(m);
    });
    EXPECT_EQ(r.count_violations("unlock_not_held"), 1u);
}
