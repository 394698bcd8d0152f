// Latency data measured on a real kernel, read from the files the usual tools write:
//   cyclictest's histogram (-h N / --histfile, rt-tests 2.x) and its --json output;
//   ftrace's latency-format trace of the preemptoff, preemptirqsoff, irqsoff, wakeup, wakeup_rt
//   and wakeup_dl tracers (Documentation/trace/ftrace.rst, "latency trace v1.1.5");
//   a Chrome / Perfetto JSON trace (traceEvents with complete "X" slices or "B"/"E" pairs).
// Each file becomes a Measurement: histograms in nanoseconds under the names the simulated
// results use (preempt-off and IRQs-off section lengths, probe wake-up latency per thread,
// slice durations by name), and the facts the file states beside them.
//
// The parsers read text, never an engine; a malformed file is a UserError naming
// "file:line:column" (JSON: the line and column of the byte where parsing stopped, or the
// event's index), never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "record/histogram.h"

namespace locksim::analysis::measured {

// One measured section or wake-up with what the trace says about it.
struct TracedInterval {
    int64_t length_ns = 0;
    int cpu = -1;
    std::string task;         // for a wake-up: the task woken; else the task in the section
    std::string label;        // what to call it in a figure
    std::string start_site;   // "started at" (ftrace), or the first traced function
    std::string end_site;     // "ended at", or the last traced function
    std::string running;      // wake-up: the task on the CPU when the wake-up came
    std::string longest_gap;  // the traced function followed by the longest delay, "f (89 us)"
};

struct Slices {
    kernel::Histogram duration;    // completed slices
    std::vector<int64_t> open_ns;  // begun and never ended in the trace: elapsed part
};

struct Measurement {
    std::string file;
    std::string format;  // cyclictest-histogram, cyclictest-json, ftrace, chrome-trace
    kernel::Histogram preempt_off, irqs_off;
    std::vector<TracedInterval> preempt_off_traced, irqs_off_traced, wakeup_traced;
    std::map<std::string, kernel::Histogram> wakeup;  // per measuring thread / woken task
    std::map<std::string, Slices> slices;             // Chrome trace slices by name
    nlohmann::json facts = nlohmann::json::object();  // what else the file says
};

Measurement parse_cyclictest_histogram(std::string_view text, const std::string &file);
Measurement parse_cyclictest_json(std::string_view text, const std::string &file);
Measurement parse_ftrace_latency(std::string_view text, const std::string &file);
Measurement parse_chrome_trace(std::string_view text, const std::string &file);

// Picks the parser by content: JSON with "traceEvents" (or a top-level array) is a Chrome
// trace, JSON with "thread" is cyclictest's; text with "# Histogram" is cyclictest's histogram,
// text with "latency trace" or "# tracer:" an ftrace latency trace. Anything else: UserError.
Measurement parse_measured(std::string_view text, const std::string &file);
// Reads `path` and parses it.
Measurement read_measured(const std::string &path);

// Helpers shared by the parsers.
namespace detail {
// "file:line:column: message" (column omitted when 0).
[[noreturn]] void fail(const std::string &file, size_t line, size_t column,
                       const std::string &message);
// The lines of `text` without their '\n' (and a trailing '\r'); line k is at index k-1.
std::vector<std::string_view> split_lines(std::string_view text);
// Records `count` values of `value_ns`; a total the histogram cannot hold (its sum is an int64
// of nanoseconds) is an error naming `where` ("file:line", "file: traceEvents[3]").
void record(kernel::Histogram &h, int64_t value_ns, uint64_t count, const std::string &where);
// The parsers behind parse_chrome_trace and parse_cyclictest_json, for JSON already parsed.
Measurement chrome_trace_from_json(const nlohmann::json &j, const std::string &file);
Measurement cyclictest_from_json(const nlohmann::json &j, const std::string &file);
}  // namespace detail

}  // namespace locksim::analysis::measured
