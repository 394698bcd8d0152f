// A timeline of a simulated run in the Chrome trace-event format (the JSON that chrome://tracing
// and Perfetto's UI open), recorded through the platform's TraceRecorder hooks.
//
// Tracks ("pid" / "tid" in the format):
//   process "CPUs": per CPU, track "CPU n" holds the tasks it runs (one slice per stretch,
//     switch cost included), inside them the preempt-off sections, and inside those the waits
//     of spinning locks; track "CPU n irqs-off" holds the IRQs-off sections (they may overlap
//     preempt-off sections without nesting in them, so they get their own track).
//   process "tasks": per task, the waits in which it slept (sleeping locks, synchronize_rcu),
//     and each probe wake-up from its due time to the moment it ran, with what delayed it.
//   process "RCU": grace periods; expedited ones on as many lanes as overlap.
// On every track the slices nest (a slice that starts inside another ends inside it too).
//
// Size is bounded: only what overlaps the window [from, to] is kept (clipped to it), and after
// max_events slices the rest are counted as dropped (reported in "otherData"). With
// worst_wakeup_margin, the window is the one around the worst probe wake-up, as cyclictest's
// break option stops ftrace at a wake-up over its threshold: from the margin before it was due
// to the margin after it ran. The recorder keeps the recent slices no later wake-up's window can
// miss and, at each new worst, starts over from them.
#pragma once

#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sim/trace.h"

namespace locksim::sim {

class SimPlatform;

struct TraceOptions {
    kernel::Time from = 0;
    kernel::Time to = std::numeric_limits<kernel::Time>::max();
    size_t max_events = 500'000;
    kernel::Time worst_wakeup_margin = 0;  // > 0: the window around the worst probe wake-up
};

class ChromeTraceRecorder final : public TraceRecorder {
  public:
    ChromeTraceRecorder(TraceOptions options, int cpus);

    void cpu_switch(int cpu, kernel::Time at, int task_id, std::string_view task) override;
    void atomic_section(int cpu, bool irqs, kernel::Time start, kernel::Time end,
                        std::string_view task, std::string_view label, std::string_view start_site,
                        std::string_view end_site) override;
    void lock_wait(int cpu, int task_id, std::string_view task, std::string_view lock,
                   bool exclusive, kernel::Time start, kernel::Time end) override;
    void grace_period(uint64_t id, bool expedited, kernel::Time start, kernel::Time end) override;
    void gp_wait(int task_id, std::string_view task, kernel::Time start, kernel::Time end) override;
    void probe_wakeup(int task_id, const kernel::WakeupRecord &w, kernel::Time horizon) override;
    void finish(kernel::Time at) override;

    size_t events() const { return slices_.size(); }
    size_t dropped() const { return dropped_; }

    // {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}; times in the file are
    // microseconds (the format's unit) with nanosecond decimals.
    nlohmann::json to_json() const;
    // Writes to_json() to `path`; UserError naming the path if it cannot be written.
    void write(const std::string &path) const;

  private:
    struct Slice {
        int pid = 0;
        int tid = 0;
        kernel::Time start = 0;
        kernel::Time end = 0;
        std::string name;
        const char *cat = "";
        std::vector<std::pair<const char *, std::string>> args;
    };
    struct Running {
        int task = -1;
        kernel::Time since = 0;
        std::string name;
    };

    // Keeps the slice if it overlaps the window (and, in the worst-wake-up mode, in the history).
    void add(Slice s);
    // Clips to the window and keeps the slice unless the cap is reached.
    void keep(Slice s);
    int task_track(int task_id, std::string_view task);

    TraceOptions opts_;
    std::vector<Running> running_;  // per CPU
    std::vector<Slice> slices_;
    size_t dropped_ = 0;
    std::vector<std::string> task_names_;  // by task id ("" = never seen)
    std::vector<kernel::Time> exp_lanes_;  // end of the last expedited grace period per lane
    bool normal_gps_ = false;
    // The worst-wake-up mode: the recent slices (in the order they ended), and the worst
    // wake-up so far (late < 0: none yet).
    std::deque<Slice> recent_;
    kernel::WakeupRecord worst_{.late = -1};
};

// Attaches a Chrome trace recorder to `sim` (call before sim.run()); keep the recorder until the
// trace is written. Throws UserError when the window is empty or the cap is zero.
std::unique_ptr<ChromeTraceRecorder> enable_chrome_trace(SimPlatform &sim,
                                                         const TraceOptions &options);
// Writes the recorded timeline as a Chrome trace-event JSON file.
void write_chrome_trace(const ChromeTraceRecorder &recorder, const std::string &path);

}  // namespace locksim::sim
