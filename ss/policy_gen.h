// A synthetic policy of a chosen size, built in the policy structures (not from text) and
// deterministic for a given seed, so that costs can be studied as a policy grows.
#pragma once

#include <cstdint>

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
};

Policydb policy_generate(const GenOptions &opt);

}  // namespace locksim::ss
