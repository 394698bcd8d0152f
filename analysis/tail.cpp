#include "analysis/tail.h"

#include <fmt/core.h>

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>

#include "analysis/table.h"

namespace locksim::analysis {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Exceedances over the threshold: distinct excesses with their weights, and censored excesses.
struct Excesses {
    std::vector<std::pair<double, double>> y;  // (excess, weight), ascending
    std::vector<double> censored;
    double k_uncensored = 0;
    double y_max = 0;  // over both
};

// The GPD log-likelihood of (sigma, xi); -inf outside the support.
double log_likelihood(const Excesses &e, double sigma, double xi) {
    if (!(sigma > 0)) return -kInf;
    double ll = -e.k_uncensored * std::log(sigma);
    if (std::abs(xi) < 1e-9) {
        double s = 0;
        for (const auto &[y, w] : e.y)
            s += w * y;
        for (double c : e.censored)
            s += c;
        return ll - s / sigma;
    }
    for (const auto &[y, w] : e.y) {
        const double z = 1 + xi * y / sigma;
        if (!(z > 0)) return -kInf;
        ll -= w * (1 + 1 / xi) * std::log(z);
    }
    for (double c : e.censored) {
        const double z = 1 + xi * c / sigma;
        if (!(z > 0)) return -kInf;
        ll -= std::log(z) / xi;
    }
    return ll;
}

// Grimshaw's profile over theta = xi / sigma: xi(theta) in closed form, sigma = xi / theta.
struct ThetaPoint {
    double ll = -kInf, sigma = 0, xi = 0;
};

ThetaPoint at_theta(const Excesses &e, double theta) {
    ThetaPoint p;
    if (theta == 0) {
        double s = 0;
        for (const auto &[y, w] : e.y)
            s += w * y;
        for (double c : e.censored)
            s += c;
        p.sigma = s / e.k_uncensored;
        p.xi = 0;
    } else {
        double s = 0;
        for (const auto &[y, w] : e.y) {
            const double z = theta * y;
            if (!(z > -1)) return p;
            s += w * std::log1p(z);
        }
        for (double c : e.censored) {
            const double z = theta * c;
            if (!(z > -1)) return p;
            s += std::log1p(z);
        }
        p.xi = s / e.k_uncensored;
        p.sigma = p.xi / theta;
    }
    p.ll = log_likelihood(e, p.sigma, p.xi);
    return p;
}

// Maximises a function of one variable over a grid, then refines with Brent's method between
// the best point's neighbours. Returns (argmax, max).
template <class F>
std::pair<double, double> maximise(F f, const std::vector<double> &grid) {
    size_t best = 0;
    std::vector<double> v(grid.size());
    for (size_t i = 0; i < grid.size(); ++i) {
        v[i] = f(grid[i]);
        if (v[i] > v[best]) best = i;
    }
    if (!std::isfinite(v[best])) return {grid[best], -kInf};
    const double lo = grid[best == 0 ? 0 : best - 1];
    const double hi = grid[std::min(best + 1, grid.size() - 1)];
    if (lo == hi) return {grid[best], v[best]};
    auto r = boost::math::tools::brent_find_minima([&](double x) { return -f(x); }, lo, hi, 40);
    if (-r.second >= v[best]) return {r.first, -r.second};
    return {grid[best], v[best]};
}

// The MLE, maximising Grimshaw's profile over theta * y_max in (-1, 1e4].
GpdFit mle(const Excesses &e) {
    std::vector<double> grid;
    for (double a = 9; a >= 0.25; a -= 0.25)
        grid.push_back(-(1 - std::pow(10.0, -a)));
    grid.push_back(0);
    for (double b = -6; b <= 4; b += 0.25)
        grid.push_back(std::pow(10.0, b));
    std::sort(grid.begin(), grid.end());
    const double scale = e.y_max > 0 ? e.y_max : 1;
    // Shapes below -1 are left out: there the likelihood grows without bound as the endpoint
    // approaches the largest excess, and no maximum likelihood estimate exists (Smith,
    // "Maximum likelihood estimation in a class of nonregular cases", Biometrika 1985). At
    // xi = -1 (a uniform tail) the best fit ends just above the largest excess.
    auto ll_at = [&](double t) {
        const ThetaPoint p = at_theta(e, t / scale);
        return p.xi >= -1 ? p.ll : -kInf;
    };
    auto [tau, ll] = maximise(ll_at, grid);
    ThetaPoint p = at_theta(e, tau / scale);
    const double edge_sigma = e.y_max * (1 + 1e-9);
    if (const double edge = log_likelihood(e, edge_sigma, -1); edge > ll || !std::isfinite(ll)) {
        p = {edge, edge_sigma, -1};
        ll = edge;
    }
    GpdFit f;
    f.sigma = p.sigma;
    f.xi = p.xi;
    f.log_likelihood = ll;
    f.ok = std::isfinite(ll);
    if (!f.ok) f.why_not = "the likelihood has no maximum";
    return f;
}

// log P(Y > y) under the fitted GPD; -inf beyond its upper end.
double gpd_log_survival(double sigma, double xi, double y) {
    if (y <= 0) return 0;
    if (std::abs(xi) < 1e-9) return -y / sigma;
    const double z = 1 + xi * y / sigma;
    if (z <= 0) return -kInf;
    return -std::log(z) / xi;
}

// The Anderson-Darling statistic of the uncensored excesses against the fitted GPD,
//   A2 = -k - 1/k sum_i (2i - 1) [log z_(i) + log(1 - z_(k+1-i))],   z = F(y),
// as Choulakian and Stephens ("Goodness-of-fit tests for the generalized Pareto
// distribution", Technometrics 2001) use it for the GPD. Unlike the Kolmogorov-Smirnov
// distance it weighs the upper tail, where the extrapolation lives: a largest value the fit
// calls impossible makes it large. Tied values (a distinct value of weight w holds the ranks
// r+1 .. r+w) add their ranks' weights together.
double ad_statistic(const Excesses &e, double sigma, double xi) {
    const double k = e.k_uncensored;
    double r = 0, sum = 0;
    for (const auto &[y, w] : e.y) {
        const double log_s = gpd_log_survival(sigma, xi, y);
        if (!std::isfinite(log_s)) return kInf;
        const double log_f = std::log(-std::expm1(log_s));
        // sum over the ranks j = r+1 .. r+w of (2j - 1), and of (2k - 2j + 1)
        const double low_weight = (r + w) * (r + w) - r * r;
        const double high_weight = w * (2 * k + 1) - ((r + w) * (r + w + 1) - r * (r + 1));
        sum += low_weight * std::max(log_f, -745.0) + high_weight * log_s;
        r += w;
    }
    return -k - sum / k;
}

// Threshold choice and excesses (see the header).
struct Split {
    double u = 0;
    uint64_t n = 0, k = 0;
    Excesses e;
};

// The split whose threshold lies between values[j-1] and values[j].
Split split_at(const TailSample &s, const std::vector<double> &cens, size_t j, uint64_t n) {
    Split out;
    out.n = n;
    out.u = (s.values[j - 1].first + s.values[j].first) / 2;
    for (size_t i = j; i < s.values.size(); ++i) {
        out.e.y.emplace_back(s.values[i].first - out.u, static_cast<double>(s.values[i].second));
        out.e.k_uncensored += static_cast<double>(s.values[i].second);
    }
    out.k = static_cast<uint64_t>(out.e.k_uncensored);
    for (double v : cens)
        if (v > out.u) {
            out.e.censored.push_back(v - out.u);
            ++out.k;
        }
    out.e.y_max = out.e.y.back().first;
    for (double v : out.e.censored)
        out.e.y_max = std::max(out.e.y_max, v);
    return out;
}

// The candidate thresholds, lowest first. A threshold lies between two distinct values, so the
// exceedances are the values strictly above it and a value that many observations share (a
// simulated fixed cost, or one histogram bucket) lies wholly on one side: below the lowest
// threshold, or above it as a tied excess. The lowest keeps about k = clamp(2 sqrt(n), 30, n/10)
// values above it; the others keep 1.5 times fewer each, down to `min_exceedances`.
std::vector<Split> candidates(const TailSample &s, const TailOptions &o, std::string &why) {
    const uint64_t n_obs = s.count();
    const double n = static_cast<double>(n_obs);
    auto target = static_cast<uint64_t>(std::max<double>(static_cast<double>(o.min_exceedances),
                                                         std::min(2 * std::sqrt(n), n / 10)));
    if (o.max_exceedances > 0) target = std::min(target, o.max_exceedances);
    if (n_obs < 3 * target || s.values.size() < 3) {
        why = fmt::format(
            "too few observations ({}; the fit needs {} above its threshold and "
            "{} in all)",
            n_obs, target, 3 * target);
        return {};
    }
    std::vector<double> cens = s.censored;
    std::sort(cens.begin(), cens.end());
    // above[j]: values (censored ones where they lie) above the threshold below values[j].
    std::vector<uint64_t> above(s.values.size() + 1, 0);
    size_t c = cens.size();
    for (size_t j = s.values.size(); j-- > 0;) {
        above[j] = above[j + 1] + s.values[j].second;
        while (c > 0 && cens[c - 1] >= s.values[j].first) {
            --c;
            ++above[j];
        }
    }
    std::vector<size_t> picked;  // indices j, lowest threshold first
    for (size_t j = 1; j < s.values.size(); ++j) {
        if (above[j] > target) continue;
        if (above[j] < o.min_exceedances) break;
        if (picked.empty() ||
            static_cast<double>(above[j]) * 1.5 <= static_cast<double>(above[picked.back()]))
            picked.push_back(j);
        else if (above[j + 1] < o.min_exceedances && picked.back() != j)
            picked.push_back(j);  // the highest threshold that leaves enough values
    }
    if (picked.empty()) {
        // Every threshold leaving at most `target` values above it leaves fewer than
        // `min_exceedances`: the value below it is shared by too many observations.
        size_t j = s.values.size();
        while (j > 1 && above[j - 1] <= target)
            --j;
        const auto &[v, count] = s.values[j - 1];
        const double share = 100.0 * static_cast<double>(count) / n;
        if (j == s.values.size())
            why = fmt::format(
                "the largest value ({}) is shared by {} of the {} observations ({:.0f}%): one "
                "fixed cost with nothing above it, no tail to fit",
                human_ns(std::llround(v)), count, n_obs, share);
        else
            why = fmt::format(
                "too few values in the tail: {} lie above {}, a value {} of the {} observations "
                "({:.0f}%) share (one fixed cost); the fit needs {} above its threshold",
                above[j], human_ns(std::llround(v)), count, n_obs, share, o.min_exceedances);
        return {};
    }
    std::vector<Split> out;
    for (size_t j : picked)
        out.push_back(split_at(s, cens, j, n_obs));
    return out;
}

// Bucketed like kernel::Histogram: the midpoint of the bucket that holds the value.
double bucketed(double v) {
    const auto i = kernel::Histogram::bucket_of(static_cast<int64_t>(std::llround(v)));
    return static_cast<double>(kernel::Histogram::bucket_mid(i));
}

// The goodness-of-fit p-value by a parametric bootstrap: the statistic of samples drawn from
// the fit, bucketed like the data (so they share its ties) and refitted, against the data's.
// The parameters were estimated from the data, so the statistic's tabulated null distribution
// for known parameters does not apply (the Lilliefors problem); the bootstrap gives the right
// one (Stute, Gonzalez Manteiga and Presedo Quindimil, "Bootstrap based goodness-of-fit tests",
// Metrika 1993; Villasenor-Alva and Gonzalez-Estrada, "A bootstrap goodness of fit test for
// the generalized Pareto distribution", Computational Statistics & Data Analysis 2009).
double bootstrap_p(const Split &s, const GpdFit &fit, const TailOptions &o) {
    if (o.gof_replicates <= 0) return 1;
    std::mt19937_64 rng(o.seed);
    std::uniform_real_distribution<double> unif(0, 1);
    const auto k = static_cast<size_t>(s.e.k_uncensored);
    int as_far = 0;
    for (int b = 0; b < o.gof_replicates; ++b) {
        std::map<double, double> counts;
        for (size_t i = 0; i < k; ++i) {
            double y = gpd_quantile(fit.sigma, fit.xi, unif(rng));
            if (o.bucketed) y = bucketed(s.u + y) - s.u;
            counts[y] += 1;
        }
        Excesses e;
        for (const auto &[y, w] : counts)
            if (y > 0) {
                e.y.emplace_back(y, w);
                e.k_uncensored += w;
            }
        if (e.y.size() < 3) continue;
        e.y_max = e.y.back().first;
        GpdFit refit = mle(e);
        if (!refit.ok || ad_statistic(e, refit.sigma, refit.xi) >= fit.ad) ++as_far;
    }
    return (as_far + 1.0) / (o.gof_replicates + 1.0);
}

double quantile_of(const Split &s, double sigma, double xi, double p) {
    const double r = p / (static_cast<double>(s.k) / static_cast<double>(s.n));
    if (std::abs(xi) < 1e-9) return s.u + sigma * std::log(1 / r);
    return s.u + sigma / xi * (std::pow(r, -xi) - 1);
}

// The profile log-likelihood of the quantile x_p: the best (sigma, xi) that put x_p there.
double profile_at(const Split &s, double x, double p) {
    const double r = p / (static_cast<double>(s.k) / static_cast<double>(s.n));
    const double d = x - s.u;
    if (!(d > 0)) return -kInf;
    auto ll = [&](double xi) {
        const double sigma =
            std::abs(xi) < 1e-9 ? d / std::log(1 / r) : d * xi / (std::pow(r, -xi) - 1);
        return log_likelihood(s.e, sigma, xi);
    };
    std::vector<double> grid;
    for (double xi = -1; xi <= 3.0001; xi += 0.05)
        grid.push_back(xi);
    return maximise(ll, grid).second;
}

// The empirical value exceeded with probability p (the smallest v with at most p*n above it).
double empirical_quantile(const TailSample &s, double p) {
    const double allowed = p * static_cast<double>(s.count());
    double above = static_cast<double>(s.censored.size());
    for (size_t i = s.values.size(); i-- > 0;) {
        above += static_cast<double>(s.values[i].second);
        if (above > allowed) return s.values[i].first;
    }
    return s.values.empty() ? 0 : s.values.front().first;
}

}  // namespace

uint64_t TailSample::count() const {
    uint64_t n = censored.size();
    for (const auto &[v, c] : values)
        n += c;
    return n;
}

TailSample tail_sample(const kernel::Histogram &h, const std::vector<int64_t> &open_at_end) {
    TailSample s;
    std::map<size_t, uint64_t> taken;
    for (int64_t v : open_at_end) {
        ++taken[kernel::Histogram::bucket_of(v)];
        s.censored.push_back(static_cast<double>(v));
    }
    for (size_t i = 0; i < kernel::Histogram::kBuckets; ++i) {
        uint64_t c = h.count_at(i);
        if (auto it = taken.find(i); it != taken.end()) c -= std::min(c, it->second);
        if (c == 0) continue;
        const int64_t mid = std::clamp(kernel::Histogram::bucket_mid(i), h.min(), h.max());
        s.values.emplace_back(static_cast<double>(mid), c);
    }
    return s;
}

TailSample tail_sample(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    TailSample s;
    for (double v : values) {
        if (!s.values.empty() && s.values.back().first == v)
            ++s.values.back().second;
        else
            s.values.emplace_back(v, 1);
    }
    return s;
}

double gpd_quantile(double sigma, double xi, double q) {
    if (std::abs(xi) < 1e-9) return -sigma * std::log1p(-q);
    return sigma / xi * (std::pow(1 - q, -xi) - 1);
}

namespace {

// The fit at one threshold, with its goodness of fit.
GpdFit fit_at(const Split &s, const TailOptions &o) {
    GpdFit fit = mle(s.e);
    fit.threshold = s.u;
    fit.n = s.n;
    fit.k = s.k;
    if (!fit.ok) return fit;
    if (fit.xi >= o.max_shape) {
        // A tail with no mean: the threshold lies below the tail (a mixture of modes, not one
        // tail), and the extrapolation would mean nothing. A caller may ask for less.
        fit.ok = false;
        fit.why_not =
            o.max_shape >= 1
                ? fmt::format(
                      "shape xi={:.2f} >= 1 (no finite mean: not a single tail "
                      "above the threshold)",
                      fit.xi)
                : fmt::format("shape xi={:.2f} >= {}{}", fit.xi, o.max_shape, o.max_shape_why);
        return fit;
    }
    fit.ad = ad_statistic(s.e, fit.sigma, fit.xi);
    fit.gof_p = bootstrap_p(s, fit, o);
    if (fit.gof_p < o.gof_alpha) {
        fit.ok = false;
        fit.why_not = fmt::format("poor fit (A-D p={:.2f} < {:.2f})", fit.gof_p, o.gof_alpha);
    }
    return fit;
}

// Why no threshold gave a generalised Pareto tail, from the excesses over the highest one.
std::string not_gpd(const std::vector<Split> &tried, const GpdFit &last) {
    const Split &s = tried.back();
    std::string why = fmt::format(
        "not a generalised Pareto tail at any of {} thresholds from {} (k={}) to {} (k={}): {}",
        tried.size(), human_ns(std::llround(tried.front().u)), tried.front().k,
        human_ns(std::llround(s.u)), s.k, last.why_not);
    double top = 0, at = 0;
    for (const auto &[y, w] : s.e.y)
        if (w > top) {
            top = w;
            at = y;
        }
    if (top >= 0.2 * s.e.k_uncensored) {
        return why + fmt::format(
                         "; {:.0f}% of the values above {} are one value ({}): a few fixed costs, "
                         "not a continuous tail",
                         100 * top / s.e.k_uncensored, human_ns(std::llround(s.u)),
                         human_ns(std::llround(s.u + at)));
    }
    if (last.sigma > 0) {
        // The largest value's discordancy: how likely the fit makes a maximum this large among
        // k excesses (Barnett and Lewis, "Outliers in Statistical Data", 1994).
        const double y = s.e.y.back().first;
        const double log_s = gpd_log_survival(last.sigma, last.xi, y);
        const double p_max = -std::expm1(s.e.k_uncensored * std::log1p(-std::exp(log_s)));
        if (p_max < 0.01)
            return why + fmt::format(
                             "; the largest value ({}) lies beyond the rest's tail (p={:.0e}): a "
                             "rarer cause with too few values to fit",
                             human_ns(std::llround(s.u + y)), p_max);
    }
    return why;
}

// The fit at the lowest candidate threshold where the generalised Pareto distribution passes
// the goodness-of-fit test, as Choulakian and Stephens (Technometrics 2001, section 4) propose
// for choosing the threshold: the lowest threshold keeps the most data, and a higher one is
// tried only while the data above the lower one are shown not to be a GPD tail (a mixture of
// fixed costs and their perturbations settles into a tail only further up).
GpdFit choose(const TailSample &sample, const TailOptions &o, Split &chosen) {
    GpdFit fit;
    fit.n = sample.count();
    const std::vector<Split> tried = candidates(sample, o, fit.why_not);
    for (const Split &s : tried) {
        fit = fit_at(s, o);
        if (fit.ok) {
            chosen = s;
            return fit;
        }
    }
    if (!tried.empty()) fit.why_not = not_gpd(tried, fit);
    return fit;
}

}  // namespace

GpdFit fit_gpd(const TailSample &sample, const TailOptions &o) {
    Split s;
    return choose(sample, o, s);
}

namespace {

struct Chosen {
    GpdFit fit;
    Split split;
};

TailQuantile with_atoms(const TailSample &sample, double p, const TailOptions &o,
                        const TailQuantile &plain);

TailQuantile tail_quantile_unchecked(const TailSample &sample, double p, const TailOptions &o,
                                     std::optional<Chosen> &chosen) {
    TailQuantile q;
    q.probability = p;
    const double n = static_cast<double>(sample.count());
    if (n > 0 && p * n >= 1 && !o.fit_inside_data) {
        // Inside the data: at least one observation lies above; the observed quantile.
        q.ok = q.empirical = true;
        q.estimate = q.low = q.high = empirical_quantile(sample, p);
        q.note = "observed";
        return q;
    }
    if (!chosen) {
        chosen.emplace();
        chosen->fit = choose(sample, o, chosen->split);
    }
    q.fit = chosen->fit;
    const Split &s = chosen->split;
    if (!q.fit.ok) {
        q.note = q.fit.why_not;
        q.no_tail = true;
        if (o.split_atoms) return with_atoms(sample, p, o, q);
        return q;
    }
    q.estimate = quantile_of(s, q.fit.sigma, q.fit.xi, p);
    const double limit =
        q.fit.log_likelihood - boost::math::quantile(boost::math::chi_squared(1), o.confidence) / 2;
    auto f = [&](double x) { return profile_at(s, x, p) - limit; };
    const double d = q.estimate - s.u;
    if (!(d > 0) || !(f(q.estimate) > 0)) {
        // The profile misses the maximum: the shape lies outside [-1, 3] or the likelihood
        // is too flat to locate it.
        q.note = fmt::format(
            "no confidence interval (xi={:.2f}: the profile likelihood does not "
            "reach its maximum)",
            q.fit.xi);
        return q;
    }
    auto tol = [](double a, double b) { return std::abs(b - a) <= 1e-4 * std::abs(a); };
    // Lower end: step down towards the threshold until the profile drops below the limit.
    double lo = q.estimate, hi_in = q.estimate;
    bool found = false;
    for (int j = 1; j <= 60; ++j) {
        lo = s.u + d * std::pow(2.0, -j);
        if (f(lo) < 0) {
            found = true;
            break;
        }
        hi_in = lo;
    }
    q.low = found ? boost::math::tools::bisect(f, lo, hi_in, tol).second : s.u;
    // Upper end.
    double lo_in = q.estimate, up = q.estimate;
    found = false;
    for (int j = 1; j <= 60; ++j) {
        up = s.u + d * std::pow(2.0, j);
        if (f(up) < 0) {
            found = true;
            break;
        }
        lo_in = up;
    }
    if (!found) {
        q.high = kInf;
        q.note = "the interval is unbounded above (too heavy a tail for the data)";
        return q;
    }
    q.high = boost::math::tools::bisect(f, lo_in, up, tol).first;
    q.ok = true;
    return q;
}

// Fixed values (atoms): a distinct value whose count stands far above its neighbours'. Raw
// values of a continuous distribution are never tied, so any value shared by `kMinAtom` or more
// is one; in histogram buckets a continuous density fills neighbouring buckets alike (each is
// 0.4 % wide), so a bucket is an atom only with 5 times the count of each adjacent bucket.
constexpr uint64_t kMinAtom = 10;

// A rare fixed cost: a few observations (kMinCluster or more) on values spanning at most 10 %,
// with no other value within 10 % below or above them (a callback that frees the same state at
// every commit, a section taken a few times a second, far above everything else, its length
// spread a few per cent by the interrupts and cache misses that meet it). A fixed value by its
// isolation rather than by its count; a continuous density does not leave such gaps around a
// tight group. Returns, per distinct value, whether it belongs to such a cluster.
constexpr uint64_t kMinCluster = 3;
constexpr double kClusterSpan = 1.10, kClusterGap = 1.10;

std::vector<bool> isolated_clusters(const TailSample &s) {
    std::vector<bool> out(s.values.size(), false);
    size_t i = 0;
    while (i < s.values.size()) {
        size_t j = i;
        uint64_t count = 0;
        // The run of values up to the next gap.
        while (j < s.values.size() &&
               (j == i || s.values[j - 1].first * kClusterGap >= s.values[j].first))
            count += s.values[j++].second;
        // A gap lies below it (it is not the lowest run) and above it (or nothing does).
        const bool tight = s.values[j - 1].first <= s.values[i].first * kClusterSpan;
        if (count >= kMinCluster && tight && i > 0)
            std::fill(out.begin() + static_cast<long>(i), out.begin() + static_cast<long>(j), true);
        i = j;
    }
    return out;
}

std::pair<TailSample, TailSample> atoms_and_rest(const TailSample &s, const TailOptions &o) {
    std::map<size_t, uint64_t> by_bucket;
    if (o.bucketed)
        for (const auto &[v, c] : s.values)
            by_bucket[kernel::Histogram::bucket_of(std::llround(v))] += c;
    auto count_in = [&](size_t i) {
        auto it = by_bucket.find(i);
        return it == by_bucket.end() ? uint64_t{0} : it->second;
    };
    const std::vector<bool> isolated = isolated_clusters(s);
    TailSample atoms, rest;
    rest.censored = s.censored;
    for (size_t k = 0; k < s.values.size(); ++k) {
        const auto &[v, c] = s.values[k];
        bool atom = c >= kMinAtom;
        if (atom && o.bucketed) {
            const size_t i = kernel::Histogram::bucket_of(std::llround(v));
            const uint64_t neighbours = std::max(i > 0 ? count_in(i - 1) : 0, count_in(i + 1));
            atom = c >= 5 * neighbours;
        }
        (atom || isolated[k] ? atoms : rest).values.emplace_back(v, c);
    }
    return {std::move(atoms), std::move(rest)};
}

// When one generalised Pareto tail does not describe the data, the data as a mixture of fixed
// values (atoms: the counted model's deterministic sections and paths) and a continuous rest:
//   P(X > x) = sum over atoms a > x of share_a + share_rest * P(rest > x).
// Here p lies beyond the data (p * n < 1), so every observed atom's share exceeds p and x_p is
// at least the largest atom; above it only the rest's tail counts, so
//   x_p = max(largest atom, the rest's value exceeded with probability p / share_rest),
// with the rest's interval raised to the atom the same way. The atom is exact (a fixed length
// has no sampling error); what is assumed is that no larger fixed value exists unseen, the
// same assumption any extrapolation beyond the data makes about a new cause.
TailQuantile with_atoms(const TailSample &sample, double p, const TailOptions &o,
                        const TailQuantile &plain) {
    auto [atoms, rest] = atoms_and_rest(sample, o);
    if (atoms.values.empty()) return plain;
    const uint64_t n = sample.count(), n_rest = rest.count();
    const auto &[top, top_count] = atoms.values.back();
    uint64_t in_atoms = 0;
    for (const auto &[v, c] : atoms.values)
        in_atoms += c;
    TailQuantile q = plain;
    const std::string what = fmt::format(
        "{} fixed value{} ({} of {} observations; the largest {}, {} times)", atoms.values.size(),
        atoms.values.size() == 1 ? "" : "s", in_atoms, n, human_ns(std::llround(top)), top_count);
    if (n_rest == 0) {
        q.note = plain.note + "; the values are " + what + " with no continuous rest to fit";
        return q;
    }
    TailOptions ro = o;
    ro.split_atoms = false;
    std::optional<Chosen> none;
    const double share = static_cast<double>(n_rest) / static_cast<double>(n);
    TailQuantile r = tail_quantile_unchecked(rest, p / share, ro, none);
    if (!r.ok) {
        q.note = plain.note + "; apart from its " + what + ", the rest: " + r.note;
        q.no_tail = r.no_tail;
        return q;
    }
    q = r;
    q.probability = p;
    q.atom = top;
    q.atom_count = top_count;
    q.atoms = atoms.values.size();
    q.atom_observations = in_atoms;
    q.estimate = std::max(top, r.estimate);
    q.low = std::max(top, r.low);
    q.high = std::max(top, r.high);
    q.note = what;
    return q;
}

// The estimate, and when no threshold keeping `min_exceedances` gives a tail, the one from the
// top of the sample alone (see the header). Each step keeps its fit for the next probability.
struct Fits {
    std::optional<Chosen> usual, top;
};

TailQuantile tail_quantile_or_top(const TailSample &sample, double p, const TailOptions &o,
                                  Fits &fits) {
    TailQuantile q = tail_quantile_unchecked(sample, p, o, fits.usual);
    if (q.ok || !q.no_tail || o.top_exceedances == 0 || o.top_exceedances >= o.min_exceedances)
        return q;
    TailOptions top = o;
    top.max_exceedances = o.min_exceedances - 1;
    top.min_exceedances = o.top_exceedances;
    TailQuantile t = tail_quantile_unchecked(sample, p, top, fits.top);
    if (!t.ok) {
        q.note +=
            fmt::format("; nor the top {} to {} values alone ({})", top.max_exceedances,
                        top.min_exceedances, t.no_tail ? "no single tail there either" : t.note);
        return q;
    }
    t.top_only = true;
    return t;
}

}  // namespace

std::pair<double, double> likelihood_range(const TailSample &sample, const GpdFit &fit,
                                           const TailOptions &o,
                                           const std::function<double(double, double)> &value) {
    // The fit's split: its threshold lies halfway between two distinct values.
    size_t j = 1;
    while (j < sample.values.size() &&
           std::abs((sample.values[j - 1].first + sample.values[j].first) / 2 - fit.threshold) >
               1e-9 * std::max(1.0, fit.threshold))
        ++j;
    const double at_fit = value(fit.sigma, fit.xi);
    if (j >= sample.values.size()) return {at_fit, kInf};  // not this sample's fit: no bound
    std::vector<double> cens = sample.censored;
    std::sort(cens.begin(), cens.end());
    const Split s = split_at(sample, cens, j, sample.count());
    const double limit =
        fit.log_likelihood - boost::math::quantile(boost::math::chi_squared(1), o.confidence) / 2;
    double low = at_fit, high = at_fit;
    // Per shape on a grid, the scales inside the region: an interval around the best scale for
    // that shape (the log-likelihood is unimodal in the scale); the value's ends are at its ends.
    const double top_shape = std::min(o.max_shape, 3.0);
    constexpr double kStep = 0.01, kSpan = 20;  // shapes; scales within e^±20 of the fit's
    for (double xi = -1; xi < top_shape; xi += kStep) {
        auto ll = [&](double log_sigma) { return log_likelihood(s.e, std::exp(log_sigma), xi); };
        const double centre = std::log(fit.sigma);
        std::vector<double> grid;
        for (double g = centre - kSpan; g <= centre + kSpan; g += 0.25)
            grid.push_back(g);
        const auto [best, best_ll] = maximise(ll, grid);
        if (!(best_ll >= limit)) continue;
        if (xi + kStep >= top_shape) return {low, kInf};  // heavier shapes lie inside too
        auto edge = [&](double inside, double outside) {
            if (ll(outside) >= limit) return outside;
            for (int i = 0; i < 100; ++i) {
                const double mid = (inside + outside) / 2;
                (ll(mid) >= limit ? inside : outside) = mid;
            }
            return inside;
        };
        const double lo = edge(best, centre - kSpan), hi = edge(best, centre + kSpan);
        if (hi >= centre + kSpan) return {low, kInf};
        low = std::min(low, value(std::exp(lo), xi));
        high = std::max(high, value(std::exp(hi), xi));
    }
    return {low, high};
}

std::pair<TailSample, TailSample> split_atoms(const TailSample &sample, const TailOptions &o) {
    return atoms_and_rest(sample, o);
}

std::vector<TailQuantile> tail_quantiles(const TailSample &sample,
                                         const std::vector<double> &probabilities,
                                         const TailOptions &o) {
    Fits fits;  // made once, when a probability lies beyond the data
    std::vector<TailQuantile> out;
    for (double p : probabilities) {
        try {
            out.push_back(tail_quantile_or_top(sample, p, o, fits));
        } catch (const std::exception &e) {
            // Boost.Math's root finders and minimisers throw when the likelihood misbehaves.
            TailQuantile q;
            q.probability = p;
            q.note = fmt::format("the fit failed ({})", e.what());
            out.push_back(std::move(q));
        }
    }
    return out;
}

TailQuantile tail_quantile(const TailSample &sample, double p, const TailOptions &o) {
    return tail_quantiles(sample, {p}, o).front();
}

namespace {
// What the caption adds for a fit to the top of the sample alone.
std::string top_only(const TailQuantile &q) {
    return q.top_only ? "; the top values alone: below them no single tail, few values to fit" : "";
}
}  // namespace

namespace {
// How a fitted estimate was made: the fit, with fixed values apart where there were some.
std::string fit_text(const TailQuantile &q) {
    if (q.atoms > 0)
        return fmt::format(
            "{} fixed value{} apart, the largest {} ({} of {}); the rest's GPD over {}: k={} of "
            "{}, xi={:.2f}, A-D p={:.2f}{}{}",
            q.atoms, q.atoms == 1 ? "" : "s", human_ns(std::llround(q.atom)), q.atom_count,
            q.fit.n + q.atom_observations, human_ns(std::llround(q.fit.threshold)), q.fit.k,
            q.fit.n, q.fit.xi, q.fit.gof_p,
            q.estimate == q.atom ? "; its value at p lies below the largest fixed value" : "",
            top_only(q));
    return fmt::format("GPD over {}: k={} of {}, xi={:.2f}, A-D p={:.2f}{}",
                       human_ns(std::llround(q.fit.threshold)), q.fit.k, q.fit.n, q.fit.xi,
                       q.fit.gof_p, top_only(q));
}
}  // namespace

std::string format_tail(const TailQuantile &q) {
    if (!q.ok) return fmt::format("no estimate at p={:.0e}: {}", q.probability, q.note);
    const std::string value =
        q.empirical ? human_ns(std::llround(q.estimate))
                    : fmt::format("{} [{}, {}]", human_ns(std::llround(q.estimate)),
                                  human_ns(std::llround(q.low)), human_ns(std::llround(q.high)));
    std::string how = q.empirical ? std::string("observed") : fit_text(q);
    if (q.held) {
        if (q.empirical)
            how = q.held_longer ? fmt::format("observed, {} stretches longer", q.held_longer)
                                : q.note;
        how = "a wake-up at a random instant, by the stretches that held the CPUs: " + how;
        if (q.path > 0)
            how += fmt::format("; the wake-ups' median {} added", human_ns(std::llround(q.path)));
    }
    if (!q.other.empty()) how += "; " + q.other;
    return fmt::format("{} at p={:.0e} ({})", value, q.probability, how);
}

}  // namespace locksim::analysis
