// The stretches that held each CPU against a woken task of the highest priority (RunResults::
// cpu_held): sections and interrupt time that overlap are one stretch, each CPU apart.
#include <gtest/gtest.h>

#include <vector>

#include "kernel/preempt.h"
#include "sim_test_util.h"

namespace locksim::sim {
namespace {

using namespace kernel;
using testing::zero_config;

// The histogram's values at its buckets' midpoints, and the same for expected lengths.
std::vector<int64_t> mids(std::vector<int64_t> v) {
    for (int64_t &x : v)
        x = Histogram::bucket_mid(Histogram::bucket_of(x));
    return v;
}
std::vector<int64_t> lengths(const Histogram &h) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < Histogram::kBuckets; ++i)
        for (uint64_t c = 0; c < h.count_at(i); ++c)
            out.push_back(Histogram::bucket_mid(i));
    return out;
}

// CPU 0: a preempt-off section (0-15 us) overlapping an IRQs-off one (10-20 us) is one stretch
// of 20 us; a later section of 7 us is another. CPU 1: a 30 us section at the same time as the
// first, on its own CPU: a stretch of its own.
TEST(CpuHeld, OverlappingSectionsMergePerCpu) {
    SimPlatform sim(zero_config(2, 10 * kMsec));
    sim.create_task({"a", Sched::Other, 0, 0, false}, [] {
        preempt_disable();
        ndelay(10 * kUsec);
        local_irq_disable();
        ndelay(5 * kUsec);
        preempt_enable();
        ndelay(5 * kUsec);
        local_irq_enable();
        ndelay(100 * kUsec);
        preempt_disable();
        ndelay(7 * kUsec);
        preempt_enable();
    });
    sim.create_task({"b", Sched::Other, 0, 1, false}, [] {
        preempt_disable();
        ndelay(30 * kUsec);
        preempt_enable();
    });
    const RunResults r = sim.run();
    EXPECT_TRUE(r.cpu_held_absent.empty());
    EXPECT_EQ(lengths(r.cpu_held), mids({7 * kUsec, 20 * kUsec, 30 * kUsec}));
    EXPECT_TRUE(r.cpu_held_open_at_end.empty());
    // The sections themselves are counted apart, as ftrace's tracers count them.
    EXPECT_EQ(r.preempt_off.length.count(), 3u);
    EXPECT_EQ(r.irqs_off.length.count(), 1u);
}

// A timer interrupt on an idle CPU, or on one running preemptible code, holds it for its own
// time; one that lands in a section lengthens that section's stretch instead of adding one.
TEST(CpuHeld, InterruptTimeJoinsTheSectionItLandsIn) {
    auto cfg = zero_config(3, 10 * kMsec);
    cfg.profile.primitive.timer_irq = 1000;
    SimPlatform sim(cfg);
    sim.create_task({"sleeper_idle", Sched::Fifo, 50, 0, false}, [] { sleep_until(50 * kUsec); });
    sim.create_task({"holder", Sched::Other, 0, 1, false}, [] {
        ndelay(40 * kUsec);
        preempt_disable();
        ndelay(20 * kUsec);
        preempt_enable();
    });
    sim.create_task({"sleeper_busy", Sched::Fifo, 50, 1, false}, [] { sleep_until(50 * kUsec); });
    sim.create_task({"preemptible", Sched::Other, 0, 2, false}, [] { ndelay(100 * kUsec); });
    sim.create_task({"sleeper_preempting", Sched::Fifo, 50, 2, false},
                    [] { sleep_until(50 * kUsec); });
    const RunResults r = sim.run();
    // CPUs 0 and 2: the interrupt alone (1 us); CPU 1: the section, 20 us of its own and the
    // interrupt's 1 us taken from it.
    EXPECT_EQ(lengths(r.cpu_held), mids({1 * kUsec, 1 * kUsec, 21 * kUsec}));
}

// A stretch still open when the measured window ends is kept as a lower bound, and listed.
TEST(CpuHeld, AStretchOpenAtTheEndIsALowerBound) {
    SimPlatform sim(zero_config(1, 100 * kUsec));
    sim.create_task({"a", Sched::Other, 0, 0, false}, [] {
        ndelay(60 * kUsec);
        preempt_disable();
        ndelay(100 * kUsec);
        preempt_enable();
    });
    const RunResults r = sim.run();
    EXPECT_EQ(lengths(r.cpu_held), mids({40 * kUsec}));
    EXPECT_EQ(r.cpu_held_open_at_end, (std::vector<Time>{40 * kUsec}));
}

// Without full preemption kernel code holds a CPU outside any section: no stretches, and why.
TEST(CpuHeld, NotRecordedWithoutFullPreemption) {
    auto cfg = zero_config(1, 1 * kMsec);
    cfg.preempt = PreemptModel::Voluntary;
    SimPlatform sim(cfg);
    sim.create_task({"a", Sched::Other, 0, 0, false}, [] {
        preempt_disable();
        ndelay(10 * kUsec);
        preempt_enable();
    });
    const RunResults r = sim.run();
    EXPECT_EQ(r.cpu_held.count(), 0u);
    EXPECT_NE(r.cpu_held_absent.find("preemption voluntary"), std::string::npos);
    const nlohmann::json j = r;
    EXPECT_FALSE(j.contains("cpu_held"));
    EXPECT_TRUE(j.contains("cpu_held_absent"));
}

}  // namespace
}  // namespace locksim::sim
