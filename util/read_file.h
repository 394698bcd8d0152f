// Reading a whole input file, with the one-line reasons a user can act on: the path is a
// directory, does not exist, cannot be read. Every loader of a user's file goes through here.
#pragma once

#include <string>
#include <string_view>

namespace locksim {

// The contents of `path`; throws UserError("<path>: cannot read the <what>: <reason>").
std::string read_whole_file(const std::string &path, std::string_view what);

// Writes `text` to `path` (replacing it); throws UserError("<path>: cannot write").
void write_whole_file(const std::string &path, std::string_view text);

// For a setting that takes a name or a file (a CPU profile): it names a file when it has a '/'
// or ends with `ext`.
inline bool names_a_file(std::string_view value, std::string_view ext) {
    return value.find('/') != std::string_view::npos || value.ends_with(ext);
}

}  // namespace locksim
