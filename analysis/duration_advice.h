// Is a run long enough for its question? `scenario check` (from the scenario's workloads,
// before running) and `run`/`compare`/`sweep` (from what the runs counted) warn when a run is
// too short, and say how long to run:
//  - too few boolean commits: a worst commit out of fewer than kMinCommits (over a design's
//    seeds) is no worst case;
//  - too few probe wake-ups: fewer than kMinWakeups in a run leave too few values above the tail
//    estimate's threshold (analysis/tail.h) for per-wake-up probabilities of 1e-4 and below
//    (the estimate is fitted to each run on its own, so seeds do not add up here); only where
//    the runs record no stretches that held their CPUs, from which the estimate comes else;
//  - a worst section (preempt-off, IRQs-off, or a commit) longer than a tenth of the measured
//    time, or one still open when the run ended: the run sees too few of them to know how
//    long they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace locksim::analysis {

inline constexpr double kMinCommits = 30;
inline constexpr double kMinWakeups = 10000;

struct RunCounts {
    int64_t duration_ns = 0;
    int64_t warmup_ns = 0;
    size_t runs = 1;                      // seeds per design: a verdict is the worst over them
    std::optional<double> commits;        // per run, when the scenario makes commits
    std::optional<double> probe_wakeups;  // per run, when it has a probe
    // The runs record the stretches that held their CPUs (the simulator under preemption full
    // or rt): the probe's tail estimate comes from them (analysis/held_tail.h), whatever the
    // number of wake-ups, so too few wake-ups draw no warning.
    bool held_stretches = false;
    int64_t worst_section_ns = 0;    // longest preempt-off / IRQs-off section or commit
    bool worst_open_at_end = false;  // still open when the run ended
};

// One line per problem, each saying how long to run ("duration = \"2s\""); empty when none.
std::vector<std::string> duration_advice(const RunCounts &c);

}  // namespace locksim::analysis
