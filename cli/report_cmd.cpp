// `locksim report RESULTS -o DIR`: histograms, percentile spectra, boolean-commit costs and
// scaling curves of a results file as PNG and SVG, and DIR/index.html showing them with the
// comparison table and pick's verdict against the --max-... limits given, as pick judges them
// (no limit by default);
// given margin's margin.json, also its figure (each limited figure against the key);
// --measured FILE... adds measured series (cyclictest, ftrace, Perfetto) beside the designs.
#include <fmt/core.h>

#include <filesystem>

#include "analysis/report.h"
#include "analysis/results_file.h"
#include "cli/command.h"
#include "cli/limit_options.h"
#include "cli/measured_options.h"
#include "util/error.h"
#include "util/read_file.h"

namespace locksim::cli {
namespace {

namespace fs = std::filesystem;

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
    cmd->add_option("results", a->results,
                    "results.json from run, compare or sweep, margin.json from margin or "
                    "robust.json from robust (their figures too, with the results file they "
                    "name)")
        ->required();
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
        std::string results = a->results;
        if (fs::path(results).filename() == "margin.json") {
            // margin's search: its figure, over the results file beside it, judged by the
            // margin's own limits unless others are given.
            a->options.margin =
                nlohmann::json::parse(read_whole_file(results, "margin file"), nullptr, false);
            if (!a->options.margin.is_object() || !a->options.margin.contains("margin") ||
                !a->options.margin.contains("results"))
                throw UserError(
                    fmt::format("{}: not a margin.json written by locksim margin", results));
            if (a->options.limits.empty())
                for (const auto &[path, l] : a->options.margin.at("limits").items()) {
                    analysis::Limit &limit = a->options.limits[path];
                    limit.value = l.at("value");
                    if (!l.at("probability").is_null()) limit.probability = l.at("probability");
                }
            results = (fs::path(results).parent_path() /
                       a->options.margin.at("results").get<std::string>())
                          .string();
        }
        if (fs::path(results).filename() == "robust.json") {
            // robust's judgement: its figures, over the results file it names, judged by its
            // own limits unless others are given.
            a->options.robust =
                nlohmann::json::parse(read_whole_file(results, "robust file"), nullptr, false);
            if (!a->options.robust.is_object() ||
                a->options.robust.value("schema", "") != "locksim/robust/1" ||
                !a->options.robust.contains("results"))
                throw UserError(
                    fmt::format("{}: not a robust.json written by locksim robust", results));
            if (a->options.limits.empty())
                for (const auto &[path, l] : a->options.robust.at("limits").items())
                    a->options.limits[path].value = l.get<int64_t>();
            const fs::path named = a->options.robust.at("results").get<std::string>();
            results =
                (named.is_absolute() ? named : fs::path(results).parent_path() / named).string();
        }
        analysis::ResultsFile file = analysis::load_results(results);
        add_measured(file, a->measured);
        fmt::print("report: limits: {}\n", analysis::limits_text(a->options.limits));
        if (const analysis::Plan plan = analysis::planned_runs(file); !plan.complete)
            fmt::print(stderr,
                       "warning: {}: incomplete results: {}; the verdict covers only "
                       "the runs there\n",
                       results, plan.why);
        analysis::ReportOutput out = analysis::write_report(file, results, a->out, a->options);
        fmt::print("report: {} files; open {}\n", out.files.size(), out.index);
    });
});

}  // namespace
}  // namespace locksim::cli
