// A wake-up's lateness from what held its CPU, as a wake-up at a random instant meets it.
//
// A woken task of the highest priority runs on its CPU at once, unless the CPU is held: inside
// a preempt-off or IRQs-off section, or in interrupt work. The simulator records these as
// stretches, overlapping ones merged, each CPU apart (RunResults::cpu_held). A wake-up that
// falls at a random instant of a CPU's time lands in a stretch of length S with probability
// S / C (C: the CPU time watched, the window times the CPUs), and then waits for the rest of
// it, uniform over [0, S]. So the chance that it waits longer than x is
//     P(R > x) = sum over stretches of (S_i - x)+ / C,
// the time the CPUs spent more than x before the end of a stretch, over all their time (the
// residual life of renewal theory). Its value exceeded with probability p solves
//     sum (S_i - x)+ = p C.
// Where at least `min_exceedances` stretches are longer than that solution, it is read from the
// stretches as they are (observed). Beyond that, the stretches' own tail is fitted as any
// other (tail.h: a generalised Pareto tail over a threshold u, with fixed values apart when
// there are some) and, for x >= u,
//     sum (S_i - x)+ = sum over fixed values a > x of n_a (a - x)
//                      + k (sigma + xi y) / (1 - xi) (1 + xi y / sigma)^(-1 / xi),  y = x - u,
// the mean excess of the fitted tail times the k stretches above u. The fit is made over the
// top stretches only (at most 100 above the threshold): the wait at a random instant weighs a
// stretch by its length, so the longest few decide it, and a tail fitted to the upper end of
// the many short sections says little about them. A wait weighted so has the shape
// xi / (1 - xi): with xi >= 1/2 it has no finite mean, so a threshold whose fit has such a
// shape is passed over (TailOptions::max_shape) for a higher one, fixed values apart or the top
// values alone, as one with no single tail is; none left gives no estimate. The interval is the
// range of the solution over the fit's likelihood region (tail.h's likelihood_range: a
// profile-likelihood interval), shapes up to 1 (the wait's quantiles exist below it, though
// its mean does not from 1/2); unbounded above, it gives no estimate either.
//
// Why this beside the wake-ups themselves: a run's probes wake on timers whose phase against
// the tick and the workload's periods is fixed by the scenario, and a long section that holds
// a CPU a few times per second meets a few of them, or none. A device's wake-ups (audio, an
// interrupt) come at any instant. The wake-ups show what the scenario's probes met; the
// stretches show what any wake-up would meet, from every section and interrupt, not only those
// a probe fell in. What a stretch does not cover: a task of higher or equal priority running,
// the wake-up path's own cost (taken as the wake-ups' median latency, added to the estimate).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/tail.h"

namespace locksim::analysis {

// The stretches that held a run's CPUs, and the CPU time they were watched over.
struct HeldSample {
    TailSample stretches;  // lengths (ns); those open at the end censored
    double cpu_ns = 0;     // the measured window times the CPUs
    std::string absent;    // why the run has none (a platform that cannot see them)
};
HeldSample run_held_sample(const nlohmann::json &run);

// The wait exceeded with probability p by a wake-up at a random instant (see above): the
// returned quantile has `held` set; its estimate excludes the wake-up path.
TailQuantile held_quantile(const HeldSample &s, double p, const TailOptions &o);

// A run's probe wake-up at each probability. Where the run records the stretches that held its
// CPUs: from them (above, plus the wake-ups' median as the path), never below the worst
// wake-up the run saw, and none where they give none; the note says what the wake-ups alone
// give. Their fit rests on the few wake-ups a probe at the scenario's phases happened to meet
// (a fit to 30 values of which 8 are a long section's and the rest the path's has no single
// tail, or one far heavier than the sections it comes from), so it does not stand in for the
// stretches. Where the run records none (real threads, a measured series, preemption none or
// voluntary): from the wake-ups alone (tail.h).
std::vector<TailQuantile> probe_wakeup_tails(const nlohmann::json &run,
                                             const std::vector<double> &probabilities,
                                             const TailOptions &o);

}  // namespace locksim::analysis
