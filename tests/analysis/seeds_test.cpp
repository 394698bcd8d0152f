// The spread between seeds, the worst over seeds, and the duration advice.
#include <gtest/gtest.h>

#include "analysis/duration_advice.h"
#include "analysis/seeds.h"

using namespace locksim::analysis;

TEST(Seeds, SpreadHasMinMaxAndAStudentTInterval) {
    Spread s = spread_of({1, 2, 3});
    EXPECT_EQ(s.n, 3u);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 3);
    EXPECT_DOUBLE_EQ(s.mean, 2);
    // sd 1, t(0.975, 2 degrees of freedom) = 4.3027: half-width 4.3027 / sqrt(3) = 2.4842.
    EXPECT_NEAR(s.ci_high - s.mean, 2.4842, 1e-3);
    EXPECT_NEAR(s.mean - s.ci_low, 2.4842, 1e-3);
    Spread one = spread_of({5});
    EXPECT_DOUBLE_EQ(one.ci_low, 5);
    EXPECT_EQ(format_range_ns(spread_of({88000, 244000})), "88.0us-244.0us");
    EXPECT_EQ(format_range_ns(spread_of({1000, 1000})), "1.0us");
}

TEST(Seeds, WorstOverSeedsKeepsCensoringAndLowestThroughput) {
    RunSummary a, b;
    a.label = b.label = "x";
    a.seed = 1;
    b.seed = 2;
    a.preempt_off_max_ns = 10;
    b.preempt_off_max_ns = 10;
    b.preempt_off_open = {1, true};
    a.ops_per_sec = 5;
    b.ops_per_sec = 3;
    RunSummary w = worst_over({&a, &b});
    EXPECT_EQ(w.preempt_off_max_ns, 10);
    EXPECT_TRUE(w.preempt_off_open.max_censored);
    EXPECT_DOUBLE_EQ(w.ops_per_sec, 3);
    std::vector<RunSummary> runs = {a, b};
    auto groups = group_by_design(runs);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].runs.size(), 2u);
}

// The worst wake-up's cause comes from the seed that gave the worst wake-up, in either order.
TEST(Seeds, WorstOverSeedsKeepsTheCauseOfTheWorstWakeup) {
    RunSummary a, b;
    a.label = b.label = "x";
    a.probe_count = b.probe_count = 10;
    a.probe_max_ns = 50;
    a.probe_worst_cause = "preempt-off section of set_bools, write_lock_irq @ rwlock.cpp:80";
    b.probe_max_ns = 7;
    b.probe_worst_cause = "on time";
    EXPECT_EQ(worst_over({&a, &b}).probe_worst_cause, a.probe_worst_cause);
    EXPECT_EQ(worst_over({&b, &a}).probe_worst_cause, a.probe_worst_cause);
}

TEST(DurationAdvice, SaysHowLongToRun) {
    RunCounts c;
    c.duration_ns = 1'000'000'000;
    c.warmup_ns = 50'000'000;
    c.commits = 9.5;         // per run
    c.probe_wakeups = 7600;  // per run
    c.worst_section_ns = 13'800'000;
    auto lines = duration_advice(c);
    ASSERT_EQ(lines.size(), 2u);
    // 30 commits at 10 per second: 3.05 s with the warm-up, rounded up to 5 s.
    EXPECT_NE(lines[0].find("too few boolean commits"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("duration = \"5s\""), std::string::npos) << lines[0];
    // 10000 wake-ups at 8000 per second: 1.3 s, rounded up to 2 s.
    EXPECT_NE(lines[1].find("duration = \"2s\""), std::string::npos) << lines[1];
    // Four seeds: 38 commits per design, enough; the wake-ups do not add up over seeds (each
    // run's tail is fitted on its own): still 2 s; a worst section of a third of the run is
    // too long.
    c.runs = 4;
    c.worst_section_ns = 300'000'000;
    lines = duration_advice(c);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[0].find("7600 per run"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("duration = \"2s\""), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find("longer than a tenth"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find("duration = \"5s\""), std::string::npos) << lines[1];
    // Runs that record the stretches that held their CPUs take the probe's tail from them: the
    // wake-ups' count draws no warning.
    c.held_stretches = true;
    lines = duration_advice(c);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("longer than a tenth"), std::string::npos) << lines[0];
}
