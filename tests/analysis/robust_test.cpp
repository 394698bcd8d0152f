// robust's sampling and judgement (analysis/robust.h) on figures given as functions of the
// factors, so that each share, elasticity and flip factor is known in advance.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "analysis/robust.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::analysis;

namespace {

PriceSpace space(std::vector<double> range) {
    PriceSpace s;
    s.families = {"work", "memory", "primitive", "grace_period"};
    s.range = std::move(range);
    s.source = "test";
    return s;
}

// One run per (world, design): the design's worst preempt-off is figure[d](factors).
std::vector<RunSummary> runs_of(
    const PriceSpace &s, const std::vector<std::vector<double>> &worlds,
    const std::vector<std::function<double(const std::vector<double> &)>> &figure) {
    std::vector<RunSummary> runs;
    for (const auto &w : worlds)
        for (size_t d = 0; d < figure.size(); ++d) {
            RunSummary r;
            r.strategy = r.label = "design" + std::to_string(d);
            r.platform = "sim";
            r.seed = 1;
            r.point = world_point(s, w);
            r.preempt_off_max_ns = std::llround(figure[d](w));
            r.preempt_off_count = 10;
            r.ops_per_sec = 1000;
            runs.push_back(r);
        }
    return runs;
}

const Limits kLimit = {{"preempt_off.max_ns", Limit{.value = 100'000}}};

}  // namespace

TEST(Robust, LatinHypercubeHasOneWorldInEveryStratumOfEveryFamily) {
    const PriceSpace s = space({2.0, 1.5, 3.0, 1.0});
    const size_t n = 20;
    const auto worlds = latin_hypercube(s, n, 7);
    ASSERT_EQ(worlds.size(), n);
    for (size_t k = 0; k < 4; ++k) {
        std::set<size_t> strata;
        for (const auto &w : worlds) {
            ASSERT_EQ(w.size(), 4u);
            if (s.range[k] == 1) {
                EXPECT_EQ(w[k], 1.0);
                continue;
            }
            // The stratum of the factor's logarithm in [-ln F, ln F], cut into n.
            const double u = (std::log(w[k]) / std::log(s.range[k]) + 1) / 2;
            EXPECT_GE(w[k], 1 / s.range[k] - 1e-4);
            EXPECT_LE(w[k], s.range[k] + 1e-4);
            strata.insert(std::min(n - 1, static_cast<size_t>(u * static_cast<double>(n))));
        }
        // Rounding a factor to 4 decimals may move it across a stratum's edge; independent
        // draws would fill about 13 of the 20.
        if (s.range[k] > 1) {
            EXPECT_GE(strata.size(), n - 2) << "family " << k;
        }
    }
    EXPECT_EQ(latin_hypercube(s, n, 7), worlds);
    EXPECT_NE(latin_hypercube(s, n, 8), worlds);
}

TEST(Robust, WilsonIntervalMatchesItsFormula) {
    // Published values of the Wilson score interval at 95%.
    const ShareInterval half = wilson_interval(8, 16);
    EXPECT_NEAR(half.lo, 0.2800, 1e-3);
    EXPECT_NEAR(half.hi, 0.7200, 1e-3);
    const ShareInterval all = wilson_interval(16, 16);
    EXPECT_NEAR(all.lo, 0.8063, 1e-3);
    EXPECT_DOUBLE_EQ(all.hi, 1.0);
    const ShareInterval none = wilson_interval(0, 10);
    EXPECT_DOUBLE_EQ(none.lo, 0.0);
    EXPECT_NEAR(none.hi, 0.2775, 1e-3);
}

TEST(Robust, SharesElasticitiesAndFlipFactorsOfAKnownPowerLaw) {
    const PriceSpace s = space({1.5, 1.0, 2.0, 3.0});
    const auto worlds = latin_hypercube(s, 32, 1);
    // design0: 95 us x work^1 x primitive^0.5, 5% under the limit at the profile's prices;
    // design1: 10 us whatever the prices, far from it.
    const auto runs =
        runs_of(s, worlds,
                {[](const std::vector<double> &w) { return 95'000 * w[0] * std::sqrt(w[2]); },
                 [](const std::vector<double> &) { return 10'000.0; }});
    const Robust r = judge_robust(s, worlds, kLimit, {"design0", "design1"}, runs, {});
    size_t expect_met = 0;
    for (const auto &w : worlds)
        expect_met += 95'000 * w[0] * std::sqrt(w[2]) <= 100'000 + 0.5;
    EXPECT_EQ(r.shares[0].meets_all, expect_met);
    EXPECT_LT(r.shares[0].meets_all, 28u);  // well under every world
    EXPECT_GT(r.shares[0].meets_all, 4u);
    EXPECT_EQ(r.shares[1].meets_all, 32u);
    EXPECT_EQ(r.pick, "design1");
    ASSERT_EQ(r.sensitivity.size(), 1u);  // design1 never comes near the limit
    const Sensitivity &se = r.sensitivity[0];
    EXPECT_EQ(se.label, "design0");
    EXPECT_NEAR(se.nominal, 95'000, 50);
    EXPECT_GT(se.r2, 0.999);
    // Ranked by how far each family's range moves the figure: work 1.5^1 = 1.5, primitive
    // 2^0.5 = 1.41, grace_period 3^0 = 1.
    ASSERT_EQ(se.effects.size(), 3u);  // memory does not vary
    EXPECT_EQ(se.effects[0].family, "work");
    EXPECT_NEAR(se.effects[0].elasticity, 1.0, 1e-3);
    EXPECT_NEAR(*se.effects[0].flip, 100.0 / 95, 1e-3);
    EXPECT_TRUE(se.effects[0].flip_in_range);
    EXPECT_EQ(se.effects[1].family, "primitive");
    EXPECT_NEAR(se.effects[1].elasticity, 0.5, 1e-3);
    EXPECT_NEAR(*se.effects[1].flip, std::pow(100.0 / 95, 2), 1e-3);
    EXPECT_EQ(se.effects[2].family, "grace_period");
    EXPECT_NEAR(se.effects[2].elasticity, 0.0, 1e-3);
    EXPECT_FALSE(se.effects[2].flip.has_value());
}

TEST(Robust, NeedsALimitAndARunInEveryWorld) {
    const PriceSpace s = space({1.5, 1.0, 1.0, 1.0});
    const auto worlds = latin_hypercube(s, 4, 1);
    auto runs = runs_of(s, worlds, {[](const std::vector<double> &) { return 1000.0; }});
    EXPECT_THROW(judge_robust(s, worlds, {}, {"design0"}, runs, {}), UserError);
    runs.pop_back();
    EXPECT_THROW(judge_robust(s, worlds, kLimit, {"design0"}, runs, {}), UserError);
}
