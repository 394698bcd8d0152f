// The kernel each design of a scenario's point runs on: its own `kernel`, else machine.kernel,
// else the release the strategy prefers (StrategyInfo::kernels).
#pragma once

#include <string>
#include <vector>

#include "scenario/scenario.h"
#include "strategies/kernels.h"

namespace locksim {

// The release with what it selects, and why the combination is a kernel that never existed
// (the strategy outside the releases it existed in, or a [core] key set against the release),
// one reason per entry.
struct DesignKernel {
    KernelBehaviour behaviour;
    std::vector<std::string> never_existed;
};
DesignKernel design_kernel(const Scenario &point, const StrategySpec &strategy);
// One line per design whose kernel never existed, for the points' designs (duplicates once).
std::vector<std::string> kernel_notes(const std::vector<Scenario> &points);

}  // namespace locksim
