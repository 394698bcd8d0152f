// Seeds as a dimension: the runs of one design (and sweep point) under several seeds, their
// worst over seeds, and the spread between seeds.
//
// A design's worst case is the worst over its seeds; the spread says how much that worst case
// moves with the seed: the minimum and maximum of the per-seed worst cases, and for a
// percentile (p99) the mean over seeds with a confidence interval from Student's t
// distribution (the seeds are independent runs, each giving one p99).
#pragma once

#include <string>
#include <vector>

#include "analysis/results_file.h"

namespace locksim::analysis {

struct Spread {
    size_t n = 0;
    double min = 0, max = 0, mean = 0;
    // Confidence interval of the mean (only when n >= 2; else both equal the mean).
    double ci_low = 0, ci_high = 0;
};

// The spread of per-seed values, with a `confidence` (e.g. 0.95) interval of their mean.
Spread spread_of(const std::vector<double> &values, double confidence = 0.95);

// The runs of one design at one sweep point, one per seed, in file order.
struct DesignRuns {
    std::string label;
    std::string point;  // RunSummary::point_text()
    std::vector<const RunSummary *> runs;
};

// Groups runs by (label, point), in the order they first appear.
std::vector<DesignRuns> group_by_design(const std::vector<RunSummary> &runs);

// One summary holding, for every figure, the worst over `runs` (largest latency, memory and
// violation count, lowest throughput); a worst that is censored in the run it came from stays
// censored. `seed` is that of the first run.
RunSummary worst_over(const std::vector<const RunSummary *> &runs);

// "88.0us-244.0us" (min-max of per-seed values, as durations); one value when they agree.
std::string format_range_ns(const Spread &s);
// "1.2us [1.1us, 1.3us]" (mean over seeds and its confidence interval).
std::string format_mean_ci_ns(const Spread &s);

}  // namespace locksim::analysis
