// Each self-check fires on a deliberately broken task and stays silent on the correct one.
#include <gtest/gtest.h>

#include <functional>

#include "kernel/mutex.h"
#include "kernel/preempt.h"
#include "kernel/rcu.h"
#include "kernel/spinlock.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimConfig;
using locksim::sim::SimPlatform;

namespace {

struct Shared {
    Spinlock spin;
    Mutex mutex;
    Mutex other;
    RcuPointer<int> ptr;
    explicit Shared(Platform &p) : spin("spin", p), mutex("mutex_a", p), other("mutex_b", p) {}
};

// Runs `body(shared)` in one task (and, when given, `second` in another) on 2 CPUs.
RunResults run_case(const std::function<void(Shared &)> &body,
                    const std::function<void(Shared &)> &second = nullptr) {
    SimConfig cfg;
    cfg.cpus = 2;
    cfg.duration = 20 * kMsec;
    SimPlatform sim(cfg);
    Shared sh(sim);
    {
        PlatformScope setup(sim);
        rcu_assign_pointer(sh.ptr, knew<int>(Gfp::Kernel, 1));
    }
    sim.create_task({"first", Sched::Other, 0, 0, false}, [&] { body(sh); });
    if (second) sim.create_task({"second", Sched::Other, 0, 1, false}, [&] { second(sh); });
    auto r = sim.run();
    PlatformScope cleanup(sim);
    kdelete(rcu_dereference_protected(sh.ptr));
    return r;
}

void nested(Mutex &outer, Mutex &inner) {
    mutex_lock(outer);
    mutex_lock(inner);
    mutex_unlock(inner);
    mutex_unlock(outer);
}

}  // namespace

TEST(Checks, SleepInAtomic) {
    auto broken = run_case([](Shared &s) {
        spin_lock(s.spin);
        msleep(1);
        spin_unlock(s.spin);
    });
    EXPECT_EQ(broken.count_violations("sleep_in_atomic"), 1u);
    EXPECT_NE(broken.violations.at(0).message.find("msleep @ checks_test.cpp"), std::string::npos)
        << broken.violations.at(0).message;
    auto mutex_under_spin = run_case([](Shared &s) {
        spin_lock(s.spin);
        mutex_lock(s.mutex);
        mutex_unlock(s.mutex);
        spin_unlock(s.spin);
    });
    EXPECT_EQ(mutex_under_spin.count_violations("sleep_in_atomic"), 1u);
    auto sleeping_alloc = run_case([](Shared &s) {
        spin_lock(s.spin);
        kfree(kmalloc(64, Gfp::Kernel));
        spin_unlock(s.spin);
    });
    EXPECT_EQ(sleeping_alloc.count_violations("sleep_in_atomic"), 1u);
    auto correct = run_case([](Shared &s) {
        mutex_lock(s.mutex);
        msleep(1);
        void *p = kmalloc(64, Gfp::Kernel);
        mutex_unlock(s.mutex);
        spin_lock(s.spin);
        kfree(p);
        kfree(kmalloc(64, Gfp::Atomic));
        spin_unlock(s.spin);
    });
    EXPECT_TRUE(correct.violations.empty());
}

TEST(Checks, LockOrderInversion) {
    auto broken =
        run_case([](Shared &s) { nested(s.mutex, s.other); },
                 [](Shared &s) {
                     msleep(2);  // never concurrent: the order alone is the bug, as lockdep sees it
                     nested(s.other, s.mutex);
                 });
    EXPECT_EQ(broken.count_violations("lock_order"), 1u);
    auto correct = run_case([](Shared &s) { nested(s.mutex, s.other); },
                            [](Shared &s) {
                                msleep(2);
                                nested(s.mutex, s.other);
                            });
    EXPECT_TRUE(correct.violations.empty());
}

namespace {
void long_reader(Shared &s) {
    rcu_read_lock();
    int *p = rcu_dereference(s.ptr);
    ndelay(5 * kMsec);
    EXPECT_NE(p, nullptr);
    rcu_read_unlock();
}
}  // namespace

TEST(Checks, RcuFreeWhileAReaderMayHoldIt) {
    auto broken = run_case(long_reader, [](Shared &s) {
        ndelay(kMsec);
        int *old = rcu_replace_pointer(s.ptr, knew<int>(Gfp::Kernel, 2));
        kdelete(old);  // no grace period
    });
    EXPECT_EQ(broken.count_violations("rcu_free_in_use"), 1u);
    auto still_published = run_case([](Shared &s) {
        mutex_lock(s.mutex);
        kdelete(rcu_dereference_protected(s.ptr));
        rcu_assign_pointer(s.ptr, knew<int>(Gfp::Kernel, 3));
        mutex_unlock(s.mutex);
    });
    EXPECT_EQ(still_published.count_violations("rcu_free_published"), 1u);
    auto correct = run_case(long_reader, [](Shared &s) {
        ndelay(kMsec);
        int *old = rcu_replace_pointer(s.ptr, knew<int>(Gfp::Kernel, 2));
        synchronize_rcu();
        kdelete(old);
    });
    EXPECT_TRUE(correct.violations.empty());
    auto deferred = run_case(long_reader, [](Shared &s) {
        ndelay(kMsec);
        int *old = rcu_replace_pointer(s.ptr, knew<int>(Gfp::Kernel, 2));
        call_rcu([old] { kdelete(old); });
    });
    EXPECT_TRUE(deferred.violations.empty());
}

TEST(Checks, LockNeverReleased) {
    auto broken = run_case([](Shared &s) { mutex_lock(s.mutex); },
                           [](Shared &s) {
                               msleep(1);
                               mutex_lock(s.mutex);  // waits forever
                               mutex_unlock(s.mutex);
                           });
    EXPECT_EQ(broken.count_violations("lock_held_at_exit"), 1u);
    EXPECT_EQ(broken.count_violations("task_stuck"), 1u);
    auto correct = run_case([](Shared &s) {
        mutex_lock(s.mutex);
        mutex_unlock(s.mutex);
    });
    EXPECT_TRUE(correct.violations.empty());
}

TEST(Checks, SuspiciousRcuDereference) {
    auto broken = run_case([](Shared &s) { EXPECT_NE(rcu_dereference(s.ptr), nullptr); });
    EXPECT_EQ(broken.count_violations("suspicious_rcu_usage"), 1u);
    auto correct = run_case([](Shared &s) {
        rcu_read_lock();
        EXPECT_NE(rcu_dereference(s.ptr), nullptr);
        rcu_read_unlock();
    });
    EXPECT_TRUE(correct.violations.empty());
}

TEST(Checks, SynchronizeRcuInsideAReaderIsReportedNotHung) {
    auto broken = run_case([](Shared &) {
        rcu_read_lock();
        synchronize_rcu();
        rcu_read_unlock();
    });
    EXPECT_EQ(broken.count_violations("synchronize_rcu_in_reader"), 1u);
}

TEST(Checks, UnbalancedSections) {
    auto broken = run_case([](Shared &s) {
        preempt_enable();
        spin_unlock(s.spin);
        preempt_disable();
    });
    EXPECT_EQ(broken.count_violations("preempt_count_underflow"), 1u);
    EXPECT_EQ(broken.count_violations("unlock_not_held"), 1u);
    EXPECT_EQ(broken.count_violations("preempt_count_at_exit"), 1u);
}
