// Scheduling timelines computed by hand, on a profile where only explicit work costs time.
#include <gtest/gtest.h>

#include <vector>

#include "kernel/preempt.h"
#include "kernel/spinlock.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

TEST(Sched, FifoWakeupPreemptsOtherAtOnce) {
    SimPlatform sim(zero_config(1, 50 * kMsec));
    Time low_done = -1, high_start = -1, high_done = -1;
    sim.create_task({"low", Sched::Other, 0, 0, false}, [&] {
        ndelay(10 * kMsec);
        low_done = now();
    });
    sim.create_task({"high", Sched::Fifo, 50, 0, false}, [&] {
        sleep_until(2 * kMsec);
        high_start = now();
        ndelay(1 * kMsec);
        high_done = now();
    });
    auto r = sim.run();
    EXPECT_EQ(high_start, 2 * kMsec);
    EXPECT_EQ(high_done, 3 * kMsec);
    EXPECT_EQ(low_done, 11 * kMsec);  // 10 ms of work plus 1 ms preempted
    EXPECT_TRUE(r.violations.empty());
}

TEST(Sched, FifoPrioritiesRunHighestFirst) {
    SimPlatform sim(zero_config(1, 50 * kMsec));
    std::vector<std::pair<std::string, Time>> done;
    for (int prio : {10, 30, 20})
        sim.create_task({"f" + std::to_string(prio), Sched::Fifo, prio, 0, false}, [&, prio] {
            ndelay(1 * kMsec);
            done.emplace_back("f" + std::to_string(prio), now());
        });
    sim.run();
    std::vector<std::pair<std::string, Time>> want{
        {"f30", 1 * kMsec}, {"f20", 2 * kMsec}, {"f10", 3 * kMsec}};
    EXPECT_EQ(done, want);
}

TEST(Sched, PreemptOffSectionDefersTheWakeupToPreemptEnable) {
    SimPlatform sim(zero_config(1, 50 * kMsec));
    Time high_start = -1;
    sim.create_task({"low", Sched::Other, 0, 0, false}, [&] {
        ndelay(1 * kMsec);
        preempt_disable();
        ndelay(5 * kMsec);  // 1..6 ms, not preemptible
        preempt_enable();
        ndelay(1 * kMsec);
    });
    sim.create_task({"high", Sched::Fifo, 50, 0, false}, [&] {
        sleep_until(2 * kMsec);
        high_start = now();
    });
    auto r = sim.run();
    EXPECT_EQ(high_start, 6 * kMsec);
    ASSERT_FALSE(r.preempt_off.longest.empty());
    const AtomicInterval &iv = r.preempt_off.longest.front();
    EXPECT_EQ(iv.length, 5 * kMsec);
    EXPECT_EQ(iv.task, "low");
    EXPECT_NE(iv.start_site.find("preempt_disable @ sched_test.cpp"), std::string::npos)
        << iv.start_site;
    EXPECT_NE(iv.end_site.find("preempt_enable @ sched_test.cpp"), std::string::npos)
        << iv.end_site;
}

TEST(Sched, IrqsOffDefersTheTimerInterrupt) {
    SimPlatform sim(zero_config(2, 50 * kMsec));
    Time high_start = -1;
    sim.create_task({"low", Sched::Other, 0, 0, false}, [&] {
        unsigned long flags = local_irq_save();
        ndelay(4 * kMsec);
        local_irq_restore(flags);
    });
    // Sleeps on CPU 0, so its timer interrupt is CPU 0's, even though CPU 1 is idle.
    sim.create_task({"high", Sched::Fifo, 50, 0, false}, [&] {
        sleep_until(1 * kMsec);
        high_start = now();
    });
    auto r = sim.run();
    EXPECT_EQ(high_start, 4 * kMsec);
    ASSERT_FALSE(r.irqs_off.longest.empty());
    EXPECT_EQ(r.irqs_off.longest.front().length, 4 * kMsec);
}

// A spin section of length L delays a probe on that CPU by at most L, and by L when the probe's
// timer fires just as the section begins.
TEST(Sched, SpinSectionDelaysProbeByAtMostItsLength) {
    const Time L = 500 * kUsec, gap = 300 * kUsec, period = L + gap;
    SimPlatform sim(zero_config(1, 200 * kMsec));
    Spinlock lock("test_lock", sim);
    sim.create_task({"spinner", Sched::Other, 0, 0, false}, [&] {
        while (!kthread_should_stop()) {
            spin_lock(lock);
            ndelay(L);
            spin_unlock(lock);
            ndelay(gap);
        }
    });
    sim.create_task({"aligned", Sched::Fifo, 99, 0, true}, [&] {
        for (Time t = 1; !kthread_should_stop(); t += period)
            sleep_until(t);  // 1 ns after each section begins
    });
    sim.create_task({"drifting", Sched::Fifo, 98, 0, true}, [&] {
        for (Time t = 0; !kthread_should_stop(); t += 123457)
            sleep_until(t);
    });
    auto r = sim.run();
    const Histogram &aligned = r.wakeup_latency.at("aligned");
    const Histogram &drifting = r.wakeup_latency.at("drifting");
    EXPECT_GT(aligned.count(), 200u);
    EXPECT_EQ(aligned.max(), L - 1);
    EXPECT_EQ(aligned.min(), L - 1);
    EXPECT_GT(drifting.count(), 1000u);
    EXPECT_LE(drifting.max(), L);
    EXPECT_GT(drifting.max(), L / 2);
    EXPECT_EQ(r.preempt_off.longest.front().length, L);
    EXPECT_TRUE(r.violations.empty());
}

TEST(Sched, WakeupPlacementPrefersIdleCpus) {
    SimPlatform sim(zero_config(4, 10 * kMsec));
    std::vector<int> cpus(4, -1);
    for (int i = 0; i < 4; ++i)
        sim.create_task({"t" + std::to_string(i), Sched::Other, 0, -1, false}, [&, i] {
            ndelay(1 * kMsec);
            cpus[static_cast<size_t>(i)] = smp_processor_id();
        });
    auto r = sim.run();
    EXPECT_EQ(cpus, (std::vector<int>{0, 1, 2, 3}));
    for (const auto &c : r.cpus)
        EXPECT_EQ(c.busy_ns, 1 * kMsec);
}
