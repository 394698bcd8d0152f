// `locksim pick RESULTS --max-preempt-off 100us --max-toggle 10ms ...`: ranks the designs in a
// results file against the limits and says why, with the numbers; a sweep's verdict is given per
// point, and --point KEY=VALUE judges one. Exit status 0 when a design meets every limit, 3 when
// none does, 4 when the results are incomplete (whatever the verdict).
// `locksim merge OUT SHARD...`: joins the results files of `sweep --shard I/N` runs.
#include <fmt/core.h>

#include <exception>

#include "analysis/measured/import.h"
#include "analysis/pick.h"
#include "analysis/results_file.h"
#include "cli/command.h"
#include "cli/limit_options.h"
#include "cli/measured_options.h"
#include "cli/paths.h"
#include "util/error.h"

namespace locksim::cli {
namespace {

struct PickArgs {
    std::vector<std::string> results;
    LimitArgs limits;
    MeasuredArgs measured;
    std::vector<std::string> point;
};

// A results file; a measured file given in its place (cyclictest's histogram, an ftrace or
// Perfetto trace) is refused with a pointer to --measured rather than a parser's complaint.
analysis::ResultsFile load_results_file(const std::string &path) {
    try {
        return analysis::load_results(path);
    } catch (const UserError &e) {
        bool measured = false;
        try {
            measured = !analysis::measured::import_measured({path}, {}).runs.empty();
        } catch (const std::exception &) {
        }
        if (!measured) throw;
        throw UserError(fmt::format(
            "{}: a measured file, not a results file: pass it as --measured {} (or read it "
            "with locksim import)",
            path, path));
    }
}

void run_pick(const PickArgs &a) {
    // Several files (simulated results, `import`'s measured ones) are judged together.
    analysis::ResultsFile file = load_results_file(a.results.front());
    for (size_t i = 1; i < a.results.size(); ++i)
        analysis::measured::append_runs(file, load_results_file(a.results[i]));
    add_measured(file, a.measured);
    analysis::Limits limits = parse_limits(a.limits);
    analysis::PickScope scope;
    for (const std::string &p : a.point)
        scope.point.push_back(analysis::parse_point(p));
    scope.plan = analysis::planned_runs(file);
    // A tail read from a run names the run; with one file, the file too.
    const analysis::Pick p =
        at_place(a.results.size() == 1 ? a.results.front() : std::string(), [&] {
            return analysis::pick(file.summaries(a.results.front()), limits,
                                  analysis::tail_source(file), scope);
        });
    fmt::print("{}", analysis::format_pick(p, limits));
    if (p.incomplete) throw CLI::RuntimeError(kExitIncomplete);
    if (!p.any_meets()) throw CLI::RuntimeError(kExitNoneMeets);
}

CommandRegistrar pick_registrar([](CLI::App &app) {
    auto a = std::make_shared<PickArgs>();
    auto *cmd = app.add_subcommand("pick", "Rank the designs in a results file against limits");
    cmd->add_option("results", a->results,
                    "results.json files from run, compare, sweep or import, judged together")
        ->required();
    add_limit_options(cmd, a->limits);
    add_measured_options(cmd, a->measured, "--measured");
    cmd->add_option("--point", a->point,
                    "Judge only the runs at this sweep point, e.g. core.sidtab=legacy "
                    "(repeat for several axes)");
    cmd->footer(
        "Ranking: designs meeting every limit first; then designs without self-check "
        "violations before those with (a design with violations is broken, whatever its "
        "figures); then by headroom (the largest value/limit over the limits given, smaller "
        "first); then by throughput (higher first); each place says the figure that decided "
        "it. With no limit given, designs are ranked by violations, then throughput. A design "
        "is judged at each sweep point by its worst run over seeds there, and overall by its "
        "worst point, which is named; each limit says how many seeds meet it, and a design "
        "whose verdict differs between seeds is marked unstable. A worst case still open when a "
        "run ended (shown with \u2265) and a commit that never completed (toggle.incomplete) "
        "meet no limit. DURATION@P (e.g. 200us@1e-9) judges the tail estimate of the value "
        "exceeded with probability P per section, wake-up or commit by the upper end of its 95% "
        "interval; a poor fit meets no limit. Results that say \"complete\": false (an "
        "interrupted run, a partial merge) or are one shard of a sweep are judged on the runs "
        "they hold, with a warning; designs with no run are listed as not run, never ranked.\n"
        "Exit status: 0 when a design meets every limit (with no limit: when a design has no "
        "self-check violation), 3 when none does, 4 when the results are incomplete (whatever "
        "the verdict), 2 on bad input.");
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
