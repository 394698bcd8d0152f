// `locksim scenario check FILE...`: validates scenario files without running them, and opens
// the policy and CPU profile files they name (every sweep point's) to check their format.
#include <fmt/core.h>

#include <map>

#include "cli/command.h"
#include "cli/duration_warnings.h"
#include "runner/runner.h"
#include "sim/profile.h"
#include "ss/policydb.h"
#include "util/error.h"
#include "workloads/phases.h"
#include "workloads/scenario.h"

namespace locksim::cli {
namespace {

struct CheckArgs {
    std::vector<std::string> files;
};

void check(const CheckArgs &args) {
    for (const auto &file : args.files) {
        Scenario s = load_scenario(file);
        std::vector<Scenario> points = expand_sweep(s);
        std::map<std::string, std::string> policies;  // path -> the first place naming it
        for (const Scenario &p : points)
            if (p.policy.source == PolicySpec::Source::File)
                policies.emplace(p.policy.path, p.policy.path_at);
        for (const auto &[path, at] : policies)
            at_place(at, [&] { ss::policydb_read_file(path); });
        for (const Scenario &p : points)
            check_machine_profile(p, point_profile(p));
        fmt::print("{}: ok ({} strategies, {} workloads, {} seeds, {} sweep points)\n", file,
                   s.strategies.size(), s.workloads.size(), s.seeds.size(), points.size());
        print_duration_warnings(file, expected_counts(s));
        for (const std::string &note : phase_lock_notes(points))
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
