// Helpers shared by the simulator tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kernel/results.h"
#include "sim/sim_platform.h"

namespace locksim::sim::testing {

// A profile in which nothing but explicit ndelay/compute spans costs time, so timelines can be
// computed by hand.
inline CpuProfile zero_profile() {
    CpuProfile p;
    p.name = "zero";
    p.derivation = "all costs zero, for hand-computed timelines";
    p.primitive = PrimitiveCosts{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    return p;
}

inline SimConfig zero_config(int cpus, kernel::Time duration) {
    SimConfig c;
    c.cpus = cpus;
    c.duration = duration;
    c.profile = zero_profile();
    return c;
}

inline std::string results_json(const kernel::RunResults &r) {
    return nlohmann::json(r).dump(1);
}

}  // namespace locksim::sim::testing
