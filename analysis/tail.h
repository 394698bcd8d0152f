// The tail of a latency distribution, estimated: peaks over a threshold with a generalised
// Pareto distribution (GPD), as in Coles, "An Introduction to Statistical Modeling of Extreme
// Values" (Springer 2001), chapter 4, and as measurement-based probabilistic timing analysis
// applies it to execution times (Cucu-Grosjean et al., "Measurement-Based Probabilistic Timing
// Analysis for Multi-path Programs", ECRTS 2012).
//
// Method:
//  - values come from log-linear histogram buckets (record/histogram.h): each bucket counts as
//    its midpoint, within 0.4 % of the true values, far below the fit's statistical error;
//  - a threshold u lies between two distinct values and the exceedances are the values
//    strictly above it, so a value many observations share (a simulated fixed cost: the
//    counted model's sections and wake-ups take a few exact lengths, plus rarer perturbed
//    ones) lies wholly below the threshold or is a tied exceedance, never cut in two;
//  - candidate thresholds: the lowest keeps about k = clamp(2 sqrt(n), 30, n/10) values above
//    it, each next one 1.5 times fewer, down to `min_exceedances`. The fit is the one at the
//    lowest candidate that passes the goodness-of-fit test (Choulakian and Stephens,
//    "Goodness-of-fit tests for the generalized Pareto distribution", Technometrics 2001);
//  - values still open when the run ended are right-censored: they add their survival term
//    (at least that long) to the likelihood instead of their density;
//  - maximum likelihood over (sigma, xi) by Grimshaw's reduction (Technometrics 1993) to one
//    parameter theta = xi / sigma, whose profile is maximised with Brent's method (Boost.Math),
//    with xi >= -1 (below it no maximum exists; xi = -1 is a uniform tail that ends at the
//    largest value);
//  - the value exceeded with probability p per observation,
//      x_p = u + sigma / xi * ((p / zeta)^(-xi) - 1),   zeta = k / n,
//    with a profile-likelihood confidence interval (Coles 2001, section 4.3.4): the x_p whose
//    profile log-likelihood is within chi2(1, confidence) / 2 of the maximum;
//  - goodness of fit: the Anderson-Darling statistic of the exceedances against the fitted GPD
//    (it weighs the upper tail, where the extrapolation lives), its p-value by a parametric
//    bootstrap (samples drawn from the fit, bucketed the same way, so with the same ties, and
//    refitted), since the parameters were estimated from the same data.
// No number is given when there are too few exceedances above the values many observations
// share, or when no candidate threshold passes: the shape xi is 1 or more (a tail with no
// finite mean: a mixture of modes rather than one tail) or the p-value is below 0.05 at every
// threshold; the message then says what the highest threshold saw (most exceedances one fixed
// value, or a largest value the fit calls impossible: a rarer cause with too few values). Nor
// when the interval is unbounded above. When p is at least 1/n the value lies inside the data
// and the empirical quantile is given instead.
//
// When no threshold passes, the data are taken as a mixture of fixed values (atoms: a value
// shared by 10 or more observations, or a histogram bucket with 5 times the count of each
// adjacent one; the counted model's deterministic sections and paths; or a tight group of 3 or
// more observations spanning at most 10 %, with no other value within 10 % around it, a rare
// fixed cost) and a continuous rest:
// P(X > x) = sum of the shares of the atoms above x + share_rest * P(rest > x). Beyond the data
// every observed atom's share exceeds p, so x_p is the larger of the largest atom and the
// rest's value exceeded with probability p / share_rest (fitted as above), the interval raised
// the same way.
//
// When neither gives a tail, the top of the sample alone: thresholds keeping fewer than
// `min_exceedances` values, down to `top_exceedances` (10), the whole sample first, then with
// fixed values apart. This is the case of a rare cause above a common one (a wake-up that a
// long section delayed, a few dozen in thousands, above the wake-up path's own cost): below its
// values no single tail exists, and its own values are too few for the usual threshold. The
// fit then rests on few values: the goodness-of-fit test has little power there, and the
// profile-likelihood interval carries the uncertainty (it widens, and no number is given when
// it is unbounded above or the shape is 1 or more). The caption says so. No number when the
// top values have no GPD tail either; the message then says why at each step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "record/histogram.h"

namespace locksim::analysis {

// Observations for a fit: distinct values with their counts, and right-censored values (lower
// bounds, e.g. sections still open at the end of a run).
struct TailSample {
    std::vector<std::pair<double, uint64_t>> values;  // ascending
    std::vector<double> censored;
    uint64_t count() const;
};

// A histogram's buckets at their midpoints; `open_at_end` (values also counted in the
// histogram) are taken out of their buckets and kept as censored.
TailSample tail_sample(const kernel::Histogram &h, const std::vector<int64_t> &open_at_end = {});
// Raw values, each counted once (tests and small samples).
TailSample tail_sample(std::vector<double> values);

struct TailOptions {
    double confidence = 0.95;
    uint64_t min_exceedances = 30;
    // When no threshold keeping `min_exceedances` or more gives a tail (with or without fixed
    // values apart), the top of the sample alone: thresholds keeping fewer, down to this many
    // (0: never). See the header's last paragraph.
    uint64_t top_exceedances = 10;
    uint64_t max_exceedances = 0;  // the most values a threshold keeps above it (0: no cap)
    int gof_replicates = 99;       // parametric bootstrap samples for the goodness-of-fit p-value
    double gof_alpha = 0.05;       // below this p-value the fit is poor
    uint64_t seed = 1;             // the bootstrap's generator (a fit is deterministic)
    bool bucketed = false;         // bootstrap samples are bucketed like kernel::Histogram values
    bool split_atoms = true;       // when no GPD fits, fixed values apart and the rest fitted
    // Fit even where p lies inside the data (p * n >= 1) instead of giving the observed
    // quantile: for a caller that needs the fitted tail's interval there (held_tail.h).
    bool fit_inside_data = false;
    // A threshold whose fit has a shape xi at or above this gives no tail (1: a tail with no
    // mean); a caller whose use of the fit needs less says why in `max_shape_why`.
    double max_shape = 1;
    std::string max_shape_why;
};

struct GpdFit {
    bool ok = false;
    std::string why_not;  // when !ok: too few exceedances, not a GPD tail (and why) ...
    double threshold = 0;
    uint64_t n = 0;  // observations
    uint64_t k = 0;  // exceedances (censored ones included)
    double sigma = 0, xi = 0;
    double log_likelihood = 0;
    double ad = 0;     // Anderson-Darling statistic of the exceedances against the fit
    double gof_p = 0;  // its bootstrap p-value
};

GpdFit fit_gpd(const TailSample &sample, const TailOptions &o = {});

struct TailQuantile {
    bool ok = false;         // a number to rely on (else `note` says why not)
    bool empirical = false;  // p lies inside the data: the observed quantile, no fit needed
    std::string note;
    double probability = 0;
    double estimate = 0, low = 0, high = 0;  // high is +inf when unbounded
    GpdFit fit;                              // with fixed values apart: the rest's fit
    // Fixed values set apart (a mixture of atoms and a fitted rest): how many distinct values,
    // how many observations they hold, the largest and its count. 0 when not used.
    uint64_t atoms = 0, atom_observations = 0, atom_count = 0;
    double atom = 0;
    bool no_tail = false;   // not ok because no threshold gave a GPD tail (not for its interval)
    bool top_only = false;  // fitted to the top of the sample only (TailOptions::top_exceedances)
    // From the stretches that held the CPUs (held_tail.h), not from the sample itself: how many
    // stretches are longer than the wait, and the wake-up path added to it (0: none added).
    bool held = false;
    uint64_t held_longer = 0;
    double path = 0;
    std::string other;  // what the other source gave, where two were compared (held_tail.h)
};

// The value exceeded with probability `p` per observation, with its confidence interval.
TailQuantile tail_quantile(const TailSample &sample, double p, const TailOptions &o = {});
// The same at several probabilities, from one fit.
std::vector<TailQuantile> tail_quantiles(const TailSample &sample,
                                         const std::vector<double> &probabilities,
                                         const TailOptions &o = {});

// "310us [220us, 580us] at p=1e-09 (GPD over 120us: k=200 of 12000, xi=0.12, A-D p=0.43)" or
// "no estimate at p=1e-09: not a generalised Pareto tail at any of 5 thresholds ...".
std::string format_tail(const TailQuantile &q);

// The range of `value(sigma, xi)` over the fit's likelihood region at `o.confidence`: the
// parameters over `fit.threshold` whose log-likelihood lies within chi2(1, confidence) / 2 of
// the fit's maximum. That is the profile-likelihood interval of any one quantity of the tail
// (Coles 2001, section 2.6.6). `sample` is the one the fit was made on; `value` grows with sigma
// at a fixed xi. The upper end is infinity when the region reaches shapes of `o.max_shape` or
// more, or scales without bound.
std::pair<double, double> likelihood_range(const TailSample &sample, const GpdFit &fit,
                                           const TailOptions &o,
                                           const std::function<double(double, double)> &value);

// The fixed values (atoms) of a sample and the rest, as the mixture above splits them.
std::pair<TailSample, TailSample> split_atoms(const TailSample &sample, const TailOptions &o);

// The generalised Pareto distribution's quantile function (for tests and sampling).
double gpd_quantile(double sigma, double xi, double probability_below);

}  // namespace locksim::analysis
