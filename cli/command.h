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

// Exit statuses shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUser = 2;
inline constexpr int kExitNoneMeets = 3;  // pick: no design meets the limits

}  // namespace locksim::cli
