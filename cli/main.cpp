// The locksim command: subcommands come from the CommandRegistrar in each cli/*.cpp.
#include <fmt/core.h>

#include <algorithm>
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

namespace {

// The subcommands a user can name under `app` (the help pseudo-commands aside).
std::vector<std::string> choices(CLI::App &app) {
    std::vector<std::string> names;
    for (CLI::App *sub : app.get_subcommands([](CLI::App *) { return true; }))
        names.push_back(sub->get_name());
    std::sort(names.begin(), names.end());
    return names;
}

std::string joined(const std::vector<std::string> &names) {
    std::string out;
    for (const std::string &n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

// CLI11 answers a misspelt or missing command with only "A subcommand is required": walks the
// leading words of the command line down the commands and says which word is unknown, or which
// command lacks its subcommand, with the choices. Empty when the command line names commands
// CLI11 knows (options and arguments are CLI11's to check).
std::string command_word_error(CLI::App &app, int argc, char **argv) {
    CLI::App *at = &app;
    std::string path;  // the commands named so far, each followed by ": "
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word.empty() || word[0] == '-' || choices(*at).empty()) return "";
        const auto found = at->get_subcommands([&](CLI::App *c) { return c->check_name(word); });
        CLI::App *sub = found.empty() ? nullptr : found.front();
        if (!sub) {
            std::string hint;
            for (const std::string &c : choices(*at))
                if (c.starts_with(word) || word.starts_with(c))
                    hint = fmt::format(" (did you mean '{}'?)", c);
            return fmt::format("locksim: {}unknown {} '{}'{}; one of: {}", path,
                               at == &app ? "command" : "subcommand", word, hint,
                               joined(choices(*at)));
        }
        at = sub;
        path += word + ": ";
    }
    if (at->get_require_subcommand_min() > 0)
        return fmt::format("locksim: {}a {} is required; one of: {}", path,
                           at == &app ? "command" : "subcommand", joined(choices(*at)));
    return "";
}

}  // namespace
}  // namespace locksim::cli

int main(int argc, char **argv) {
    using namespace locksim::cli;
    CLI::App app{"locksim: which locking design should the SELinux security server use?"};
    app.set_version_flag("--version", std::string(LOCKSIM_VERSION));
    app.require_subcommand(1);
    for (auto &add : command_adders())
        add(app);
    if (const std::string error = command_word_error(app, argc, argv); !error.empty()) {
        fmt::print(stderr, "{}\n", error);
        return kExitUser;
    }
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
