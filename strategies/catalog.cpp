#include "strategies/catalog.h"

// Every strategy, in the order `locksim list strategies` shows them and `strategies = "all"`
// runs them (those not marked experimental): one line each, naming the function in
// strategies/<name>.cpp that returns its entry.
#define LOCKSIM_STRATEGIES(X)      \
    X(rwlock_strategy)             \
    X(rwsem_strategy)              \
    X(rcu_full_copy_strategy)      \
    X(rcu_cond_dup_strategy)       \
    X(rcu_cond_dup_async_strategy) \
    X(percpu_rwsem_strategy)       \
    X(seqlock_strategy)

namespace locksim {

namespace strategies {
#define LOCKSIM_DECLARE_STRATEGY(entry) StrategyInfo entry();
LOCKSIM_STRATEGIES(LOCKSIM_DECLARE_STRATEGY)
#undef LOCKSIM_DECLARE_STRATEGY
}  // namespace strategies

const std::vector<StrategyInfo> &strategy_catalog() {
#define LOCKSIM_LIST_STRATEGY(entry) strategies::entry(),
    static const std::vector<StrategyInfo> catalog = {LOCKSIM_STRATEGIES(LOCKSIM_LIST_STRATEGY)};
#undef LOCKSIM_LIST_STRATEGY
    return catalog;
}

const StrategyInfo *find_strategy_info(std::string_view name) {
    for (const auto &s : strategy_catalog())
        if (s.name == name) return &s;
    return nullptr;
}

std::vector<const StrategyInfo *> all_strategies(const std::vector<StrategyInfo> &catalog) {
    std::vector<const StrategyInfo *> out;
    for (const StrategyInfo &s : catalog)
        if (!s.experimental) out.push_back(&s);
    return out;
}

}  // namespace locksim
