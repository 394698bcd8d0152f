// `locksim paths`: where the built-in policies live, for scripts.
#include <fmt/core.h>

#include "cli/command.h"

namespace locksim::cli {
namespace {

CommandRegistrar version_command([](CLI::App &app) {
    auto *cmd =
        app.add_subcommand("paths", "Print where locksim looks for the built Debian policies");
    cmd->callback([] { fmt::print("policy_dir {}\n", LOCKSIM_POLICY_DIR); });
});

}  // namespace
}  // namespace locksim::cli
