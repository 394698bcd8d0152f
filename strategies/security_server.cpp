// make_security_server: a catalog entry (strategies/catalog.h) built with its options checked
// against the entry; and what the strategies' entries share.
#include <fmt/format.h>

#include <stdexcept>

#include "strategies/catalog.h"
#include "strategies/strategy.h"
#include "util/error.h"

namespace locksim {

namespace {

Params checked_options(const StrategyInfo &info, const Params &given) {
    Params p = Params::with_defaults(info.options);
    for (const auto &[key, value] : given.values()) {
        const ParamSpec *spec = nullptr;
        for (const auto &s : info.options)
            if (s.name == key) spec = &s;
        if (!spec) {
            std::vector<std::string> names;
            for (const auto &s : info.options)
                names.push_back(s.name);
            throw UserError(fmt::format("strategy '{}' has no option '{}'{}", info.name, key,
                                        did_you_mean(key, names)));
        }
        if (auto why = check_param(*spec, value))
            throw UserError(fmt::format("strategy '{}', option '{}': {}", info.name, key, *why));
        p.set(key, value);
    }
    return p;
}

}  // namespace

ss::PolicyState make_policy_state(ss::Policydb db, const CoreConfig &core) {
    return ss::policy_state_create(std::move(db), core.sid_string_cache,
                                   ss::ServiceConfig{core.level_check}, core.sidtab);
}

std::unique_ptr<SecurityServer> make_security_server(const std::string &strategy,
                                                     const Params &options, ss::PolicyState initial,
                                                     const CoreConfig &core) {
    const StrategyInfo *info = find_strategy_info(strategy);
    if (!info) {
        std::vector<std::string> names;
        for (const auto &s : strategy_catalog())
            names.push_back(s.name);
        throw UserError(
            fmt::format("unknown strategy '{}'{}", strategy, did_you_mean(strategy, names)));
    }
    if (initial.sidtab && (initial.sidtab->cache_size() != core.sid_string_cache ||
                           initial.sidtab->era() != core.sidtab))
        throw std::invalid_argument(
            "the policy state's SID table differs from core.sid_string_cache or core.sidtab; "
            "build it with make_policy_state");
    if (!info->make)
        throw std::logic_error(fmt::format("strategy '{}' has no maker in its entry", strategy));
    return info->make(std::move(initial), core, checked_options(*info, options));
}

namespace strategies {

ParamSpec grace_period_option() {
    return {.name = "grace_period",
            .type = ParamType::String,
            .doc = "how the writer waits for readers: synchronize_rcu or the expedited variant",
            .default_value = std::string("normal"),
            .choices = {"normal", "expedited"}};
}

bool expedited_grace_period(const Params &options) {
    return options.get_string("grace_period") == "expedited";
}

}  // namespace strategies

}  // namespace locksim
