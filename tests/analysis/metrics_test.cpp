// The metric table (analysis/metrics.h) against real runs: short runs of every shipped scenario
// give every metric a non-zero value in some run (or the entry says why it may stay zero), and
// each metric reaches the results file, the CSV, the table and the report where its entry says.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string_view>

#include "analysis/metrics.h"
#include "analysis/pick.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "runner/runner.h"
#include "workloads/catalog.h"
#include "workloads/workload.h"

namespace fs = std::filesystem;
using namespace locksim;
using kernel::kMsec;
using namespace locksim::analysis;

namespace {

constexpr int64_t kDuration = 8 * kMsec;

// A shipped scenario cut to a few milliseconds: one seed, a 1 ms warm-up, and every duration
// parameter of its workloads (writers' periods, start delays) at most a quarter of the run, so
// that each workload acts inside it.
Scenario shortened(const fs::path &file) {
    Scenario s = load_scenario(file.string());
    s.duration_ns = kDuration;
    s.warmup_ns = std::min<int64_t>(s.warmup_ns, kMsec);
    s.seeds.resize(1);
    for (WorkloadSpec &w : s.workloads) {
        std::vector<ParamSpec> specs = common_workload_params();
        if (const WorkloadInfo *info = find_workload_info(w.kind))
            specs.insert(specs.end(), info->params.begin(), info->params.end());
        for (const ParamSpec &p : specs)
            if (p.type == ParamType::Duration && w.params.has(p.name) &&
                w.params.get_duration_ns(p.name) > kDuration / 4)
                w.params.set(p.name, int64_t{kDuration / 4});
    }
    return s;
}

struct Shipped {
    std::string name;
    ResultsFile file;
    std::vector<RunSummary> sums;
};

// The counts of what a run left unfinished stay zero in the shipped runs, which drain
// (verdict_test and censoring_test end runs inside sections instead).
bool unfinished(const Metric &m) {
    const std::string_view key = m.key;
    return key == "open_at_end" || key == "max_censored" || key == "incomplete";
}

// Every metric that must be non-zero somewhere is, in `runs`, and one of them is a sweep with
// commits (what expect_reaches_where_it_says draws).
bool enough(const std::vector<Shipped> &runs) {
    bool sweep = false;
    for (const Shipped &s : runs)
        sweep = sweep || (!s.file.scenario.at("sweep").empty() &&
                          std::any_of(s.sums.begin(), s.sums.end(),
                                      [](const RunSummary &r) { return r.toggle_count > 0; }));
    if (!sweep) return false;
    for (const Metric &m : metrics()) {
        if (unfinished(m)) continue;
        bool seen = false;
        for (const Shipped &s : runs)
            for (const RunSummary &r : s.sums)
                seen = seen || number(r, m) != 0;
        if (!seen) return false;
    }
    return true;
}

// Shortened shipped scenarios, network-server first (the only one with interrupt load, which
// gives the CPUs' irq and softirq time), then the others in name order, until `enough` holds:
// the checks below need no more runs than that, and a metric that no run makes still runs every
// shipped scenario before the test fails. (All of them, the sweeps' every point and every
// design, took most of the sanitizer suite's time; each still runs in cli.shipped_runs.*.)
std::vector<Shipped> shipped_runs() {
    std::vector<fs::path> files;
    for (const auto &e : fs::recursive_directory_iterator(LOCKSIM_SCENARIO_DIR))
        if (e.path().extension() == ".toml") files.push_back(e.path());
    std::sort(files.begin(), files.end(), [](const fs::path &a, const fs::path &b) {
        const bool a_first = a.stem() == "network-server", b_first = b.stem() == "network-server";
        return a_first != b_first ? a_first : a < b;
    });
    std::vector<Shipped> out;
    for (const fs::path &f : files) {
        Scenario s = shortened(f);
        std::vector<Scenario> points = expand_sweep(s);
        RunOptions o;
        o.wall_clock = false;
        Shipped one{f.filename().string(), run_jobs(s, plan_runs(points), o), {}};
        one.sums = one.file.summaries(one.name);
        out.push_back(std::move(one));
        if (enough(out)) break;
    }
    std::cout << "scenarios run:";
    for (const Shipped &s : out)
        std::cout << " " << s.name << " (" << s.sums.size() << " runs)";
    std::cout << "\n";
    return out;
}

// A value of the metric's unit that prints distinctly in the table.
Value distinct(const Metric &m) {
    switch (m.unit) {
        case Unit::Ns:
            return int64_t{123'456'789};  // 123.46ms
        case Unit::Bytes:
            return int64_t{3} << 30;  // 3.00G
        case Unit::PerSecond:
            return 4'242'424.0;
        case Unit::Flag:
            return true;
        case Unit::Text:
            return std::string("distinct_label");
        case Unit::Count:
            break;
    }
    return uint64_t{4242};
}

// The cell of a CSV row under `column`.
std::string csv_cell(const std::string &csv, const std::string &column) {
    const std::string header = csv.substr(0, csv.find('\n'));
    const std::string row =
        csv.substr(header.size() + 1, csv.find('\n', header.size() + 1) - header.size() - 1);
    auto split = [](const std::string &line) {
        std::vector<std::string> out(1);
        bool quoted = false;
        for (char c : line) {
            if (c == '"') quoted = !quoted;
            if (c == ',' && !quoted)
                out.emplace_back();
            else
                out.back() += c;
        }
        return out;
    };
    const std::vector<std::string> names = split(header), cells = split(row);
    auto it = std::find(names.begin(), names.end(), column);
    return it == names.end() ? "(no column)" : cells.at(static_cast<size_t>(it - names.begin()));
}

// Every metric is non-zero in some run, or its entry says why it may not be.
void expect_non_zero_somewhere(const std::vector<Shipped> &runs) {
    ASSERT_FALSE(runs.empty());
    for (const Metric &m : metrics()) {
        SCOPED_TRACE(m.path());
        std::string where;
        for (const Shipped &s : runs)
            for (const RunSummary &r : s.sums)
                if (where.empty() && number(r, m) != 0) where = s.name + " " + r.label;
        // A zero_reason lets a run have zero; some shipped scenario still makes the figure, so
        // that one which never reaches the summary is caught (cpu.irq_ns from network-server's
        // [[machine.irq]], for example). The counts of what a run left unfinished are the
        // exception (unfinished()).
        if (m.zero_reason) {
            EXPECT_STRNE(m.zero_reason, "");
        }
        if (!unfinished(m)) {
            EXPECT_FALSE(where.empty()) << "zero in every shipped scenario's run";
        }
        // A Derived figure has no extraction; every other one has.
        EXPECT_EQ(m.extract == nullptr, std::holds_alternative<Derived>(m.field));
    }
}

// The percentile columns of each real run: p50 <= p99 <= max, and each is the percentile of the
// run's own histogram in its detail (the sections' lengths, the probes' wake-ups merged, the
// commit's operation, the read-side operations merged).
void expect_percentiles_of_the_runs_histograms(const std::vector<Shipped> &runs) {
    size_t checked = 0;
    for (const Shipped &s : runs)
        for (size_t i = 0; i < s.sums.size(); ++i) {
            const RunSummary &r = s.sums[i];
            const nlohmann::json &detail = s.file.runs.at(i).at("detail");
            SCOPED_TRACE(s.name + " " + r.label);
            auto hist = [](const nlohmann::json &j) {
                kernel::Histogram h;
                from_json(j, h);
                return h;
            };
            kernel::Histogram probe, reader;
            for (const auto &[name, h] : detail.at("wakeup_latency_ns").items())
                probe.merge(hist(h));
            for (const auto &[label, op] : detail.at("ops").items())
                if (is_reader_op(label)) reader.merge(hist(op.at("latency_ns")));
            const kernel::Histogram commit =
                detail.at("ops").contains("set_bools")
                    ? hist(detail.at("ops").at("set_bools").at("latency_ns"))
                    : kernel::Histogram{};
            struct Row {
                const char *what;
                const kernel::Histogram h;
                int64_t p50, p99, max;
            };
            const kernel::Histogram po = hist(detail.at("preempt_off").at("length_ns"));
            const kernel::Histogram io = hist(detail.at("irqs_off").at("length_ns"));
            const std::vector<Row> rows = {
                {"preempt_off", po, r.preempt_off_p50_ns, r.preempt_off_p99_ns,
                 r.preempt_off_max_ns},
                {"irqs_off", io, io.value_at_percentile(50), r.irqs_off_p99_ns, r.irqs_off_max_ns},
                {"probe_wakeup", probe, r.probe_p50_ns, r.probe_p99_ns, r.probe_max_ns},
                {"reader", reader, r.reader_p50_ns, r.reader_p99_ns, r.reader_max_ns},
                {"toggle", commit, r.toggle_p50_ns, commit.value_at_percentile(99),
                 r.toggle_max_ns}};
            for (const Row &row : rows) {
                SCOPED_TRACE(row.what);
                EXPECT_LE(row.p50, row.p99);
                EXPECT_LE(row.p99, row.max);
                EXPECT_EQ(row.p50, row.h.value_at_percentile(50));
                EXPECT_EQ(row.p99, row.h.value_at_percentile(99));
                EXPECT_EQ(row.max, row.h.max());
                checked += row.h.count() > 0;
            }
        }
    EXPECT_GT(checked, 0u);
}

// Each metric reaches the results file, the CSV, the table, pick and the report where its
// entry says (and the table only then).
void expect_reaches_where_it_says(const std::vector<Shipped> &runs) {
    const Shipped *sweep = nullptr;  // a sweep with commits: every report series is drawn
    for (const Shipped &s : runs)
        if (!s.file.scenario.at("sweep").empty() &&
            std::any_of(s.sums.begin(), s.sums.end(),
                        [](const RunSummary &r) { return r.toggle_count > 0; }))
            sweep = &s;
    ASSERT_NE(sweep, nullptr);
    const nlohmann::json figures = report_figures(sweep->file, sweep->name, ReportOptions{});
    const RunSummary base = sweep->sums.front();
    std::vector<std::string> paths;
    for (const Metric &m : metrics()) {
        SCOPED_TRACE(m.path());
        EXPECT_EQ(std::count(paths.begin(), paths.end(), m.path()), 0) << "named twice";
        paths.push_back(m.path());
        RunSummary r = base;
        // Something counted, so that the table shows the value rather than "-".
        if (const Metric *count = sibling(m, "count"); count && count != &m)
            set(r, *count, uint64_t{1});
        set(r, m, distinct(m));
        const Value v = get(r, m);

        // The results file: written at its path and read back the same.
        const nlohmann::json j = summary_to_json(r);
        const nlohmann::json &at = m.group ? j.at(m.group).at(m.key) : j.at(m.key);
        EXPECT_EQ(std::visit([](const auto &x) { return nlohmann::json(x); }, v), at);
        EXPECT_EQ(get(summary_from_json(j, "test"), m), v);

        // The CSV: its column holds the value.
        const std::string cell = csv_cell(format_csv({r}), m.csv_column());
        const std::string expected = std::visit(
            [](const auto &x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, std::string>)
                    return "\"" + x + "\"";
                else if constexpr (std::is_same_v<T, double>)
                    return fmt::format("{:.1f}", x);
                else
                    return fmt::format("{}", x);
            },
            v);
        EXPECT_EQ(cell, expected);

        // The table: a column under its heading shows the value, and only then.
        const std::string table = format_table({r}), plain = format_table({base});
        const std::string shown = m.unit == Unit::Ns          ? "123.46ms"
                                  : m.unit == Unit::Bytes     ? "3.00G"
                                  : m.unit == Unit::PerSecond ? "4242424"
                                                              : "4242";
        if (m.table.heading) {
            EXPECT_NE(table.substr(0, table.find('\n')).find(m.table.heading), std::string::npos);
            EXPECT_NE(table.find(shown), std::string::npos) << table;
        }
        if (m.unit != Unit::Flag && m.unit != Unit::Text && !m.table.heading) {
            EXPECT_EQ(table.find(shown), std::string::npos) << table;
        }
        EXPECT_EQ(plain.find(shown), std::string::npos);

        // pick: a limit under the value is broken, and the verdict names the metric.
        if (m.pick.option) {
            const Pick p = pick({r}, Limits{{m.path(), {1}}});
            ASSERT_EQ(p.ranked.size(), 1u);
            EXPECT_FALSE(p.ranked[0].meets);
            EXPECT_NE(format_pick(p, Limits{{m.path(), {1}}}).find(m.pick.what), std::string::npos);
        }

        // The report: the series the entry names is drawn (or captioned), with a value.
        const std::string name = m.series_name;
        auto stem_is = [&](const nlohmann::json &f, const char *prefix) {
            return f.at("file").get<std::string>().rfind(prefix, 0) == 0;
        };
        // Drawn: the series is there; with a value wherever the sweep's runs have one (a
        // metric the sweep does not exercise, such as its probe, is drawn at zero).
        bool drawn = false, valued = false;
        const bool nonzero = std::any_of(sweep->sums.begin(), sweep->sums.end(),
                                         [&](const RunSummary &r) { return number(r, m) != 0; });
        for (const nlohmann::json &f : figures) {
            if (m.series == Series::CommitTime || m.series == Series::CommitBytes) {
                if (!stem_is(f, m.series == Series::CommitTime ? "toggle-cost" : "toggle-alloc"))
                    continue;
                for (const auto &part : f.at("parts"))
                    if (part.at("name") == name) {
                        drawn = true;
                        for (const auto &value : part.at("values"))
                            valued = valued || value.get<double>() > 0;
                    }
            } else if (m.series == Series::CommitCount) {
                const bool captioned =
                    stem_is(f, "toggle-cost") && f.at("caption").get<std::string>().find(
                                                     name + " per commit") != std::string::npos;
                drawn = drawn || captioned;
                valued = valued || captioned;
            } else if (m.series == Series::Scaling && stem_is(f, "scaling-")) {
                for (const auto &panel : f.at("panels"))
                    if (panel.at("title") == name) {
                        drawn = true;
                        for (const auto &line : panel.at("lines"))
                            for (const auto &y : line.at("y"))
                                valued = valued || y.get<double>() > 0;
                    }
            }
        }
        EXPECT_EQ(drawn, m.series != Series::None)
            << "series '" << name << "' in the figures of " << sweep->name;
        if (drawn && nonzero) {
            EXPECT_TRUE(valued) << "series '" << name << "' drawn without the sweep's values";
        }
    }
}

}  // namespace

// One set of runs (every shipped scenario, shortened) serves both checks.
TEST(Metrics, ShippedRunsGiveEveryMetricAndEachReachesWhereItSays) {
    const std::vector<Shipped> &runs = shipped_runs();
    expect_non_zero_somewhere(runs);
    expect_percentiles_of_the_runs_histograms(runs);
    expect_reaches_where_it_says(runs);
}
