// The simulator's lock costs: an M/M/1 queue, and the cache-line traffic of a lock word
// (the primitives' semantics are tested in tests/kernel/).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernel/mutex.h"
#include "kernel/rwlock.h"
#include "kernel/rwsem.h"
#include "kernel/spinlock.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::rwlock_reader_writer_reader;
using locksim::sim::testing::zero_config;

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
