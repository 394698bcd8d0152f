// The timeline options of `locksim run`: --trace FILE, --trace-from, --trace-to,
// --trace-worst-wakeup and --trace-max-events, turned into sim::TraceOptions.
//
//   TraceArgs trace;
//   add_trace_options(cmd, trace);
//   ...
//   sim::SimPlatform platform(config);             // the run to trace
//   std::unique_ptr<sim::ChromeTraceRecorder> rec;
//   if (!trace.path.empty()) rec = sim::enable_chrome_trace(platform, trace_options(trace,
//   run_end)); kernel::RunResults r = platform.run(); if (rec) sim::write_chrome_trace(*rec,
//   trace.path);
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <string>

#include "analysis/pick.h"
#include "sim/chrome_trace.h"
#include "util/error.h"
#include "util/params.h"

namespace locksim::cli {

struct TraceArgs {
    std::string path;  // empty: no trace
    std::string from, to;
    std::string worst_wakeup;  // margin around the worst probe wake-up
    size_t max_events = sim::TraceOptions{}.max_events;
};

inline void add_trace_options(CLI::App *cmd, TraceArgs &a) {
    cmd->add_option(
        "--trace", a.path,
        "Write a Chrome trace-event timeline (Perfetto, chrome://tracing) to this file");
    cmd->add_option("--trace-from", a.from,
                    "Start of the traced window in simulated time, e.g. 2ms");
    cmd->add_option("--trace-to", a.to, "End of the traced window, e.g. 3ms");
    cmd->add_option("--trace-worst-wakeup", a.worst_wakeup,
                    "Keep only the window around the worst probe wake-up, from this margin "
                    "before it was due to this margin after it ran, e.g. 1ms (as cyclictest's "
                    "break option stops ftrace)");
    cmd->add_option("--trace-max-events", a.max_events, "Most slices kept in the trace")
        ->capture_default_str();
}

// UserError naming the option on a bad time, or a window that holds nothing of a run of
// `run_end_ns` simulated nanoseconds.
inline sim::TraceOptions trace_options(const TraceArgs &a, int64_t run_end_ns) {
    sim::TraceOptions o;
    if (!a.from.empty()) o.from = analysis::parse_limit_ns("--trace-from", a.from);
    if (!a.to.empty()) o.to = analysis::parse_limit_ns("--trace-to", a.to);
    if (!a.from.empty() && o.from >= run_end_ns)
        throw UserError(fmt::format("--trace-from {}: the run ends at {}", a.from,
                                    format_duration_ns(run_end_ns)));
    if (!a.from.empty() && !a.to.empty() && o.to <= o.from)
        throw UserError(fmt::format("--trace-to {}: not after --trace-from {}", a.to, a.from));
    if (!a.worst_wakeup.empty()) {
        if (!a.from.empty() || !a.to.empty())
            throw UserError(
                "--trace-worst-wakeup chooses the window itself; drop --trace-from "
                "and --trace-to");
        o.worst_wakeup_margin = analysis::parse_limit_ns("--trace-worst-wakeup", a.worst_wakeup);
        if (o.worst_wakeup_margin <= 0)
            throw UserError(fmt::format("--trace-worst-wakeup {}: the margin must be positive",
                                        a.worst_wakeup));
    }
    o.max_events = a.max_events;
    return o;
}

}  // namespace locksim::cli
