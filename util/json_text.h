// Parsing a user's JSON file (results, measured data): a syntax error, or a number too large
// for a double, is a UserError naming the file, line and column where the parser stopped.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace locksim {

// Throws UserError("<file>:<line>:<column>: not valid JSON: <reason>").
nlohmann::json parse_json_text(std::string_view text, const std::string &file);

}  // namespace locksim
