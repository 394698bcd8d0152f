#include "analysis/held_tail.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/pick.h"
#include "analysis/table.h"
#include "record/histogram.h"

namespace locksim::analysis {

namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();
// The most stretches a threshold keeps above it (see the header).
constexpr uint64_t kHeldTop = 100;
// The residual of a GPD(sigma, xi) tail, weighted by length, is a GPD of shape xi / (1 - xi):
// from xi = 1/2 on it has no mean, and a threshold whose fit has such a shape is passed over
// (as tail.h passes over one with xi >= 1).
constexpr double kMaxHeldShape = 0.5;

// The stretches' values and censored lengths as one descending list (a censored length counts
// as a stretch that long: a lower bound, as the histogram holds it).
std::vector<std::pair<double, uint64_t>> descending(const TailSample &s) {
    std::vector<std::pair<double, uint64_t>> v = s.values;
    for (double c : s.censored)
        v.emplace_back(c, 1);
    std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    return v;
}

// Solves sum (S_i - x)+ = budget over the stretches as they are: x, and how many stretches are
// longer. x = 0 when all of them together hold less than the budget.
struct Observed {
    double x = 0;
    uint64_t longer = 0;
};
Observed observed_solution(const std::vector<std::pair<double, uint64_t>> &desc, double budget) {
    double sum = 0;  // of the lengths above the value at hand
    uint64_t m = 0;  // how many
    for (const auto &[v, c] : desc) {
        if (m > 0 && sum - static_cast<double>(m) * v >= budget)
            return {(sum - budget) / static_cast<double>(m), m};
        sum += v * static_cast<double>(c);
        m += c;
    }
    if (sum > budget) return {(sum - budget) / static_cast<double>(m), m};
    return {0, m};
}

// The wait beyond a fitted tail: over the threshold u, k stretches with a generalised Pareto
// tail (sigma, xi), beside the fixed values set apart; the budget is p times the CPU time.
struct Wait {
    double u = 0, k = 0;
    const std::vector<std::pair<double, uint64_t>> &atoms;
    double budget = 0;

    // The stretches' total excess over x >= u: k times the tail's survival and mean excess,
    // and the fixed values above x.
    double excess(double sigma, double xi, double x) const {
        const double y = std::max(0.0, x - u);
        double survival = 0;
        if (std::abs(xi) < 1e-9) {
            survival = std::exp(-y / sigma);
        } else if (const double z = 1 + xi * y / sigma; z > 0) {
            survival = std::pow(z, -1 / xi);
        }
        double e = k * survival * (sigma + xi * y) / (1 - xi);
        for (const auto &[a, c] : atoms)
            if (a > x) e += static_cast<double>(c) * (a - x);
        return e;
    }
    // The x >= u whose excess is the budget (u where even u's is not more); infinity where the
    // excess stays above it.
    double solve(double sigma, double xi) const {
        double lo = u, hi = u + sigma;
        if (!(excess(sigma, xi, lo) > budget)) return u;
        for (int i = 0; i < 200 && excess(sigma, xi, hi) > budget; ++i)
            hi = u + 2 * (hi - u);
        if (excess(sigma, xi, hi) > budget) return kUnbounded;
        for (int i = 0; i < 200 && hi - lo > 1e-6 * hi; ++i) {
            const double mid = (lo + hi) / 2;
            (excess(sigma, xi, mid) > budget ? lo : hi) = mid;
        }
        return hi;
    }
};

}  // namespace

HeldSample run_held_sample(const nlohmann::json &run) {
    HeldSample s;
    const nlohmann::json &d = run.at("detail");
    if (!d.contains("cpu_held")) {
        s.absent = d.value("cpu_held_absent", std::string("the run records no held stretches"));
        return s;
    }
    const nlohmann::json &h = d.at("cpu_held");
    std::vector<int64_t> open;
    if (h.contains("open_at_end_ns"))
        for (const auto &v : h.at("open_at_end_ns"))
            open.push_back(v.get<int64_t>());
    s.stretches = tail_sample(h.at("length_ns").get<kernel::Histogram>(), open);
    const auto cpus = d.contains("cpus") ? d.at("cpus").size() : 0;
    s.cpu_ns = static_cast<double>(d.value("duration_ns", int64_t{0})) * static_cast<double>(cpus);
    if (!(s.cpu_ns > 0)) s.absent = "the run records no CPU time";
    return s;
}

TailQuantile held_quantile(const HeldSample &s, double p, const TailOptions &o) {
    TailQuantile q;
    q.probability = p;
    q.held = true;
    if (!s.absent.empty()) {
        q.note = "no held stretches (" + s.absent + ")";
        return q;
    }
    const double budget = p * s.cpu_ns;
    const auto desc = descending(s.stretches);
    const Observed seen = observed_solution(desc, budget);
    q.held_longer = seen.x > 0 ? seen.longer : 0;
    if (q.held_longer == 0 || q.held_longer >= o.min_exceedances) {
        q.ok = q.empirical = true;
        q.estimate = q.low = q.high = seen.x;
        q.note = q.held_longer == 0 ? "the CPUs are held less than that share of their time"
                                    : "observed";
        return q;
    }
    // Beyond what the stretches show: their fitted tail. The fit is chosen as tail.h chooses it
    // (the probability asked here does not enter the choice).
    const double n = static_cast<double>(s.stretches.count());
    TailOptions fo = o;
    fo.fit_inside_data = true;
    fo.max_exceedances = kHeldTop;
    // A threshold whose tail is too heavy for the wait is passed over for a higher one, fixed
    // values apart, or the top values alone, as one with no single tail is.
    fo.max_shape = kMaxHeldShape;
    fo.max_shape_why = " (too heavy: a wake-up's wait at a random instant would have no mean)";
    const TailQuantile chosen = tail_quantile(s.stretches, 0.1 / n, fo);
    if (!chosen.fit.ok) {
        q.note = "the stretches' lengths: " + chosen.note;
        return q;
    }
    q.fit = chosen.fit;
    q.top_only = chosen.top_only;
    std::vector<std::pair<double, uint64_t>> atoms;
    TailSample fitted = s.stretches;  // the sample the fit was made on
    if (chosen.atoms > 0) {
        auto [a, rest] = split_atoms(s.stretches, fo);
        atoms = std::move(a.values);
        fitted = std::move(rest);
        q.atoms = chosen.atoms;
        q.atom = chosen.atom;
        q.atom_count = chosen.atom_count;
        q.atom_observations = chosen.atom_observations;
    }
    const Wait wait{chosen.fit.threshold, static_cast<double>(chosen.fit.k), atoms, budget};
    if (!(wait.excess(chosen.fit.sigma, chosen.fit.xi, wait.u) > budget)) {
        // The solution lies below the threshold, among the stretches as they are.
        q.ok = q.empirical = true;
        q.estimate = q.low = q.high = seen.x;
        q.note = "observed";
        return q;
    }
    q.estimate = wait.solve(chosen.fit.sigma, chosen.fit.xi);
    if (!std::isfinite(q.estimate)) {
        q.note = fmt::format(
            "the stretches' fitted tail (GPD over {}: k={}, xi={:.2f}) is too heavy: the wait it "
            "gives at that share of the time has no bound",
            human_ns(std::llround(wait.u)), chosen.fit.k, chosen.fit.xi);
        return q;
    }
    // Its interval: the waits of the tails the stretches do not reject (the likelihood region),
    // up to any shape below 1, where the wait's quantiles exist though its mean may not.
    TailOptions region = fo;
    region.max_shape = 1;
    const auto [low, high] = likelihood_range(
        fitted, chosen.fit, region,
        [&](double sigma, double xi) { return std::max(wait.u, wait.solve(sigma, xi)); });
    q.low = std::min(low, q.estimate);
    q.high = std::max(high, q.estimate);
    q.ok = std::isfinite(q.high);
    if (!q.ok)
        q.note = fmt::format(
            "{} from the GPD over {} (k={}, xi={:.2f}), but the interval is unbounded above (the "
            "stretches do not rule out a tail too heavy for the wait to end)",
            human_ns(std::llround(q.estimate)), human_ns(std::llround(wait.u)), chosen.fit.k,
            chosen.fit.xi);
    return q;
}

namespace {

// The probes' wake-ups merged: their median is the wake-up path a held CPU adds its wait to.
kernel::Histogram wakeups(const nlohmann::json &run) {
    kernel::Histogram h;
    const nlohmann::json &d = run.at("detail");
    if (d.contains("wakeup_latency_ns"))
        for (const auto &[task, hj] : d.at("wakeup_latency_ns").items())
            h.merge(hj.get<kernel::Histogram>());
    return h;
}

// The stretches' estimate, never below the worst wake-up seen; none where they give none (the
// wake-ups' own figure, made at the phases the scenario gave its probes, then in the note).
TailQuantile combine(const TailQuantile &from_wakeups, TailQuantile from_held, double worst) {
    const std::string alone = from_wakeups.ok
                                  ? fmt::format("the wake-ups alone give {}",
                                                human_ns(std::llround(from_wakeups.estimate)))
                                  : std::string("the wake-ups alone give none");
    if (!from_held.ok) {
        from_held.note = "from the stretches that held the CPUs: " + from_held.note + "; " + alone;
        return from_held;
    }
    if (worst > from_held.estimate) {
        from_held.estimate = from_held.low = worst;
        from_held.high = std::max(from_held.high, worst);
        from_held.other =
            fmt::format("raised to the worst wake-up seen, {}", human_ns(std::llround(worst)));
    }
    from_held.other += (from_held.other.empty() ? "" : "; ") + alone;
    return from_held;
}

}  // namespace

std::vector<TailQuantile> probe_wakeup_tails(const nlohmann::json &run,
                                             const std::vector<double> &probabilities,
                                             const TailOptions &o) {
    std::vector<TailQuantile> out =
        tail_quantiles(run_tail_sample(run, TailMetric::ProbeWakeup), probabilities, o);
    const kernel::Histogram seen = wakeups(run);
    if (seen.count() == 0) return out;  // no probe: no wake-up to speak of
    const HeldSample held = run_held_sample(run);
    if (!held.absent.empty()) {
        for (TailQuantile &w : out)
            w.other = "no held stretches (" + held.absent + ")";
        return out;
    }
    const double path = seen.count() ? static_cast<double>(seen.value_at_percentile(50)) : 0;
    const double worst = static_cast<double>(seen.max());
    for (TailQuantile &w : out) {
        TailQuantile h;
        try {
            h = held_quantile(held, w.probability, o);
        } catch (const std::exception &e) {
            // Boost.Math's root finders and minimisers throw when the likelihood misbehaves.
            h.held = true;
            h.note = fmt::format("the fit failed ({})", e.what());
        }
        if (h.ok) {
            h.path = path;
            h.estimate += path;
            h.low += path;
            h.high += path;
        }
        w = combine(w, h, worst);
    }
    return out;
}

}  // namespace locksim::analysis
