#include "analysis/table.h"

#include <fmt/core.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "analysis/metrics.h"
#include "analysis/seeds.h"

namespace locksim::analysis {

std::string exact_duration(int64_t ns) {
    for (const auto &[size, unit] :
         {std::pair<int64_t, const char *>{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}})
        if (ns % size == 0) return fmt::format("{}{}", ns / size, unit);
    return fmt::format("{}ns", ns);
}

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

// Measured files (cyclictest, ftrace, a trace's slices) record latencies only: a measured
// series' throughput, memory and self-check count are not zero but unknown.
bool unrecorded(const RunSummary &r, const Value &v) {
    return r.platform == "measured" &&
           std::visit([](const auto &x) { return x == std::decay_t<decltype(x)>{}; }, v);
}

// A metric's cell: "-" when nothing was counted or recorded, "\u2265" in front of a worst that is a
// lower bound (something was still open when the run ended; `censored` is then set).
std::string cell(const RunSummary &r, const Metric &m, bool *censored) {
    const Value v = get(r, m);
    switch (m.unit) {
        case Unit::Ns: {
            if (nothing_counted(r, m)) return "-";
            const Metric *c = is_censorable_worst(m) ? sibling(m, "max_censored") : nullptr;
            const bool at_least = c && number(r, *c) != 0;
            if (at_least && censored) *censored = true;
            return (at_least ? "\u2265" : "") + human_ns(std::get<int64_t>(v));
        }
        case Unit::Bytes:
            if (unrecorded(r, v)) return "-";
            return human_bytes(std::get<int64_t>(v));
        case Unit::PerSecond:
            if (unrecorded(r, v)) return "-";
            return fmt::format("{:.0f}", std::get<double>(v));
        default:
            if (unrecorded(r, v)) return "-";
            return std::visit([](const auto &x) { return fmt::format("{}", x); }, v);
    }
}

// The table's columns, grouped under their headings.
struct Heading {
    const char *text;
    std::vector<const Metric *> columns;
    int width() const {
        int w = -1;
        for (const Metric *m : columns)
            w += m->table.width + 1;
        return w;
    }
};

std::vector<Heading> headings() {
    std::vector<Heading> out;
    for (const Metric &m : metrics()) {
        if (!m.table.heading) continue;
        if (out.empty() || std::string_view(out.back().text) != m.table.heading)
            out.push_back({m.table.heading, {}});
        out.back().columns.push_back(&m);
    }
    return out;
}

// The spread between seeds of the designs run under several (analysis/seeds.h).
std::string format_spread(const std::vector<DesignRuns> &groups, size_t w) {
    bool partial = false;
    auto width = [](const Metric &m) { return m.spread == SpreadColumn::Range ? 17 : 22; };
    std::string out = fmt::format(
        "\nspread over seeds: worst = min-max of the per-seed worst cases; p99 = mean over seeds "
        "[95% confidence interval]\n{:<{}}  {:>5}",
        "strategy", w, "seeds");
    for (const Metric &m : metrics())
        if (m.spread != SpreadColumn::None)
            out += fmt::format("  {:>{}}", m.spread_heading, width(m));
    out += "\n";
    for (const auto &g : groups) {
        if (g.runs.size() < 2) continue;
        out += fmt::format("{:<{}}  {:>5}", g.label, w, g.runs.size());
        for (const Metric &m : metrics()) {
            if (m.spread == SpreadColumn::None) continue;
            // Over the seeds that counted something: a seed without a commit has no worst
            // commit, not one of 0ns.
            std::vector<double> v;
            for (const RunSummary *r : g.runs)
                if (!nothing_counted(*r, m)) v.push_back(number(*r, m));
            std::string text = "-";
            if (!v.empty()) {
                const Spread s = spread_of(v);
                text = m.spread == SpreadColumn::Range ? format_range_ns(s) : format_mean_ci_ns(s);
            }
            if (!v.empty() && v.size() < g.runs.size()) {
                text += "*";
                partial = true;
            }
            out += fmt::format("  {:>{}}", text, width(m));
        }
        out += g.point.empty() ? "\n" : "  " + g.point + "\n";
    }
    if (partial)
        out +=
            "*: over the seeds that recorded any (a seed without a commit has no worst commit)\n";
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
    const std::vector<Heading> heads = headings();
    std::string top = fmt::format("{:<{}}", "", w), sub = fmt::format("{:<{}}", "strategy", w);
    size_t width = w;
    for (const Heading &h : heads) {
        top += fmt::format("  {:>{}}", h.text, h.width());
        sub += " ";
        for (const Metric *m : h.columns)
            sub += fmt::format(" {:>{}}", m->table.sub, m->table.width);
        width += 2 + static_cast<size_t>(h.width());
    }
    std::string out = top + (seeds ? "  seeds" : "") + (points ? "  point\n" : "\n");
    out += sub + "\n";
    out += std::string(width + (seeds ? 7 : 0), '-') + "\n";
    bool censored = false;
    for (const auto &g : groups) {
        const RunSummary r = worst_over(g.runs);
        out += fmt::format("{:<{}}", r.label, w);
        for (const Heading &h : heads) {
            out += " ";
            for (const Metric *m : h.columns)
                out += fmt::format(" {:>{}}", cell(r, *m, &censored), m->table.width);
        }
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

std::string format_worst_causes(const std::vector<RunSummary> &runs) {
    std::string out;
    size_t w = 8;
    for (const auto &r : runs)
        w = std::max(w, r.label.size());
    for (const auto &g : group_by_design(runs)) {
        const RunSummary r = worst_over(g.runs);
        if (r.probe_count == 0 && r.probe_open.open_at_end == 0) continue;
        const std::string cause = r.probe_worst_cause.empty()
                                      ? std::string("not recorded for this series (see its detail)")
                                      : r.probe_worst_cause;
        out += fmt::format("  {:<{}} {:>9}{}  {}{}\n", r.label, w, human_ns(r.probe_max_ns),
                           r.probe_open.max_censored ? "\u2265" : "", cause,
                           g.point.empty() ? "" : "  (" + g.point + ")");
    }
    if (out.empty()) return out;
    return "worst probe wake-up of each design (over its seeds) and what delayed it:\n" + out;
}

std::string format_csv(const std::vector<RunSummary> &runs) {
    std::string out = "label,strategy,platform,seed,point";
    // Each cell is appended after its comma, never as "," + cell: GCC 12 warns (-Wrestrict, a
    // false positive of its string concatenation) on the temporary that makes.
    for (const Metric &m : metrics()) {
        out += ',';
        out += m.csv_column();
    }
    out += "\n";
    auto quoted = [](const std::string &s) {
        std::string q = "\"";
        for (char c : s)
            q += c == '"' ? std::string("\"\"") : std::string(1, c);
        return q + "\"";
    };
    for (const auto &r : runs) {
        out += fmt::format("{},{},{},{},{}", quoted(r.label), quoted(r.strategy), r.platform,
                           r.seed, quoted(r.point_text()));
        for (const Metric &m : metrics()) {
            out += ',';
            out += std::visit(
                [&](const auto &v) {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::string>)
                        return quoted(v);
                    else if constexpr (std::is_same_v<T, double>)
                        return fmt::format("{:.1f}", v);
                    else
                        return fmt::format("{}", v);
                },
                get(r, m));
        }
        out += "\n";
    }
    return out;
}

}  // namespace locksim::analysis
