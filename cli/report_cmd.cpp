// `locksim report RESULTS -o DIR`: histograms, percentile spectra, boolean-commit costs and
// scaling curves of a results file as PNG and SVG, and DIR/index.html showing them with the
// comparison table and pick's verdict against the --max-... limits given, as pick judges them
// (no limit by default);
// --measured FILE... adds measured series (cyclictest, ftrace, Perfetto) beside the designs.
#include <fmt/core.h>

#include "analysis/report.h"
#include "analysis/results_file.h"
#include "cli/command.h"
#include "cli/limit_options.h"
#include "cli/measured_options.h"

namespace locksim::cli {
namespace {

struct ReportArgs {
    std::string results;
    std::string out;
    LimitArgs limits;
    analysis::ReportOptions options;
    MeasuredArgs measured;
};

CommandRegistrar report_registrar([](CLI::App &app) {
    auto a = std::make_shared<ReportArgs>();
    auto *cmd = app.add_subcommand(
        "report", "Plots of a results file and an index.html with the table and the verdict");
    cmd->add_option("results", a->results, "results.json from run, compare or sweep")->required();
    cmd->add_option("-o,--out", a->out, "Directory to write the report into")->required();
    add_limit_options(cmd, a->limits);
    cmd->add_option("--reader-op", a->options.reader_op,
                    "Operation whose latency spectrum is the reader's (default: the most "
                    "frequent read-side operation)");
    cmd->add_option("--toggle-op", a->options.toggle_op, "Operation of a boolean commit")
        ->capture_default_str();
    cmd->add_option("--python", a->options.python,
                    "Python with matplotlib (default: $LOCKSIM_PYTHON, else /usr/bin/python3)");
    cmd->add_flag("--per-run", a->options.per_run,
                  "On a sweep, draw each run's histograms too (by default one figure per sweep "
                  "point, its designs side by side)");
    cmd->add_option("-j,--threads", a->options.threads,
                    "Figures drawn in parallel, one python process each (default: all cores)")
        ->check(CLI::Range(1, 1024));
    add_measured_options(cmd, a->measured, "--measured");
    cmd->footer(
        "The verdict is pick's for the same limits: only the --max-... options given (none by "
        "default), printed on the first line. Results that say \"complete\": false or are one "
        "shard of a sweep get a warning, and their designs with no run are listed as not run.\n"
        "Exit status: 0 when the report is written (whatever the verdict, complete or not), 2 "
        "on bad input.");
    cmd->callback([a] {
        a->options.limits = parse_limits(a->limits);
        analysis::ResultsFile file = analysis::load_results(a->results);
        add_measured(file, a->measured);
        fmt::print("report: limits: {}\n", analysis::limits_text(a->options.limits));
        if (const analysis::Plan plan = analysis::planned_runs(file); !plan.complete)
            fmt::print(stderr,
                       "warning: {}: incomplete results: {}; the verdict covers only "
                       "the runs there\n",
                       a->results, plan.why);
        analysis::ReportOutput out = analysis::write_report(file, a->results, a->out, a->options);
        fmt::print("report: {} files; open {}\n", out.files.size(), out.index);
    });
});

}  // namespace
}  // namespace locksim::cli
