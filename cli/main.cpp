// The locksim command: subcommands come from the CommandRegistrar in each cli/*.cpp.
#include <fmt/core.h>

#include <exception>

#include "cli/command.h"
#include "util/error.h"

namespace locksim::cli {

std::vector<CommandAdder> &command_adders() {
    static std::vector<CommandAdder> adders;
    return adders;
}

CLI::App *shared_subcommand(CLI::App &app, const std::string &name, const std::string &help) {
    auto found = app.get_subcommands([&](CLI::App *sub) { return sub->get_name() == name; });
    if (!found.empty()) return found.front();
    auto *cmd = app.add_subcommand(name, help);
    cmd->require_subcommand(1);
    return cmd;
}

}  // namespace locksim::cli

int main(int argc, char **argv) {
    using namespace locksim::cli;
    CLI::App app{"locksim: which locking design should the SELinux security server use?"};
    app.set_version_flag("--version", std::string(LOCKSIM_VERSION));
    app.require_subcommand(1);
    for (auto &add : command_adders())
        add(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::RuntimeError &e) {
        // A command that ran and chose its exit status (e.g. a failed check).
        return e.get_exit_code();
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        return rc == 0 ? kExitOk : kExitUser;
    } catch (const locksim::UserError &e) {
        fmt::print(stderr, "locksim: {}\n", e.what());
        return kExitUser;
    } catch (const std::exception &e) {
        fmt::print(stderr, "locksim: internal error: {}\n", e.what());
        return kExitInternal;
    }
    return kExitOk;
}
