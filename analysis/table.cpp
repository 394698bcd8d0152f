#include "analysis/table.h"

#include <fmt/core.h>

#include <algorithm>

#include "analysis/seeds.h"

namespace locksim::analysis {

std::string human_ns(int64_t ns) {
    if (ns < 1000) return fmt::format("{}ns", ns);
    if (ns < 1'000'000) return fmt::format("{:.1f}us", ns / 1e3);
    if (ns < 1'000'000'000) return fmt::format("{:.2f}ms", ns / 1e6);
    return fmt::format("{:.2f}s", ns / 1e9);
}

std::string human_bytes(int64_t b) {
    if (b < 1024) return fmt::format("{}B", b);
    if (b < 1024 * 1024) return fmt::format("{:.1f}K", b / 1024.0);
    if (b < int64_t{1} << 30) return fmt::format("{:.1f}M", b / (1024.0 * 1024));
    return fmt::format("{:.2f}G", b / (1024.0 * 1024 * 1024));
}

namespace {

bool any_points(const std::vector<RunSummary> &runs) {
    for (const auto &r : runs)
        if (!r.point.empty()) return true;
    return false;
}

// A worst case: "-" when nothing was counted, "≥" in front when it is a lower bound (something
// was still open when the run ended).
std::string worst_text(uint64_t count, const Censoring &c, int64_t ns) {
    if (count == 0 && c.open_at_end == 0) return "-";
    return (c.max_censored ? "\u2265" : "") + human_ns(ns);
}

// The spread between seeds of the designs run under several (analysis/seeds.h).
std::string format_spread(const std::vector<DesignRuns> &groups, size_t w) {
    std::string out = fmt::format(
        "\nspread over seeds: worst = min-max of the per-seed worst cases; p99 = mean over seeds "
        "[95% confidence interval]\n{:<{}}  {:>5}  {:>17}  {:>22}  {:>17}  {:>22}  {:>17}\n",
        "strategy", w, "seeds", "preempt-off worst", "preempt-off p99", "probe worst", "probe p99",
        "toggle worst");
    for (const auto &g : groups) {
        if (g.runs.size() < 2) continue;
        auto per_seed = [&](auto field) {
            std::vector<double> v;
            for (const RunSummary *r : g.runs)
                v.push_back(static_cast<double>(field(*r)));
            return spread_of(v);
        };
        out += fmt::format(
            "{:<{}}  {:>5}  {:>17}  {:>22}  {:>17}  {:>22}  {:>17}", g.label, w, g.runs.size(),
            format_range_ns(per_seed([](const RunSummary &r) { return r.preempt_off_max_ns; })),
            format_mean_ci_ns(per_seed([](const RunSummary &r) { return r.preempt_off_p99_ns; })),
            format_range_ns(per_seed([](const RunSummary &r) { return r.probe_max_ns; })),
            format_mean_ci_ns(per_seed([](const RunSummary &r) { return r.probe_p99_ns; })),
            std::all_of(g.runs.begin(), g.runs.end(),
                        [](const RunSummary *r) {
                            return r->toggle_count == 0 && r->toggle_open.open_at_end == 0;
                        })
                ? std::string("-")
                : format_range_ns(per_seed([](const RunSummary &r) { return r.toggle_max_ns; })));
        out += g.point.empty() ? "\n" : "  " + g.point + "\n";
    }
    return out;
}

}  // namespace

std::string format_table(const std::vector<RunSummary> &runs) {
    if (runs.empty()) return "(no runs)\n";
    size_t w = 8;
    for (const auto &r : runs)
        w = std::max(w, r.label.size());
    const std::vector<DesignRuns> groups = group_by_design(runs);
    const bool points = any_points(runs);
    const bool seeds = std::any_of(groups.begin(), groups.end(),
                                   [](const DesignRuns &g) { return g.runs.size() > 1; });
    auto t = [](uint64_t count, int64_t ns) { return count ? human_ns(ns) : std::string("-"); };
    std::string out;
    out += fmt::format("{:<{}}  {:>17}  {:>8}  {:>17}  {:>17}  {:>8}  {:>9}  {:>8}  {:>4}", "", w,
                       "preempt-off", "irqs-off", "probe wake-up", "toggle", "reader", "ops/s",
                       "peak", "viol");
    out += seeds ? "  seeds" : "";
    out += points ? "  point\n" : "\n";
    out += fmt::format(
        "{:<{}}  {:>8} {:>8}  {:>8}  {:>8} {:>8}  {:>8} {:>8}  {:>8}  {:>9}  {:>8}  {:>4}",
        "strategy", w, "worst", "p99", "worst", "p99", "worst", "p50", "worst", "p99", "", "memory",
        "");
    out += "\n";
    out += std::string(w + 104 + (seeds ? 7 : 0), '-') + "\n";
    bool censored = false;
    for (const auto &g : groups) {
        const RunSummary r = worst_over(g.runs);
        censored = censored || r.preempt_off_open.max_censored || r.irqs_off_open.max_censored ||
                   r.probe_open.max_censored || r.toggle_open.max_censored;
        out += fmt::format(
            "{:<{}}  {:>8} {:>8}  {:>8}  {:>8} {:>8}  {:>8} {:>8}  {:>8}  {:>9.0f}  {:>8}  {:>4}",
            r.label, w, worst_text(r.preempt_off_count, r.preempt_off_open, r.preempt_off_max_ns),
            t(r.preempt_off_count, r.preempt_off_p99_ns),
            worst_text(r.irqs_off_count, r.irqs_off_open, r.irqs_off_max_ns),
            t(r.probe_count, r.probe_p99_ns),
            worst_text(r.probe_count, r.probe_open, r.probe_max_ns),
            t(r.toggle_count, r.toggle_p50_ns),
            worst_text(r.toggle_count, r.toggle_open, r.toggle_max_ns),
            t(r.reader_count, r.reader_p99_ns), r.ops_per_sec, human_bytes(r.peak_memory_bytes),
            r.violations);
        if (seeds) out += fmt::format("  {:>5}", g.runs.size());
        if (points) out += "  " + g.point;
        out += "\n";
    }
    if (censored)
        out +=
            "\u2265: at least; it was still open when the run ended (run longer to see its end)\n";
    if (seeds) out += format_spread(groups, w);
    return out;
}

std::string format_csv(const std::vector<RunSummary> &runs) {
    std::string out =
        "label,strategy,platform,seed,point,preempt_off_max_ns,preempt_off_p99_ns,"
        "preempt_off_count,irqs_off_max_ns,irqs_off_p99_ns,probe_wakeup_p50_ns,"
        "probe_wakeup_p99_ns,probe_wakeup_max_ns,toggle_count,toggle_p50_ns,toggle_max_ns,"
        "toggle_mean_ns,toggle_readers_blocked_ns,toggle_preempt_off_ns,toggle_irqs_off_ns,"
        "toggle_gp_wait_ns,toggle_grace_periods,toggle_bytes_allocated,toggle_peak_live_bytes,"
        "toggle_avc_refill_ns,"
        "reader_count,reader_p50_ns,reader_p99_ns,reader_max_ns,ops,ops_per_sec,"
        "peak_memory_bytes,violations\n";
    auto quoted = [](const std::string &s) {
        std::string q = "\"";
        for (char c : s)
            q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    };
    for (const auto &r : runs) {
        out += fmt::format(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}"
            ",{}"
            ","
            "{:.1f},{},{}\n",
            quoted(r.label), quoted(r.strategy), r.platform, r.seed, quoted(r.point_text()),
            r.preempt_off_max_ns, r.preempt_off_p99_ns, r.preempt_off_count, r.irqs_off_max_ns,
            r.irqs_off_p99_ns, r.probe_p50_ns, r.probe_p99_ns, r.probe_max_ns, r.toggle_count,
            r.toggle_p50_ns, r.toggle_max_ns, r.toggle_mean_ns, r.toggle_readers_blocked_ns,
            r.toggle_preempt_off_ns, r.toggle_irqs_off_ns, r.toggle_gp_wait_ns,
            r.toggle_grace_periods, r.toggle_bytes_allocated, r.toggle_peak_live_bytes,
            r.toggle_avc_refill_ns, r.reader_count, r.reader_p50_ns, r.reader_p99_ns,
            r.reader_max_ns, r.ops, r.ops_per_sec, r.peak_memory_bytes, r.violations);
    }
    return out;
}

}  // namespace locksim::analysis
