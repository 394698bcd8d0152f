#include "scenario/design_kernel.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "strategies/catalog.h"

namespace locksim {

DesignKernel design_kernel(const Scenario &point, const StrategySpec &strategy) {
    const StrategyInfo &info = *find_strategy_info(strategy.name);
    const bool own = !strategy.kernel.empty();
    const std::string &name = own                                 ? strategy.kernel
                              : point.machine.kernel != "default" ? point.machine.kernel
                                                                  : std::string();
    const std::string_view release_name = name.empty() ? info.kernels.preferred : name;
    DesignKernel k;
    k.behaviour = kernel_behaviour(*parse_kernel_release(release_name));
    const std::string release = kernel_release_name(k.behaviour.release);
    if (!info.kernels.contains(k.behaviour.release))
        k.never_existed.push_back(fmt::format("{} on {} ({} existed in {})", info.name, release,
                                              info.name, info.kernels.text()));
    if (point.core.sidtab && *point.core.sidtab != k.behaviour.sidtab)
        k.never_existed.push_back(fmt::format("{} with the {} SID table ({} has {})", release,
                                              ss::sidtab_era_name(*point.core.sidtab), release,
                                              ss::sidtab_era_name(k.behaviour.sidtab)));
    if (point.core.sid_string_cache >= 0 &&
        (point.core.sid_string_cache > 0) != (k.behaviour.sid_string_cache > 0))
        k.never_existed.push_back(point.core.sid_string_cache > 0
                                      ? fmt::format("{} with a SID string cache (5.6 on)", release)
                                      : fmt::format("{} without its SID string cache", release));
    return k;
}

std::vector<std::string> kernel_notes(const std::vector<Scenario> &points) {
    std::vector<std::string> notes;
    for (const Scenario &p : points)
        for (const StrategySpec &st : p.strategies) {
            const DesignKernel k = design_kernel(p, st);
            if (k.never_existed.empty()) continue;
            std::string note = fmt::format("'{}' runs a kernel that never existed: {}", st.label,
                                           fmt::join(k.never_existed, "; "));
            if (std::find(notes.begin(), notes.end(), note) == notes.end())
                notes.push_back(std::move(note));
        }
    return notes;
}

}  // namespace locksim
