// `locksim scenario check FILE...`: validates scenario files without running them.
#include <fmt/core.h>

#include "cli/command.h"
#include "cli/duration_warnings.h"
#include "workloads/scenario.h"

namespace locksim::cli {
namespace {

struct CheckArgs {
    std::vector<std::string> files;
};

void check(const CheckArgs &args) {
    for (const auto &file : args.files) {
        Scenario s = load_scenario(file);
        size_t points = expand_sweep(s).size();
        fmt::print("{}: ok ({} strategies, {} workloads, {} seeds, {} sweep points)\n", file,
                   s.strategies.size(), s.workloads.size(), s.seeds.size(), points);
        print_duration_warnings(file, expected_counts(s));
    }
}

CommandRegistrar reg([](CLI::App &app) {
    auto *scenario = app.add_subcommand("scenario", "Work with scenario files");
    scenario->require_subcommand(1);
    auto args = std::make_shared<CheckArgs>();
    auto *cmd = scenario->add_subcommand("check", "Validate scenario files without running them");
    cmd->add_option("files", args->files, "Scenario files (TOML)")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->callback([args] { check(*args); });
});

}  // namespace
}  // namespace locksim::cli
