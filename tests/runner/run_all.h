// The runs of a scenario as `locksim compare` makes them (each sweep point, seed and strategy),
// without the wall-clock speed so that equal runs give equal files.
#pragma once

#include <vector>

#include "analysis/results_file.h"
#include "runner/runner.h"

namespace locksim::testing {

inline RunOptions deterministic() {
    RunOptions o;
    o.wall_clock = false;
    return o;
}

inline analysis::ResultsFile run_all(const Scenario &s, std::vector<RunJob> jobs = {}) {
    std::vector<Scenario> points = expand_sweep(s);
    if (jobs.empty()) jobs = plan_runs(points);
    return run_jobs(s, jobs, deterministic());
}

}  // namespace locksim::testing
