// Counts of every table of a policy, for `locksim policy info` and for checks against libsepol.
// Keys are snake_case and stable (documented in README.md, "policy info keys").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ss/policydb.h"

namespace locksim::ss {

struct PolicyInfo {
    uint32_t version = 0;
    bool mls = false;
    std::string handle_unknown;  // "deny", "reject" or "allow"
    // (key, count) in a fixed order.
    std::vector<std::pair<std::string, uint64_t>> counts;

    // The count for a key; throws std::out_of_range when the key does not exist.
    uint64_t at(std::string_view key) const;
};

PolicyInfo policy_info(const Policydb &p);

}  // namespace locksim::ss
