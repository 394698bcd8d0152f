// A scenario point's settings as the platforms, the policy generator and the workloads take
// them: the one place they are converted. The loader has checked every value; what is checked
// here is what needs the CPU profile (a file read when the point runs).
#pragma once

#include <cstdint>

#include "real/real_platform.h"
#include "scenario/scenario.h"
#include "sim/config.h"
#include "sim/profile.h"
#include "ss/policy_gen.h"
#include "workloads/workload.h"

namespace locksim {

// The point's CPU profile (shipped name or file); a UserError names `machine.profile`'s place.
sim::CpuProfile point_profile(const Scenario &point);
// What a point's machine asks of its CPU profile: a machine that ends where a cluster ends, and
// `machine.spinlock = "byte"` a profile that models caches. UserError naming the key's place.
void check_machine_profile(const Scenario &point, const sim::CpuProfile &profile);

// The simulator's configuration of a run of the point with `seed` (its profile checked).
sim::SimConfig sim_config(const Scenario &point, int64_t seed);
// The host-thread platform's.
real::RealConfig real_config(const Scenario &point, int64_t seed);
// The generator's options of a synthetic policy: the preset's (or the defaults) under the
// scenario's sizes.
ss::GenOptions synthetic_options(const SyntheticPolicySpec &spec);
// The machine as the workloads see it: its CPUs, the profile's clusters on them, the seed.
void set_workload_machine(const Scenario &point, int64_t seed, WorkloadEnv &env);

}  // namespace locksim
