// `locksim import FILE... -o DIR`: measured latencies (cyclictest histogram or JSON, ftrace
// latency traces, Chrome/Perfetto traces) as a results file, DIR/results.json, that `pick`,
// `report` and `table` read beside simulated results.
#include <fmt/core.h>

#include <filesystem>

#include "analysis/measured/import.h"
#include "analysis/results_file.h"
#include "analysis/table.h"
#include "cli/command.h"
#include "cli/measured_options.h"
#include "cli/paths.h"

namespace locksim::cli {
namespace {

struct ImportArgs {
    MeasuredArgs measured;
    std::string out;
};

CommandRegistrar import_command([](CLI::App &app) {
    auto a = std::make_shared<ImportArgs>();
    auto *cmd = app.add_subcommand(
        "import", "Read measured latencies (cyclictest, ftrace, Perfetto) into a results file");
    add_measured_options(cmd, a->measured, "files");
    cmd->get_option("files")->required();
    cmd->add_option("-o,--out", a->out, "Directory to write results.json into")->required();
    cmd->footer(
        "Formats are recognised by content: cyclictest's histogram (-h N, --histfile) and "
        "--json output become probe wake-up latencies, one histogram per thread; an ftrace "
        "latency trace (preemptoff, preemptirqsoff, irqsoff, wakeup, wakeup_rt, wakeup_dl) adds "
        "its worst case, with its task and sites; a Chrome/Perfetto JSON trace gives slice "
        "durations by name (--slice maps a name to a metric).\nExit status: 0, or 2 on a "
        "malformed file (its file:line is named).");
    cmd->callback([a] {
        analysis::ResultsFile r =
            analysis::measured::import_measured(a->measured.files, import_options(a->measured));
        make_output_dir(a->out, "-o");
        const std::string path = (std::filesystem::path(a->out) / "results.json").string();
        analysis::save_results(r, path);
        fmt::print("{}", analysis::format_table(r.summaries(path)));
        fmt::print("imported {} series from {} files into {}\n", r.runs.size(),
                   a->measured.files.size(), path);
    });
});

}  // namespace
}  // namespace locksim::cli
