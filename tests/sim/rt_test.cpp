// PREEMPT_RT (v6.12, kernel/locking/rtmutex.c, rwbase_rt.c, spinlock_rt.c): spinlock_t and
// rwlock_t sleep and inherit priority, raw_spinlock_t spins, the _irq forms leave interrupts on
// and the sleep checks follow RT's rules. Hand-computed timelines on the zero-cost profile.
#include <gtest/gtest.h>

#include "kernel/mutex.h"
#include "kernel/preempt.h"
#include "kernel/rcu.h"
#include "kernel/spinlock.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::PreemptModel;
using locksim::sim::SimConfig;
using locksim::sim::SimPlatform;
using locksim::sim::testing::rwlock_reader_writer_reader;
using locksim::sim::testing::zero_config;

namespace {

SimConfig rt_config(int cpus, bool pi = true) {
    SimConfig c = zero_config(cpus, 10 * kMsec);
    c.preempt = PreemptModel::Rt;
    c.rt_mutex_pi = pi;
    return c;
}

// Priority inversion on one CPU: a low-priority reader holds the lock (spinlock_t, an rt_mutex
// on RT) for 100 us from 0, a medium-priority task hogs the CPU for 1 ms from 10 us, and a
// high-priority writer asks for the lock at 20 us. Returns when the writer got it.
Time writer_gets_lock(bool pi) {
    SimPlatform sim(rt_config(1, pi));
    Spinlock lock("avc_lock", sim);
    Time in = -1;
    sim.create_task({"low_reader", Sched::Fifo, 10, 0, false}, [&] {
        spin_lock(lock);
        ndelay(100 * kUsec);
        spin_unlock(lock);
    });
    sim.create_task({"medium_hog", Sched::Fifo, 50, 0, false}, [&] {
        sleep_until(10 * kUsec);
        ndelay(kMsec);
    });
    sim.create_task({"high_writer", Sched::Fifo, 90, 0, false}, [&] {
        sleep_until(20 * kUsec);
        spin_lock(lock);
        in = now();
        spin_unlock(lock);
    });
    auto r = sim.run();
    EXPECT_TRUE(r.violations.empty());
    EXPECT_EQ(r.preempt_off.length.count(), 0u);  // a sleeping lock: preemption stays on
    return in;
}

}  // namespace

TEST(RtLocks, PriorityInheritanceEndsTheInversion) {
    // The writer's wait boosts the reader to 90: it preempts the hog and ends its last 90 us.
    EXPECT_EQ(writer_gets_lock(true), 110 * kUsec);
    // Without inheritance the hog runs out its millisecond first (until 1010 us), then the
    // reader its 90 us.
    EXPECT_EQ(writer_gets_lock(false), 1100 * kUsec);
}

// rwbase_rt: readers enter while a writer waits (reader-biased); the writer takes the rt_mutex
// and sleeps until the readers inside have left. write_lock_irq leaves interrupts on.
TEST(RtLocks, RwlockIsReaderBiasedAndItsWriterWaitsForTheReaders) {
    auto [writer_in, reader2_in, r] = rwlock_reader_writer_reader(rt_config(3));
    EXPECT_EQ(reader2_in, 20 * kUsec);  // the queued rwlock would make it wait until 150 us
    EXPECT_EQ(writer_in, 100 * kUsec);
    const LockStats &ls = r.locks.at("policy_rwlock");
    EXPECT_EQ(ls.contended[0], 1u);
    EXPECT_EQ(ls.contended[1], 0u);
    EXPECT_EQ(ls.wait[0].max(), 90 * kUsec);
    EXPECT_EQ(r.irqs_off.length.count(), 0u);
    EXPECT_EQ(r.preempt_off.length.count(), 0u);
    EXPECT_TRUE(r.violations.empty());
}

// raw_spinlock_t keeps spinning with preemption off, and raw_spin_lock_irq disables interrupts.
TEST(RtLocks, RawSpinlockStillSpinsWithPreemptionAndInterruptsOff) {
    SimPlatform sim(rt_config(2));
    RawSpinlock lock("rq_lock", sim);
    sim.create_task({"holder", Sched::Other, 0, 0, false}, [&] {
        raw_spin_lock_irq(lock);
        ndelay(50 * kUsec);
        raw_spin_unlock_irq(lock);
    });
    sim.create_task({"spinner", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        raw_spin_lock(lock);
        raw_spin_unlock(lock);
    });
    auto r = sim.run();
    EXPECT_EQ(r.locks.at("rq_lock").kind, "raw_spinlock");
    EXPECT_EQ(r.irqs_off.longest.front().length, 50 * kUsec);
    // The holder's 50 us, and the spinner's 40 us of spinning with preemption off.
    EXPECT_EQ(r.preempt_off.longest.front().length, 50 * kUsec);
    EXPECT_EQ(r.preempt_off.longest.at(1).length, 40 * kUsec);
    EXPECT_TRUE(r.violations.empty());
}

// might_sleep on RT: an RT lock may be taken inside an RCU read section or another RT lock's
// section (RTLOCK_RESCHED_OFFSETS allows the RCU nesting), not with preemption off; a truly
// sleeping call inside a spinlock_t section is still caught (the section is an RCU reader).
TEST(RtLocks, SleepChecksFollowPreemptRtRules) {
    auto violations = [](auto body) {
        SimPlatform sim(rt_config(1));
        Spinlock a("a", sim), b("b", sim);
        Mutex m("m", sim);
        sim.create_task({"t", Sched::Other, 0, 0, false}, [&] { body(a, b, m); });
        return sim.run().count_violations("sleep_in_atomic");
    };
    EXPECT_EQ(violations([](Spinlock &a, Spinlock &b, Mutex &) {
                  rcu_read_lock();
                  spin_lock(a);
                  spin_lock(b);
                  spin_unlock(b);
                  spin_unlock(a);
                  rcu_read_unlock();
              }),
              0u);
    EXPECT_EQ(violations([](Spinlock &a, Spinlock &, Mutex &) {
                  preempt_disable();
                  spin_lock(a);
                  spin_unlock(a);
                  preempt_enable();
              }),
              1u);
    EXPECT_EQ(violations([](Spinlock &a, Spinlock &, Mutex &m) {
                  spin_lock(a);
                  mutex_lock(m);
                  mutex_unlock(m);
                  spin_unlock(a);
              }),
              1u);
}

// A probe held off by a task that outranks it only through priority inheritance: the wake-up's
// cause is the chain (pi_chain), naming the waiter that lent the priority and its lock. The
// low-priority reader holds the lock from 0 to 100 us; the high-priority writer asks at 20 us,
// boosting it to 90 above the probe (70), due at 50 us; the reader ends at 100 us (the hog
// never got in), the writer takes and drops the lock, and the probe runs: 50 us late.
TEST(RtLocks, WakeupHeldByAnInheritedPriorityNamesTheChain) {
    SimPlatform sim(rt_config(1));
    Spinlock lock("avc_lock", sim);
    sim.create_task({"low_reader", Sched::Fifo, 10, 0, false}, [&] {
        spin_lock(lock);
        ndelay(100 * kUsec);
        spin_unlock(lock);
    });
    sim.create_task({"high_writer", Sched::Fifo, 90, 0, false}, [&] {
        sleep_until(20 * kUsec);
        spin_lock(lock);
        spin_unlock(lock);
    });
    sim.create_task({"probe", Sched::Fifo, 70, 0, true}, [&] { sleep_until(50 * kUsec); });
    auto r = sim.run();
    ASSERT_EQ(r.wakeup_worst.size(), 1u);
    const WakeupRecord &w = r.wakeup_worst.front();
    EXPECT_EQ(w.late, 50 * kUsec);
    ASSERT_NE(w.cause(), nullptr);
    EXPECT_EQ(w.cause()->kind, "pi_chain");
    EXPECT_EQ(w.cause()->task, "low_reader");
    EXPECT_EQ(w.cause()->via, "high_writer waiting for avc_lock");
    EXPECT_EQ(w.cause()->delayed_ns, 50 * kUsec);
}
