// `locksim pick`: ranks the designs in a results file against a user's limits and says why.
//
// Each design (run label) is judged by its worst run (over seeds and sweep points). A design
// with self-check violations is never recommended. Designs within every limit are ranked by
// their headroom: the largest of value/limit over the limits given (smaller is better), then by
// throughput. Designs over a limit are listed with each limit they break and by how much.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/results_file.h"

namespace locksim::analysis {

struct Limits {
    std::optional<int64_t> max_preempt_off_ns;
    std::optional<int64_t> max_irqs_off_ns;
    std::optional<int64_t> max_probe_wakeup_ns;
    std::optional<int64_t> max_toggle_ns;
    std::optional<int64_t> max_reader_p99_ns;
    std::optional<int64_t> max_memory_bytes;
};

struct Verdict {
    std::string label;
    bool meets = false;
    double worst_ratio = 0;        // largest value/limit over the given limits
    double ops_per_sec = 0;        // the lowest over its runs
    std::vector<std::string> why;  // one line per limit: "preempt-off 1.21ms > 100us (12.1x)"
    uint64_t violations = 0;
};

struct Pick {
    std::vector<Verdict> ranked;  // meeting designs first, best first; then the others
    bool any_meets() const { return !ranked.empty() && ranked.front().meets; }
};

Pick pick(const std::vector<RunSummary> &runs, const Limits &limits);
std::string format_pick(const Pick &p, const Limits &limits);
// "100us" / "10ms" -> ns, "512M" / "2G" / "4096" -> bytes; UserError naming the option otherwise.
int64_t parse_limit_ns(const std::string &option, const std::string &text);
int64_t parse_limit_bytes(const std::string &option, const std::string &text);

}  // namespace locksim::analysis
