// `locksim robust`: the verdict across the cost model's uncertainty.
//
// A profile states, per price family, a factor F such that the true prices are believed to lie
// within [price / F, price x F] (sim/profile.h, [uncertainty]). A cost world is one factor per
// family; `robust` draws N worlds by Latin hypercube sampling in the logarithm of the factor
// (each family's range cut into N equal strata, one world in each, the strata of the families
// paired by independent permutations), runs every design in each with the scenario's seeds (the
// same seeds in every world: common random numbers), and judges each (world, design) as pick
// judges a sweep point. This file holds the sampling, the judgement and its report; running the
// worlds is the caller's.
//
// Per design and limit: the share of worlds in which it meets the limit, with a Wilson 95%
// interval (the worlds are a sample of the region of prices; the interval is of the share of
// that region). The robust pick is the design that meets every limit in the largest share of
// worlds (ties: the lower mean of its worst value/limit ratio).
//
// Sensitivity: for a design and a limit whose value/limit ratio comes within [2/3, 3/2] in some
// world, a least-squares fit over the worlds of
//     ln figure = a + sum_k b_k ln factor_k
// gives each family's elasticity b_k (a 1% dearer family moves the figure by about b_k %); the
// families are ranked by how far their whole range moves the figure (F_k^|b_k|), and for each
// the factor at which the verdict flips with the other families at their profile's prices:
// (limit / e^a)^(1 / b_k). The fit's R^2 says how well a power law describes the worlds (what
// interleavings and thresholds do not follow prices smoothly lowers it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/pick.h"
#include "analysis/reprice.h"
#include "analysis/results_file.h"

namespace locksim::analysis {

// The families explored and their ranges (F >= 1 each: factors within [1/F, F]).
struct PriceSpace {
    std::vector<std::string> families;  // "work", "memory", ...
    std::vector<double> range;          // F per family
    std::string source;                 // where the ranges came from (the profile, options)
};

// `n` worlds (each one factor per family) drawn from `seed` by Latin hypercube sampling, each
// factor rounded to 4 decimals (the value then written in the world's scenario).
std::vector<std::vector<double>> latin_hypercube(const PriceSpace &space, size_t n, uint64_t seed);

// The Wilson score interval of a share of `k` in `n` at 95%.
struct ShareInterval {
    double lo = 0, hi = 0;
};
ShareInterval wilson_interval(size_t k, size_t n);

// A world's point: (prices.<family>, factor text) pairs, as a run's point names them (sorted by
// field, as a results file reads them back).
std::vector<std::pair<std::string, std::string>> world_point(const PriceSpace &space,
                                                             const std::vector<double> &world);

struct FamilyEffect {
    std::string family;
    double elasticity = 0;
    double moves = 1;            // the figure's factor across the family's range: F^|b|
    std::optional<double> flip;  // the family's factor where the verdict flips (others at 1)
    bool flip_in_range = false;  // within [1/F, F]
};

struct Sensitivity {
    std::string label;
    std::string limit;   // the metric's path
    double nominal = 0;  // the fitted figure at the profile's prices (e^a)
    double r2 = 0;
    size_t worlds = 0;                  // worlds in the fit
    std::vector<FamilyEffect> effects;  // ranked, largest `moves` first
    std::string note;  // why there is no fit (effects empty): too few worlds ran in full
};

// A design's judgement in one world.
struct WorldCell {
    bool ran = false;
    bool meets_all = false;
    std::vector<bool> met;       // per limit, in the order of Limits
    std::vector<double> figure;  // per limit (ns or bytes; infinite: none to compare)
    double worst_ratio = 0;
    // A run stopped once a figure passed kStopFactor x its limit (RunSummary::early_stop): that
    // limit is not met (its figure a lower bound), the others are not judged in this world.
    std::string early_stop;  // the metric, or empty
    // Re-priced from the design's nominal runs (analysis/reprice.h), not run in this world: the
    // limits the estimate leaves `open` (not repriceable, or within kRepriceError) are not
    // judged; `near`: it decided nothing (no limit clearly over, one open), where only a full
    // run says (robust runs one; a results file judged again with other limits may lack it).
    bool estimated = false;
    bool near = false;
    std::vector<std::string> open;
    bool judged(const std::string &path) const {
        return ran && (early_stop.empty() || early_stop == path) &&
               std::find(open.begin(), open.end(), path) == open.end();
    }
};

// The first estimate against the full runs: a design's worst over the seeds in a world where it
// ran in full (to its end) and its nominal runs could be re-priced.
struct EstimateCheck {
    std::string label, limit;
    size_t world = 0;
    double estimate = 0, full = 0;
    double limit_value = 0;
    bool decided = false;  // re-pricing alone would have judged it (no full run)
    double error() const { return full > 0 ? estimate / full - 1 : 0; }
    bool judged_otherwise() const {
        return decided && (estimate > limit_value) != (full > limit_value);
    }
};

// The margin re-pricing judges a design's figure with (analysis/reprice.h: repricing_margin).
struct RepricingMargin {
    std::string label, limit;
    double margin = 0;
};

// robust stops a run once a figure passes this many times its limit: the design is then over
// the limit in that world, and too far from it for the sensitivity fit.
inline constexpr double kStopFactor = 1.5;

struct DesignShare {
    std::string label;
    size_t worlds = 0;           // worlds it ran in
    size_t meets_all = 0;        // worlds where it meets every limit
    size_t all_judged = 0;       // worlds where every limit together was judged (one judged
                                 // limit failed, or each was judged)
    std::vector<size_t> meets;   // per limit
    std::vector<size_t> judged;  // per limit: worlds where it was judged (not stopped early on
                                 // another limit)
    size_t stopped_early = 0;    // worlds whose run stopped early
    size_t estimated = 0;        // worlds judged by re-pricing its nominal runs
    size_t broken = 0;           // worlds where it had self-check violations (meets nothing)
    double mean_worst_ratio = 0;
};

struct Robust {
    PriceSpace space;
    Limits limits;
    std::vector<std::string> limit_names;       // per limit, as pick names it
    std::vector<std::string> labels;            // the designs
    std::vector<std::vector<double>> worlds;    // factors per world
    std::vector<std::string> how;               // per world: how its figures were obtained
    std::vector<std::vector<WorldCell>> cells;  // [world][design]
    std::vector<DesignShare> shares;            // per design, in `labels` order
    std::string pick;                           // the robust pick ("" when none meets anywhere)
    std::vector<Sensitivity> sensitivity;
    size_t runs = 0, seeds = 0;
    size_t nominal_runs = 0;      // runs at the profile's prices (the base of the estimates)
    size_t near_unconfirmed = 0;  // estimated cells near a limit with no full run
    std::vector<RepricingMargin> margins;  // per design with nominal runs and repriceable limit
    std::vector<EstimateCheck> estimate_checks;
};

// The point of the profile's own prices (every factor 1): robust's nominal runs, which
// re-pricing starts from.
std::vector<std::pair<std::string, std::string>> nominal_point(const PriceSpace &space);

// Per world, the designs that need a full run there: those whose nominal runs (`runs` at the
// nominal point) re-pricing cannot judge in it (a limit it does not estimate, an estimate within
// kRepriceError of its limit, no nominal run).
std::vector<std::vector<std::string>> full_runs_needed(
    const PriceSpace &space, const std::vector<std::vector<double>> &worlds, const Limits &limits,
    const std::vector<std::string> &labels, const std::vector<RunSummary> &runs);

// Judges `runs` (summaries of designs in worlds, each run's point naming the world's factors as
// world_point does) against `limits`; `tails` as for pick. A design with no run in a world is
// judged by re-pricing its nominal runs when there are some (WorldCell::estimated). UserError
// when no limit is given or a world has neither runs nor estimates.
Robust judge_robust(const PriceSpace &space, const std::vector<std::vector<double>> &worlds,
                    const Limits &limits, const std::vector<std::string> &labels,
                    const std::vector<RunSummary> &runs, const TailSource &tails);

std::string format_robust(const Robust &r);
// robust.json: the space, every world's factors and how its figures were obtained, the cells,
// the shares with their intervals, the pick and the sensitivity; `results_name` names the
// results file that holds the runs.
nlohmann::json robust_json(const Robust &r, const std::string &results_name);

}  // namespace locksim::analysis
