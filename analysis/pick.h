// `locksim pick`: ranks the designs in a results file against a user's limits and says why.
//
// Each design (run label) is judged at each sweep point by its worst run over seeds there, and
// overall by its worst point; the overall verdict names the point that decided it (the one with
// the largest value/limit, or the lowest throughput when no limit is given). A design with
// self-check violations is broken whatever its figures, and never recommended. Ranking rule:
// designs within every limit first, then designs without violations before those with, then by
// headroom (the largest of value/limit over the limits given: smaller is better), then by
// throughput (higher is better); the figure that decided each place is kept. With no limit
// given, every design without violations "meets" them, and the ranking is by throughput.
//
// What was still open when a run ended counts: a worst case that is such a lower bound
// ("at least") meets no limit it does not already break (its end is unknown), and a commit that
// never completed (`toggle.incomplete`) fails the commit limit. With several seeds, each limit
// says how many seeds meet it, and a design whose verdict differs between seeds is marked
// unstable. A limit may name a probability (`200us@1e-9`): it then applies to the tail estimate
// (analysis/tail.h) of the value exceeded with that probability per observation, judged by the
// upper end of its confidence interval; a design whose fit is poor cannot meet it.
//
// Results that lack runs they were meant to hold (Plan, analysis/results_file.h) are judged on
// what is there: a design of the plan with no run is listed as not run, never ranked, and a
// design not run at some points says which.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "analysis/results_file.h"
#include "analysis/tail.h"
#include "record/op_names.h"

namespace locksim::analysis {

// A limit on one metric (analysis/metrics.h, those with a `pick` option): its value (ns or
// bytes, as the metric's unit) and, for a tail limit, the probability.
struct Limit {
    int64_t value = 0;
    std::optional<double> probability;
};
// The limits given, by metric path ("preempt_off.max_ns").
using Limits = std::map<std::string, Limit>;

// The tail estimate of run `index` (position in the runs given to pick) for a metric at a
// probability; pick asks for it only when a limit names a probability.
using TailSource = std::function<TailQuantile(size_t index, TailMetric, double probability)>;

// A metric's observations in a results-file run (its histogram and what was open at the end).
// `toggle_op` names the commit operation.
TailSample run_tail_sample(const nlohmann::json &run, TailMetric m,
                           const std::string &toggle_op = kernel::op::kSetBools);
// Tail estimates from a results file's runs.
TailSource tail_source(const ResultsFile &file);

// One limit judged for one design (a cell of the report's verdict table).
struct LimitCheck {
    std::string limit;  // "preempt-off", "probe wake-up", ...
    std::string point;  // in a sweep: the point where its worst is
    bool met = false;
    bool measured = true;      // false: the design has no sample of this metric (a measured
                               // series from files that do not measure it); `met` then says
                               // nothing
    std::string text;          // pick's line for it, e.g. "preempt-off 1.21ms > 100us (12.1x ...)"
    size_t seeds_meeting = 0;  // with several seeds: how many meet it
    double ratio = 0;          // value/limit
    size_t seeds = 1;          // the seeds judged (at `point`, in a sweep)
};

// A design's verdict, overall or at one sweep point.
struct Verdict {
    std::string label;
    bool meets = false;
    double worst_ratio = 0;        // largest value/limit over the given limits
    std::string worst_limit;       // the limit that ratio is of
    double ops_per_sec = 0;        // the lowest over its runs
    std::vector<std::string> why;  // one line per limit: "preempt-off 1.21ms > 100us (12.1x)"
    uint64_t violations = 0;
    size_t runs = 0;                 // 0: not run (at this point)
    size_t seeds = 1;                // distinct seeds among its runs
    size_t points = 1;               // sweep points among its runs
    size_t seeds_meeting = 0;        // seeds whose runs all meet every limit
    bool unstable = false;           // some seeds meet every limit and others do not
    std::vector<LimitCheck> checks;  // one per limit given, in the order of Limits
    // Overall: the point that decided the verdict (in a sweep), and the verdict at each point
    // of Pick::points, in that order (runs == 0 where it has none).
    std::string point;
    std::vector<Verdict> at_points;
};

struct Pick {
    std::vector<Verdict> ranked;  // meeting designs first, best first; then the others
    // above[i]: the figure that put ranked[i] above ranked[i + 1].
    std::vector<std::string> above;
    bool limits_given = false;
    std::vector<std::string> points;  // the sweep points judged (one "" when not a sweep)
    size_t runs = 0, seeds = 0;       // the runs judged and their distinct seeds
    // Results lacking runs they were meant to hold: why, how many were meant, and the
    // designs of the plan with no run at all.
    bool incomplete = false;
    std::string incomplete_why;
    size_t planned_runs = 0;
    std::vector<std::string> not_run;
    bool any_meets() const { return !ranked.empty() && ranked.front().meets; }
};

// Which runs to judge and what the file was meant to hold.
struct PickScope {
    // --point KEY=VALUE: only the runs whose point has these values.
    std::vector<std::pair<std::string, std::string>> point;
    Plan plan;  // planned_runs() of the results file; default: complete, nothing known
};

// `runs` are all the file's runs (the tail source's indices); `scope` chooses among them.
// UserError on a --point that names no axis or value of the runs.
Pick pick(const std::vector<RunSummary> &runs, const Limits &limits, const TailSource &tails = {},
          const PickScope &scope = {});
std::string format_pick(const Pick &p, const Limits &limits);
// The line that names the pick ("pick: rcu-cond-dup", "pick: none of the designs ..."), as pick
// and report print it.
std::string pick_line(const Pick &p);
// "not run"; "broken (self-check violations)"; with no limit given, "no limit given"; else
// "meets the limits", "over a limit" or, for a measured series that meets every limit it
// measures, "not all measured".
const char *verdict_text(const Verdict &v, bool limits_given = true);
// "--max-preempt-off 100.0us --max-toggle 10.00ms", or "none given".
std::string limits_text(const Limits &l);
// "KEY=VALUE" of --point; UserError otherwise.
std::pair<std::string, std::string> parse_point(const std::string &text);
// "100us" / "10ms" -> ns, "512M" / "2G" / "4096" -> bytes; UserError naming the option otherwise.
int64_t parse_limit_ns(const std::string &option, const std::string &text);
// "200us@1e-9": the duration and the probability (nullopt without '@'); UserError otherwise.
std::pair<int64_t, std::optional<double>> parse_tail_limit(const std::string &option,
                                                           const std::string &text);
int64_t parse_limit_bytes(const std::string &option, const std::string &text);

}  // namespace locksim::analysis
