// The metric table (analysis/metrics.h) against real runs: short runs of every shipped scenario
// give every metric a non-zero value in some run (or the entry says why it may stay zero), and
// each metric reaches the results file, the CSV, the table and the report where its entry says.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "analysis/metrics.h"
#include "analysis/pick.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "runner/runner.h"
#include "workloads/catalog.h"

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

std::vector<Shipped> shipped_runs() {
    std::vector<fs::path> files;
    for (const auto &e : fs::recursive_directory_iterator(LOCKSIM_SCENARIO_DIR))
        if (e.path().extension() == ".toml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    std::vector<Shipped> out;
    for (const fs::path &f : files) {
        Scenario s = shortened(f);
        std::vector<Scenario> points = expand_sweep(s);
        RunOptions o;
        o.wall_clock = false;
        Shipped one{f.filename().string(), run_jobs(s, points, plan_runs(points), o), {}};
        one.sums = one.file.summaries(one.name);
        out.push_back(std::move(one));
    }
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
    ASSERT_GE(runs.size(), 8u);
    for (const Metric &m : metrics()) {
        SCOPED_TRACE(m.path());
        std::string where;
        for (const Shipped &s : runs)
            for (const RunSummary &r : s.sums)
                if (where.empty() && number(r, m) != 0) where = s.name + " " + r.label;
        // A zero_reason lets a run have zero; some shipped scenario still makes the figure, so
        // that one which never reaches the summary is caught (cpu.irq_ns from network-server's
        // [[machine.irq]], for example). The counts of what a run left unfinished are the
        // exception: a shipped run drains, so they stay zero here (verdict_test and
        // censoring_test end runs inside sections instead).
        const std::string_view key = m.key;
        const bool unfinished =
            key == "open_at_end" || key == "max_censored" || key == "incomplete";
        if (m.zero_reason) {
            EXPECT_STRNE(m.zero_reason, "");
        }
        if (!unfinished) {
            EXPECT_FALSE(where.empty()) << "zero in every shipped scenario's run";
        }
        // A Derived figure has no extraction; every other one has.
        EXPECT_EQ(m.extract == nullptr, std::holds_alternative<Derived>(m.field));
    }
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
    expect_reaches_where_it_says(runs);
}
