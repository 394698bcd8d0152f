// `locksim list profiles`: the shipped CPU profiles of the simulator's cost model.
#include <fmt/format.h>

#include "cli/command.h"
#include "sim/profile.h"

namespace locksim::cli {
namespace {

CommandRegistrar profiles_registrar([](CLI::App &app) {
    auto *cmd = shared_subcommand(app, "list", kListHelp)
                    ->add_subcommand("profiles", "CPU profiles of the simulator's cost model");
    auto verbose = std::make_shared<bool>(false);
    cmd->add_flag("-v,--verbose", *verbose,
                  "Also say how each profile was derived, and how uncertain its prices are");
    cmd->callback([verbose] {
        fmt::print("profiles in {}\n", sim::profile_dir().string());
        for (const auto &name : sim::list_profiles()) {
            sim::CpuProfile p = sim::find_profile(name);
            fmt::print("{:<14} {}\n", p.name, p.description);
            if (!*verbose) continue;
            fmt::print("{:<14} derived: {}\n", "", p.derivation);
            // How far each price family may be off ([uncertainty]): what `robust` draws within.
            std::string u;
            for (size_t k = 0; k < sim::kPriceFamilies; ++k)
                u += fmt::format("{}{} x{}{}", k ? ", " : "", sim::kPriceFamilyNames[k],
                                 p.uncertainty.factor[k],
                                 p.uncertainty.stated[k] ? "" : " (default)");
            fmt::print("{:<14} uncertainty: {}{}\n\n", "", u,
                       p.uncertainty.why.empty() ? "" : ": " + p.uncertainty.why);
        }
    });
});

}  // namespace
}  // namespace locksim::cli
