// A wake-up's wait from the stretches that held the CPUs (analysis/held_tail.h): the observed
// solution where the stretches show it, the fitted tail beyond, against values worked out by
// hand or drawn from a known distribution (fixed seeds; a statistical check, no timing).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/held_tail.h"
#include "record/histogram.h"

using namespace locksim;
using namespace locksim::analysis;

namespace {

TailOptions bucketed() {
    TailOptions o;
    o.bucketed = true;
    return o;
}

HeldSample of_histogram(const kernel::Histogram &h, double cpu_ns) {
    HeldSample s;
    s.stretches = tail_sample(h);
    s.cpu_ns = cpu_ns;
    return s;
}

// 1000 stretches of 100 us in 1 s of CPU time: a wake-up at a random instant waits more than x
// with probability 1000 (100 us - x) / 1 s; at p = 1e-3, x = 99 us, 1000 stretches longer.
TEST(HeldTail, ObservedWhereManyStretchesAreLonger) {
    HeldSample s;
    s.stretches.values = {{100000.0, 1000}};
    s.cpu_ns = 1e9;
    const TailQuantile q = held_quantile(s, 1e-3, {});
    ASSERT_TRUE(q.ok) << q.note;
    EXPECT_TRUE(q.empirical);
    EXPECT_TRUE(q.held);
    EXPECT_NEAR(q.estimate, 99000, 1e-6);
    EXPECT_EQ(q.held_longer, 1000u);
    // The CPUs are held 10 % of their time: a wake-up waits at all with probability 0.1.
    const TailQuantile never = held_quantile(s, 0.2, {});
    ASSERT_TRUE(never.ok);
    EXPECT_EQ(never.estimate, 0);
    EXPECT_NE(format_tail(never).find("held less than that share"), std::string::npos);
}

// Exponential stretches (mean 10 us), 20000 in 1000 s of CPU time: the expected excess over x
// is N sigma exp(-x / sigma), so at p = 1e-8 (10 us of excess) x = sigma ln(N sigma / (p C)),
// 99.0 us, where about one stretch is longer: the fitted tail is needed.
TEST(HeldTail, FittedTailFindsTheExponentialsWait) {
    const double sigma = 1e4, n = 20000, cpu = 1e12, p = 1e-8;
    const double truth = sigma * std::log(n * sigma / (p * cpu));
    std::mt19937_64 rng(7);
    std::exponential_distribution<double> draw(1 / sigma);
    int returned = 0, covered = 0, near = 0;
    for (int rep = 0; rep < 20; ++rep) {
        kernel::Histogram h;
        for (int i = 0; i < n; ++i)
            h.record(std::llround(draw(rng)));
        const TailQuantile q = held_quantile(of_histogram(h, cpu), p, bucketed());
        if (!q.ok) continue;
        EXPECT_FALSE(q.empirical);
        ++returned;
        covered += q.low <= truth && truth <= q.high;
        near += std::abs(q.estimate / truth - 1) < 0.15;
    }
    EXPECT_GE(returned, 18);
    EXPECT_GE(covered, returned * 8 / 10);
    EXPECT_GE(near, returned * 8 / 10);
}

// Stretches with a Pareto tail of shape 0.8: a wait weighted by length has no mean, and no
// estimate is given.
TEST(HeldTail, TooHeavyATailGivesNone) {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0, 1);
    kernel::Histogram h;
    for (int i = 0; i < 20000; ++i)
        h.record(std::llround(1000 * (std::pow(1 - u(rng), -0.8) - 1) / 0.8 + 500));
    const TailQuantile q = held_quantile(of_histogram(h, 1e11), 1e-6, bucketed());
    EXPECT_FALSE(q.ok);
    EXPECT_NE(q.note.find("too heavy"), std::string::npos) << q.note;
}

// The main job's rwlock, as its stretches were: a login section near 170 us a few dozen times
// in a second (its length spread 7 % by what met it), a group near 75 us, a continuous rest of
// short sections and interrupts below. The section's length is the wait: the estimate lies in
// its group, not beyond it, and not "no estimate" (no single tail fits above 120 us).
TEST(HeldTail, ARareFixedSectionAboveShortOnes) {
    kernel::Histogram h;
    std::mt19937_64 rng(11);
    std::exponential_distribution<double> rest(1 / 3000.0);
    for (int i = 0; i < 200000; ++i)
        h.record(std::min<int64_t>(std::llround(rest(rng)) + 100, 64000));
    for (const auto &[v, c] : std::vector<std::pair<int64_t, int>>{{73471, 8},
                                                                   {74495, 10},
                                                                   {75007, 16},
                                                                   {76031, 10},
                                                                   {167423, 19},
                                                                   {168447, 11},
                                                                   {169471, 2},
                                                                   {170495, 3},
                                                                   {171519, 1},
                                                                   {173567, 1},
                                                                   {174591, 1},
                                                                   {176639, 1},
                                                                   {177663, 3},
                                                                   {178687, 5}})
        h.record(v, static_cast<uint64_t>(c));
    const TailQuantile q = held_quantile(of_histogram(h, 7.6e9), 1e-6, bucketed());
    ASSERT_TRUE(q.ok) << q.note;
    EXPECT_GT(q.estimate, 170000);
    EXPECT_LE(q.estimate, h.max());
}

TEST(HeldTail, NoneWhereTheRunRecordsNoStretches) {
    HeldSample s;
    s.absent = "host threads";
    const TailQuantile q = held_quantile(s, 1e-6, {});
    EXPECT_FALSE(q.ok);
    EXPECT_NE(q.note.find("host threads"), std::string::npos);
}

// A run with both: the stretches' wait plus the wake-ups' median path, raised to the worst
// wake-up seen where that is longer; the wake-ups alone where the run has no stretches.
nlohmann::json run_with(const kernel::Histogram &wakeups, const kernel::Histogram *held) {
    nlohmann::json d = {{"duration_ns", 1000000000},
                        {"cpus", nlohmann::json::array({{}, {}})},
                        {"wakeup_latency_ns", {{"probe/0", wakeups}}}};
    if (held)
        d["cpu_held"] = {{"length_ns", *held}, {"open_at_end_ns", nlohmann::json::array()}};
    else
        d["cpu_held_absent"] = "host threads";
    return {{"detail", d}};
}

TEST(HeldTail, AProbeWakeupTakesTheStretchesAndThePath) {
    kernel::Histogram wakeups, held;
    wakeups.record(4000, 9000);  // the path
    wakeups.record(30000, 1);
    held.record(100000, 1000);  // 1000 stretches of 100 us in 2 s of CPU time
    const double path = static_cast<double>(wakeups.value_at_percentile(50));
    // At p = 1e-3: 1000 (100 us - x) = 2e6 ns, x = 98 us, plus the path.
    const TailQuantile q = probe_wakeup_tails(run_with(wakeups, &held), {1e-3}, bucketed()).front();
    ASSERT_TRUE(q.ok) << q.note;
    EXPECT_TRUE(q.held);
    EXPECT_NEAR(q.estimate, 98000 + path, 1);
    EXPECT_NE(format_tail(q).find("the wake-ups' median"), std::string::npos);
    // A worst wake-up longer than the stretches' wait raises it.
    wakeups.record(500000, 1);
    const TailQuantile raised =
        probe_wakeup_tails(run_with(wakeups, &held), {1e-3}, bucketed()).front();
    EXPECT_EQ(raised.estimate, static_cast<double>(wakeups.max()));
    EXPECT_NE(raised.other.find("raised to the worst wake-up seen"), std::string::npos);
    // Without stretches: the wake-ups' own estimate (observed at this p), and why not the other.
    const TailQuantile alone =
        probe_wakeup_tails(run_with(wakeups, nullptr), {1e-3}, bucketed()).front();
    EXPECT_FALSE(alone.held);
    EXPECT_NE(alone.other.find("host threads"), std::string::npos);
    // Stretches that give none (a tail too heavy for a wait with a mean): none, whatever the
    // wake-ups give (their probes' phase is the scenario's, not any instant's).
    kernel::Histogram heavy;
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0, 1);
    for (int i = 0; i < 20000; ++i)
        heavy.record(std::llround(1000 * (std::pow(1 - u(rng), -0.8) - 1) / 0.8 + 500));
    const TailQuantile refused =
        probe_wakeup_tails(run_with(wakeups, &heavy), {1e-6}, bucketed()).front();
    EXPECT_FALSE(refused.ok);
    EXPECT_NE(refused.note.find("from the stretches that held the CPUs"), std::string::npos)
        << refused.note;
    EXPECT_NE(refused.note.find("the wake-ups alone give"), std::string::npos) << refused.note;
    // A run without a probe has no wake-up to estimate, whatever held its CPUs.
    const TailQuantile none =
        probe_wakeup_tails(run_with(kernel::Histogram{}, &held), {1e-3}, bucketed()).front();
    EXPECT_FALSE(none.ok);
    EXPECT_FALSE(none.held);
}

}  // namespace
