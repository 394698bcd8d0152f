// Re-pricing: a run's worst section or commit under other prices, from the work it recorded,
// without running it again (`locksim robust`'s first estimate of a cost world).
//
// A simulated run keeps its longest preempt-off sections, irqs-off sections and boolean commits
// with their time split by price family (RunSummary::priced): an item of length L with time v_k
// charged in family k (work, memory, primitive, grace_period) and L - sum v_k that followed no
// price (waiting for a lock or a grace period, spinning, an interrupt's handler) lasts
//     sum_k f_k v_k + (L - sum_k v_k)
// when family k's prices are multiplied by f_k. The worst item under f is at least the largest
// of the kept items' lengths so priced (`lo`), and at most the larger of `lo` and the shortest
// kept length times max(1, max f_k) (`hi`): every item not kept is no longer than that, and no
// factor stretches it more. lo == hi when every item was kept or the longest priced one is out
// of reach of those not kept.
//
// The estimate holds the run's interleaving fixed: the same items, in the same order, each only
// longer or shorter. What a longer section changes elsewhere (another task spinning on it, a
// grace period that misses a jiffy, a preemption that now falls inside it, an RCU callback batch
// cut shorter because its CPU is busier) it does not see; bench/README.md measures how far that
// takes it from a full run. The margin a figure is judged with covers it: kRepriceError, or
// more where the figure moves more between the seeds at the same prices (repricing_margin).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/pick.h"
#include "analysis/results_file.h"

namespace locksim::analysis {

// The price families' factors, in kernel::kPricedFamilies order.
using Factors = std::array<double, kernel::kPricedFamilies.size()>;

struct Estimate {
    double lo = 0, hi = 0;
};

// The worst value of `metric` (a path: preempt_off.max_ns, irqs_off.max_ns, toggle.max_ns) in
// `run` under `factors`; nullopt for another metric or a run that recorded no priced items (not
// simulated under the counted cost model).
std::optional<Estimate> reprice(const RunSummary &run, std::string_view metric, const Factors &f);

// Whether re-pricing can estimate a limit's figure: a maximum it records, not a tail quantile.
bool repriceable(const std::string &metric, const Limit &limit);

// How far a full run may lie from the estimate, as a share of the estimate, at least: the 90th
// percentile of the error over the main job's worlds (bench/README.md), rounded up.
inline constexpr double kRepriceError = 0.15;

// The margin for a figure whose nominal runs (one per seed) gave `figures`: kRepriceError, or
// the figure's spread between the seeds (largest / smallest - 1) where that is more: what the
// interleaving alone does to it at the same prices, which re-pricing cannot follow. Infinite
// when some seed has none (0) and another has one.
double repricing_margin(const std::vector<double> &figures);

// Where an estimate puts a figure against a limit: wholly under it, wholly over it, or near it
// (within `margin` of it): then only a full run says.
enum class Side { Under, Over, Near };
Side estimate_side(const Estimate &e, double limit, double margin = kRepriceError);

// `base` as re-pricing gives it under `f`: the repriceable maxima replaced by their estimates'
// `lo` (the other figures stay the base run's: judge only repriceable limits from it), and the
// point `point`. nullopt when `base` recorded no priced items.
std::optional<RunSummary> repriced(const RunSummary &base, const Factors &f,
                                   std::vector<std::pair<std::string, std::string>> point);

}  // namespace locksim::analysis
