#include "analysis/seeds.h"

#include <fmt/core.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <map>
#include <numeric>

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

// Keeps the larger of two worst cases with their censoring: a tie keeps "at least".
void keep_worst(int64_t &worst, Censoring &worst_c, int64_t value, const Censoring &c) {
    if (value > worst || (value == worst && c.max_censored)) {
        worst = value;
        worst_c.max_censored = c.max_censored;
    }
    worst_c.open_at_end = std::max(worst_c.open_at_end, c.open_at_end);
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
    w.ops_per_sec = first.ops_per_sec;
    w.ops = first.ops;
    for (const RunSummary *p : runs) {
        const RunSummary &r = *p;
        if (r.preempt_off_max_ns > w.preempt_off_max_ns || w.preempt_off_worst_label.empty()) {
            w.preempt_off_worst_label = r.preempt_off_worst_label;
            w.preempt_off_worst_site = r.preempt_off_worst_site;
        }
        keep_worst(w.preempt_off_max_ns, w.preempt_off_open, r.preempt_off_max_ns,
                   r.preempt_off_open);
        w.preempt_off_p99_ns = std::max(w.preempt_off_p99_ns, r.preempt_off_p99_ns);
        w.preempt_off_p50_ns = std::max(w.preempt_off_p50_ns, r.preempt_off_p50_ns);
        w.preempt_off_count += r.preempt_off_count;
        keep_worst(w.irqs_off_max_ns, w.irqs_off_open, r.irqs_off_max_ns, r.irqs_off_open);
        w.irqs_off_p99_ns = std::max(w.irqs_off_p99_ns, r.irqs_off_p99_ns);
        w.irqs_off_count += r.irqs_off_count;
        keep_worst(w.probe_max_ns, w.probe_open, r.probe_max_ns, r.probe_open);
        w.probe_p99_ns = std::max(w.probe_p99_ns, r.probe_p99_ns);
        w.probe_p50_ns = std::max(w.probe_p50_ns, r.probe_p50_ns);
        w.probe_count += r.probe_count;
        keep_worst(w.toggle_max_ns, w.toggle_open, r.toggle_max_ns, r.toggle_open);
        w.toggle_count += r.toggle_count;
        w.toggle_p50_ns = std::max(w.toggle_p50_ns, r.toggle_p50_ns);
        w.toggle_mean_ns = std::max(w.toggle_mean_ns, r.toggle_mean_ns);
        w.toggle_readers_blocked_ns =
            std::max(w.toggle_readers_blocked_ns, r.toggle_readers_blocked_ns);
        w.toggle_preempt_off_ns = std::max(w.toggle_preempt_off_ns, r.toggle_preempt_off_ns);
        w.toggle_irqs_off_ns = std::max(w.toggle_irqs_off_ns, r.toggle_irqs_off_ns);
        w.toggle_gp_wait_ns = std::max(w.toggle_gp_wait_ns, r.toggle_gp_wait_ns);
        w.toggle_bytes_allocated = std::max(w.toggle_bytes_allocated, r.toggle_bytes_allocated);
        w.toggle_peak_live_bytes = std::max(w.toggle_peak_live_bytes, r.toggle_peak_live_bytes);
        w.toggle_avc_refill_ns = std::max(w.toggle_avc_refill_ns, r.toggle_avc_refill_ns);
        keep_worst(w.reader_max_ns, w.reader_open, r.reader_max_ns, r.reader_open);
        w.reader_count += r.reader_count;
        w.reader_p50_ns = std::max(w.reader_p50_ns, r.reader_p50_ns);
        w.reader_p99_ns = std::max(w.reader_p99_ns, r.reader_p99_ns);
        if (r.ops_per_sec < w.ops_per_sec) {
            w.ops_per_sec = r.ops_per_sec;
            w.ops = r.ops;
        }
        w.peak_memory_bytes = std::max(w.peak_memory_bytes, r.peak_memory_bytes);
        w.violations += r.violations;
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
