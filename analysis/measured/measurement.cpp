#include "analysis/measured/measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "util/error.h"
#include "util/read_file.h"

namespace locksim::analysis::measured {

namespace detail {

void fail(const std::string &file, size_t line, size_t column, const std::string &message) {
    if (column) throw UserError(fmt::format("{}:{}:{}: {}", file, line, column, message));
    throw UserError(fmt::format("{}:{}: {}", file, line, message));
}

namespace {

// Fails at byte `at` (0-based) of `text`, as file:line:column.
[[noreturn]] void fail_json_at(std::string_view text, size_t at, const std::string &file,
                               const std::string &what) {
    at = std::min(at, text.size());
    const std::string_view before = text.substr(0, at);
    const size_t line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
    const size_t nl = before.rfind('\n');
    const size_t column = at - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
    fail(file, line, column, "not valid JSON: " + what);
}

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string &file) {
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

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        if (line.ends_with('\r')) line.remove_suffix(1);
        lines.push_back(line);
        pos = end + 1;
    }
    return lines;
}

void record(kernel::Histogram &h, int64_t value_ns, uint64_t count, const std::string &where) {
    constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
    const __int128 sum = static_cast<__int128>(h.sum()) +
                         static_cast<__int128>(value_ns) * static_cast<__int128>(count);
    if (value_ns < 0 || value_ns > kernel::Histogram::kMaxValue || sum > kMax ||
        count > std::numeric_limits<uint64_t>::max() - h.count())
        throw UserError(where + ": a latency or a count too large to hold (2^63 ns in all)");
    h.record(value_ns, count);
}

}  // namespace detail

namespace {

std::string_view first_word(std::string_view text) {
    size_t b = text.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    return text.substr(b, 1);
}

bool has_line_starting(std::string_view text, std::string_view prefix) {
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        size_t b = line.find_first_not_of(" \t");
        if (b != std::string_view::npos && line.substr(b).starts_with(prefix)) return true;
        if (end == std::string_view::npos) break;
        pos = end + 1;
    }
    return false;
}

}  // namespace

Measurement parse_measured(std::string_view text, const std::string &file) {
    std::string_view first = first_word(text);
    if (first == "{" || first == "[") {
        nlohmann::json j = detail::parse_json(text, file);
        if (j.is_array() || (j.is_object() && j.contains("traceEvents")))
            return detail::chrome_trace_from_json(j, file);
        if (j.is_object() && j.contains("thread")) return detail::cyclictest_from_json(j, file);
        detail::fail(file, 1, 0,
                     "JSON with neither \"traceEvents\" (a Chrome or Perfetto trace) nor "
                     "\"thread\" (cyclictest --json)");
    }
    if (has_line_starting(text, "# Histogram")) return parse_cyclictest_histogram(text, file);
    if (has_line_starting(text, "# tracer:") || text.find("latency trace v") != std::string::npos)
        return parse_ftrace_latency(text, file);
    detail::fail(file, 1, 0,
                 "not a measurement locksim reads: a cyclictest histogram ('# Histogram'), "
                 "cyclictest --json, an ftrace latency trace ('# tracer:') or a Chrome/Perfetto "
                 "JSON trace");
}

Measurement read_measured(const std::string &path) {
    return parse_measured(read_whole_file(path, "measurement"), path);
}

}  // namespace locksim::analysis::measured
