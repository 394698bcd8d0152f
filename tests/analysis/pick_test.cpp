// pick ranks designs against limits as documented in analysis/pick.h; results files round-trip
// and shards merge back in order.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <filesystem>

#include "analysis/pick.h"
#include "analysis/results_file.h"
#include "analysis/table.h"
#include "tests/temp_dir.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::analysis;

namespace {

RunSummary run(std::string label, int64_t preempt_off, int64_t toggle, double ops,
               uint64_t violations = 0) {
    RunSummary r;
    r.strategy = r.label = std::move(label);
    r.platform = "sim";
    r.seed = 1;
    r.preempt_off_max_ns = preempt_off;
    r.preempt_off_count = 10;
    r.toggle_max_ns = toggle;
    r.toggle_count = 5;
    r.ops_per_sec = ops;
    r.violations = violations;
    return r;
}

constexpr int64_t us = 1000, ms = 1000 * us;

RunSummary at(RunSummary r, const std::string &sidtab, uint64_t seed = 1) {
    r.point = {{"core.sidtab", sidtab}};
    r.seed = seed;
    return r;
}

bool has(const std::string &text, const std::string &part) {
    return text.find(part) != std::string::npos;
}

// rwlock over the preempt-off limit in the legacy era only; rcu-cond-dup within it everywhere.
std::vector<RunSummary> sidtab_sweep() {
    return {at(run("rwlock", 50 * us, 1 * ms, 9e5), "hash"),
            at(run("rwlock", 60 * us, 1 * ms, 9e5), "linear"),
            at(run("rwlock", 150 * us, 1 * ms, 9e5), "legacy"),
            at(run("rcu-cond-dup", 20 * us, 1 * ms, 8e5), "hash"),
            at(run("rcu-cond-dup", 30 * us, 1 * ms, 8e5), "linear"),
            at(run("rcu-cond-dup", 40 * us, 1 * ms, 8e5), "legacy")};
}

}  // namespace

TEST(Pick, RanksByHeadroomThenThroughput) {
    std::vector<RunSummary> runs = {
        run("rwlock", 1200 * us, 2 * ms, 9e5),        // preempt-off over the limit
        run("rcu-full-copy", 20 * us, 40 * ms, 9e5),  // toggle over the limit
        run("rcu-cond-dup", 20 * us, 1 * ms, 8e5),    // meets, ratio 0.2 (preempt-off)
        run("percpu-rwsem", 50 * us, 8 * ms, 9.5e5),  // meets, ratio 0.8
        run("seqlock", 10 * us, 1 * ms, 9.9e5, 2),    // violations: never picked
    };
    Limits limits{{"preempt_off.max_ns", {100 * us}}, {"toggle.max_ns", {10 * ms}}};
    Pick p = pick(runs, limits);
    ASSERT_EQ(p.ranked.size(), 5u);
    EXPECT_TRUE(p.any_meets());
    EXPECT_EQ(p.ranked[0].label, "rcu-cond-dup");
    EXPECT_EQ(p.ranked[1].label, "percpu-rwsem");
    EXPECT_FALSE(p.ranked[2].meets);
    EXPECT_EQ(p.ranked.back().label, "seqlock");
    std::string text = format_pick(p, limits);
    EXPECT_NE(text.find("pick: rcu-cond-dup"), std::string::npos) << text;
    EXPECT_NE(text.find("preempt-off 1.20ms > 100.0us"), std::string::npos) << text;
    EXPECT_NE(text.find("2 self-check violations"), std::string::npos) << text;
}

TEST(Pick, SaysSoWhenNobodyMeetsTheLimits) {
    std::vector<RunSummary> runs = {run("rwlock", 1200 * us, 2 * ms, 9e5),
                                    run("rcu-full-copy", 20 * us, 40 * ms, 9e5)};
    Limits limits{{"preempt_off.max_ns", {10 * us}}, {"toggle.max_ns", {1 * ms}}};
    Pick p = pick(runs, limits);
    EXPECT_FALSE(p.any_meets());
    std::string text = format_pick(p, limits);
    EXPECT_NE(text.find("none of the designs meets every limit"), std::string::npos) << text;
    // rcu-full-copy is 2x over (preempt-off) and 40x (toggle); rwlock 120x: the closest is the
    // one with the smallest worst ratio.
    EXPECT_NE(text.find("the closest is rcu-full-copy"), std::string::npos) << text;
}

TEST(Pick, JudgesADesignByItsWorstRun) {
    std::vector<RunSummary> runs = {run("rcu-cond-dup", 20 * us, 1 * ms, 8e5),
                                    run("rcu-cond-dup", 150 * us, 1 * ms, 8e5)};
    Pick p = pick(runs, {{"preempt_off.max_ns", {100 * us}}});
    ASSERT_EQ(p.ranked.size(), 1u);
    EXPECT_FALSE(p.ranked[0].meets);
}

TEST(Pick, ASweepIsJudgedAtEachPointAndNamesThePointThatDecided) {
    const Limits limits{{"preempt_off.max_ns", {100 * us}}};
    const Pick p = pick(sidtab_sweep(), limits);
    EXPECT_EQ(p.points, (std::vector<std::string>{"core.sidtab=hash", "core.sidtab=linear",
                                                  "core.sidtab=legacy"}));
    ASSERT_EQ(p.ranked.size(), 2u);
    const Verdict &rwlock = p.ranked[1];
    EXPECT_EQ(rwlock.label, "rwlock");
    EXPECT_FALSE(rwlock.meets);
    EXPECT_EQ(rwlock.point, "core.sidtab=legacy");
    ASSERT_EQ(rwlock.at_points.size(), 3u);
    EXPECT_TRUE(rwlock.at_points[0].meets);
    EXPECT_TRUE(rwlock.at_points[1].meets);
    EXPECT_FALSE(rwlock.at_points[2].meets);
    EXPECT_EQ(p.ranked[0].point, "core.sidtab=legacy");  // its largest ratio, 0.40x
    const std::string text = format_pick(p, limits);
    EXPECT_TRUE(has(text, "judged: 6 runs of 2 designs, 3 points, 1 seed\n")) << text;
    // One row per point, designs in rank order.
    EXPECT_TRUE(has(text, "  point               rcu-cond-dup  rwlock\n")) << text;
    EXPECT_TRUE(has(text, "  core.sidtab=hash    meets 0.20x   meets 0.50x\n")) << text;
    EXPECT_TRUE(has(text, "  core.sidtab=legacy  meets 0.40x   over 1.50x\n")) << text;
    EXPECT_TRUE(has(text,
                    "worst case at core.sidtab=legacy: over a limit; meets the limits at 2 "
                    "of 3 points"))
        << text;
    EXPECT_TRUE(has(text,
                    "preempt-off 150.0us > 100.0us (1.50x of the limit) at "
                    "core.sidtab=legacy"))
        << text;
    EXPECT_TRUE(has(text, "(3 runs: 3 points, 1 seed)")) << text;
}

TEST(Pick, SeedsAreCountedApartFromPoints) {
    // Three seeds at each of three points: 9 runs, and each limit counts the seeds at a point.
    std::vector<RunSummary> runs;
    for (const char *sidtab : {"hash", "linear", "legacy"})
        for (uint64_t seed : {1, 2, 3})
            runs.push_back(
                at(run("rwlock", (sidtab == std::string("legacy") && seed == 2 ? 150 : 50) * us,
                       1 * ms, 9e5),
                   sidtab, seed));
    const Limits limits{{"preempt_off.max_ns", {100 * us}}};
    const Pick p = pick(runs, limits);
    ASSERT_EQ(p.ranked.size(), 1u);
    EXPECT_EQ(p.ranked[0].runs, 9u);
    EXPECT_EQ(p.ranked[0].seeds, 3u);
    EXPECT_EQ(p.ranked[0].points, 3u);
    const std::string text = format_pick(p, limits);
    EXPECT_TRUE(has(text, "judged: 9 runs of 1 design, 3 points, 3 seeds\n")) << text;
    EXPECT_TRUE(has(text, "(9 runs: 3 points, 3 seeds)")) << text;
    EXPECT_TRUE(has(text, "at core.sidtab=legacy; 2 of 3 seeds meet it there (unstable)")) << text;
    EXPECT_TRUE(has(text, "the verdict differs between seeds at core.sidtab=legacy (2 of 3 seeds"))
        << text;
}

TEST(Pick, PointJudgesOnePoint) {
    const Limits limits{{"preempt_off.max_ns", {100 * us}}};
    const Pick p =
        pick(sidtab_sweep(), limits, {}, {.point = {{"core.sidtab", "hash"}}, .plan = {}});
    EXPECT_EQ(p.points, std::vector<std::string>{"core.sidtab=hash"});
    EXPECT_EQ(p.runs, 2u);
    ASSERT_EQ(p.ranked.size(), 2u);
    EXPECT_TRUE(p.ranked[0].meets);
    EXPECT_TRUE(p.ranked[1].meets);
    EXPECT_TRUE(
        has(format_pick(p, limits), "judged: 2 runs of 2 designs, 1 point (core.sidtab=hash)"));
    EXPECT_THROW(pick(sidtab_sweep(), limits, {}, {.point = {{"machine.cpus", "2"}}, .plan = {}}),
                 UserError);
    EXPECT_THROW(pick(sidtab_sweep(), limits, {}, {.point = {{"core.sidtab", "tree"}}, .plan = {}}),
                 UserError);
    EXPECT_THROW(parse_point("core.sidtab"), UserError);
    EXPECT_EQ(parse_point("core.sidtab=hash"),
              (std::pair<std::string, std::string>{"core.sidtab", "hash"}));
}

TEST(Pick, ABrokenDesignReadsBrokenWhateverItsFigures) {
    // seqlock meets every limit by its figures, but has violations.
    std::vector<RunSummary> runs = {run("seqlock", 10 * us, 1 * ms, 9.9e5, 3),
                                    run("rwlock", 50 * us, 1 * ms, 9e5)};
    const Limits limits{{"preempt_off.max_ns", {100 * us}}};
    for (const Limits &l : {limits, Limits{}}) {
        const Pick p = pick(runs, l);
        ASSERT_EQ(p.ranked.size(), 2u);
        EXPECT_EQ(p.ranked[1].label, "seqlock");
        EXPECT_STREQ(verdict_text(p.ranked[1], p.limits_given), "broken (self-check violations)");
        const std::string text = format_pick(p, l);
        EXPECT_TRUE(has(text, "seqlock  broken (self-check violations)")) << text;
        EXPECT_TRUE(has(text, "above seqlock: it meets every limit; seqlock does not")) << text;
    }
}

TEST(Pick, WithoutLimitsSaysSoAndRanksByThroughput) {
    std::vector<RunSummary> runs = {run("rcu-full-copy", 51 * ms, 60 * ms, 8e5),
                                    run("rwlock", 50 * us, 1 * ms, 9e5)};
    const Pick p = pick(runs, {});
    EXPECT_FALSE(p.limits_given);
    ASSERT_EQ(p.ranked.size(), 2u);
    EXPECT_EQ(p.ranked[0].label, "rwlock");
    const std::string text = format_pick(p, {});
    EXPECT_TRUE(has(text, "limits: none given")) << text;
    EXPECT_TRUE(has(text, "pick: rwlock (by throughput: no limit given)")) << text;
    EXPECT_TRUE(has(text, "rcu-full-copy  no limit given")) << text;
    EXPECT_FALSE(has(text, "meets the limits")) << text;
    EXPECT_TRUE(has(text, "above rcu-full-copy: throughput: 900000 ops/s, rcu-full-copy's 800000"))
        << text;
}

TEST(Pick, EachPlaceSaysTheFigureThatDecidedIt) {
    // Headroom 0.5004x against 0.5005x: shown to the decimal that tells them apart.
    std::vector<RunSummary> runs = {run("seqlock", 50050, 1 * ms, 9e5),
                                    run("rwlock", 50040, 1 * ms, 9e5),
                                    run("rwsem", 50050, 1 * ms, 9e5)};
    const Limits limits{{"preempt_off.max_ns", {100 * us}}};
    const Pick p = pick(runs, limits);
    ASSERT_EQ(p.above.size(), 2u);
    EXPECT_EQ(p.ranked[0].label, "rwlock");
    EXPECT_EQ(p.above[0],
              "headroom: its worst is 0.5004x of the preempt-off limit, seqlock's 0.5005x of the "
              "preempt-off limit");
    EXPECT_EQ(p.above[1], "tied with rwsem on every figure: kept in the results file's order");
}

TEST(Pick, IncompleteResultsListWhatDidNotRunAndRankOnlyWhatDid) {
    // The plan: three designs at three points; seqlock never ran, rwlock not at legacy.
    std::vector<RunSummary> runs = sidtab_sweep();
    runs.erase(runs.begin() + 2);  // rwlock at legacy
    Plan plan;
    plan.complete = false;
    plan.why = "it says \"complete\": false";
    plan.labels = {"rwlock", "rcu-cond-dup", "seqlock"};
    plan.seeds = {1};
    for (const char *s : {"hash", "linear", "legacy"})
        plan.points.push_back({{"core.sidtab", s}});
    const Limits limits{{"preempt_off.max_ns", {100 * us}}};
    const Pick p = pick(runs, limits, {}, {.point = {}, .plan = plan});
    EXPECT_TRUE(p.incomplete);
    EXPECT_EQ(p.not_run, std::vector<std::string>{"seqlock"});
    ASSERT_EQ(p.ranked.size(), 2u);  // seqlock is not ranked
    EXPECT_EQ(p.planned_runs, 9u);
    const std::string text = format_pick(p, limits);
    EXPECT_TRUE(has(text,
                    "warning: incomplete results: it says \"complete\": false; 5 of 9 "
                    "planned runs are here"))
        << text;
    EXPECT_TRUE(has(text, "among the designs and points that ran (not run: seqlock)")) << text;
    EXPECT_TRUE(has(text, "core.sidtab=legacy  meets 0.40x   not run")) << text;
    EXPECT_TRUE(has(text, "not run at core.sidtab=legacy")) << text;
    EXPECT_TRUE(has(text, " -. seqlock       not run  (no run in the results: not ranked)"))
        << text;
}

TEST(ResultsFile, PlannedRunsComeFromTheScenario) {
    ResultsFile r;
    r.scenario = {
        {"strategies", {"rwlock", "seqlock"}},
        {"seeds", {1, 2}},
        {"sweep", {{"core.sidtab", {"\"hash\"", "'legacy'"}}, {"machine.cpus", {"2", "4"}}}},
        {"complete", false}};
    const Plan plan = planned_runs(r);
    EXPECT_FALSE(plan.complete);
    EXPECT_EQ(plan.labels, (std::vector<std::string>{"rwlock", "seqlock"}));
    EXPECT_EQ(plan.seeds, (std::vector<uint64_t>{1, 2}));
    ASSERT_EQ(plan.points.size(), 4u);
    EXPECT_EQ(plan.points[1], (std::vector<std::pair<std::string, std::string>>{
                                  {"core.sidtab", "hash"}, {"machine.cpus", "4"}}));
    EXPECT_EQ(plan.points[2][0].second, "legacy");
    r.scenario["complete"] = true;
    EXPECT_TRUE(planned_runs(r).complete);
    r.scenario["shard"] = "0/2";
    EXPECT_FALSE(planned_runs(r).complete);
}

TEST(Pick, ParsesLimits) {
    EXPECT_EQ(parse_limit_ns("--max-toggle", "10ms"), 10 * ms);
    EXPECT_EQ(parse_limit_bytes("--max-memory", "512M"), 512ll << 20);
    EXPECT_EQ(parse_limit_bytes("--max-memory", "4096"), 4096);
    EXPECT_THROW(parse_limit_ns("--max-toggle", "10"), UserError);
    EXPECT_THROW(parse_limit_bytes("--max-memory", "lots"), UserError);
}

TEST(ResultsFile, RoundTripsAndMergesShards) {
    namespace fs = std::filesystem;
    const locksim::testing::TestTempDir tmp;
    const fs::path &dir = tmp.path();
    ResultsFile whole;
    whole.scenario = {{"name", "t"}};
    std::vector<ResultsFile> shards(2);
    for (int i = 0; i < 5; ++i) {
        nlohmann::json j = summary_to_json(run("s" + std::to_string(i), i * us, i * ms, 1e5));
        j["index"] = i;
        whole.runs.push_back(j);
        shards[i % 2].runs.push_back(j);
    }
    for (int s = 0; s < 2; ++s) {
        shards[s].scenario = {{"name", "t"}, {"shard", fmt::format("{}/2", s)}};
        save_results(shards[s], (dir / fmt::format("shard{}.json", s)).string());
    }
    std::vector<ResultsFile> loaded = {load_results((dir / "shard0.json").string()),
                                       load_results((dir / "shard1.json").string())};
    ResultsFile merged = merge_results(loaded, {"shard0.json", "shard1.json"});
    EXPECT_EQ(merged.to_json(), whole.to_json());
    // A run in two shards is an error, as is a shard of another scenario.
    EXPECT_THROW(merge_results({loaded[0], loaded[0]}, {"a", "b"}), UserError);
    ResultsFile other = loaded[1];
    other.scenario["name"] = "other";
    EXPECT_THROW(merge_results({loaded[0], other}, {"a", "b"}), UserError);
}

TEST(ResultsFile, RejectsWhatIsNotAResultsFile) {
    namespace fs = std::filesystem;
    const locksim::testing::TestTempDir tmp;
    const fs::path f = tmp / "not_results.json";
    for (const char *text : {"{", "[]", R"({"schema": "other"})",
                             R"({"schema": "locksim/results/1", "runs": [{"strategy": 1}]})"}) {
        FILE *out = fopen(f.c_str(), "w");
        fputs(text, out);
        fclose(out);
        EXPECT_THROW(load_results(f.string()), UserError) << text;
    }
}

TEST(Table, OneRowPerRunWithHumanUnits) {
    std::string t = format_table({run("rwlock", 1200 * us, 2 * ms, 9e5)});
    EXPECT_NE(t.find("rwlock"), std::string::npos);
    EXPECT_NE(t.find("1.20ms"), std::string::npos) << t;
    std::string csv = format_csv({run("rwlock", 1200 * us, 2 * ms, 9e5)});
    EXPECT_NE(csv.find("\"rwlock\",\"rwlock\",sim,1,\"\",1200000,"), std::string::npos) << csv;
}

// A tail limit that a design's fit cannot judge: it is over the limit, and the reasons that
// rank it say so in words, not with a ratio standing for "none".
TEST(Pick, ATailWithoutAnEstimateIsOverWithoutARatio) {
    std::vector<RunSummary> runs = {run("seqlock", 20 * us, 1 * ms, 9e5),
                                    run("rwlock", 20 * us, 1 * ms, 9.5e5)};
    TailSource tails = [](size_t index, TailMetric, double) {
        TailQuantile q;
        q.ok = index == 0;
        q.estimate = q.high = 20 * ms;  // 2x over the limit
        if (!q.ok) q.note = "not a generalised Pareto tail";
        return q;
    };
    Limits limits{{"preempt_off.max_ns", {10 * ms, 1e-6}}};
    Pick p = pick(runs, limits, tails);
    ASSERT_EQ(p.ranked.size(), 2u);
    EXPECT_EQ(p.ranked[0].label, "seqlock");  // 2x over comes before no figure at all
    EXPECT_FALSE(p.ranked[0].meets);
    EXPECT_FALSE(p.ranked[1].meets);
    std::string text = format_pick(p, limits);
    EXPECT_TRUE(has(text, "no estimate (not a generalised Pareto tail)")) << text;
    EXPECT_TRUE(has(text, "its worst is 2.00x of the")) << text;
    EXPECT_TRUE(has(text, "rwlock's without a finite bound for the")) << text;
    EXPECT_FALSE(has(text, "1000000000")) << text;
    EXPECT_FALSE(has(text, "infx")) << text;
}
