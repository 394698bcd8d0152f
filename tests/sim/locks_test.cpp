// Lock semantics: hand-computed timelines and an M/M/1 queue.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::rwlock_reader_writer_reader;
using locksim::sim::testing::zero_config;

// qrwlock: a reader arriving while a writer waits queues behind the writer.
TEST(Locks, RwlockReadersQueueBehindAWaitingWriter) {
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

// rwsem: readers sleep behind a waiting writer; the writer is not starved by new readers.
TEST(Locks, RwsemWriterIsNotStarved) {
    SimPlatform sim(zero_config(4, 20 * kMsec));
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

TEST(Locks, MutexHandsOffInArrivalOrder) {
    SimPlatform sim(zero_config(4, 20 * kMsec));
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
    sim.run();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

// A single FIFO lock fed by Poisson arrivals with exponential hold times is an M/M/1 queue:
// mean wait in queue Wq = rho / (mu - lambda). With rho = 0.5 and a 10 us mean hold,
// Wq = 10 us; over 200k customers the standard error of the mean is about 2 %.
TEST(Locks, ContendedSpinlockMatchesMM1MeanWait) {
    const int workers = 32, customers = 200000;
    const double hold_mean = 10000.0, rho = 0.5;
    std::mt19937_64 rng(12345);
    std::exponential_distribution<double> interarrival(rho / hold_mean), hold(1.0 / hold_mean);
    std::vector<Time> arrival(customers), service(customers);
    double t = 0;
    for (int i = 0; i < customers; ++i) {
        t += interarrival(rng);
        arrival[static_cast<size_t>(i)] = static_cast<Time>(t);
        service[static_cast<size_t>(i)] = std::max<Time>(1, static_cast<Time>(hold(rng)));
    }
    auto cfg = zero_config(workers, static_cast<Time>(t) + kMsec);
    SimPlatform sim(cfg);
    Spinlock lock("queue_lock", sim);
    for (int w = 0; w < workers; ++w)
        sim.create_task({"worker" + std::to_string(w), Sched::Other, 0, w, false}, [&, w] {
            for (size_t i = static_cast<size_t>(w); i < arrival.size(); i += workers) {
                sleep_until(arrival[i]);
                spin_lock(lock);
                ndelay(service[i]);
                spin_unlock(lock);
            }
        });
    auto r = sim.run();
    const Histogram &wait = r.locks.at("queue_lock").wait[0];
    uint64_t served = r.locks.at("queue_lock").acquisitions[0];
    ASSERT_EQ(served, static_cast<uint64_t>(customers));
    // Uncontended acquisitions wait 0 and are not in the wait histogram: average over all.
    double mean_wait = static_cast<double>(wait.sum()) / static_cast<double>(served);
    double wq = rho / (1.0 / hold_mean - rho / hold_mean);
    EXPECT_NEAR(mean_wait, wq, 0.08 * wq)
        << "measured " << mean_wait << " ns, M/M/1 " << wq << " ns";
    // P(wait) = rho for M/M/1.
    double p_wait = static_cast<double>(r.locks.at("queue_lock").contended[0]) / customers;
    EXPECT_NEAR(p_wait, rho, 0.02);
}

TEST(Locks, TrylockFailsWhenHeld) {
    SimPlatform sim(zero_config(2, 10 * kMsec));
    Spinlock lock("l", sim);
    bool second = true;
    sim.create_task({"holder", Sched::Other, 0, 0, false}, [&] {
        spin_lock(lock);
        ndelay(100 * kUsec);
        spin_unlock(lock);
    });
    sim.create_task({"trier", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        second = spin_trylock(lock);
        if (second) spin_unlock(lock);
    });
    auto r = sim.run();
    EXPECT_FALSE(second);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Locks, CacheLineTransferIsChargedAcrossCpus) {
    auto cfg = zero_config(2, 10 * kMsec);
    cfg.profile.primitive.cacheline_transfer = 100;
    SimPlatform sim(cfg);
    RwLock lock("l", sim);
    Time t0 = -1, t1 = -1;
    sim.create_task({"a", Sched::Other, 0, 0, false}, [&] {
        read_lock(lock);
        read_unlock(lock);
        t0 = now();
    });
    sim.create_task({"b", Sched::Other, 0, 1, false}, [&] {
        ndelay(kUsec);
        read_lock(lock);
        t1 = now() - kUsec;
        read_unlock(lock);
    });
    sim.run();
    EXPECT_EQ(t0, 0);    // first touch: the line is local
    EXPECT_EQ(t1, 100);  // the line moves from CPU 0
}

namespace {

// One holder keeps a spinlock for 10 us while `spinners` CPUs queue on it; each then takes it
// and lets it go at once. The mean hand-off from the holder's release to the last waiter in,
// with a 100 ns line transfer, under the lock-line model `impl` (caches on) or without caches.
Time mean_handoff(int spinners, sim::SpinlockImpl impl, bool caches) {
    auto cfg = zero_config(spinners + 1, 10 * kMsec);
    cfg.profile.primitive.cacheline_transfer = 100;
    if (caches) {
        cfg.profile.memory.private_kib = 256;
        cfg.profile.memory.llc_kib = 1024;
    }
    cfg.spinlock = impl;
    SimPlatform sim(cfg);
    Spinlock lock("l", sim);
    Time released = -1, last_in = -1;
    sim.create_task({"holder", Sched::Other, 0, 0, false}, [&] {
        spin_lock(lock);
        ndelay(10 * kUsec);
        released = now();
        spin_unlock(lock);
    });
    for (int i = 1; i <= spinners; ++i)
        sim.create_task({"w" + std::to_string(i), Sched::Other, 0, i, false}, [&] {
            ndelay(kUsec);
            spin_lock(lock);
            last_in = std::max(last_in, now());
            spin_unlock(lock);
        });
    auto r = sim.run();
    EXPECT_TRUE(r.violations.empty());
    return (last_in - released) / spinners;
}

}  // namespace

// 2.6.9's byte lock: every spinner re-reads the word and retries its atomic at each release,
// and the next release waits for that traffic: the hand-off slows as the spinners grow. The
// queued lock's hand-off does not grow; without caches the model is the flat one.
TEST(Locks, SpinnersBounceTheLineOfAByteLock) {
    using sim::SpinlockImpl;
    std::vector<Time> byte, queued;
    for (int n : {1, 2, 4, 8, 16}) {
        byte.push_back(mean_handoff(n, SpinlockImpl::Byte, true));
        queued.push_back(mean_handoff(n, SpinlockImpl::Queued, true));
        EXPECT_EQ(mean_handoff(n, SpinlockImpl::Byte, false), 100) << n;  // one transfer
    }
    for (size_t i = 1; i < byte.size(); ++i) {
        EXPECT_GT(byte[i], byte[i - 1]) << i;
        EXPECT_LE(queued[i], 4 * 100) << i;  // release, re-read + atomic, the next re-read
    }
    EXPECT_GT(byte.back(), 4 * queued.back());
    // Alone, a waiter costs the same under both: the release's transfer, its re-read and atomic.
    EXPECT_EQ(byte.front(), 300);
    EXPECT_EQ(queued.front(), 300);
}
