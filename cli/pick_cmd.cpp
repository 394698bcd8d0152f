// `locksim pick RESULTS --max-preempt-off 100us --max-toggle 10ms ...`: ranks the designs in a
// results file against the limits and says why, with the numbers. Exit status 0 when a design
// meets every limit, 3 when none does.
// `locksim merge OUT SHARD...`: joins the results files of `sweep --shard I/N` runs.
#include <fmt/core.h>

#include "analysis/pick.h"
#include "analysis/results_file.h"
#include "cli/command.h"
#include "cli/limit_options.h"
#include "cli/paths.h"

namespace locksim::cli {
namespace {

struct PickArgs {
    std::string results;
    LimitArgs limits;
};

void run_pick(const PickArgs &a) {
    analysis::ResultsFile file = analysis::load_results(a.results);
    analysis::Limits limits = parse_limits(a.limits);
    analysis::Pick p = analysis::pick(file.summaries(a.results), limits);
    fmt::print("{}", analysis::format_pick(p, limits));
    if (!p.any_meets()) throw CLI::RuntimeError(kExitNoneMeets);
}

CommandRegistrar reg([](CLI::App &app) {
    auto a = std::make_shared<PickArgs>();
    auto *cmd = app.add_subcommand("pick", "Rank the designs in a results file against limits");
    cmd->add_option("results", a->results, "results.json from run, compare or sweep")->required();
    add_limit_options(cmd, a->limits);
    cmd->footer(
        "Exit status: 0 when a design meets every limit, 3 when none does, 2 on bad input.");
    cmd->callback([a] { run_pick(*a); });

    auto out = std::make_shared<std::string>();
    auto shards = std::make_shared<std::vector<std::string>>();
    auto allow_partial = std::make_shared<bool>(false);
    auto *merge = app.add_subcommand("merge", "Join the results files of sharded sweeps");
    merge->add_option("out", *out, "Merged results file to write")->required();
    merge->add_option("shards", *shards, "Results files of the shards")->required();
    merge->add_flag("--allow-partial", *allow_partial,
                    "Join an incomplete shard set (the result says \"complete\": false)");
    merge->callback([out, shards, allow_partial] {
        check_output_file(*out, "merge OUT");
        std::vector<analysis::ResultsFile> parts;
        for (const auto &s : *shards)
            parts.push_back(analysis::load_results(s));
        analysis::ResultsFile merged = analysis::merge_results(parts, *shards, *allow_partial);
        analysis::save_results(merged, *out);
        fmt::print("merged {} runs from {} files into {}\n", merged.runs.size(), shards->size(),
                   *out);
    });
});

}  // namespace
}  // namespace locksim::cli
