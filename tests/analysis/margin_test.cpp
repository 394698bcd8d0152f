// The margin search of analysis/margin.h on figures given as functions of the key, so that each
// crossover is known in advance: a monotone change is bisected to adjacent integers (or to the
// tolerance), a pattern that changes twice is reported as scanned and not bisected, a list is
// scanned, the pick's changes are found, and no (value, design) is run twice.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "analysis/margin.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::analysis;

namespace {

constexpr int64_t kUs = 1000;

// A runner whose designs' worst preempt-off is figure[label](x), one seed; it records each
// (value, design) it runs.
struct FakeRunner {
    std::map<std::string, std::function<double(double)>> figure;
    std::vector<std::pair<std::string, std::string>> ran;

    MarginRunner runner(const std::string &key) {
        return [this, key](const std::vector<MarginRun> &batch) {
            std::vector<nlohmann::json> out;
            for (const MarginRun &r : batch) {
                ran.emplace_back(r.value.shown, r.label);
                RunSummary s;
                s.strategy = s.label = r.label;
                s.platform = "sim";
                s.seed = 1;
                s.point = {{key, r.value.shown}};
                s.preempt_off_max_ns = std::llround(figure.at(r.label)(r.value.x));
                s.preempt_off_count = 10;
                s.ops_per_sec = 1000;
                out.push_back(summary_to_json(s));
            }
            return out;
        };
    }
};

Limits preempt_off_limit(int64_t ns) {
    return {{"preempt_off.max_ns", Limit{.value = ns}}};
}

MarginAxis integer_axis(double lo, double hi) {
    MarginAxis a;
    a.key = "machine.cpus";
    a.kind = KeyKind::Integer;
    a.lo = lo;
    a.hi = hi;
    return a;
}

const Crossover &crossover(const Margin &m, const std::string &label) {
    for (const Crossover &c : m.crossovers)
        if (c.label == label) return c;
    throw std::runtime_error("no crossover for " + label);
}

TEST(Margin, BisectsALinearFigureToAdjacentIntegers) {
    // 1us per step of the key: a 37.5us limit is met up to 37 and not from 38.
    FakeRunner f;
    f.figure["linear"] = [](double x) { return x * kUs; };
    const Margin m = find_margin(integer_axis(0, 100), preempt_off_limit(37500), {"linear"}, {},
                                 f.runner("machine.cpus"));
    const Crossover &c = crossover(m, "linear");
    ASSERT_EQ(c.kind, Crossover::Kind::Changes);
    EXPECT_EQ(c.method, "bisection");
    ASSERT_EQ(c.changes.size(), 1u);
    EXPECT_EQ(c.changes[0].lo.shown, "37");
    EXPECT_EQ(c.changes[0].hi.shown, "38");
    EXPECT_TRUE(c.changes[0].met_lo);
    EXPECT_EQ(c.changes[0].figure_lo, 37 * kUs);
    EXPECT_EQ(c.changes[0].figure_hi, 38 * kUs);
    // Every value at most once, and far fewer than the 101 values of the range.
    std::set<std::pair<std::string, std::string>> once(f.ran.begin(), f.ran.end());
    EXPECT_EQ(once.size(), f.ran.size());
    EXPECT_LT(f.ran.size(), 15u);
    EXPECT_EQ(m.results.runs.size(), f.ran.size());
    const std::string text = format_margin(m);
    EXPECT_NE(text.find("stops meeting between 37 (37.00us) and 38 (38.00us) [bisection]"),
              std::string::npos)
        << text;
}

TEST(Margin, ARealKeyStopsWithinTheTolerance) {
    MarginAxis a = integer_axis(1, 9);
    a.kind = KeyKind::Real;
    a.key = "workload.w.rate";
    a.tolerance = 0.01;
    FakeRunner f;
    f.figure["d"] = [](double x) { return x * 10 * kUs; };  // crosses 43.21us at 4.321
    const Margin m =
        find_margin(a, preempt_off_limit(43210), {"d"}, {}, f.runner("workload.w.rate"));
    const Crossover &c = crossover(m, "d");
    ASSERT_EQ(c.changes.size(), 1u);
    EXPECT_EQ(c.method, "bisection");
    const double lo = c.changes[0].lo.x, hi = c.changes[0].hi.x;
    EXPECT_LE(lo, 4.321);
    EXPECT_GE(hi, 4.321);
    EXPECT_LE(hi - lo, 0.01 * hi);
    // Values are written as TOML floats.
    EXPECT_NE(c.changes[0].lo.toml.find('.'), std::string::npos) << c.changes[0].lo.toml;
}

TEST(Margin, ATwiceChangingPatternIsReportedAsScannedNotBisected) {
    // A V: over the limit at both ends, within it in the middle.
    FakeRunner f;
    f.figure["v"] = [](double x) { return std::fabs(x - 50) * kUs; };
    const Margin m = find_margin(integer_axis(0, 100), preempt_off_limit(30 * kUs), {"v"}, {},
                                 f.runner("machine.cpus"));
    const Crossover &c = crossover(m, "v");
    EXPECT_FALSE(c.monotone);
    EXPECT_EQ(c.method, "scan");
    ASSERT_EQ(c.changes.size(), 2u);
    EXPECT_FALSE(c.changes[0].met_lo);  // starts meeting between 0 and 25
    EXPECT_EQ(c.changes[0].lo.shown, "0");
    EXPECT_EQ(c.changes[0].hi.shown, "25");
    EXPECT_TRUE(c.changes[1].met_lo);  // stops meeting between 75 and 100
    EXPECT_EQ(c.changes[1].lo.shown, "75");
    EXPECT_EQ(c.changes[1].hi.shown, "100");
    // The pick changes at each side as well and is bisected, which runs the design at more
    // values; the crossover stays the scan's.
    EXPECT_GT(f.ran.size(), 5u);
    const std::string text = format_margin(m);
    EXPECT_NE(text.find("not monotone: starts meeting between 0 (50.00us) and 25 (25.00us); "
                        "stops meeting between 75 (25.00us) and 100 (50.00us) [scan]"),
              std::string::npos)
        << text;
}

TEST(Margin, FindsWhereThePickChanges) {
    // "flat" keeps 20us everywhere; "steep" is 0.5us per step: below flat (better headroom) up
    // to 39, above from 41, equal at 40 (then throughput, equal too: the first given, steep).
    FakeRunner f;
    f.figure["steep"] = [](double x) { return x * kUs / 2; };
    f.figure["flat"] = [](double) { return 20 * kUs; };
    const Margin m = find_margin(integer_axis(0, 100), preempt_off_limit(100 * kUs),
                                 {"steep", "flat"}, {}, f.runner("machine.cpus"));
    ASSERT_EQ(m.pick_changes.size(), 1u);
    EXPECT_EQ(m.pick_changes[0].from, "steep");
    EXPECT_EQ(m.pick_changes[0].to, "flat");
    EXPECT_EQ(m.pick_changes[0].lo.shown, "40");
    EXPECT_EQ(m.pick_changes[0].hi.shown, "41");
    EXPECT_EQ(crossover(m, "flat").kind, Crossover::Kind::Meets);
    EXPECT_EQ(crossover(m, "steep").kind, Crossover::Kind::Meets);
    const std::string text = format_margin(m);
    EXPECT_NE(text.find("the pick changes from steep to flat between 40 and 41 [bisection]"),
              std::string::npos)
        << text;
}

TEST(Margin, AListIsScannedAndThePickNamedOverTheWholeRange) {
    MarginAxis a;
    a.key = "machine.kernel";
    a.kind = KeyKind::List;
    a.list = {"\"4.15\"", "\"5.9\"", "\"6.6\""};
    a.list_shown = {"4.15", "5.9", "6.6"};
    FakeRunner f;
    f.figure["d"] = [](double i) { return (i + 1) * 40 * kUs; };  // 40, 80, 120us
    const Margin m = find_margin(a, preempt_off_limit(100 * kUs), {"d"}, {}, f.runner(a.key));
    const Crossover &c = crossover(m, "d");
    EXPECT_EQ(c.method, "scan");
    ASSERT_EQ(c.changes.size(), 1u);
    EXPECT_EQ(c.changes[0].lo.shown, "5.9");
    EXPECT_EQ(c.changes[0].hi.shown, "6.6");
    EXPECT_EQ(f.ran.size(), 3u);
    const Margin all = find_margin(a, preempt_off_limit(200 * kUs), {"d"}, {}, f.runner(a.key));
    EXPECT_EQ(crossover(all, "d").kind, Crossover::Kind::Meets);
    EXPECT_NE(format_margin(all).find("the pick is d over the whole range"), std::string::npos);
}

TEST(Margin, RefusesToSearchWithoutALimit) {
    FakeRunner f;
    f.figure["d"] = [](double) { return 0.0; };
    EXPECT_THROW(find_margin(integer_axis(0, 10), {}, {"d"}, {}, f.runner("machine.cpus")),
                 UserError);
}

}  // namespace
