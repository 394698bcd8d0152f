#include "analysis/seeds.h"

#include <fmt/core.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <map>
#include <numeric>

#include "analysis/metrics.h"
#include "analysis/table.h"

namespace locksim::analysis {

Spread spread_of(const std::vector<double> &values, double confidence) {
    Spread s;
    s.n = values.size();
    if (values.empty()) return s;
    auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    s.min = *lo;
    s.max = *hi;
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.n);
    s.ci_low = s.ci_high = s.mean;
    if (s.n < 2) return s;
    double ss = 0;
    for (double v : values)
        ss += (v - s.mean) * (v - s.mean);
    const double sd = std::sqrt(ss / static_cast<double>(s.n - 1));
    boost::math::students_t t(static_cast<double>(s.n - 1));
    const double half =
        boost::math::quantile(t, 0.5 + confidence / 2) * sd / std::sqrt(static_cast<double>(s.n));
    s.ci_low = s.mean - half;
    s.ci_high = s.mean + half;
    return s;
}

std::vector<DesignRuns> group_by_design(const std::vector<RunSummary> &runs) {
    std::vector<DesignRuns> groups;
    std::map<std::pair<std::string, std::string>, size_t> index;
    for (const auto &r : runs) {
        auto key = std::make_pair(r.label, r.point_text());
        auto [it, fresh] = index.emplace(key, groups.size());
        if (fresh) groups.push_back(DesignRuns{r.label, key.second, {}});
        groups[it->second].runs.push_back(&r);
    }
    return groups;
}

namespace {

// Whether `a` is a worse value than `b` of a metric whose worst is `w` (Max or Min).
bool worse(Worst w, double a, double b) {
    return w == Worst::Min ? a < b : a > b;
}

// Whether a metric's value counts as given (a follower keeps the first one given on a tie).
bool given(const Value &v) {
    if (const auto *text = std::get_if<std::string>(&v)) return !text->empty();
    if (const auto *flag = std::get_if<bool>(&v)) return *flag;
    return true;
}

}  // namespace

RunSummary worst_over(const std::vector<const RunSummary *> &runs) {
    RunSummary w;
    if (runs.empty()) return w;
    const RunSummary &first = *runs.front();
    w.strategy = first.strategy;
    w.label = first.label;
    w.platform = first.platform;
    w.seed = first.seed;
    w.point = first.point;
    // A lowest starts from the first run, with what follows it.
    for (const Metric &m : metrics()) {
        const Metric *leader = m.worst == Worst::Follows ? sibling(m, m.leader) : &m;
        if (leader->worst == Worst::Min) set(w, m, get(first, m));
    }
    for (const RunSummary *p : runs) {
        const RunSummary &r = *p;
        const RunSummary before = w;  // followers compare against the worst before this run
        for (const Metric &m : metrics()) {
            const double mine = number(r, m), kept = number(before, m);
            switch (m.worst) {
                case Worst::Max:
                case Worst::Min:
                    if (worse(m.worst, mine, kept)) set(w, m, get(r, m));
                    break;
                case Worst::Sum:
                    set(w, m,
                        std::visit(
                            [](auto a, auto b) -> Value {
                                using A = decltype(a);
                                if constexpr (std::is_same_v<A, uint64_t> &&
                                              std::is_same_v<A, decltype(b)>)
                                    return a + b;
                                else
                                    throw std::logic_error("metric: only counts add up");
                            },
                            get(before, m), get(r, m)));
                    break;
                case Worst::Follows: {
                    const Metric &leader = *sibling(m, m.leader);
                    const double lr = number(r, leader), lw = number(before, leader);
                    if (worse(leader.worst, lr, lw) ||
                        (lr == lw && !given(get(before, m)) && given(get(r, m))))
                        set(w, m, get(r, m));
                    break;
                }
            }
        }
    }
    std::map<std::string, uint64_t> kinds;
    for (const RunSummary *p : runs)
        for (const auto &[k, n] : p->violation_kinds)
            kinds[k] += n;
    w.violation_kinds.assign(kinds.begin(), kinds.end());
    return w;
}

std::string format_range_ns(const Spread &s) {
    const auto lo = static_cast<int64_t>(std::llround(s.min));
    const auto hi = static_cast<int64_t>(std::llround(s.max));
    const std::string low = human_ns(lo), high = human_ns(hi);
    return low == high ? high : low + "-" + high;
}

std::string format_mean_ci_ns(const Spread &s) {
    const auto at = [](double v) { return human_ns(static_cast<int64_t>(std::llround(v))); };
    if (s.n < 2) return at(s.mean);
    return fmt::format("{} [{}, {}]", at(s.mean), at(std::max(0.0, s.ci_low)), at(s.ci_high));
}

}  // namespace locksim::analysis
