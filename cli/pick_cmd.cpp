// `locksim pick RESULTS --max-preempt-off 100us --max-toggle 10ms ...`: ranks the designs in a
// results file against the limits and says why, with the numbers. Exit status 0 when a design
// meets every limit, 3 when none does.
// `locksim merge OUT SHARD...`: joins the results files of `sweep --shard I/N` runs.
#include <fmt/core.h>

#include "analysis/pick.h"
#include "analysis/results_file.h"
#include "cli/command.h"

namespace locksim::cli {
namespace {

struct PickArgs {
    std::string results;
    std::string preempt_off, irqs_off, probe, toggle, reader, memory;
};

void run_pick(const PickArgs &a) {
    analysis::ResultsFile file = analysis::load_results(a.results);
    analysis::Limits limits;
    if (!a.preempt_off.empty())
        limits.max_preempt_off_ns = analysis::parse_limit_ns("--max-preempt-off", a.preempt_off);
    if (!a.irqs_off.empty())
        limits.max_irqs_off_ns = analysis::parse_limit_ns("--max-irqs-off", a.irqs_off);
    if (!a.probe.empty())
        limits.max_probe_wakeup_ns = analysis::parse_limit_ns("--max-probe-wakeup", a.probe);
    if (!a.toggle.empty())
        limits.max_toggle_ns = analysis::parse_limit_ns("--max-toggle", a.toggle);
    if (!a.reader.empty())
        limits.max_reader_p99_ns = analysis::parse_limit_ns("--max-reader-p99", a.reader);
    if (!a.memory.empty())
        limits.max_memory_bytes = analysis::parse_limit_bytes("--max-memory", a.memory);
    analysis::Pick p = analysis::pick(file.summaries(a.results), limits);
    fmt::print("{}", analysis::format_pick(p, limits));
    if (!p.any_meets()) throw CLI::RuntimeError(kExitNoneMeets);
}

CommandRegistrar reg([](CLI::App &app) {
    auto a = std::make_shared<PickArgs>();
    auto *cmd = app.add_subcommand("pick", "Rank the designs in a results file against limits");
    cmd->add_option("results", a->results, "results.json from run, compare or sweep")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option("--max-preempt-off", a->preempt_off, "Worst preempt-off section, e.g. 100us");
    cmd->add_option("--max-irqs-off", a->irqs_off, "Worst IRQs-off section");
    cmd->add_option("--max-probe-wakeup", a->probe, "Worst real-time probe wake-up latency");
    cmd->add_option("--max-toggle", a->toggle,
                    "Worst boolean commit (setsebool) latency, e.g. 10ms");
    cmd->add_option("--max-reader-p99", a->reader, "99th percentile of read-side operations");
    cmd->add_option("--max-memory", a->memory, "Peak memory, e.g. 512M");
    cmd->footer(
        "Exit status: 0 when a design meets every limit, 3 when none does, 2 on bad input.");
    cmd->callback([a] { run_pick(*a); });

    auto out = std::make_shared<std::string>();
    auto shards = std::make_shared<std::vector<std::string>>();
    auto *merge = app.add_subcommand("merge", "Join the results files of sharded sweeps");
    merge->add_option("out", *out, "Merged results file to write")->required();
    merge->add_option("shards", *shards, "Results files of the shards")
        ->required()
        ->check(CLI::ExistingFile);
    merge->callback([out, shards] {
        std::vector<analysis::ResultsFile> parts;
        for (const auto &s : *shards)
            parts.push_back(analysis::load_results(s));
        analysis::ResultsFile merged = analysis::merge_results(parts, *shards);
        analysis::save_results(merged, *out);
        fmt::print("merged {} runs from {} files into {}\n", merged.runs.size(), shards->size(),
                   *out);
    });
});

}  // namespace
}  // namespace locksim::cli
