// Where the command line writes: the checks that turn a wrong path into a user's mistake with
// the option and the path named, before any run starts.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <string_view>
#include <system_error>

#include "util/error.h"

namespace locksim::cli {

// An output directory (-o): created when missing; refused when it is a file.
inline void make_output_dir(const std::filesystem::path &dir, std::string_view option) {
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
        throw UserError(fmt::format("{} {}: is a file, not a directory", option, dir.string()));
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw UserError(fmt::format("{} {}: cannot create the directory: {}", option, dir.string(),
                                    ec.message()));
}

// An output file (--trace, merge OUT): its directory must exist; it is not created.
inline void check_output_file(const std::filesystem::path &file, std::string_view option) {
    std::error_code ec;
    std::filesystem::path parent = file.parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
        throw UserError(fmt::format("{} {}: the directory {} does not exist", option, file.string(),
                                    parent.string()));
    if (std::filesystem::is_directory(file, ec))
        throw UserError(fmt::format("{} {}: is a directory, not a file", option, file.string()));
}

}  // namespace locksim::cli
