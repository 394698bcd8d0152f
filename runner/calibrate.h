// `locksim calibrate`: a CPU profile fitted to this host. The security-server core runs a set of
// operations on a real policy (access decisions, context parsing with both level checks, SID to
// string, get_user_sids, the three ways of setting booleans, a policy read); each is counted by
// the work meter once and timed on the host several times. The cost per work unit is the
// non-negative least-squares fit of the counts to the times (relative errors, with a weak pull
// towards a base profile for kinds the operations cannot tell apart). Primitive costs are timed
// through kernel/ on the real-thread platform, so that a simulation with the profile predicts a
// run on host threads (`locksim validate`). The result is a profile file like the shipped ones,
// with a [calibration] table recording host, date, fit and each operation's residual.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/profile.h"
#include "ss/work_meter.h"

namespace locksim {

// One timed operation: its work counts and host time per run.
struct CalibrationSample {
    std::string name;
    ss::WorkCounts counts;
    double host_ns = 0;
    double predicted_ns = 0;  // counts x fitted costs, filled by calibrate()
};

// Minimises sum_i ((counts_i . w - t_i) / t_i)^2 + prior_weight * sum_k ((w_k - prior_k) /
// prior_k)^2 over w >= 0 (ns per unit), by cyclic coordinate descent on the convex quadratic.
// Kinds in `fixed` keep their prior. Costs in ns.
std::array<double, ss::kWorkKinds> fit_work_costs(const std::vector<CalibrationSample> &samples,
                                                  const std::array<double, ss::kWorkKinds> &prior,
                                                  double prior_weight,
                                                  const std::array<bool, ss::kWorkKinds> &fixed);

struct CalibrateOptions {
    std::vector<uint8_t> policy_image;
    std::string policy_name;
    sim::CpuProfile base;        // the prior, and the costs user space cannot measure
    std::string name = "host";   // of the written profile
    int rounds = 7;              // timed batches per operation (the median is kept)
    double batch_ms = 40;        // target length of one batch
    double prior_weight = 0.01;  // see fit_work_costs
    std::function<void(const std::string &)> progress;  // one line per step
};

struct PrimitiveSample {
    std::string name;  // [primitive_ns] key, or what the figure is
    double host_ns = 0;
    std::string how;
};

struct Calibration {
    sim::CpuProfile profile;
    std::vector<CalibrationSample> samples;
    std::vector<PrimitiveSample> primitives;
};

Calibration calibrate(const CalibrateOptions &options);

// The [calibration] key holding liburcu's grace period on this host, in ns: what `validate`
// gives the simulator's user-space RCU model.
inline constexpr const char *kUrcuGracePeriodKey = "urcu_grace_period_ns";

}  // namespace locksim
