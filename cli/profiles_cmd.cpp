// `locksim list profiles`: the shipped CPU profiles of the simulator's cost model.
#include <fmt/format.h>

#include "cli/command.h"
#include "sim/profile.h"

namespace locksim::cli {
namespace {

CommandRegistrar profiles_command([](CLI::App &app) {
    auto *cmd = shared_subcommand(app, "list", kListHelp)
                    ->add_subcommand("profiles", "CPU profiles of the simulator's cost model");
    auto verbose = std::make_shared<bool>(false);
    cmd->add_flag("-v,--verbose", *verbose, "Also say how each profile was derived");
    cmd->callback([verbose] {
        fmt::print("profiles in {}\n", sim::profile_dir().string());
        for (const auto &name : sim::list_profiles()) {
            sim::CpuProfile p = sim::find_profile(name);
            fmt::print("{:<14} {}\n", p.name, p.description);
            if (*verbose) fmt::print("{:<14} derived: {}\n\n", "", p.derivation);
        }
    });
});

}  // namespace
}  // namespace locksim::cli
