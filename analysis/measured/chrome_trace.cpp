// The Chrome trace event format (the JSON that chrome://tracing, Perfetto's UI and
// `traceconv json` read and write): {"traceEvents": [...]} or a bare array of events. A slice is
// a complete event (ph "X", with ts and dur in microseconds) or a "B" event closed by the next
// "E" event of the same pid and tid. Slices are gathered by name: each name's durations make a
// histogram. A "B" never closed is still open at the trace's end: its elapsed part (to the last
// time stamp of the trace) is kept apart, as a lower bound; an "E" without its "B" (the trace
// began inside the slice) has no length and is counted. Other phases (counters, instants,
// metadata, flows) carry no slice and are counted.
#include <fmt/format.h>

#include <cmath>

#include "analysis/measured/measurement.h"
#include "util/error.h"
#include "util/json_text.h"

namespace locksim::analysis::measured {

using nlohmann::json;

namespace detail {

Measurement chrome_trace_from_json(const json &j, const std::string &file) {
    Measurement m;
    m.file = file;
    m.format = "chrome-trace";
    const json *events = &j;
    if (j.is_object()) {
        if (!j.contains("traceEvents")) fail(file, 1, 0, "no \"traceEvents\" array");
        events = &j.at("traceEvents");
    }
    if (!events->is_array()) fail(file, 1, 0, "\"traceEvents\" is not an array");
    auto bad = [&](size_t i, const std::string &what) {
        throw UserError(fmt::format("{}: traceEvents[{}]: {}", file, i, what));
    };
    // Microseconds (possibly fractional) to integer nanoseconds.
    auto ns = [&](const json &e, const char *key, size_t i) {
        if (!e.contains(key)) bad(i, fmt::format("no \"{}\"", key));
        const json &v = e.at(key);
        if (!v.is_number()) bad(i, fmt::format("\"{}\" is not a number", key));
        const double us = v.get<double>();
        if (!std::isfinite(us) || us < 0 || us > 1e13)
            bad(i, fmt::format("\"{}\" {} is out of range", key, us));
        return static_cast<int64_t>(std::llround(us * 1000.0));
    };
    struct Open {
        std::string name;
        int64_t begin;
    };
    std::map<std::pair<std::string, std::string>, std::vector<Open>> stacks;  // (pid, tid)
    uint64_t unmatched_end = 0, other = 0, slices = 0;
    int64_t last = 0;
    for (size_t i = 0; i < events->size(); ++i) {
        const json &e = (*events)[i];
        if (!e.is_object()) bad(i, "not an object");
        if (!e.contains("ph") || !e.at("ph").is_string()) bad(i, "no \"ph\" string");
        const std::string ph = e.at("ph").get<std::string>();
        if (e.contains("ts")) last = std::max(last, ns(e, "ts", i));  // any event: the trace's end
        if (ph != "X" && ph != "B" && ph != "E") {
            ++other;
            continue;
        }
        const int64_t ts = ns(e, "ts", i);
        auto id = [&](const char *key) { return e.contains(key) ? e.at(key).dump() : ""; };
        auto name = [&]() -> std::string {
            if (!e.contains("name") || !e.at("name").is_string()) bad(i, "no \"name\" string");
            return e.at("name").get<std::string>();
        };
        if (ph == "X") {
            const int64_t dur = ns(e, "dur", i);
            record(m.slices[name()].duration, dur, 1, fmt::format("{}: traceEvents[{}]", file, i));
            last = std::max(last, ts + dur);
            ++slices;
        } else if (ph == "B") {
            stacks[{id("pid"), id("tid")}].push_back(Open{name(), ts});
        } else {
            auto &stack = stacks[{id("pid"), id("tid")}];
            if (stack.empty()) {
                ++unmatched_end;
                continue;
            }
            const Open o = stack.back();
            stack.pop_back();
            if (ts < o.begin) bad(i, fmt::format("\"E\" at {} µs before its \"B\"", ts / 1000.0));
            record(m.slices[o.name].duration, ts - o.begin, 1,
                   fmt::format("{}: traceEvents[{}]", file, i));
            ++slices;
        }
    }
    uint64_t open = 0;
    for (const auto &[thread, stack] : stacks)
        for (const Open &o : stack) {
            m.slices[o.name].open_ns.push_back(last - o.begin);
            ++open;
        }
    m.facts["slices"] = slices;
    m.facts["open_at_end"] = open;
    m.facts["end_without_begin"] = unmatched_end;
    m.facts["other_events"] = other;
    return m;
}

}  // namespace detail

Measurement parse_chrome_trace(std::string_view text, const std::string &file) {
    return detail::chrome_trace_from_json(parse_json_text(text, file), file);
}

}  // namespace locksim::analysis::measured
