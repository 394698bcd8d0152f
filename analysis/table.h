// The comparison table: one fixed-width row per run, fit for a mailing-list post.
#pragma once

#include <string>
#include <vector>

#include "analysis/results_file.h"

namespace locksim::analysis {

std::string format_table(const std::vector<RunSummary> &runs);
// Below the table: each design's worst probe wake-up (over its seeds) and what delayed it
// (probe_wakeup.worst_cause); empty when no run had a probe.
std::string format_worst_causes(const std::vector<RunSummary> &runs);
// The same columns as CSV (raw integers in ns and bytes), with a header line.
std::string format_csv(const std::vector<RunSummary> &runs);
// "1.21ms", "850ns", "-" for zero counts.
std::string human_ns(int64_t ns);
// A duration as a scenario file writes it, in the largest unit that writes it exactly: "2s",
// "37500us", "850ns".
std::string exact_duration(int64_t ns);
std::string human_bytes(int64_t bytes);

}  // namespace locksim::analysis
