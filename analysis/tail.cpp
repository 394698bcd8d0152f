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
    auto [tau, ll] = maximise([&](double t) { return at_theta(e, t / scale).ll; }, grid);
    ThetaPoint p = at_theta(e, tau / scale);
    GpdFit f;
    f.sigma = p.sigma;
    f.xi = p.xi;
    f.log_likelihood = ll;
    f.ok = std::isfinite(ll);
    if (!f.ok) f.why_not = "the likelihood has no maximum";
    return f;
}

double gpd_cdf(double sigma, double xi, double y) {
    if (y <= 0) return 0;
    if (std::abs(xi) < 1e-9) return -std::expm1(-y / sigma);
    const double z = 1 + xi * y / sigma;
    if (z <= 0) return 1;
    return 1 - std::pow(z, -1 / xi);
}

// Kolmogorov-Smirnov distance between the uncensored excesses and the fitted GPD.
double ks_distance(const Excesses &e, double sigma, double xi) {
    double below = 0, d = 0;
    for (const auto &[y, w] : e.y) {
        const double f = gpd_cdf(sigma, xi, y);
        d = std::max(d, std::abs(f - below / e.k_uncensored));
        below += w;
        d = std::max(d, std::abs(f - below / e.k_uncensored));
    }
    return d;
}

// Threshold choice and excesses (see the header).
struct Split {
    double u = 0;
    uint64_t n = 0, k = 0;
    Excesses e;
};

bool split(const TailSample &s, const TailOptions &o, Split &out, std::string &why) {
    out.n = s.count();
    const double n = static_cast<double>(out.n);
    const auto target = static_cast<uint64_t>(std::max<double>(
        static_cast<double>(o.min_exceedances), std::min(2 * std::sqrt(n), n / 10)));
    if (out.n < 3 * target || s.values.size() < 3) {
        why = fmt::format(
            "too few observations ({}; the fit needs {} above its threshold and "
            "{} in all)",
            out.n, target, 3 * target);
        return false;
    }
    // Walk down from the largest value until `target` values lie at or above it (censored
    // values count where they lie).
    std::vector<double> cens = s.censored;
    std::sort(cens.begin(), cens.end());
    uint64_t above = 0;
    size_t j = s.values.size();
    size_t c = cens.size();
    while (j > 1 && above < target) {
        --j;
        above += s.values[j].second;
        while (c > 0 && cens[c - 1] >= s.values[j].first) {
            --c;
            ++above;
        }
    }
    if (j == 0 || above >= out.n) {
        why = "no threshold leaves enough values below it";
        return false;
    }
    out.u = (s.values[j - 1].first + s.values[j].first) / 2;
    out.k = above;
    for (size_t i = j; i < s.values.size(); ++i) {
        out.e.y.emplace_back(s.values[i].first - out.u, static_cast<double>(s.values[i].second));
        out.e.k_uncensored += static_cast<double>(s.values[i].second);
    }
    for (double v : cens)
        if (v > out.u) out.e.censored.push_back(v - out.u);
    out.e.y_max = out.e.y.back().first;
    for (double v : out.e.censored)
        out.e.y_max = std::max(out.e.y_max, v);
    return true;
}

// Bucketed like kernel::Histogram: the midpoint of the bucket that holds the value.
double bucketed(double v) {
    const auto i = kernel::Histogram::bucket_of(static_cast<int64_t>(std::llround(v)));
    return static_cast<double>(kernel::Histogram::bucket_mid(i));
}

// Parametric bootstrap p-value of the KS distance (samples drawn from the fit, treated alike).
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
        if (!refit.ok || ks_distance(e, refit.sigma, refit.xi) >= fit.ks) ++as_far;
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
    for (double xi = -0.95; xi <= 3.0001; xi += 0.05)
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

GpdFit fit_gpd(const TailSample &sample, const TailOptions &o) {
    Split s;
    GpdFit fit;
    if (!split(sample, o, s, fit.why_not)) {
        fit.n = s.n;
        return fit;
    }
    fit = mle(s.e);
    fit.threshold = s.u;
    fit.n = s.n;
    fit.k = s.k;
    if (!fit.ok) return fit;
    if (fit.xi >= 1) {
        // A tail with no mean: the threshold lies below the tail (a mixture of modes, not one
        // tail), and the extrapolation would mean nothing.
        fit.ok = false;
        fit.why_not = fmt::format(
            "shape xi={:.2f} >= 1 (no finite mean: not a single tail above "
            "the threshold)",
            fit.xi);
        return fit;
    }
    fit.ks = ks_distance(s.e, fit.sigma, fit.xi);
    fit.gof_p = bootstrap_p(s, fit, o);
    if (fit.gof_p < o.gof_alpha) {
        fit.ok = false;
        fit.why_not = fmt::format("poor fit (KS p={:.2f} < {:.2f})", fit.gof_p, o.gof_alpha);
    }
    return fit;
}

namespace {

TailQuantile tail_quantile_unchecked(const TailSample &sample, double p, const TailOptions &o,
                                     std::optional<GpdFit> &fit) {
    TailQuantile q;
    q.probability = p;
    const double n = static_cast<double>(sample.count());
    if (n > 0 && p * n >= 1) {
        // Inside the data: at least one observation lies above; the observed quantile.
        q.ok = q.empirical = true;
        q.estimate = q.low = q.high = empirical_quantile(sample, p);
        q.note = "observed";
        return q;
    }
    Split s;
    if (!split(sample, o, s, q.note)) return q;
    if (!fit) fit = fit_gpd(sample, o);
    q.fit = *fit;
    if (!q.fit.ok) {
        q.note = q.fit.why_not;
        return q;
    }
    q.estimate = quantile_of(s, q.fit.sigma, q.fit.xi, p);
    const double limit =
        q.fit.log_likelihood - boost::math::quantile(boost::math::chi_squared(1), o.confidence) / 2;
    auto f = [&](double x) { return profile_at(s, x, p) - limit; };
    const double d = q.estimate - s.u;
    if (!(d > 0) || !(f(q.estimate) > 0)) {
        // The profile misses the maximum: the shape lies outside [-0.95, 3] or the likelihood
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

}  // namespace

std::vector<TailQuantile> tail_quantiles(const TailSample &sample,
                                         const std::vector<double> &probabilities,
                                         const TailOptions &o) {
    std::optional<GpdFit> fit;  // made once, when a probability lies beyond the data
    std::vector<TailQuantile> out;
    for (double p : probabilities) {
        try {
            out.push_back(tail_quantile_unchecked(sample, p, o, fit));
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

std::string format_tail(const TailQuantile &q) {
    if (q.ok && q.empirical)
        return fmt::format("{} at p={:.0e} (observed)", human_ns(std::llround(q.estimate)),
                           q.probability);
    if (!q.ok) return fmt::format("no estimate at p={:.0e}: {}", q.probability, q.note);
    return fmt::format("{} [{}, {}] at p={:.0e} (GPD over {}: k={} of {}, xi={:.2f}, KS p={:.2f})",
                       human_ns(std::llround(q.estimate)), human_ns(std::llround(q.low)),
                       human_ns(std::llround(q.high)), q.probability,
                       human_ns(std::llround(q.fit.threshold)), q.fit.k, q.fit.n, q.fit.xi,
                       q.fit.gof_p);
}

}  // namespace locksim::analysis
