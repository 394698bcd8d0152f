#include "analysis/table.h"

#include <fmt/core.h>

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

bool several_seeds(const std::vector<RunSummary> &runs) {
    for (const auto &r : runs)
        if (r.seed != runs.front().seed) return true;
    return false;
}

}  // namespace

std::string format_table(const std::vector<RunSummary> &runs) {
    if (runs.empty()) return "(no runs)\n";
    size_t w = 8;
    for (const auto &r : runs)
        w = std::max(w, r.label.size());
    const bool points = any_points(runs), seeds = several_seeds(runs);
    auto t = [](uint64_t count, int64_t ns) { return count ? human_ns(ns) : std::string("-"); };
    std::string out;
    out += fmt::format("{:<{}}  {:>17}  {:>8}  {:>17}  {:>17}  {:>8}  {:>9}  {:>8}  {:>4}", "", w,
                       "preempt-off", "irqs-off", "probe wake-up", "toggle", "reader", "ops/s",
                       "peak", "viol");
    out += seeds ? "  seed" : "";
    out += points ? "  point\n" : "\n";
    out += fmt::format(
        "{:<{}}  {:>8} {:>8}  {:>8}  {:>8} {:>8}  {:>8} {:>8}  {:>8}  {:>9}  {:>8}  {:>4}",
        "strategy", w, "worst", "p99", "worst", "p99", "worst", "p50", "worst", "p99", "", "memory",
        "");
    out += "\n";
    out += std::string(w + 104 + (seeds ? 6 : 0), '-') + "\n";
    for (const auto &r : runs) {
        out += fmt::format(
            "{:<{}}  {:>8} {:>8}  {:>8}  {:>8} {:>8}  {:>8} {:>8}  {:>8}  {:>9.0f}  {:>8}  {:>4}",
            r.label, w, t(r.preempt_off_count, r.preempt_off_max_ns),
            t(r.preempt_off_count, r.preempt_off_p99_ns), t(r.irqs_off_count, r.irqs_off_max_ns),
            t(r.probe_count, r.probe_p99_ns), t(r.probe_count, r.probe_max_ns),
            t(r.toggle_count, r.toggle_p50_ns), t(r.toggle_count, r.toggle_max_ns),
            t(r.reader_count, r.reader_p99_ns), r.ops_per_sec, human_bytes(r.peak_memory_bytes),
            r.violations);
        if (seeds) out += fmt::format("  {:>4}", r.seed);
        if (points) out += "  " + r.point_text();
        out += "\n";
    }
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
