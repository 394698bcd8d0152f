// The periodic sources of a scenario (its periodic workloads' timers, its interrupt sources):
// their periods and jitters, and whether one keeps its phase to the probe over a run. Each run
// draws every source's phase from its seed (workloads/workload.h's PeriodicTimer, the
// simulator's interrupt sources); when two periods are commensurate (or nearly: the phase of
// one against the other moves little over the run) a run sees them at few relative phases, and
// only other seeds explore the rest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace locksim {

struct PeriodicSource {
    std::string name;  // the workload's label, or "irq <kind>"
    int64_t period_ns = 0;
    int64_t jitter_ns = 0;
    bool probe = false;
};
std::vector<PeriodicSource> periodic_sources(const Scenario &s);

// How many of `bins` relative phases (bins of the shorter period, each at least the two
// jitters wide) the events of two sources of periods a and b meet at over `span`, and how many
// they could meet at (the events of the longer period, at most `bins`).
struct PhaseCover {
    int64_t visited = 0, possible = 0, bins = 0;
};
PhaseCover phase_cover(const PeriodicSource &x, const PeriodicSource &y, int64_t span_ns);

// One line naming the sources that keep their phase to a probe over the measured run (they
// meet at no more than half the relative phases they could), empty when none does.
std::string phase_lock_note(const Scenario &s);
// The distinct notes of the points of a sweep (of the scenario alone without one).
std::vector<std::string> phase_lock_notes(const std::vector<Scenario> &points);

}  // namespace locksim
