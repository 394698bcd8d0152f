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
