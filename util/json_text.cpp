#include "util/json_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/error.h"

namespace locksim {

namespace {

// Fails at byte `at` (0-based) of `text`, as file:line:column.
[[noreturn]] void fail_json_at(std::string_view text, size_t at, const std::string &file,
                               const std::string &what) {
    at = std::min(at, text.size());
    const std::string_view before = text.substr(0, at);
    const size_t line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
    const size_t nl = before.rfind('\n');
    const size_t column = at - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
    throw UserError(fmt::format("{}:{}:{}: not valid JSON: {}", file, line, column, what));
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string &file) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error &e) {
        // e.byte is 1-based: the byte where the parser stopped.
        std::string what = e.what();
        // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2:
        // syntax error while parsing value - invalid literal; last read: 'x'": keep the reason.
        if (size_t p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
        fail_json_at(text, e.byte > 0 ? e.byte - 1 : 0, file, what);
    } catch (const nlohmann::json::exception &e) {
        // A number too large for a double ("[json.exception.out_of_range.406] number overflow
        // parsing '1E999'") names its text but no byte: the place is where that text stands.
        std::string what = e.what();
        if (size_t p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
        size_t at = 0;
        if (size_t q = what.find('\''); q != std::string::npos)
            if (size_t r = what.find('\'', q + 1); r != std::string::npos)
                at = std::min(text.find(what.substr(q + 1, r - q - 1)), text.size());
        fail_json_at(text, at, file, what);
    }
}

}  // namespace locksim
