// The peer-comparison model: N tasks on M CPUs contending one mutex, each alternating a hold
// of `hold` ns (compute under the lock) and a think span of `think` ns, for `duration` ns of
// simulated time. simgrid_mutex_model.cpp is the same model in SimGrid.
#pragma once

#include <cstdint>

namespace locksim::bench {

struct MutexModel {
    int tasks = 32;
    int cpus = 8;
    int64_t hold = 1000;
    int64_t think = 20000;
    int64_t duration = 1000000000;
    // SimGrid switches actors for free; the equivalent model does too. With kernel costs on,
    // the default profile's context-switch, wake-up and cache-line costs apply.
    bool kernel_costs = false;
};

struct MutexModelResult {
    uint64_t acquisitions = 0;
    uint64_t events = 0;
};

MutexModelResult run_mutex_model(const MutexModel &m);

}  // namespace locksim::bench
