// A synthetic policy of a chosen size, built in the policy structures (not from text) and
// deterministic for a given seed, so that costs can be studied as a policy grows.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ss/policydb.h"

namespace locksim::ss {

struct GenOptions {
    uint32_t types = 1000;    // concrete types (at least 8)
    uint32_t attributes = 0;  // 0: about types / 18
    uint32_t booleans = 50;
    uint32_t rules = 0;       // unconditional allow rules; 0: about 20 per type
    uint32_t cond_rules = 0;  // conditional rules; 0: about rules / 4
    uint32_t users = 8;
    uint32_t roles = 12;
    uint32_t categories = 256;  // MLS only
    uint32_t sensitivities = 1;
    uint32_t constraints = 0;  // 0: about one per class plus a few
    bool mls = true;
    uint32_t version = 33;
    uint64_t seed = 1;
    // The shape of the type -> attribute map, which sets context_struct_compute_av's length (one
    // search of each avtab per (source attribute x target attribute) pair). 0 in domain_attrs:
    // each type in one to six attributes and a quarter of the types domains (the first shape).
    uint32_t domain_percent = 0;  // share of the types that are domains (process types)
    double domain_attrs = 0;      // mean attributes of a domain (besides itself)
    uint32_t domain_attrs_max = 0;
    double type_attrs = 0;  // mean attributes of any other type
    uint32_t type_attrs_max = 0;
    uint32_t tail_percent = 0;  // share of types whose count is drawn from [max/2, max]
    // The unconditional rule mix, percent (the rest are allow rules); 0/0: 14 % dontaudit,
    // 7 % type_transition, 1 % auditallow.
    uint32_t dontaudit_percent = 0;
    uint32_t transition_percent = 0;
};

// A named shape of a published distribution policy: what `policy gen --preset` and a scenario's
// `[policy.synthetic] preset` start from. `source` cites where the statistics come from.
struct GenPreset {
    std::string_view name;
    std::string_view description;
    std::string_view source;
    GenOptions options;
};
std::span<const GenPreset> gen_presets();
// The preset of that name; UserError listing the known names otherwise.
const GenPreset &find_gen_preset(std::string_view name);

Policydb policy_generate(const GenOptions &opt);

}  // namespace locksim::ss
