// Duration advice (analysis/duration_advice.h) for the command line: what a scenario is
// expected to count before it runs, what its runs counted after, and the warnings on stderr.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "analysis/duration_advice.h"
#include "analysis/results_file.h"
#include "analysis/seeds.h"
#include "scenario/scenario.h"

namespace locksim::cli {

// Commits and probe wake-ups the scenario's workloads make in its measured time.
inline analysis::RunCounts expected_counts(const Scenario &s) {
    analysis::RunCounts c;
    c.duration_ns = s.duration_ns;
    c.warmup_ns = s.warmup_ns;
    c.runs = s.seeds.size();
    c.held_stretches = sim::fully_preemptible(s.machine.preemption);
    const double measured = static_cast<double>(s.duration_ns - s.warmup_ns);
    for (const auto &w : s.workloads) {
        if (w.kind != "setsebool" && w.kind != "probe") continue;
        const double tasks = static_cast<double>(w.tasks == 0 ? s.machine.cpus : w.tasks);
        const double per_task = measured / static_cast<double>(std::max<int64_t>(
                                               1, w.params.get_duration_ns("period")));
        if (w.kind == "setsebool") {
            const double burst = w.params.get_string("mode") == "burst"
                                     ? static_cast<double>(w.params.get_int("burst"))
                                     : 1;
            c.commits = c.commits.value_or(0) + tasks * per_task * burst;
        } else if (w.kind == "probe") {
            c.probe_wakeups = c.probe_wakeups.value_or(0) + tasks * per_task;
        }
    }
    return c;
}

// What the runs counted: the fewest commits and wake-ups of any design (summed over its seeds,
// since its verdict is the worst over them), the longest section or commit of any run.
inline analysis::RunCounts counted(const Scenario &s,
                                   const std::vector<analysis::RunSummary> &runs) {
    analysis::RunCounts expected = expected_counts(s), c;
    c.duration_ns = s.duration_ns;
    c.warmup_ns = s.warmup_ns;
    c.held_stretches = expected.held_stretches &&
                       std::all_of(runs.begin(), runs.end(), [](const analysis::RunSummary &r) {
                           return r.platform == "sim";
                       });
    for (const auto &g : analysis::group_by_design(runs)) {
        double commits = 0, wakeups = 0;
        for (const analysis::RunSummary *r : g.runs) {
            commits += static_cast<double>(r->toggle_count + r->toggle_open.open_at_end);
            wakeups += static_cast<double>(r->probe_count);
        }
        // Per run: the measured time of one run is what the advice scales.
        commits /= static_cast<double>(g.runs.size());
        wakeups /= static_cast<double>(g.runs.size());
        if (expected.commits) c.commits = std::min(c.commits.value_or(1e300), commits);
        if (expected.probe_wakeups)
            c.probe_wakeups = std::min(c.probe_wakeups.value_or(1e300), wakeups);
        c.runs = std::max(c.runs, g.runs.size());
    }
    for (const auto &r : runs) {
        const std::pair<int64_t, bool> worst[] = {
            {r.preempt_off_max_ns, r.preempt_off_open.max_censored},
            {r.irqs_off_max_ns, r.irqs_off_open.max_censored},
            {r.toggle_max_ns, r.toggle_open.max_censored || r.toggle_incomplete()}};
        for (const auto &[ns, open] : worst)
            if (ns > c.worst_section_ns || (ns == c.worst_section_ns && open)) {
                c.worst_section_ns = ns;
                c.worst_open_at_end = open;
            }
    }
    return c;
}

inline void print_duration_warnings(const std::string &file, const analysis::RunCounts &c) {
    std::fflush(stdout);  // after what was printed before them
    for (const auto &line : analysis::duration_advice(c))
        fmt::print(stderr, "warning: {}: {}\n", file, line);
}

// What the workloads' setups got short of (RunResults::workload_notes), each note once however
// many runs made it; in a sweep, with the points (each run's `point`) where it was made.
inline void print_workload_notes(const std::string &file, const analysis::ResultsFile &results) {
    std::vector<std::pair<std::string, std::vector<std::string>>> notes;  // note, its points
    for (const auto &run : results.runs) {
        const auto detail = run.find("detail");
        if (detail == run.end() || !detail->contains("workload_notes")) continue;
        std::string point;  // "field=value ..."; empty outside a sweep
        if (const auto p = run.find("point"); p != run.end())
            for (const auto &[field, value] : p->items())
                point += (point.empty() ? "" : " ") + field + "=" + value.get<std::string>();
        for (const auto &item : (*detail)["workload_notes"]) {
            const std::string note = item.get<std::string>();
            auto it = std::find_if(notes.begin(), notes.end(),
                                   [&](const auto &n) { return n.first == note; });
            if (it == notes.end()) it = notes.insert(notes.end(), {note, {}});
            if (!point.empty() &&
                std::find(it->second.begin(), it->second.end(), point) == it->second.end())
                it->second.push_back(point);
        }
    }
    std::fflush(stdout);
    for (const auto &[note, points] : notes) {
        constexpr size_t kListed = 6;  // a large sweep's points are counted, not all listed
        std::string where;
        for (size_t i = 0; i < points.size() && i < kListed; ++i)
            where += (i ? "; " : "") + points[i];
        if (points.size() > kListed) where += fmt::format("; and {} more", points.size() - kListed);
        if (points.size() == 1)
            where = fmt::format(" (at sweep point {})", where);
        else if (!points.empty())
            where = fmt::format(" (at {} sweep points: {})", points.size(), where);
        fmt::print(stderr, "warning: {}: {}{}\n", file, note, where);
    }
}

}  // namespace locksim::cli
