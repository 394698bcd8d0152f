// The tail estimate (analysis/tail.h) on samples drawn from known distributions: its confidence
// interval covers the true quantile in at least 90% of repetitions (fixed seeds; a statistical
// check, no timing), it says so when the fit is poor, and it handles histograms and censoring.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "analysis/tail.h"
#include "record/histogram.h"

using namespace locksim;
using namespace locksim::analysis;

namespace {

struct Coverage {
    int returned = 0, covered = 0;
};

// Repetitions of: draw n values, estimate the value exceeded with probability p, check that
// the interval holds the true one.
template <class Draw>
Coverage coverage(Draw draw, double truth, double p, int reps, size_t n, bool via_histogram,
                  int gof_replicates = 19) {
    Coverage c;
    std::mt19937_64 rng(20240601);
    TailOptions o;
    // 19 bootstrap samples: the smallest p-value is then 0.05, so the goodness-of-fit check
    // rejects nothing here; the interval's coverage is what is tested. A mixture needs the
    // check's full strength (99) to reject a single tail over both causes.
    o.gof_replicates = gof_replicates;
    o.bucketed = via_histogram;
    for (int r = 0; r < reps; ++r) {
        std::vector<double> v(n);
        for (double &x : v)
            x = draw(rng);
        TailSample s;
        if (via_histogram) {
            kernel::Histogram h;
            for (double x : v)
                h.record(std::llround(x));
            s = tail_sample(h);
        } else {
            s = tail_sample(v);
        }
        TailQuantile q = tail_quantile(s, p, o);
        if (!q.ok) continue;
        ++c.returned;
        if (q.low <= truth && truth <= q.high) ++c.covered;
    }
    std::printf("coverage: %d of %d intervals hold the true quantile; %d of %d fits returned\n",
                c.covered, c.returned, c.returned, reps);
    return c;
}

}  // namespace

TEST(Tail, ExponentialIntervalCoversTheTrueQuantile) {
    const double p = 1e-5;
    const double truth = -std::log(p);  // rate 1
    std::exponential_distribution<double> e(1.0);
    Coverage c = coverage([&](std::mt19937_64 &g) { return e(g); }, truth, p, 200, 5000, false);
    EXPECT_GE(c.returned, 170) << "the goodness-of-fit check rejected too many exact fits";
    EXPECT_GE(c.covered, 0.9 * c.returned) << c.covered << " of " << c.returned;
}

TEST(Tail, ParetoIntervalCoversTheTrueQuantile) {
    const double p = 1e-5, alpha = 2.5;
    const double truth = std::pow(p, -1 / alpha);  // Pareto(x_m = 1, alpha)
    std::uniform_real_distribution<double> u(0, 1);
    Coverage c = coverage([&](std::mt19937_64 &g) { return std::pow(1 - u(g), -1 / alpha); }, truth,
                          p, 200, 5000, false);
    EXPECT_GE(c.returned, 170);
    EXPECT_GE(c.covered, 0.9 * c.returned) << c.covered << " of " << c.returned;
}

TEST(Tail, HistogramBucketsKeepTheCoverage) {
    // Latencies in ns (exponential tail, mean 20 us, above a 5 us floor), through the
    // log-linear histogram as the results file stores them.
    const double p = 1e-6, mean = 20000, floor = 5000;
    const double truth = floor - mean * std::log(p);
    std::exponential_distribution<double> e(1 / mean);
    Coverage c =
        coverage([&](std::mt19937_64 &g) { return floor + e(g); }, truth, p, 100, 20000, true);
    EXPECT_GE(c.returned, 85);
    EXPECT_GE(c.covered, 0.9 * c.returned) << c.covered << " of " << c.returned;
}

TEST(Tail, SaysSoWhenTheFitIsPoor) {
    // Two atoms (a simulator's fixed costs) are no generalised Pareto tail.
    std::vector<double> v;
    for (int i = 0; i < 20000; ++i)
        v.push_back(i % 50 == 0 ? 9000.0 : 1000.0 + (i % 7));
    TailQuantile q = tail_quantile(tail_sample(v), 1e-9);
    EXPECT_FALSE(q.ok);
    EXPECT_NE(format_tail(q).find("no estimate"), std::string::npos) << format_tail(q);
}

TEST(Tail, TooFewObservationsGiveNoNumber) {
    TailQuantile q = tail_quantile(tail_sample({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 1e-6);
    EXPECT_FALSE(q.ok);
    EXPECT_NE(q.note.find("too few"), std::string::npos) << q.note;
}

TEST(Tail, InsideTheDataTheObservedQuantileIsGiven) {
    std::vector<double> v;
    for (int i = 1; i <= 1000; ++i)
        v.push_back(i);
    TailQuantile q = tail_quantile(tail_sample(v), 0.01);
    EXPECT_TRUE(q.ok && q.empirical);
    EXPECT_DOUBLE_EQ(q.estimate, 990);  // ten values (991..1000, 1%) lie above it
}

TEST(Tail, CensoredValuesRaiseTheEstimate) {
    std::mt19937_64 rng(7);
    std::exponential_distribution<double> e(1.0);
    std::vector<double> v(5000);
    for (double &x : v)
        x = e(rng);
    TailSample plain = tail_sample(v);
    TailSample censored = plain;
    for (int i = 0; i < 20; ++i)
        censored.censored.push_back(8.0);  // twenty values still running at 8
    TailOptions o;
    o.gof_replicates = 0;
    TailQuantile a = tail_quantile(plain, 1e-6, o), b = tail_quantile(censored, 1e-6, o);
    ASSERT_TRUE(a.ok && b.ok) << a.note << " / " << b.note;
    EXPECT_GT(b.estimate, a.estimate);
}

// The counted model's sections and wake-ups mostly take one exact length, and the tail is the
// rarer perturbed ones above it: the threshold must lie above the shared value, not inside it.
TEST(Tail, AValueManyShareStaysBelowTheThreshold) {
    std::mt19937_64 rng(11);
    const double base = 5000, mean = 2000, p = 1e-9;
    std::exponential_distribution<double> e(1 / mean);
    std::vector<double> v(19900, base);
    for (int i = 0; i < 20000; ++i)
        v.push_back(1000 + i % 3000);  // shorter paths below it
    for (int i = 0; i < 100; ++i)
        v.push_back(base + 1 + e(rng));
    // P(X > x) = 100/40000 * exp(-(x - base - 1) / mean) above the shared value.
    const double truth = base + 1 + mean * std::log(100.0 / 40000 / p);
    TailQuantile q = tail_quantile(tail_sample(v), p);
    ASSERT_TRUE(q.ok) << format_tail(q);
    EXPECT_GT(q.fit.threshold, base) << format_tail(q);
    EXPECT_EQ(q.fit.k, 100u) << format_tail(q);
    EXPECT_LE(q.low, truth) << format_tail(q);
    EXPECT_GE(q.high, truth) << format_tail(q);
}

// A bounded tail (wake-ups that cannot be later than a fixed worst path): the shape reaches
// -1, where the fit ends at the largest value; the estimate lies there, with a bounded
// interval. (At that edge the likelihood is not regular, so the interval's chi-squared
// calibration, and its coverage, are not claimed here.)
TEST(Tail, AUniformTailEndsAtItsLargestValue) {
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(0, 1000);
    const double truth = 1000 * (1 - 1e-6);
    for (int r = 0; r < 20; ++r) {
        std::vector<double> v(5000);
        for (double &x : v)
            x = u(rng);
        TailQuantile q = tail_quantile(tail_sample(v), 1e-6);
        ASSERT_TRUE(q.ok) << format_tail(q);
        EXPECT_NEAR(q.estimate, truth, 0.01 * truth) << format_tail(q);
        EXPECT_LT(q.high, 1.1 * truth) << format_tail(q);
    }
}

// A tail made of a few fixed lengths is no generalised Pareto tail: the fixed values are set
// apart, the rest fitted, and the value exceeded with probability p beyond the data is the
// largest fixed value (the rest's tail lies far below it there).
TEST(Tail, FixedCostsInTheTailAreSetApart) {
    std::mt19937_64 rng(5);
    std::exponential_distribution<double> e(1 / 300.0);
    std::vector<double> v;
    for (int i = 0; i < 19700; ++i)
        v.push_back(1000 + e(rng));
    for (double atom : {9000.0, 9500.0, 10000.0})
        for (int i = 0; i < 100; ++i)
            v.push_back(atom);
    TailOptions plain;
    plain.split_atoms = false;
    TailQuantile one = tail_quantile(tail_sample(v), 1e-9, plain);
    EXPECT_FALSE(one.ok) << format_tail(one);
    EXPECT_NE(one.note.find("not a generalised Pareto tail"), std::string::npos) << one.note;
    EXPECT_NE(one.note.find("fixed cost"), std::string::npos) << one.note;
    // The rest: 1000 + Exp(300) with share 19700/20000; its value at 1e-9 / share is
    // 1000 + 300 ln(share / 1e-9) = 7200, below the largest fixed value.
    TailQuantile q = tail_quantile(tail_sample(v), 1e-9);
    ASSERT_TRUE(q.ok) << format_tail(q);
    EXPECT_EQ(q.atoms, 3u) << format_tail(q);
    EXPECT_DOUBLE_EQ(q.estimate, 10000) << format_tail(q);
    EXPECT_DOUBLE_EQ(q.low, 10000) << format_tail(q);
    EXPECT_GE(q.high, 10000) << format_tail(q);  // the rest's upper end, if above
    EXPECT_NE(format_tail(q).find("3 fixed values apart, the largest 10.0us (100 of 20000)"),
              std::string::npos)
        << format_tail(q);
}

// The same through histogram buckets: one bucket holding a fixed length stands far above its
// neighbours, and is set apart; a continuous tail's buckets are not.
TEST(Tail, AFixedLengthInAHistogramIsSetApart) {
    std::mt19937_64 rng(9);
    std::exponential_distribution<double> e(1 / 2000.0);
    kernel::Histogram h;
    for (int i = 0; i < 100000; ++i)
        h.record(5000 + std::llround(e(rng)));
    for (int i = 0; i < 47; ++i)
        h.record(163300);  // sections of one fixed length, above everything else
    TailOptions o;
    o.bucketed = true;
    TailQuantile q = tail_quantile(tail_sample(h), 1e-9, o);
    ASSERT_TRUE(q.ok) << format_tail(q);
    EXPECT_EQ(q.atoms, 1u) << format_tail(q);
    EXPECT_EQ(q.atom_count, 47u) << format_tail(q);
    EXPECT_NEAR(q.estimate, 163300, 0.004 * 163300) << format_tail(q);
    EXPECT_EQ(q.estimate, q.low) << format_tail(q);
}

// A fixed value above all but a few of the continuous values (no GPD threshold leaves enough
// values above it): where the rest's tail reaches above it at p, the estimate is the rest's, at
// p over the rest's share, and its interval covers the true mixture quantile.
TEST(Tail, MixtureOfFixedValuesAndATailCoversTheTrueQuantile) {
    const double p = 1e-6, floor = 1000, mean = 2000, atom = 14000;
    const size_t n_rest = 5000, n_atom = 300;
    // P(X > x) = n_rest / n * exp(-(x - floor) / mean) above the fixed value.
    const double share = static_cast<double>(n_rest) / static_cast<double>(n_rest + n_atom);
    const double truth = floor + mean * std::log(share / p);
    std::mt19937_64 rng(20240602);
    std::exponential_distribution<double> e(1 / mean);
    TailOptions o;
    o.gof_replicates = 19;
    int returned = 0, covered = 0, apart = 0;
    for (int r = 0; r < 200; ++r) {
        std::vector<double> v(n_atom, atom);
        for (size_t i = 0; i < n_rest; ++i)
            v.push_back(floor + e(rng));
        TailQuantile q = tail_quantile(tail_sample(v), p, o);
        if (!q.ok) continue;
        ++returned;
        if (q.atoms) ++apart;
        if (q.low <= truth && truth <= q.high) ++covered;
    }
    std::printf(
        "mixture: %d of %d intervals hold the true quantile; %d set the fixed value apart\n",
        covered, returned, apart);
    EXPECT_GE(returned, 170);
    EXPECT_GE(apart, returned) << "the fixed value (above all but a few) is not set apart";
    EXPECT_GE(covered, 0.9 * returned) << covered << " of " << returned;
}

// Without enough continuous values beside the fixed ones, no number, and the caption says why.
// The 20 others spread over 1500-2070 ns (a tight isolated group would be a fixed cost itself).
TEST(Tail, FixedValuesWithTooFewOthersGiveNoNumber) {
    std::vector<double> v;
    for (int i = 0; i < 20000; ++i)
        v.push_back(i % 2 ? 1000.0 : 3000.0);
    for (int i = 0; i < 20; ++i)
        v.push_back(1500.0 + 30 * i);
    TailQuantile q = tail_quantile(tail_sample(v), 1e-9);
    EXPECT_FALSE(q.ok) << format_tail(q);
    EXPECT_NE(q.note.find("apart from its 2 fixed values"), std::string::npos) << q.note;
    EXPECT_NE(q.note.find("too few observations (20;"), std::string::npos) << q.note;
}

// A rare cause above a common one (a wake-up a long section delayed, one in a thousand, above
// the wake-up path's own cost): about 20 values, too few for the usual threshold and no single
// tail below them. The top values alone give the number, and its interval covers the truth.
TEST(Tail, ARareCauseAboveACommonOneIsFittedFromItsTopValues) {
    // 90% of the nominal 95%: on 10 to 29 values the profile interval's coverage is
    // approximate (the likelihood-ratio statistic is chi-squared only asymptotically).
    constexpr double kFewValuesCoverage = 0.9 * 0.95;
    const double p = 1e-9, rare = 1e-3;
    // The rare cause: uniform on [5000, 6000] ns (the rest of a section of 6 us, met at a
    // random point); P(X > x) = rare * (6000 - x) / 1000 there.
    const double uniform_truth = 6000 - 1000 * p / rare;
    for (bool bucketed : {false, true}) {
        SCOPED_TRACE(bucketed ? "histogram" : "raw values");
        Coverage c = coverage(
            [&](std::mt19937_64 &rng) {
                if (std::uniform_real_distribution<double>(0, 1)(rng) < rare)
                    return std::uniform_real_distribution<double>(5000, 6000)(rng);
                return 1000 + std::exponential_distribution<double>(1.0 / 100)(rng);
            },
            uniform_truth, p, 100, 20000, bucketed, 99);
        EXPECT_GE(c.returned, 85);
        EXPECT_GE(c.covered, kFewValuesCoverage * c.returned) << c.covered << " of " << c.returned;
    }
    // An exponential rare cause: P(X > x) = rare * exp(-(x - 5000) / 300).
    const double exp_truth = 5000 + 300 * std::log(rare / p);
    Coverage c = coverage(
        [&](std::mt19937_64 &rng) {
            if (std::uniform_real_distribution<double>(0, 1)(rng) < rare)
                return 5000 + std::exponential_distribution<double>(1.0 / 300)(rng);
            return 1000 + std::exponential_distribution<double>(1.0 / 100)(rng);
        },
        exp_truth, p, 100, 20000, false, 99);
    EXPECT_GE(c.covered, kFewValuesCoverage * c.returned) << c.covered << " of " << c.returned;
}

// The caption says when the number rests on the top values alone.
TEST(Tail, ATopOnlyFitSaysSo) {
    std::mt19937_64 rng(7);
    std::vector<double> v;
    for (int i = 0; i < 20000; ++i)
        v.push_back(1000 + std::exponential_distribution<double>(1.0 / 100)(rng));
    for (int i = 0; i < 20; ++i)
        v.push_back(5000 + 50.0 * i + std::uniform_real_distribution<double>(0, 10)(rng));
    TailQuantile q = tail_quantile(tail_sample(v), 1e-9);
    ASSERT_TRUE(q.ok) << q.note;
    EXPECT_TRUE(q.top_only);
    EXPECT_LT(q.fit.k, 30u);
    EXPECT_GE(q.estimate, 5950);
    EXPECT_NE(format_tail(q).find("the top values alone"), std::string::npos) << format_tail(q);
    TailOptions usual_only;
    usual_only.top_exceedances = 0;
    EXPECT_FALSE(tail_quantile(tail_sample(v), 1e-9, usual_only).ok);
}

// A rare fixed cost far above everything else (a callback that frees the same state at each
// commit: 6 sections of 580-584 us above sections of at most about 60 us): too few to be an
// atom by count, too few to fit, but isolated by wide gaps. Set apart as fixed values, it gives
// the estimate its value; a continuous rest below it is fitted as before.
TEST(Tail, AnIsolatedClusterOfAFewValuesIsAFixedCost) {
    std::mt19937_64 rng(11);
    kernel::Histogram h;
    for (int i = 0; i < 200000; ++i)
        h.record(std::llround(1000 + std::exponential_distribution<double>(1.0 / 300)(rng)));
    for (int64_t v : {579580, 579580, 583680, 583680, 583680, 583680})
        h.record(v);
    TailOptions o;
    o.bucketed = true;
    TailQuantile q = tail_quantile(tail_sample(h), 1e-9, o);
    ASSERT_TRUE(q.ok) << q.note;
    EXPECT_GE(q.atoms, 2u);
    EXPECT_NEAR(q.atom, 583680, 0.01 * 583680);
    EXPECT_NEAR(q.estimate, q.atom, 1e-9 * q.atom) << format_tail(q);
    // Spread out over a decade, the same six are not one fixed cost: no cluster is set apart.
    kernel::Histogram spread;
    std::mt19937_64 rng2(11);
    for (int i = 0; i < 200000; ++i)
        spread.record(std::llround(1000 + std::exponential_distribution<double>(1.0 / 300)(rng2)));
    for (int64_t v : {60000, 110000, 190000, 300000, 450000, 583680})
        spread.record(v);
    TailQuantile s = tail_quantile(tail_sample(spread), 1e-9, o);
    EXPECT_FALSE(s.ok && s.atoms > 0 && s.atom > 50000) << format_tail(s);
    // One section whose length what met it spread over 167-179 us (the main job's rwlock: its
    // login section, 42 times in a second), isolated as well: one fixed cost, its values apart.
    kernel::Histogram login;
    std::mt19937_64 rng3(11);
    for (int i = 0; i < 200000; ++i)
        login.record(std::llround(1000 + std::exponential_distribution<double>(1.0 / 300)(rng3)));
    for (const auto &[v, c] : std::vector<std::pair<int64_t, uint64_t>>{
             {167423, 19}, {168447, 11}, {170495, 3}, {173567, 1}, {177663, 3}, {178687, 5}})
        login.record(v, c);
    TailQuantile l = tail_quantile(tail_sample(login), 1e-9, o);
    ASSERT_TRUE(l.ok) << l.note;
    EXPECT_GE(l.atoms, 6u);
    EXPECT_NEAR(l.estimate, 178687, 0.01 * 178687) << format_tail(l);
}
