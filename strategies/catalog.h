// The locking strategies, one entry each, as locktorture's table of lock_torture_ops: a
// strategy's file (strategies/<name>.cpp) defines its entry — name, one-line summary, what it
// models, its options with their defaults and checks, and the function that builds it — and
// catalog.cpp lists the entries in one line each. Scenarios are validated and
// `locksim list strategies` describes them from these entries without building one;
// make_security_server (strategies/security_server.h, strategies/security_server.cpp) builds them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/kernels.h"
#include "strategies/security_server.h"
#include "util/params.h"

namespace locksim {

struct StrategyInfo {
    using Maker = std::unique_ptr<SecurityServer> (*)(ss::PolicyState initial,
                                                      const CoreConfig &core,
                                                      const Params &options);
    std::string name;
    std::string summary;  // one line: what the reader and the writer hold
    std::string models;   // the patch or kernel it models
    std::vector<ParamSpec> options;
    // The releases it existed in (merged designs) or was written against (posted ones), and
    // the one it runs on when the scenario names none.
    KernelRange kernels;
    // A design being tried: `locksim list strategies` marks it, a scenario runs it when it names
    // it, and `strategies = "all"` (the main job's table) leaves it out until it is promoted.
    bool experimental = false;
    // Builds the strategy on the current platform; `options` hold every option above, already
    // checked, the defaults filling what the scenario left out.
    Maker make = nullptr;
};

const std::vector<StrategyInfo> &strategy_catalog();
const StrategyInfo *find_strategy_info(std::string_view name);
// What `strategies = "all"` names: the catalog's entries but the experimental ones, in order.
std::vector<const StrategyInfo *> all_strategies(
    const std::vector<StrategyInfo> &catalog = strategy_catalog());

}  // namespace locksim
