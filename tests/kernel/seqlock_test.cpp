// kernel/seqlock.h on the simulator: a reader that a writer overlapped is told to retry, one
// that arrives during a write spins until the write ends, one that no writer touched is not;
// the locking reader excludes writers.
#include <gtest/gtest.h>

#include "kernel/seqlock.h"
#include "sim/sim_platform.h"
#include "tests/sim/sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

TEST(Seqlock, AReaderNoWriterTouchedNeedNotRetry) {
    SimPlatform sim(zero_config(1, kMsec));
    Seqlock sl("test_seqlock", sim);
    bool retry = true;
    uint64_t seq = 1;
    sim.create_task({"reader"}, [&] {
        seq = read_seqbegin(sl);
        ndelay(10 * kUsec);
        retry = read_seqretry(sl, seq);
    });
    auto r = sim.run();
    EXPECT_EQ(seq, 0u);
    EXPECT_FALSE(retry);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Seqlock, AnOverlappedReaderRetriesAndALateOneWaitsForTheWriter) {
    SimPlatform sim(zero_config(3, kMsec));
    Seqlock sl("test_seqlock", sim);
    bool overlapped_retry = false;
    uint64_t late_seq = 1;
    Time late_in = -1;
    sim.create_task({"overlapped", Sched::Other, 0, 0, false}, [&] {
        uint64_t seq = read_seqbegin(sl);
        ndelay(100 * kUsec);  // the whole write happens meanwhile
        overlapped_retry = read_seqretry(sl, seq);
    });
    sim.create_task({"writer", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        write_seqlock(sl);
        ndelay(20 * kUsec);
        write_sequnlock(sl);
    });
    sim.create_task({"late", Sched::Other, 0, 2, false}, [&] {
        ndelay(15 * kUsec);  // inside the write section: the sequence is odd
        late_seq = read_seqbegin(sl);
        late_in = now();
    });
    auto r = sim.run();
    EXPECT_TRUE(overlapped_retry);
    EXPECT_EQ(late_seq, 2u);  // one whole write: begin and end
    EXPECT_GE(late_in, 30 * kUsec);
    EXPECT_LE(late_in, 30 * kUsec + kSeqcountSpin);  // spun in cpu_relax rounds
    // The write section held preemption off on the writer's CPU.
    EXPECT_EQ(r.preempt_off.longest.front().length, 20 * kUsec);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Seqlock, TheLockingReaderExcludesTheWriter) {
    SimPlatform sim(zero_config(2, kMsec));
    Seqlock sl("test_seqlock", sim);
    Time writer_in = -1;
    sim.create_task({"reader", Sched::Other, 0, 0, false}, [&] {
        read_seqlock_excl(sl);
        ndelay(50 * kUsec);
        read_sequnlock_excl(sl);
    });
    sim.create_task({"writer", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        write_seqlock(sl);
        writer_in = now();
        write_sequnlock(sl);
    });
    auto r = sim.run();
    EXPECT_EQ(writer_in, 50 * kUsec);
    EXPECT_EQ(r.locks.at("test_seqlock").contended[0], 1u);
    EXPECT_TRUE(r.violations.empty());
}
