// Each cli/*.cpp adds its subcommands to the application through a CommandRegistrar, so that a
// new command is one new file. Commands report a user's mistake by throwing locksim::UserError.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace locksim::cli {

using CommandAdder = std::function<void(CLI::App &)>;

std::vector<CommandAdder> &command_adders();

struct CommandRegistrar {
    explicit CommandRegistrar(CommandAdder adder) { command_adders().push_back(std::move(adder)); }
};

// A subcommand shared by several files (e.g. `list`): found by name, or created with `help`
// and required to have a subcommand of its own.
CLI::App *shared_subcommand(CLI::App &app, const std::string &name, const std::string &help);

inline constexpr const char *kListHelp =
    "List what a scenario can name: strategies, workloads, core variants, kernels, profiles";

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUser = 2;
inline constexpr int kExitNoneMeets = 3;   // pick: no design meets the limits
inline constexpr int kExitIncomplete = 4;  // pick: the results lack runs they were meant to hold

}  // namespace locksim::cli
