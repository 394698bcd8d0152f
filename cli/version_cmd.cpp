// `locksim paths`: where the built-in policies are looked for ($LOCKSIM_POLICY_DIR first), for
// scripts.
#include <fmt/core.h>

#include "cli/command.h"
#include "runner/runner.h"

namespace locksim::cli {
namespace {

CommandRegistrar version_registrar([](CLI::App &app) {
    auto *cmd =
        app.add_subcommand("paths", "Print where locksim looks for the built Debian policies");
    cmd->callback([] { fmt::print("policy_dir {}\n", debian_policy_dir().string()); });
});

}  // namespace
}  // namespace locksim::cli
