// Re-pricing a run's recorded sections and commits (analysis/reprice.h), the record it starts
// from (kernel::PricedTop, the results file's "priced") and robust's use of it: which cells it
// judges without a run, which it leaves to one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "analysis/reprice.h"
#include "analysis/robust.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::analysis;

namespace {

kernel::PricedItem item(int64_t len, int64_t work, int64_t memory = 0, int64_t primitive = 0,
                        int64_t gp = 0) {
    return {len, {work, memory, primitive, gp}};
}

constexpr Factors kOnes = {1, 1, 1, 1};

// A nominal run of `label` whose worst preempt-off section is `len` ns, `work` of it work, the
// rest primitive; `sections` recorded in all.
RunSummary nominal_run(const PriceSpace &s, const std::string &label, int64_t len, int64_t work,
                       uint64_t seed = 1) {
    RunSummary r;
    r.strategy = r.label = label;
    r.platform = "sim";
    r.seed = seed;
    r.point = nominal_point(s);
    r.preempt_off_max_ns = len;
    r.preempt_off_count = 10;
    r.ops_per_sec = 1000;
    r.priced.preempt_off.add(item(len, work, 0, len - work));
    r.priced.preempt_off.add(item(len / 2, len / 2));
    return r;
}

PriceSpace space() {
    PriceSpace s;
    s.families = {"work", "memory", "primitive", "grace_period"};
    s.range = {2, 1, 2, 1};
    s.source = "test";
    return s;
}

}  // namespace

TEST(PricedTop, KeepsTheLongestFirstAndCountsEvery) {
    kernel::PricedTop top;
    for (int64_t len = 1; len <= 40; ++len)
        top.add(item((len * 37) % 41, 0));  // a permutation of 1..40
    EXPECT_EQ(top.count, 40u);
    ASSERT_EQ(top.items.size(), kernel::PricedTop::kKeep);
    for (size_t i = 0; i < top.items.size(); ++i)
        EXPECT_EQ(top.items[i].len, static_cast<int64_t>(40 - i));
}

TEST(Reprice, PricesEachFamilyByItsFactorAndLeavesTheRestAlone) {
    RunSummary r;
    // 100 ns: 40 work, 10 memory, 20 primitive, 5 grace period, 25 unpriced.
    r.priced.preempt_off.add(item(100, 40, 10, 20, 5));
    r.priced.preempt_off.add(item(90, 90));
    const auto e = reprice(r, "preempt_off.max_ns", {2, 3, 0.5, 4});
    ASSERT_TRUE(e);
    // 80 + 30 + 10 + 20 + 25 = 165 against 180 for the all-work section.
    EXPECT_DOUBLE_EQ(e->lo, 180);
    EXPECT_DOUBLE_EQ(e->hi, 180);  // every item kept: exact
    const auto same = reprice(r, "preempt_off.max_ns", kOnes);
    EXPECT_DOUBLE_EQ(same->lo, 100);
    EXPECT_FALSE(reprice(r, "probe_wakeup.max_ns", kOnes));
    EXPECT_FALSE(reprice(RunSummary{}, "preempt_off.max_ns", kOnes));  // nothing recorded
}

TEST(Reprice, BoundsWhatItDidNotKeep) {
    RunSummary r;
    for (int64_t len = 100; len < 100 + static_cast<int64_t>(kernel::PricedTop::kKeep) + 5; ++len)
        r.priced.irqs_off.add(item(len, 0));  // unpriced: no factor moves them
    const int64_t shortest = r.priced.irqs_off.items.back().len;
    const auto e = reprice(r, "irqs_off.max_ns", {3, 1, 1, 1});
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(e->lo, 100 + kernel::PricedTop::kKeep + 4);
    // An item not kept, all work, could be up to 3x the shortest kept.
    EXPECT_DOUBLE_EQ(e->hi, 3.0 * static_cast<double>(shortest));
    // No factor above 1: nothing not kept can outgrow the shortest kept.
    const auto cheaper = reprice(r, "irqs_off.max_ns", {0.5, 1, 1, 1});
    EXPECT_DOUBLE_EQ(cheaper->hi, cheaper->lo);
}

TEST(Reprice, SidesOfALimit) {
    EXPECT_EQ(estimate_side({80, 80}, 100), Side::Under);   // 92 <= 100
    EXPECT_EQ(estimate_side({90, 90}, 100), Side::Near);    // 103.5 > 100
    EXPECT_EQ(estimate_side({80, 95}, 100), Side::Near);    // its bound comes near
    EXPECT_EQ(estimate_side({120, 120}, 100), Side::Over);  // 102 > 100
    EXPECT_EQ(estimate_side({115, 115}, 100), Side::Near);
    EXPECT_TRUE(repriceable("toggle.max_ns", Limit{.value = 1}));
    EXPECT_FALSE(repriceable("toggle.max_ns", Limit{.value = 1, .probability = 1e-9}));
    EXPECT_FALSE(repriceable("reader.p99_ns", Limit{.value = 1}));
}

TEST(Reprice, TheMarginWidensToTheSpreadBetweenSeeds) {
    EXPECT_DOUBLE_EQ(repricing_margin({100}), kRepriceError);
    EXPECT_DOUBLE_EQ(repricing_margin({100, 110}), kRepriceError);
    EXPECT_DOUBLE_EQ(repricing_margin({150, 100, 120}), 0.5);
    EXPECT_DOUBLE_EQ(repricing_margin({0, 0}), kRepriceError);  // none in any seed
    EXPECT_TRUE(std::isinf(repricing_margin({0, 10})));
    EXPECT_EQ(estimate_side({80, 80}, 100, 0.5), Side::Near);
    EXPECT_EQ(estimate_side({60, 60}, 100, 0.5), Side::Under);
    EXPECT_EQ(estimate_side({210, 210}, 100, 0.5), Side::Over);
    EXPECT_EQ(estimate_side({1, 1}, 100, std::numeric_limits<double>::infinity()), Side::Near);
}

// A design whose worst section is 40 us in one seed and 70 us in the other, all work: at work
// x1.2 the worst is estimated at 84 us, clear of 100 us by 15%, but not by the 75% the seeds
// differ by.
TEST(Reprice, AFigureThatMovesBetweenSeedsRunsInFull) {
    const PriceSpace s = space();
    const std::vector<std::vector<double>> worlds = {{1.2, 1, 1, 1}};
    const Limits preempt = {{"preempt_off.max_ns", Limit{.value = 100'000}}};
    std::vector<RunSummary> runs = {nominal_run(s, "a", 40'000, 40'000, 1),
                                    nominal_run(s, "a", 70'000, 70'000, 2)};
    EXPECT_EQ(full_runs_needed(s, worlds, preempt, {"a"}, runs),
              (std::vector<std::vector<std::string>>{{"a"}}));
    const Robust r = judge_robust(s, worlds, preempt, {"a"}, runs, {});
    ASSERT_EQ(r.margins.size(), 1u);
    EXPECT_DOUBLE_EQ(r.margins[0].margin, 0.75);
    EXPECT_NE(format_robust(r).find("a preempt-off 75%"), std::string::npos) << format_robust(r);
    // The same figure in both seeds: judged by the estimate.
    runs[0] = nominal_run(s, "a", 70'000, 70'000, 1);
    EXPECT_EQ(full_runs_needed(s, worlds, preempt, {"a"}, runs),
              (std::vector<std::vector<std::string>>{{}}));
}

TEST(Reprice, ARunSummaryInAWorldHasTheEstimatedWorst) {
    const PriceSpace s = space();
    const RunSummary base = nominal_run(s, "a", 100'000, 60'000);
    const auto world = world_point(s, {1.5, 1, 0.5, 1});
    const auto r = repriced(base, {1.5, 1, 0.5, 1}, world);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->point, world);
    EXPECT_EQ(r->preempt_off_max_ns, 90'000 + 20'000);
    EXPECT_EQ(r->toggle_max_ns, 0);  // no commit recorded, none estimated
}

TEST(Reprice, PricedRecordRoundTripsThroughTheResultsFile) {
    RunSummary r = nominal_run(space(), "a", 1000, 400);
    r.priced.toggle.add(item(5'000'000, 100'000, 0, 3000, 20'000));
    const RunSummary back = summary_from_json(summary_to_json(r), "test");
    ASSERT_EQ(back.priced.preempt_off.items.size(), 2u);
    EXPECT_EQ(back.priced.preempt_off.items[0].family, r.priced.preempt_off.items[0].family);
    EXPECT_EQ(back.priced.toggle.items[0].len, 5'000'000);
    EXPECT_EQ(back.priced.toggle.count, 1u);
    EXPECT_TRUE(summary_from_json(summary_to_json(RunSummary{}), "t").priced.empty());

    auto broken = [&](auto &&mutate, const char *says) {
        nlohmann::json j = summary_to_json(r);
        mutate(j["priced"]);
        try {
            summary_from_json(j, "results.json: run 3");
            ADD_FAILURE() << "accepted: " << says;
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find("results.json: run 3: 'priced'"),
                      std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
    };
    broken([](auto &p) { p["families"][0] = "cycles"; }, "must name the families");
    broken([](auto &p) { p.erase("toggle"); }, "'toggle' needs a count and items");
    broken([](auto &p) { p["preempt_off"]["items"][0].push_back(1); }, "an item is [length");
    broken([](auto &p) { p["preempt_off"]["items"][0][1] = -5; }, "non-negative");
    broken([](auto &p) { p["preempt_off"]["items"][0][1] = 5000; }, "exceed its length");
    broken([](auto &p) { std::swap(p["preempt_off"]["items"][0], p["preempt_off"]["items"][1]); },
           "longest first");
    broken([](auto &p) { p["preempt_off"]["count"] = 1; }, "more items than its count");
}

// Three designs with nominal runs only, against a 100 us preempt-off limit in a world where work
// costs 1.2x and primitives 0.8x: "clear" is 50 us all work (60 us), "near" 80 us all work
// (96 us), "over" 150 us half work (90 + 60 = 150 us).
TEST(Reprice, RobustJudgesWhatTheEstimateDecidesAndRunsTheRest) {
    const PriceSpace s = space();
    const std::vector<std::vector<double>> worlds = {{1.2, 1, 0.8, 1}};
    const Limits limits = {{"preempt_off.max_ns", Limit{.value = 100'000}},
                           {"reader.p99_ns", Limit{.value = 1'000'000'000}}};
    std::vector<RunSummary> runs = {nominal_run(s, "clear", 50'000, 50'000),
                                    nominal_run(s, "near", 80'000, 80'000),
                                    nominal_run(s, "over", 150'000, 75'000)};
    const std::vector<std::string> labels = {"clear", "near", "over"};
    // With a limit re-pricing cannot estimate (reader p99), only the design clearly over is
    // decided (it fails there); the others need a run.
    EXPECT_EQ(full_runs_needed(s, worlds, limits, labels, runs),
              (std::vector<std::vector<std::string>>{{"clear", "near"}}));
    const Limits preempt = {{"preempt_off.max_ns", Limit{.value = 100'000}}};
    EXPECT_EQ(full_runs_needed(s, worlds, preempt, labels, runs),
              (std::vector<std::vector<std::string>>{{"near"}}));
    // A broken design is decided wherever it is.
    runs[1].violations = 1;
    EXPECT_EQ(full_runs_needed(s, worlds, preempt, labels, runs),
              (std::vector<std::vector<std::string>>{{}}));
    runs[1].violations = 0;

    // Judged without the near design's run: its cell is estimated and open.
    Robust r = judge_robust(s, worlds, preempt, labels, runs, {});
    ASSERT_EQ(r.cells.size(), 1u);
    const auto &row = r.cells[0];
    EXPECT_TRUE(row[0].estimated && row[0].meets_all && row[0].figure[0] == 60'000);
    EXPECT_TRUE(row[1].estimated && row[1].near && !row[1].judged("preempt_off.max_ns"));
    EXPECT_EQ(r.shares[1].judged[0], 0u);
    EXPECT_TRUE(row[2].estimated && !row[2].meets_all && row[2].figure[0] == 150'000);
    EXPECT_EQ(r.near_unconfirmed, 1u);
    EXPECT_EQ(r.nominal_runs, 3u);
    EXPECT_NE(format_robust(r).find("1 re-priced cell undecided, with no full run"),
              std::string::npos)
        << format_robust(r);

    // With the near design's run in the world: judged from it, and the estimate checked
    // against it.
    RunSummary full = runs[1];
    full.point = world_point(s, worlds[0]);
    full.priced = {};
    full.preempt_off_max_ns = 101'000;
    runs.push_back(full);
    r = judge_robust(s, worlds, preempt, labels, runs, {});
    EXPECT_FALSE(r.cells[0][1].estimated);
    EXPECT_FALSE(r.cells[0][1].meets_all);
    ASSERT_EQ(r.estimate_checks.size(), 1u);
    EXPECT_EQ(r.estimate_checks[0].label, "near");
    EXPECT_DOUBLE_EQ(r.estimate_checks[0].estimate, 96'000);
    EXPECT_DOUBLE_EQ(r.estimate_checks[0].full, 101'000);
    EXPECT_FALSE(r.estimate_checks[0].decided);  // near: re-pricing alone would have run it
    EXPECT_EQ(r.near_unconfirmed, 0u);
}
