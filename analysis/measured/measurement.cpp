#include "analysis/measured/measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "util/error.h"
#include "util/json_text.h"
#include "util/read_file.h"

namespace locksim::analysis::measured {

namespace detail {

void fail(const std::string &file, size_t line, size_t column, const std::string &message) {
    if (column) throw UserError(fmt::format("{}:{}:{}: {}", file, line, column, message));
    throw UserError(fmt::format("{}:{}: {}", file, line, message));
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
        nlohmann::json j = parse_json_text(text, file);
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
