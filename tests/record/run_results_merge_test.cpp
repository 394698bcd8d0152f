// The merge() members of record/run_results.h: merging two parts gives what one part recording
// both would hold.
#include <gtest/gtest.h>

#include "record/run_results.h"

using namespace locksim;
using namespace locksim::kernel;

TEST(ResultsMerge, IntervalsKeepTheLongestOfBothAndListTheOpenOnes) {
    IntervalStats a, b, both;
    a.keep = b.keep = both.keep = 2;
    auto section = [](Time start, Time len) {
        return AtomicInterval{0, start, len, "t", "", "", ""};
    };
    for (IntervalStats *s : {&a, &both})
        for (Time len : {5, 30})
            s->add(section(len, len));
    for (IntervalStats *s : {&b, &both})
        for (Time len : {20, 40})
            s->add(section(len, len));
    a.open_at_end = {7};
    b.open_at_end = {9};
    a.merge(b);
    EXPECT_EQ(a.length.count(), both.length.count());
    EXPECT_EQ(a.length.max(), both.length.max());
    EXPECT_EQ(a.total, both.total);
    ASSERT_EQ(a.longest.size(), 2u);
    EXPECT_EQ(a.longest[0].length, 40);
    EXPECT_EQ(a.longest[1].length, 30);
    EXPECT_EQ(a.open_at_end, (std::vector<Time>{7, 9}));
}

TEST(ResultsMerge, OperationsLocksRcuMemoryAndCpusAddUp) {
    OpStats o1, o2;
    o1.completed = 2;
    o1.latency.record(10);
    o1.gp_wait_ns = 5;
    o1.peak_live_bytes = 100;
    o2.completed = 3;
    o2.latency.record(50);
    o2.gp_wait_ns = 7;
    o2.caused_wait_ns = 4;
    o2.peak_live_bytes = 60;
    o2.open_at_end = {50};
    o1.merge(o2);
    EXPECT_EQ(o1.completed, 5u);
    EXPECT_EQ(o1.latency.count(), 2u);
    EXPECT_EQ(o1.gp_wait_ns, 12);
    EXPECT_EQ(o1.caused_wait_ns, 4);
    EXPECT_EQ(o1.peak_live_bytes, 100);
    EXPECT_EQ(o1.open_at_end, (std::vector<Time>{50}));

    LockStats l1, l2;
    l1.kind = "spinlock";
    l1.acquisitions[1] = 3;
    l2.acquisitions[1] = 4;
    l2.contended[0] = 1;
    l2.wait[0].record(8);
    l2.wait_open_at_end[0] = {8};
    l1.merge(l2);
    EXPECT_EQ(l1.kind, "spinlock");
    EXPECT_EQ(l1.acquisitions[1], 7u);
    EXPECT_EQ(l1.contended[0], 1u);
    EXPECT_EQ(l1.wait[0].count(), 1u);
    EXPECT_EQ(l1.wait_open_at_end[0].size(), 1u);

    RcuStats r1, r2;
    r1.grace_periods = 1;
    r2.expedited_grace_periods = 2;
    r2.callbacks_invoked = 3;
    r2.grace_period_ns.record(1000);
    r1.merge(r2);
    EXPECT_EQ(r1.grace_periods, 1u);
    EXPECT_EQ(r1.expedited_grace_periods, 2u);
    EXPECT_EQ(r1.callbacks_invoked, 3u);
    EXPECT_EQ(r1.grace_period_ns.count(), 1u);

    MemStats m1, m2;
    m1.allocs_atomic = 1;
    m1.peak_bytes = 10;
    m2.allocs_sleeping = 2;
    m2.bytes_sleeping = 64;
    m2.frees = 1;
    m2.peak_bytes = 30;
    m1.merge(m2);
    EXPECT_EQ(m1.allocs_atomic, 1u);
    EXPECT_EQ(m1.allocs_sleeping, 2u);
    EXPECT_EQ(m1.bytes_sleeping, 64);
    EXPECT_EQ(m1.frees, 1u);
    EXPECT_EQ(m1.peak_bytes, 30);

    CpuStats c1{10, 1, 2, 3, 7, 8}, c2{5, 1, 1, 1, 2, 1};
    c1.merge(c2);
    EXPECT_EQ(c1.busy_ns, 15);
    EXPECT_EQ(c1.context_switches, 2u);
    EXPECT_EQ(c1.preempt_off_ns, 3);
    EXPECT_EQ(c1.irqs_off_ns, 4);
    EXPECT_EQ(c1.irq_ns, 9);
    EXPECT_EQ(c1.softirq_ns, 9);
}
