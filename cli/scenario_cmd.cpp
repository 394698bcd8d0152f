// `locksim scenario check FILE...`: validates scenario files without running them: every sweep
// point's policy, CPU profile, machine and workloads are set up as a run would set them up
// (check_runs), so that what `run`, `compare` and `sweep` refuse is refused here, with the same
// message. Notes the periodic sources that keep their phase to the probe.
#include <fmt/core.h>

#include "cli/command.h"
#include "cli/duration_warnings.h"
#include "runner/runner.h"
#include "scenario/phases.h"
#include "scenario/scenario.h"

namespace locksim::cli {
namespace {

struct CheckArgs {
    std::vector<std::string> files;
};

void check(const CheckArgs &args) {
    for (const auto &file : args.files) {
        Scenario s = load_scenario(file);
        std::vector<Scenario> points = expand_sweep(s);
        check_runs(points);
        fmt::print("{}: ok ({} strategies, {} workloads, {} seeds, {} sweep points)\n", file,
                   s.strategies.size(), s.workloads.size(), s.seeds.size(), points.size());
        print_duration_warnings(file, expected_counts(s));
        for (const std::string &note : phase_lock_notes(points))
            fmt::print(stderr, "note: {}: {}\n", file, note);
        for (const std::string &note : kernel_notes(points))
            fmt::print(stderr, "note: {}: {}\n", file, note);
    }
}

CommandRegistrar scenario_registrar([](CLI::App &app) {
    auto *scenario = app.add_subcommand("scenario", "Work with scenario files");
    scenario->require_subcommand(1);
    auto args = std::make_shared<CheckArgs>();
    auto *cmd = scenario->add_subcommand("check", "Validate scenario files without running them");
    cmd->add_option("files", args->files, "Scenario files (TOML)")->required();
    cmd->callback([args] { check(*args); });
});

}  // namespace
}  // namespace locksim::cli
