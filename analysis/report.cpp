#include "analysis/report.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>
#include <tuple>

#include "analysis/held_tail.h"
#include "analysis/metrics.h"
#include "analysis/table.h"
#include "analysis/wakeup_cause.h"
#include "record/histogram.h"
#include "record/run_results.h"
#include "util/error.h"

extern char **environ;

namespace locksim::analysis {

namespace fs = std::filesystem;
using json = nlohmann::json;
using kernel::Histogram;

namespace {

constexpr int kHistW = 900, kHistH = 450;
constexpr int kSpecW = 900, kSpecH = 500;
constexpr int kBarsW = 900, kBarsH = 500;
constexpr int kScaleW = 1000, kScaleH = 700;
constexpr int64_t kMaxBins = 200;

double us(int64_t ns) {
    return static_cast<double>(ns) / 1000.0;
}

// The object at `path` under `j`, or nullptr when a step is missing.
const json *child(const json &j, std::initializer_list<const char *> path) {
    const json *at = &j;
    for (const char *key : path) {
        if (!at->is_object()) return nullptr;
        auto it = at->find(key);
        if (it == at->end()) return nullptr;
        at = &*it;
    }
    return at;
}

Histogram decode(const json &j, const std::string &where) {
    Histogram h;
    try {
        from_json(j, h);
    } catch (const std::exception &e) {
        throw UserError(fmt::format("{}: not a histogram: {}", where, e.what()));
    }
    return h;
}

// 1, 2 or 5 times a power of ten, at least `ns`.
int64_t nice_width(int64_t ns) {
    for (int64_t p = 1;; p *= 10)
        for (int64_t m : {1, 2, 5})
            if (m * p >= ns) return m * p;
}

// The width of equal bins that cover 0..max_ns in at most kMaxBins.
int64_t bin_width(int64_t max_ns) {
    return nice_width(std::max<int64_t>(1, (max_ns + kMaxBins - 1) / kMaxBins));
}

// Rebins the histogram's log-linear buckets into equal bins of `width` ns for a linear axis (a
// bucket's count goes to the bin of its midpoint): [[low_us, width_us, count], ...] for
// non-empty bins.
json linear_bins(const Histogram &h, int64_t width) {
    const json hist = h;
    std::map<int64_t, uint64_t> bins;
    for (const json &b : hist.at("buckets")) {
        auto index = b.at(0).get<size_t>();
        int64_t mid = std::clamp(Histogram::bucket_mid(index), h.min(), h.max());
        bins[mid / width] += b.at(1).get<uint64_t>();
    }
    json out = json::array();
    for (const auto &[bin, count] : bins)
        out.push_back({us(bin * width), us(width), count});
    return out;
}

// Latency by percentile, HdrHistogram-style: ten points per decade of 1/(1-p), then the maximum
// at 1/(1-p) = count.
json spectrum(const Histogram &h) {
    json x = json::array(), y = json::array();
    auto n = static_cast<double>(h.count());
    for (int k = 0;; ++k) {
        double inv = std::pow(10.0, k / 10.0);
        if (inv > n) break;
        x.push_back(inv);
        y.push_back(us(h.value_at_percentile(100.0 * (1.0 - 1.0 / inv))));
    }
    if (!x.empty() && n > x.back().get<double>()) {
        x.push_back(n);
        y.push_back(us(h.max()));
    }
    return {{"x", std::move(x)}, {"y", std::move(y)}};
}

std::string run_title(const RunSummary &s) {
    std::string t = s.label;
    if (!s.point.empty()) t += ", " + s.point_text();
    return t + fmt::format(", seed {}", s.seed);
}

struct Group {
    std::string point;                // point_text(), "" without a sweep
    std::vector<size_t> runs;         // indexes into the results
    std::vector<std::string> labels;  // in order of first appearance
};

std::vector<Group> group_by_point(const std::vector<RunSummary> &sums) {
    std::vector<Group> groups;
    for (size_t i = 0; i < sums.size(); ++i) {
        std::string p = sums[i].point_text();
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const Group &x) { return x.point == p; });
        if (g == groups.end()) {
            groups.push_back(Group{p, {}, {}});
            g = groups.end() - 1;
        }
        g->runs.push_back(i);
        if (std::find(g->labels.begin(), g->labels.end(), sums[i].label) == g->labels.end())
            g->labels.push_back(sums[i].label);
    }
    return groups;
}

bool is_sweep(const std::vector<RunSummary> &sums) {
    return std::any_of(sums.begin(), sums.end(),
                       [](const RunSummary &s) { return !s.point.empty(); });
}

std::string choose_reader_op(const ResultsFile &r, const ReportOptions &o) {
    if (!o.reader_op.empty()) return o.reader_op;
    std::map<std::string, uint64_t> completed;
    for (const json &run : r.runs)
        if (const json *ops = child(run, {"detail", "ops"}); ops && ops->is_object())
            for (const auto &[name, stats] : ops->items()) {
                if (name == o.toggle_op ||
                    std::find(kWriterOps.begin(), kWriterOps.end(), name) != kWriterOps.end())
                    continue;
                if (const json *c = child(stats, {"completed"}); c && c->is_number_unsigned())
                    completed[name] += c->get<uint64_t>();
            }
    std::string best;
    uint64_t most = 0;
    for (const auto &[name, n] : completed)
        if (n > most) {
            best = name;
            most = n;
        }
    return best;
}

// What the run says about its worst probe wake-up: a simulated run's record of what held the
// probe's CPU (the section with its label and site, or the task), or the task woken, the CPU and
// what ran there (an ftrace wakeup_rt trace of a measured series gives them); null when it says
// nothing.
json worst_wakeup_cause(const json &run, const std::string &where) {
    const json *list = child(run, {"detail", "wakeup_worst"});
    if (!list || !list->is_array() || list->empty() || !list->front().is_object()) return nullptr;
    const json &w = list->front();
    if (w.contains("delays")) {
        kernel::WakeupRecord record;
        try {
            record = w.get<kernel::WakeupRecord>();
        } catch (const json::exception &e) {
            throw UserError(fmt::format("{}: detail.wakeup_worst[0]: {}", where, e.what()));
        }
        json cause = w;
        cause["text"] = fmt::format("{}: {}", record.probe, describe_cause(record));
        return cause;
    }
    std::string text = w.value("task", std::string("?"));
    if (w.value("cpu", -1) >= 0) text += fmt::format(" on CPU#{}", w.value("cpu", -1));
    if (w.contains("running"))
        text += ", woken while " + w.value("running", std::string()) + " ran";
    if (w.contains("longest_gap"))
        text += "; the longest wait followed " + w.value("longest_gap", std::string());
    json cause = w;
    cause["text"] = text;
    return cause;
}

// The histogram (ns) behind a run's preempt-off or probe figure, the probe tasks' merged.
Histogram figure_histogram(const json &run, bool probe, const std::string &run_where) {
    Histogram h;
    if (probe) {
        if (const json *p = child(run, {"detail", "wakeup_latency_ns"}); p && p->is_object())
            for (const auto &[task, hj] : p->items())
                h.merge(decode(hj, run_where + ": detail.wakeup_latency_ns." + task));
    } else if (const json *hj = child(run, {"detail", "preempt_off", "length_ns"})) {
        h = decode(*hj, run_where + ": detail.preempt_off.length_ns");
    }
    return h;
}

// The text that marks a run's worst section or wake-up (`h` is its histogram): the section's
// operation, task and sites, or the probe's worst with its cause, which goes to *cause when
// the run records one.
std::string worst_text(const json &run, const RunSummary &s, bool probe, const Histogram &h,
                       const std::string &run_where, json *cause) {
    std::string worst;
    if (!probe) {
        const json *longest = child(run, {"detail", "preempt_off", "longest"});
        if (longest && longest->is_array() && !longest->empty()) {
            const json &w = longest->front();
            worst = fmt::format(
                "worst {}: {} in {}\n{} → {}", human_ns(h.max()),
                section_operation(w.value("label", std::string()), w.value("task", std::string())),
                w.value("task", std::string("?")), w.value("start_site", std::string("?")),
                w.value("end_site", std::string("?")));
        } else if (h.count()) {
            worst = fmt::format("worst {}: {} ({})", human_ns(h.max()), s.preempt_off_worst_label,
                                s.preempt_off_worst_site);
        }
    } else {
        if (h.count()) worst = fmt::format("worst {}", human_ns(h.max()));
        if (json c = worst_wakeup_cause(run, run_where); !c.is_null()) {
            worst += "\n" + c.at("text").get<std::string>();
            *cause = std::move(c);
        }
    }
    const Censoring &open = probe ? s.probe_open : s.preempt_off_open;
    if (open.max_censored && !worst.empty())
        worst = "\u2265 " + worst + " (still open when the run ended)";
    return worst;
}

// A measured series records only some of the histograms (cyclictest: the probe's; a
// preemptoff trace: the sections'): it has no figure for the others, and the page says so.
bool not_measured(const RunSummary &s, const Histogram &h) {
    return s.platform == "measured" && h.count() == 0;
}

// Run i's preempt-off or probe histogram; null for a measured series that did not measure it.
json histogram_figure(const json &run, size_t i, const RunSummary &s, bool probe,
                      const std::string &where) {
    const std::string run_where = fmt::format("{}: run {}", where, i);
    const Histogram h = figure_histogram(run, probe, run_where);
    if (not_measured(s, h)) return nullptr;
    json fig = {{"kind", "histogram"},
                {"file", fmt::format("run-{}-{}", i, probe ? "probe" : "preempt-off")},
                {"width", kHistW},
                {"height", kHistH},
                {"xlabel", "latency (µs)"},
                {"ylabel", "number of samples"}};
    if (!probe) {
        fig["title"] = "Preempt-off sections: " + run_title(s);
        fig["caption"] =
            "Length of every section with preemption off (outermost sections, as ftrace's "
            "preemptoff tracer measures them).";
    } else {
        fig["title"] = "Real-time probe wake-up: " + run_title(s);
        fig["caption"] =
            "How late a periodic SCHED_FIFO probe woke after its timer (cyclictest's latency), "
            "all probe tasks of the run together.";
    }
    json cause;
    const std::string worst = worst_text(run, s, probe, h, run_where, &cause);
    if (!cause.is_null()) {
        fig["caption"] = fig["caption"].get<std::string>() +
                         " Worst wake-up: " + cause.at("text").get<std::string>() + ".";
        fig["worst_cause"] = std::move(cause);
    }
    // The tail estimate beside the histogram (analysis/tail.h), at two probabilities.
    if (h.count()) {
        TailOptions to;
        to.bucketed = true;
        json tails = json::array();
        std::string text;
        const std::vector<double> ps = {1e-6, 1e-9};
        std::vector<TailQuantile> qs;
        try {
            qs = probe ? probe_wakeup_tails(run, ps, to)
                       : tail_quantiles(run_tail_sample(run, TailMetric::PreemptOff), ps, to);
        } catch (const std::exception &e) {  // nlohmann's or a histogram's own
            throw UserError(fmt::format("{}: its histograms: {}", run_where, e.what()));
        }
        for (const TailQuantile &q : qs) {
            const double p = q.probability;
            tails.push_back({{"probability", p},
                             {"ok", q.ok},
                             {"estimate_ns", q.ok ? json(q.estimate) : json(nullptr)},
                             {"low_ns", q.ok ? json(q.low) : json(nullptr)},
                             {"high_ns", q.ok ? json(q.high) : json(nullptr)},
                             {"note", q.note}});
            text += (text.empty() ? "" : "; ") + format_tail(q);
        }
        fig["tail"] = std::move(tails);
        fig["caption"] = fig["caption"].get<std::string>() + " Tail estimate, the value exceeded " +
                         "with probability p per " + (probe ? "wake-up" : "section") +
                         " (peaks over threshold, generalised Pareto; 95% interval): " + text + ".";
    }
    fig["bins"] = h.count() ? linear_bins(h, bin_width(h.max())) : json::array();
    fig["samples"] = h.count();
    if (h.count()) {
        fig["worst"] = {{"x", us(h.max())}, {"text", worst}};
    } else {
        fig["worst"] = nullptr;
        fig["empty_text"] = probe ? "no probe task in this run" : "no preempt-off section";
    }
    return fig;
}

// A sweep point's preempt-off or probe histograms in one figure: one step line per design, its
// seeds merged, on a shared axis; the worst over the designs marked with what its run says.
json summary_histogram(const ResultsFile &r, const std::vector<RunSummary> &sums, const Group &g,
                       bool probe, const std::string &stem, const std::string &where) {
    struct Line {
        std::string label;
        Histogram h;
        size_t worst_run = 0;
    };
    std::vector<Line> lines;
    std::vector<std::string> unmeasured;
    for (const std::string &label : g.labels) {
        Line l{label, {}, 0};
        bool measured_none = true;
        for (size_t i : g.runs) {
            if (sums[i].label != label) continue;
            const Histogram h =
                figure_histogram(r.runs[i], probe, fmt::format("{}: run {}", where, i));
            measured_none = measured_none && not_measured(sums[i], h);
            if (h.count() && (l.h.count() == 0 || h.max() > l.h.max())) l.worst_run = i;
            l.h.merge(h);
        }
        if (measured_none)
            unmeasured.push_back(label);
        else
            lines.push_back(std::move(l));
    }
    if (lines.empty()) return nullptr;
    int64_t axis_max = 0;
    uint64_t samples = 0;
    const Line *worst = nullptr;
    for (const Line &l : lines) {
        axis_max = std::max(axis_max, l.h.max());
        samples += l.h.count();
        if (l.h.count() && (!worst || l.h.max() > worst->h.max())) worst = &l;
    }
    const int64_t width = bin_width(axis_max);
    json series = json::array();
    for (const Line &l : lines)
        series.push_back({{"name", fmt::format("{} (n={}, worst {})", l.label, l.h.count(),
                                               human_ns(l.h.max()))},
                          {"label", l.label},
                          {"bins", l.h.count() ? linear_bins(l.h, width) : json::array()},
                          {"samples", l.h.count()}});
    const std::string what = probe ? "Real-time probe wake-up" : "Preempt-off sections";
    std::string caption =
        probe ? "How late a periodic SCHED_FIFO probe woke after its timer, each design's probe "
                "tasks and seeds together, one line per design."
              : "Length of every section with preemption off, each design's seeds together, one "
                "line per design.";
    caption += " `locksim report --per-run` draws each run's histogram with its tail estimate.";
    if (!unmeasured.empty()) {
        caption += " Not measured by";
        for (size_t k = 0; k < unmeasured.size(); ++k)
            caption += (k ? ", " : " ") + unmeasured[k];
        caption += ".";
    }
    json fig = {{"kind", "histogram"},
                {"file", stem},
                {"title", g.point.empty() ? what : what + ": " + g.point},
                {"width", kHistW},
                {"height", kHistH},
                {"xlabel", "latency (µs)"},
                {"ylabel", "number of samples"},
                {"bins", json::array()},
                {"series", std::move(series)},
                {"samples", samples}};
    if (worst) {
        json cause;
        const size_t i = worst->worst_run;
        std::string text = worst_text(r.runs[i], sums[i], probe, worst->h,
                                      fmt::format("{}: run {}", where, i), &cause);
        text = fmt::format("{}, seed {}: {}", sums[i].label, sums[i].seed, text);
        if (!cause.is_null()) fig["worst_cause"] = std::move(cause);
        fig["worst"] = {{"x", us(worst->h.max())}, {"text", text}};
    } else {
        fig["worst"] = nullptr;
        fig["empty_text"] = probe ? "no probe task in these runs" : "no preempt-off section";
    }
    fig["caption"] = caption;
    return fig;
}

json spectrum_figure(const ResultsFile &r, const std::vector<RunSummary> &sums, const Group &g,
                     const std::string &stem, const std::string &op, const std::string &what,
                     const std::string &where) {
    json lines = json::array();
    double lo = 0, hi = 0;
    for (const std::string &label : g.labels) {
        Histogram h;
        for (size_t i : g.runs) {
            if (sums[i].label != label) continue;
            // A measured series names its own read-side slice (import --slice reader=NAME).
            std::string run_op = op;
            if (const json *m = child(r.runs[i], {"detail", "measured", "reader_op"});
                what == "Reader" && m && m->is_string())
                run_op = m->get<std::string>();
            if (const json *hj = child(r.runs[i], {"detail", "ops", run_op.c_str(), "latency_ns"}))
                h.merge(decode(
                    *hj, fmt::format("{}: run {}: detail.ops.{}.latency_ns", where, i, run_op)));
        }
        if (h.count() == 0) continue;
        lo = lines.empty() ? us(h.min()) : std::min(lo, us(h.min()));
        hi = std::max(hi, us(h.max()));
        json line = spectrum(h);
        line["name"] = fmt::format("{} (n={})", label, h.count());
        lines.push_back(std::move(line));
    }
    if (lines.empty()) return nullptr;
    std::string title = fmt::format("{} latency by percentile ({})", what, op);
    if (!g.point.empty()) title += ": " + g.point;
    return {{"kind", "spectrum"},
            {"file", stem},
            {"title", title},
            {"caption", fmt::format("Latency of '{}' at each percentile, seeds merged; the right "
                                    "end of each line is its worst case.",
                                    op)},
            {"width", kSpecW},
            {"height", kSpecH},
            {"ylabel", "latency (µs)"},
            {"log_y", lo > 0 ? hi / lo > 50 : hi > 0},
            {"lines", std::move(lines)}};
}

// The parts of a boolean commit as grouped bars, one group per design (averaged over seeds),
// one bar per part. The summary holds the mean latency per commit and the other parts as
// totals over the run's commits (analysis/results_file.h): totals are divided by the count.
// The metrics a figure of the commit draws, in the table's order.
std::vector<const Metric *> series_of(Series kind) {
    std::vector<const Metric *> out;
    for (const Metric &m : metrics())
        if (m.series == kind) out.push_back(&m);
    return out;
}

struct ToggleBars {
    std::vector<std::string> groups;
    std::vector<std::vector<double>> values;  // [part][group]
    std::vector<double> grace_periods;        // per group: the CommitCount series per commit
};

ToggleBars toggle_bars(const std::vector<RunSummary> &sums, const Group &g,
                       const std::vector<const Metric *> &parts, double unit) {
    ToggleBars out;
    out.values.resize(parts.size());
    for (const std::string &label : g.labels) {
        std::vector<double> sum(parts.size(), 0);
        double gps = 0;
        int n = 0;
        for (size_t i : g.runs) {
            const RunSummary &s = sums[i];
            if (s.label != label || s.toggle_count == 0) continue;
            ++n;
            const auto count = static_cast<double>(s.toggle_count);
            for (size_t p = 0; p < parts.size(); ++p) {
                double v = number(s, *parts[p]) / unit;
                sum[p] += parts[p]->per_commit_total ? v / count : v;
            }
            for (const Metric *m : series_of(Series::CommitCount))
                gps += number(s, *m) / count;
        }
        if (n == 0) continue;
        out.groups.push_back(label);
        for (size_t p = 0; p < parts.size(); ++p)
            out.values[p].push_back(sum[p] / n);
        out.grace_periods.push_back(gps / n);
    }
    return out;
}

json bars_json(const ToggleBars &b, const std::vector<const Metric *> &parts,
               const std::string &stem, const std::string &title, const std::string &caption,
               const char *xlabel) {
    json jparts = json::array();
    for (size_t p = 0; p < parts.size(); ++p)
        jparts.push_back({{"name", parts[p]->series_name}, {"values", b.values[p]}});
    return {{"kind", "bars"},     {"file", stem},       {"title", title},
            {"caption", caption}, {"width", kBarsW},    {"height", kBarsH},
            {"xlabel", xlabel},   {"groups", b.groups}, {"parts", std::move(jparts)}};
}

// Time per commit: latency, readers blocked, preempt-off, IRQs-off, grace-period wait, refill.
json toggle_figure(const std::vector<RunSummary> &sums, const Group &g, const std::string &stem) {
    const std::vector<const Metric *> parts = series_of(Series::CommitTime);
    ToggleBars b = toggle_bars(sums, g, parts, 1000.0);
    if (b.groups.empty()) return nullptr;
    std::string title = "Cost of a boolean commit (setsebool)";
    if (!g.point.empty()) title += ": " + g.point;
    std::string gps;
    for (const Metric *m : series_of(Series::CommitCount)) {
        gps += fmt::format(" {} per commit: ", m->series_name);
        for (size_t i = 0; i < b.groups.size(); ++i)
            gps += fmt::format("{}{} {:.1f}", i ? ", " : "", b.groups[i], b.grace_periods[i]);
        gps += ".";
    }
    return bars_json(
        b, parts, stem, title,
        "Per commit, averaged over seeds: its latency, the time readers spent blocked by it, its "
        "preempt-off and IRQs-off time, its wait for grace periods and the AVC refill after it. "
        "The parts overlap (IRQs-off time is also preempt-off time), so they are drawn side by "
        "side, not stacked; readers blocked sums over every waiting reader and the refill runs "
        "after the commit, so those two may exceed its latency; a missing bar is zero." +
            gps,
        "time per commit (µs)");
}

// Memory per commit: what it allocated (its copies, the audit and netlink buffers).
json toggle_alloc_figure(const std::vector<RunSummary> &sums, const Group &g,
                         const std::string &stem) {
    const std::vector<const Metric *> parts = series_of(Series::CommitBytes);
    ToggleBars b = toggle_bars(sums, g, parts, 1024.0);
    if (b.groups.empty()) return nullptr;
    std::string title = "Memory a boolean commit allocates";
    if (!g.point.empty()) title += ": " + g.point;
    return bars_json(b, parts, stem, title,
                     "Per commit, averaged over seeds: the bytes it allocated (a copy of the "
                     "policy or of its conditional state, and the small buffers of its audit "
                     "records and notifications); a missing bar is zero.",
                     "KiB per commit");
}

// A sweep value as a number: plain numbers, or durations ("10ms") in ns.
std::optional<double> numeric(const std::string &v) {
    try {
        size_t used = 0;
        double d = std::stod(v, &used);
        if (used == v.size()) return d;
    } catch (const std::exception &) {
    }
    try {
        return static_cast<double>(parse_limit_ns("sweep value", v));
    } catch (const std::exception &) {
        return std::nullopt;
    }
}

json scaling_figures(const std::vector<RunSummary> &sums) {
    std::map<std::string, std::vector<std::string>> values;  // axis -> distinct values in order
    for (const RunSummary &s : sums)
        for (const auto &[axis, v] : s.point) {
            auto &vs = values[axis];
            if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
        }
    json figures = json::array();
    for (auto &[axis, axis_values] : values) {
        // A named reference for the lambdas below: Clang 14 cannot capture a structured binding.
        std::vector<std::string> &vs = axis_values;
        if (vs.size() < 2) continue;
        bool numbers = std::all_of(vs.begin(), vs.end(),
                                   [](const std::string &v) { return numeric(v).has_value(); });
        if (numbers)
            std::stable_sort(vs.begin(), vs.end(), [](const std::string &a, const std::string &b) {
                return *numeric(a) < *numeric(b);
            });
        auto xpos = [&](const std::string &v) {
            return numbers ? *numeric(v)
                           : static_cast<double>(std::find(vs.begin(), vs.end(), v) - vs.begin());
        };
        // One line per design and setting of the other axes; seeds combined per point (the
        // worst of a latency, the mean of a rate), one panel per Scaling metric.
        const std::vector<const Metric *> panel_metrics = series_of(Series::Scaling);
        struct Acc {
            std::vector<double> v;
            int n = 0;
        };
        std::map<std::string, std::map<double, Acc>> lines;
        std::vector<std::string> order;
        for (const RunSummary &s : sums) {
            std::string name = s.label, x;
            for (const auto &[a, v] : s.point)
                if (a == axis)
                    x = v;
                else
                    name += fmt::format(" {}={}", a, v);
            if (x.empty()) continue;
            if (!lines.count(name)) order.push_back(name);
            Acc &acc = lines[name][xpos(x)];
            acc.v.resize(panel_metrics.size());
            for (size_t k = 0; k < panel_metrics.size(); ++k) {
                const double v = number(s, *panel_metrics[k]);
                acc.v[k] = panel_metrics[k]->unit == Unit::PerSecond ? acc.v[k] + v
                                                                     : std::max(acc.v[k], v);
            }
            ++acc.n;
        }
        json panels = json::array();
        for (size_t k = 0; k < panel_metrics.size(); ++k) {
            const Metric &m = *panel_metrics[k];
            const bool latency = m.unit == Unit::Ns;
            json jl = json::array();
            double lo = 0, hi = 0;
            for (const std::string &name : order) {
                json x = json::array(), y = json::array();
                for (const auto &[xv, acc] : lines[name]) {
                    double v = latency ? us(static_cast<int64_t>(acc.v[k])) : acc.v[k] / acc.n;
                    x.push_back(xv);
                    y.push_back(v);
                    if (v > 0) {
                        lo = lo > 0 ? std::min(lo, v) : v;
                        hi = std::max(hi, v);
                    }
                }
                jl.push_back({{"name", name}, {"x", std::move(x)}, {"y", std::move(y)}});
            }
            panels.push_back({{"title", m.series_name},
                              {"ylabel", latency ? "µs" : "operations/s"},
                              {"log_y", latency && lo > 0 && hi / lo > 50},
                              {"lines", std::move(jl)}});
        }
        std::string stem = "scaling-";
        for (char c : axis)
            stem += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
        figures.push_back(
            {{"kind", "scaling"},
             {"file", stem},
             {"title", fmt::format("Against {}", axis)},
             {"caption", fmt::format("Each design's worst case over seeds (throughput: the mean) "
                                     "at each value of {}; the probe panel is the latest "
                                     "wake-up of the real-time probe.",
                                     axis)},
             {"width", kScaleW},
             {"height", kScaleH},
             {"xlabel", axis},
             {"categorical", !numbers},
             {"xticks", numbers ? json(nullptr) : json(vs)},
             {"panels", std::move(panels)}});
    }
    return figures;
}

// `robust`'s judgement (robust.json, analysis/robust.h) as two figures: the shares of worlds
// meeting each limit (one panel per limit and one for every limit together, a bar per design
// with its Wilson interval), and the sensitivity as tornado charts (one panel per fitted figure,
// a bar per family from the figure at the family's lowest factor to its highest, the others at
// the profile's prices; the limit dashed).
std::vector<json> robust_figures(const json &robust) {
    std::vector<json> figures;
    const json &limits = robust.at("limits");
    json share_panels = json::array();
    auto share_panel = [&](const std::string &title, auto &&share_of) {
        json bars = json::array();
        for (const json &sh : robust.at("shares")) {
            const auto [meets, of, lo, hi] = share_of(sh);
            bars.push_back({{"name", sh.at("label")},
                            {"share", of ? 100.0 * meets / of : 0.0},
                            {"lo", 100.0 * lo},
                            {"hi", 100.0 * hi},
                            {"judged", of > 0},
                            {"text", of ? fmt::format("{}/{}", meets, of) : "not judged"}});
        }
        share_panels.push_back({{"title", title}, {"bars", std::move(bars)}});
    };
    share_panel("every limit", [](const json &sh) {
        return std::tuple{sh.at("meets_all").get<double>(), sh.at("worlds").get<double>(),
                          sh.at("interval").at(0).get<double>(),
                          sh.at("interval").at(1).get<double>()};
    });
    for (const auto &[path, value] : limits.items()) {
        const Metric *m = find_metric(path);
        if (!m) throw UserError(fmt::format("robust.json: unknown limit '{}'", path));
        share_panel(fmt::format("{} <= {}", m->pick.what,
                                m->unit == Unit::Bytes ? human_bytes(value) : human_ns(value)),
                    [&, p = path](const json &sh) {
                        const json &l = sh.at("limits").at(p);
                        return std::tuple{l.at("meets").get<double>(), l.at("judged").get<double>(),
                                          l.at("interval").at(0).get<double>(),
                                          l.at("interval").at(1).get<double>()};
                    });
    }
    figures.push_back(
        {{"kind", "shares"},
         {"file", "robust-shares"},
         {"title", fmt::format("Designs across {} cost worlds", robust.at("worlds").size())},
         {"caption",
          "The share of cost worlds (prices drawn within the profile's stated uncertainty) in "
          "which each design meets the limit, with its 95% Wilson interval; \"not judged\" where "
          "every world's run stopped early on another limit."},
         {"width", kScaleW},
         {"height", kScaleH},
         {"panels", std::move(share_panels)}});
    json tornado_panels = json::array();
    const json &space = robust.at("space");
    for (const json &se : robust.at("sensitivity")) {
        if (!se.at("note").is_null()) continue;
        const std::string path = se.at("limit");
        const Metric *m = find_metric(path);
        if (!m) throw UserError(fmt::format("robust.json: unknown limit '{}'", path));
        const bool bytes = m->unit == Unit::Bytes;
        auto ypos = [&](double v) { return bytes ? v / 1e6 : v / 1e3; };
        const double nominal = se.at("nominal");
        json bars = json::array();
        for (const json &e : se.at("effects")) {
            const auto fam =
                std::find(space.at("families").begin(), space.at("families").end(), e.at("family"));
            const double range =
                space.at("range").at(static_cast<size_t>(fam - space.at("families").begin()));
            const double b = e.at("elasticity");
            bars.push_back({{"name", e.at("family")},
                            {"low", ypos(nominal * std::pow(1 / range, b))},
                            {"high", ypos(nominal * std::pow(range, b))}});
        }
        const int64_t limit = limits.at(path);
        tornado_panels.push_back(
            {{"title", fmt::format("{} {}", se.at("label").get<std::string>(), m->pick.what)},
             {"xlabel", bytes ? "MB" : "µs"},
             {"nominal", ypos(nominal)},
             {"bars", std::move(bars)},
             {"limits",
              json::array({{{"value", ypos(static_cast<double>(limit))},
                            {"label", fmt::format("limit {}", bytes ? human_bytes(limit)
                                                                    : human_ns(limit))}}})}});
    }
    if (!tornado_panels.empty())
        figures.push_back(
            {{"kind", "tornado"},
             {"file", "robust-sensitivity"},
             {"title", "What moves each figure near a limit"},
             {"caption",
              "For each figure within 1.5x of a limit in some world: the fitted figure at the "
              "profile's prices (the dot) and, per price family, the figure at the family's lowest "
              "and highest factor with the others at the profile's prices (the bar, from the "
              "power-law fit over the worlds); the dashed line is the limit."},
             {"width", kScaleW},
             {"height", kScaleH},
             {"panels", std::move(tornado_panels)}});
    return figures;
}

// `margin`'s search (margin.json, analysis/margin.h) as one figure: a panel per limit, the judged
// figure against the key, one line per design, the limit as a dashed line and each crossover as
// a dotted vertical line in its design's colour, between the two values around it.
json margin_figure(const json &margin) {
    const json &axis = margin.at("margin");
    const std::string key = axis.at("key");
    const bool list = axis.at("kind") == "list", duration = axis.at("kind") == "duration";
    // A duration key is drawn in milliseconds.
    auto xpos = [&](double x) { return duration ? x / 1e6 : x; };
    json panels = json::array();
    for (const auto &[path, limit] : margin.at("limits").items()) {
        const Metric *m = find_metric(path);
        if (!m) throw UserError(fmt::format("margin.json: unknown limit '{}'", path));
        const bool bytes = m->unit == Unit::Bytes;
        auto ypos = [&](double v) { return bytes ? v / 1e6 : v / 1e3; };
        json lines = json::array();
        double lo = 0, hi = 0;  // the smallest and largest positive figure: a log axis over 50x
        for (const json &design : margin.at("designs")) {
            json x = json::array(), y = json::array();
            for (const json &v : margin.at("values")) {
                const auto d = v.at("designs").find(design.get<std::string>());
                if (d == v.at("designs").end()) continue;
                const json &figure = d->at("limits").at(path).at("figure");
                if (figure.is_null()) continue;
                x.push_back(xpos(v.at("x").get<double>()));
                const double yv = ypos(figure.get<double>());
                y.push_back(yv);
                if (yv > 0) {
                    lo = lo > 0 ? std::min(lo, yv) : yv;
                    hi = std::max(hi, yv);
                }
            }
            lines.push_back({{"name", design}, {"x", std::move(x)}, {"y", std::move(y)}});
        }
        json marks = json::array();
        for (const json &c : margin.at("crossovers")) {
            if (c.at("limit") != path) continue;
            for (const json &ch : c.at("changes"))
                marks.push_back({{"name", c.at("design")},
                                 {"lo", xpos(ch.at("lo_x").get<double>())},
                                 {"hi", xpos(ch.at("hi_x").get<double>())}});
        }
        const int64_t value = limit.at("value");
        panels.push_back(
            {{"title", m->pick.what},
             {"ylabel", bytes ? "MB" : "µs"},
             {"log_y", lo > 0 && hi / lo > 50},
             {"lines", std::move(lines)},
             {"limits",
              json::array({{{"value", ypos(static_cast<double>(value))},
                            {"label", fmt::format("limit {}", bytes ? human_bytes(value)
                                                                    : human_ns(value))}}})},
             {"marks", std::move(marks)}});
    }
    std::string stem = "margin-";
    for (char c : key)
        stem += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
    json ticks = nullptr;
    if (list) ticks = axis.at("values");
    return {{"kind", "margin"},
            {"file", stem},
            {"title", fmt::format("Margin along {}", key)},
            {"caption",
             fmt::format("Each design's figure as pick judges it (the worst over seeds) at every "
                         "value of {} that margin ran; the dashed grey line is the limit, a "
                         "dotted line in a design's colour is where it crosses it (between the "
                         "two values run around it).",
                         key)},
            {"width", kScaleW},
            {"height", kScaleH},
            {"xlabel", duration ? key + " (ms)" : key},
            {"categorical", list},
            {"xticks", ticks},
            {"panels", std::move(panels)}};
}

std::string escape(const std::string &s) {
    std::string out;
    for (char c : s)
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    return out;
}

std::string figure_html(const json &f) {
    std::string stem = f.at("file");
    return fmt::format(
        "<figure id=\"{0}\">\n<a href=\"{0}.svg\"><img src=\"{0}.png\" width=\"{1}\" "
        "height=\"{2}\" alt=\"{3}\"></a>\n<figcaption>{4} <a href=\"{0}.svg\">SVG</a></figcaption>"
        "\n</figure>\n",
        escape(stem), f.at("width").get<int>(), f.at("height").get<int>(),
        escape(f.at("title").get<std::string>()), escape(f.value("caption", std::string())));
}

// Starts `argv` (the program found on PATH when it has no slash): its pid, or -1 when it could
// not start.
pid_t start_process(const std::vector<std::string> &argv) {
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
    return pid;
}

// The exit status of a finished child, -1 when it died by a signal.
int exit_status(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs plots.py in `parts` processes at once (figure k is drawn by process k mod parts) and
// waits for them all; on a terminal, counts the figures written on stderr meanwhile. Returns
// the first non-zero exit status (-2: python could not start, -1: it died by a signal), else 0.
int draw_figures(const std::string &python, const std::string &script, const fs::path &spec,
                 const fs::path &dir, const json &figures, int threads) {
    const auto total = static_cast<int>(figures.size());
    int parts = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
    parts = std::clamp(parts, 1, std::max(1, total));
    std::vector<pid_t> pids;
    for (int k = 0; k < parts; ++k) {
        const pid_t pid = start_process(
            {python, script, spec.string(), dir.string(), fmt::format("{}/{}", k, parts)});
        if (pid < 0) {
            for (pid_t p : pids)
                waitpid(p, nullptr, 0);
            return -2;
        }
        pids.push_back(pid);
    }
    const bool progress = isatty(STDERR_FILENO) == 1;
    auto drawn = [&] {
        int n = 0;
        std::error_code ec;
        for (const json &f : figures)
            n += fs::exists(dir / (f.at("file").get<std::string>() + ".svg"), ec) ? 1 : 0;
        return n;
    };
    int rc = 0;
    size_t running = pids.size();
    while (running > 0) {
        for (pid_t &pid : pids) {
            if (pid < 0) continue;
            int status = 0;
            const pid_t done = waitpid(pid, &status, progress ? WNOHANG : 0);
            if (done == 0 || (done < 0 && errno == EINTR)) continue;
            const int code = done < 0 ? -1 : exit_status(status);
            if (rc == 0) rc = code;
            pid = -1;
            --running;
        }
        if (progress) {
            fmt::print(stderr, "\rreport: {}/{} figures drawn", drawn(), total);
            std::fflush(stderr);
            if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    }
    if (progress) fmt::print(stderr, "\r\033[K");
    return rc;
}

// Pick's limits drawn on the figures they apply to: the preempt-off and probe histograms (a
// vertical line), the commit and reader spectra (a horizontal one). A limit with a probability
// ("200us@1e-9") applies to the tail estimate; the line is drawn at its value all the same.
void add_limit_lines(json &figures, const Limits &l) {
    struct Rule {
        const char *prefix, *suffix, *path;  // the figures' file names; the metric's path
    };
    const Rule rules[] = {
        {"run-", "-preempt-off", "preempt_off.max_ns"}, {"run-", "-probe", "probe_wakeup.max_ns"},
        {"preempt-off-", "", "preempt_off.max_ns"},     {"probe-", "", "probe_wakeup.max_ns"},
        {"spectrum-toggle", "", "toggle.max_ns"},       {"spectrum-reader", "", "reader.p99_ns"},
    };
    for (json &f : figures) {
        const std::string stem = f.at("file");
        for (const Rule &r : rules) {
            const auto it = l.find(r.path);
            if (it == l.end() || !stem.starts_with(r.prefix) || !stem.ends_with(r.suffix)) continue;
            const Limit &limit = it->second;
            const char *option = find_metric(r.path)->pick.option;
            std::string label = fmt::format("limit {}", human_ns(limit.value));
            if (limit.probability) label += fmt::format(" at p={:.0e}", *limit.probability);
            f["limits"] =
                json::array({{{"value", us(limit.value)}, {"label", label}, {"option", option}}});
            f["caption"] = f.value("caption", std::string()) +
                           fmt::format(" The dashed grey line is pick's {} ({} {}){}.", label,
                                       option, human_ns(limit.value),
                                       f.at("kind") == "histogram"
                                           ? "; a limit far outside the samples is an arrow at "
                                             "the axis' edge instead"
                                           : "");
        }
    }
}

// Measured series drawn over each simulated run's preempt-off and probe histograms: the run's
// histogram and every measured series rebinned alike on an axis that holds all their samples.
void add_measured_overlays(json &figures, const ResultsFile &r,
                           const std::vector<RunSummary> &sums) {
    for (json &f : figures) {
        const std::string stem = f.at("file");
        if (f.at("kind") != "histogram" || !stem.starts_with("run-")) continue;
        const bool probe = stem.ends_with("-probe");
        const size_t i = std::stoul(stem.substr(4));
        if (sums[i].platform == "measured" || f.at("bins").empty()) continue;
        std::vector<size_t> measured;
        std::vector<Histogram> hists;
        int64_t axis_max = figure_histogram(r.runs[i], probe, "").max();
        for (size_t m = 0; m < sums.size(); ++m) {
            if (sums[m].platform != "measured") continue;
            Histogram h = figure_histogram(r.runs[m], probe, fmt::format("run {}", m));
            if (h.count() == 0) continue;
            axis_max = std::max(axis_max, h.max());
            measured.push_back(m);
            hists.push_back(std::move(h));
        }
        if (measured.empty()) continue;
        const int64_t width = bin_width(axis_max);
        f["bins"] = linear_bins(figure_histogram(r.runs[i], probe, ""), width);
        json overlays = json::array();
        for (size_t k = 0; k < measured.size(); ++k) {
            const Histogram &h = hists[k];
            const RunSummary &ms = sums[measured[k]];
            overlays.push_back({{"name", fmt::format("measured: {} (n={}, worst {})", ms.label,
                                                     h.count(), human_ns(h.max()))},
                                {"label", ms.label},
                                {"bins", linear_bins(h, width)},
                                {"samples", h.count()},
                                {"max_us", us(h.max())}});
        }
        f["overlays"] = std::move(overlays);
        f["caption"] = f.value("caption", std::string()) +
                       " The step lines are measured series (a real kernel), binned alike on an "
                       "axis that holds every sample of each.";
    }
}

// Pick's verdict as a table: one row per design in rank order, one column per limit given
// (pass or fail, with pick's numbers, at the point of its worst in a sweep), the seeds that meet
// every limit, and the designs not run; in a sweep, a second table of points x designs.
std::string verdict_html(const Pick &p) {
    std::vector<std::string> limits;
    for (const Verdict &v : p.ranked)
        for (const LimitCheck &c : v.checks)
            if (std::find(limits.begin(), limits.end(), c.limit) == limits.end())
                limits.push_back(c.limit);
    bool seeds = false;
    for (const Verdict &v : p.ranked)
        seeds = seeds || v.seeds > 1;
    const bool sweep = p.points.size() > 1;
    std::string html =
        "<table id=\"verdict-table\" class=\"verdict\">\n<thead><tr><th>rank</th>"
        "<th>design</th><th>verdict</th>";
    if (sweep) html += "<th>worst case at</th>";
    for (const std::string &l : limits)
        html += fmt::format("<th>{}</th>", escape(l));
    if (seeds) html += "<th>seeds meeting every limit</th>";
    html +=
        "<th>self-check violations</th><th>ops/s</th><th>above the next by</th></tr></thead>\n"
        "<tbody>\n";
    int rank = 1;
    for (const Verdict &v : p.ranked) {
        html += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td>",
                            v.meets ? "meets" : "over", rank++, escape(v.label),
                            verdict_text(v, p.limits_given));
        if (sweep) html += fmt::format("<td>{}</td>", escape(v.point));
        for (const std::string &l : limits) {
            auto c = std::find_if(v.checks.begin(), v.checks.end(),
                                  [&](const LimitCheck &x) { return x.limit == l; });
            if (c == v.checks.end()) {
                html += "<td></td>";
                continue;
            }
            const char *cls = !c->measured ? "unmeasured" : c->met ? "pass" : "fail";
            std::string cell = !c->measured ? "not measured" : c->met ? "pass" : "fail";
            std::string detail = escape(c->text);
            if (sweep && !c->point.empty()) detail += " at " + escape(c->point);
            if (c->seeds > 1 && c->measured)
                detail += fmt::format("<br>{} of {} seeds meet it{}", c->seeds_meeting, c->seeds,
                                      sweep ? " there" : "");
            html += fmt::format("<td class=\"{}\"><b>{}</b><br><small>{}</small></td>", cls, cell,
                                detail);
        }
        if (seeds)
            html += fmt::format("<td{}>{} of {}{}</td>", v.unstable ? " class=\"unstable\"" : "",
                                v.seeds_meeting, v.seeds, v.unstable ? " (unstable)" : "");
        const size_t at = static_cast<size_t>(rank - 2);
        html += fmt::format("<td>{}</td><td>{:.0f}</td><td>{}</td></tr>\n", v.violations,
                            v.ops_per_sec, at < p.above.size() ? escape(p.above[at]) : "");
    }
    for (const std::string &label : p.not_run)
        html += fmt::format("<tr class=\"not-run\"><td></td><td>{}</td><td>not run</td></tr>\n",
                            escape(label));
    html += "</tbody>\n</table>\n";
    if (!sweep) return html;
    html += "<table id=\"verdict-points\" class=\"verdict\">\n<thead><tr><th>point</th>";
    for (const Verdict &v : p.ranked)
        if (!v.at_points.empty()) html += fmt::format("<th>{}</th>", escape(v.label));
    html += "</tr></thead>\n<tbody>\n";
    for (size_t k = 0; k < p.points.size(); ++k) {
        html += fmt::format("<tr><td>{}</td>", escape(p.points[k]));
        for (const Verdict &v : p.ranked) {
            if (v.at_points.empty()) continue;
            const Verdict &at = v.at_points[k];
            const char *cls = !at.runs            ? "unmeasured"
                              : at.violations > 0 ? "fail"
                              : !p.limits_given   ? ""
                              : at.meets          ? "pass"
                                                  : "fail";
            html += fmt::format("<td class=\"{}\">{}</td>", cls,
                                escape(verdict_text(at, p.limits_given)));
        }
        html += "</tr>\n";
    }
    return html + "</tbody>\n</table>\n";
}

}  // namespace

std::string default_python() {
    if (const char *p = std::getenv("LOCKSIM_PYTHON"); p && *p) return p;
    return "/usr/bin/python3";
}

std::string default_plots_script() {
    if (const char *p = std::getenv("LOCKSIM_PLOTS"); p && *p) return p;
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        for (fs::path c : {exe.parent_path() / "plots.py",
                           exe.parent_path().parent_path() / "share" / "locksim" / "plots.py"})
            if (fs::exists(c, ec)) return c.string();
    return LOCKSIM_PLOTS_SCRIPT;
}

json report_figures(const ResultsFile &r, const std::string &where, const ReportOptions &o) {
    std::vector<RunSummary> sums = r.summaries(where);
    if (sums.empty()) throw UserError(fmt::format("{}: no runs to report", where));
    json figs = json::array();
    std::vector<Group> groups = group_by_point(sums);
    std::string reader = choose_reader_op(r, o);
    for (size_t k = 0; k < groups.size(); ++k) {
        std::string suffix = groups.size() > 1 ? fmt::format("-{}", k) : "";
        if (!reader.empty())
            if (json f = spectrum_figure(r, sums, groups[k], "spectrum-reader" + suffix, reader,
                                         "Reader", where);
                !f.is_null())
                figs.push_back(std::move(f));
        if (json f = spectrum_figure(r, sums, groups[k], "spectrum-toggle" + suffix, o.toggle_op,
                                     "Boolean commit", where);
            !f.is_null())
            figs.push_back(std::move(f));
        if (json f = toggle_figure(sums, groups[k], "toggle-cost" + suffix); !f.is_null())
            figs.push_back(std::move(f));
        if (json f = toggle_alloc_figure(sums, groups[k], "toggle-alloc" + suffix); !f.is_null())
            figs.push_back(std::move(f));
    }
    for (json &f : scaling_figures(sums))
        figs.push_back(std::move(f));
    if (!o.margin.is_null()) figs.push_back(margin_figure(o.margin));
    if (!o.robust.is_null())
        for (json &f : robust_figures(o.robust))
            figs.push_back(std::move(f));
    // A sweep gets one histogram figure per point and histogram (its designs side by side),
    // each run its own only when asked: a figure per run would be most of a sweep's report.
    if (is_sweep(sums))
        for (size_t k = 0; k < groups.size(); ++k)
            for (bool probe : {false, true}) {
                const std::string stem = fmt::format("{}-{}", probe ? "probe" : "preempt-off", k);
                if (json f = summary_histogram(r, sums, groups[k], probe, stem, where);
                    !f.is_null())
                    figs.push_back(std::move(f));
            }
    if (!is_sweep(sums) || o.per_run)
        for (size_t i = 0; i < sums.size(); ++i)
            for (bool probe : {false, true})
                if (json f = histogram_figure(r.runs[i], i, sums[i], probe, where); !f.is_null())
                    figs.push_back(std::move(f));
    add_limit_lines(figs, o.limits);
    add_measured_overlays(figs, r, sums);
    return figs;
}

std::string report_html(const ResultsFile &r, const std::string &where, const json &figures,
                        const ReportOptions &o) {
    std::vector<RunSummary> sums = r.summaries(where);
    std::string name = r.scenario.value("name", fs::path(where).parent_path().filename().string());
    std::string html = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<title>locksim report: {0}</title>\n<style>\n"
        "body {{ font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}\n"
        "pre {{ background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 12px; }}\n"
        "figure {{ margin: 1.5em 0; }} figcaption {{ font-size: 0.9em; color: #555; }}\n"
        "img {{ max-width: 100%; height: auto; border: 1px solid #ddd; }}\n"
        "nav a {{ margin-right: 1em; }}\n"
        "table.verdict {{ border-collapse: collapse; font-size: 13px; }}\n"
        "table.verdict th, table.verdict td {{ border: 1px solid #ccc; padding: 0.3em 0.5em; "
        "vertical-align: top; }}\n"
        "td.pass {{ background: #e3f4e3; }} td.fail {{ background: #f9dede; }}\n"
        "td.unmeasured {{ background: #eee; color: #666; }} td.unstable {{ background: #fff3cd; "
        "}}\n"
        "p.unmeasured {{ color: #666; }}"
        "\n</style>\n</head>\n<body>\n"
        "<h1>locksim report: {0}</h1>\n",
        escape(name));
    if (auto d = r.scenario.find("description"); d != r.scenario.end() && d->is_string())
        html += fmt::format("<p>{}</p>\n", escape(d->get<std::string>()));
    html += fmt::format("<p>From <code>{}</code>: {} runs.</p>\n", escape(where), sums.size());
    html +=
        "<nav><a href=\"#comparison\">Comparison</a><a href=\"#verdict\">Verdict</a>"
        "<a href=\"#toggle\">Boolean commits</a><a href=\"#spectra\">Percentiles</a>"
        "<a href=\"#scaling\">Scaling</a>";
    if (!o.margin.is_null()) html += "<a href=\"#margin\">Margin</a>";
    if (!o.robust.is_null()) html += "<a href=\"#robust\">Cost worlds</a>";
    if (is_sweep(sums)) html += "<a href=\"#histograms\">Histograms</a>";
    html += "<a href=\"#runs\">Runs</a></nav>\n";
    html += "<h2 id=\"comparison\">Comparison</h2>\n<pre id=\"table\">" +
            escape(format_table(sums)) + "</pre>\n";
    html += fmt::format("<h2 id=\"verdict\">Verdict</h2>\n<p>Limits: <code>{}</code></p>\n",
                        escape(limits_text(o.limits)));
    const Pick verdict =
        pick(sums, o.limits, tail_source(r), {.point = {}, .plan = planned_runs(r)});
    if (verdict.incomplete)
        html += fmt::format(
            "<p id=\"incomplete\" class=\"warning\"><b>Incomplete results</b>: {}; {} of {} "
            "planned runs are here, and the verdict covers only them.</p>\n",
            escape(verdict.incomplete_why), verdict.runs, verdict.planned_runs);
    html += "<p id=\"pick\">" + escape(pick_line(verdict)) + "</p>\n";
    html += verdict_html(verdict);

    auto section = [&](const char *id, const char *title, auto pred, const char *none) {
        html += fmt::format("<h2 id=\"{}\">{}</h2>\n", id, title);
        bool any = false;
        for (const json &f : figures)
            if (pred(f)) {
                html += figure_html(f);
                any = true;
            }
        if (!any) html += fmt::format("<p>{}</p>\n", none);
    };
    auto kind = [](const char *k) { return [k](const json &f) { return f.at("kind") == k; }; };
    section("toggle", "Boolean commits", kind("bars"), "No boolean commits in these runs.");
    section("spectra", "Latency by percentile", kind("spectrum"),
            "No operation latencies in these runs.");
    if (!o.margin.is_null())
        section("margin", "Margin", kind("margin"), "No margin search in these results.");
    if (!o.robust.is_null())
        section(
            "robust", "Across the cost worlds",
            [](const json &f) { return f.at("kind") == "shares" || f.at("kind") == "tornado"; },
            "No robust judgement in these results.");
    section("scaling", "Scaling", kind("scaling"), "Not a sweep: nothing to scale against.");
    const bool sweep = is_sweep(sums);
    if (sweep)
        section(
            "histograms", "Histograms",
            [](const json &f) {
                return f.at("kind") == "histogram" &&
                       !f.at("file").get<std::string>().starts_with("run-");
            },
            "No preempt-off section or probe wake-up in these runs.");
    html += "<h2 id=\"runs\">Runs</h2>\n";
    if (sweep && !o.per_run) {
        html +=
            "<p>A sweep's histograms are drawn per point above; <code>locksim report "
            "--per-run</code> draws each run's own, with its tail estimate.</p>\n";
        return html + "</body>\n</html>\n";
    }
    for (size_t i = 0; i < sums.size(); ++i) {
        html +=
            fmt::format("<h3 id=\"run-{}\">Run {}: {}</h3>\n", i, i, escape(run_title(sums[i])));
        for (const char *which : {"preempt-off", "probe"}) {
            const std::string stem = fmt::format("run-{}-{}", i, which);
            auto f = std::find_if(figures.begin(), figures.end(),
                                  [&](const json &x) { return x.at("file") == stem; });
            if (f != figures.end())
                html += figure_html(*f);
            else
                html += fmt::format(
                    "<p class=\"unmeasured\" id=\"{}\">{}: not measured by this series.</p>\n",
                    stem,
                    std::string_view(which) == "probe" ? "Real-time probe wake-up"
                                                       : "Preempt-off sections");
        }
    }
    html += "</body>\n</html>\n";
    return html;
}

ReportOutput write_report(const ResultsFile &r, const std::string &where,
                          const std::string &out_dir, const ReportOptions &o) {
    json figures = report_figures(r, where, o);
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec)
        throw UserError(fmt::format("{}: cannot create the directory: {}", out_dir, ec.message()));
    ReportOutput out;
    fs::path dir(out_dir);
    fs::path spec = dir / "figures.json";
    {
        std::ofstream f(spec, std::ios::binary | std::ios::trunc);
        f << json{{"figures", figures}}.dump(1) << '\n';
        if (!f) throw UserError(fmt::format("{}: cannot write", spec.string()));
    }
    out.files.push_back(spec.string());

    std::string python = o.python.empty() ? default_python() : o.python;
    std::string script = o.plots_script.empty() ? default_plots_script() : o.plots_script;
    auto no_python = [&] {
        return UserError(fmt::format(
            "cannot run {} for the plots: install Debian's python3 and python3-matplotlib, or give "
            "--python or LOCKSIM_PYTHON a python with matplotlib",
            python));
    };
    if (python.find('/') != std::string::npos && access(python.c_str(), X_OK) != 0)
        throw no_python();
    if (!fs::exists(script, ec))
        throw UserError(fmt::format(
            "the plotting script {} is missing: set LOCKSIM_PLOTS to analysis/plots.py", script));
    // Stale images would pass for new ones (and count as progress): remove them first.
    for (const json &f : figures)
        for (const char *ext : {".png", ".svg"})
            fs::remove(dir / (f.at("file").get<std::string>() + ext), ec);
    const int rc = draw_figures(python, script, spec, dir, figures, o.threads);
    if (rc == -2) throw no_python();
    if (rc == 3)
        throw UserError(
            fmt::format("{} has no matplotlib: install python3-matplotlib (Debian), or "
                        "set LOCKSIM_PYTHON to a python that has it",
                        python));
    if (rc != 0)
        throw UserError(
            fmt::format("{} {} failed (exit status {}); its message is above", python, script, rc));
    for (const json &f : figures)
        for (const char *ext : {".png", ".svg"}) {
            fs::path p = dir / (f.at("file").get<std::string>() + ext);
            if (!fs::exists(p, ec) || fs::file_size(p, ec) == 0)
                throw UserError(
                    fmt::format("{}: the plotting script did not write it", p.string()));
            out.files.push_back(p.string());
        }
    fs::path index = dir / "index.html";
    {
        std::ofstream f(index, std::ios::binary | std::ios::trunc);
        f << report_html(r, where, figures, o);
        if (!f) throw UserError(fmt::format("{}: cannot write", index.string()));
    }
    out.files.push_back(index.string());
    out.index = index.string();
    return out;
}

}  // namespace locksim::analysis
