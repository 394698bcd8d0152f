// The names, one-line summaries and options of every locking strategy, so that scenarios can be
// validated and `locksim list strategies` can describe them without building one. Each strategy
// file (strategies/<name>.cpp) implements what its entry here promises; make_security_server
// (strategies/security_server.h, strategies/registry.cpp) builds them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/params.h"

namespace locksim {

struct StrategyInfo {
    std::string name;
    std::string summary;  // one line: what the reader and the writer hold
    std::string models;   // the patch or kernel it models
    std::vector<ParamSpec> options;
};

const std::vector<StrategyInfo> &strategy_catalog();
const StrategyInfo *find_strategy_info(std::string_view name);

}  // namespace locksim
