// The command line's choice of runs (--seed, --strategy, --duration) applied to a scenario and to
// the points derived from it, as run, compare, sweep and margin share them.
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/pick.h"
#include "scenario/scenario.h"
#include "util/error.h"
#include "util/params.h"

namespace locksim::cli {

struct RunChoices {
    std::vector<int64_t> seeds;           // empty: the scenario's
    std::vector<std::string> strategies;  // labels; empty: the scenario's (or its first)
    std::string duration;                 // empty: the scenario's
};

// Checks the choices and applies them to the scenario as read (`first_only`: no strategy chosen
// keeps only the first, as `run` does). UserError naming the option on a mistake.
inline void apply_run_choices(Scenario &scenario, const RunChoices &c, bool first_only) {
    for (size_t i = 0; i < c.seeds.size(); ++i) {
        const int64_t seed = c.seeds[i];
        if (seed < 0) throw UserError(fmt::format("--seed: {} is negative (seeds are >= 0)", seed));
        if (std::count(c.seeds.begin(), c.seeds.begin() + static_cast<long>(i), seed))
            throw UserError(
                fmt::format("--seed: {} is given twice (a seed repeats the same run)", seed));
    }
    if (!c.seeds.empty()) scenario.seeds = c.seeds;
    if (!c.strategies.empty()) {
        std::vector<StrategySpec> chosen;
        for (const auto &name : c.strategies) {
            auto it = std::find_if(scenario.strategies.begin(), scenario.strategies.end(),
                                   [&](const StrategySpec &s) { return s.label == name; });
            if (it == scenario.strategies.end())
                throw UserError(fmt::format("{}: the scenario has no strategy labelled '{}'",
                                            scenario.file, name));
            chosen.push_back(*it);
        }
        scenario.strategies = chosen;
    } else if (first_only) {
        scenario.strategies.resize(1);
    }
    if (!c.duration.empty()) {
        int64_t ns = analysis::parse_limit_ns("--duration", c.duration);
        if (ns < 1000) throw UserError(fmt::format("--duration {}: at least 1us", c.duration));
        scenario.duration_ns = ns;
        // Statistics start after the warm-up; a warm-up as long as the run would leave none.
        scenario.warmup_ns = std::min(scenario.warmup_ns, ns / 10);
    }
}

// A point derived from the file (a sweep's, a margin's) gets the choices `scenario` was given.
inline void apply_to_point(Scenario &p, const Scenario &scenario, const RunChoices &c) {
    p.seeds = scenario.seeds;
    // The chosen strategies by label, keeping the point's own options (a swept option).
    std::vector<StrategySpec> chosen;
    for (const StrategySpec &want : scenario.strategies)
        for (const StrategySpec &have : p.strategies)
            if (have.label == want.label) chosen.push_back(have);
    p.strategies = std::move(chosen);
    if (c.duration.empty()) return;
    p.duration_ns = scenario.duration_ns;
    p.warmup_ns = std::min(p.warmup_ns, p.duration_ns / 10);
    for (const WorkloadSpec &w : p.workloads)
        if (w.params.get_duration_ns("start") >= p.duration_ns)
            throw UserError(fmt::format(
                "--duration {}: workload '{}' ({}) starts at {}, when the run has ended",
                c.duration, w.label, w.at, format_duration_ns(w.params.get_duration_ns("start"))));
}

// The options of a command that runs a scenario's designs at points it derives (margin, robust):
// -s, --seed, --duration, -j and --no-wall-clock; `same` says what else the output is
// byte-identical for ("scenario and seeds").
inline void add_run_choice_options(CLI::App *cmd, RunChoices &c, int &threads, bool &wall_clock,
                                   const std::string &same) {
    cmd->add_option("-s,--strategy", c.strategies, "Only these strategies (by label)");
    cmd->add_option("--seed", c.seeds, "Seeds to run instead of the scenario's");
    cmd->add_option("--duration", c.duration,
                    "Simulated time of each run instead of the scenario's, e.g. 200ms");
    cmd->add_option("-j,--threads", threads, "Runs in parallel (default: all cores)");
    cmd->add_flag("!--no-wall-clock", wall_clock,
                  "Leave wall-clock times out of the output and the files (byte-identical "
                  "output for the same binary, " +
                      same + ")");
}

}  // namespace locksim::cli
