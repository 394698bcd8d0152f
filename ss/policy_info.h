// Counts of every table of a policy, for `locksim policy info` and for checks against libsepol.
// Keys are snake_case and stable (documented in docs/policies.md, "policy info keys").
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

// The distribution of one group of types' type_attr_map sizes (the type itself included): the
// attributes whose rules context_struct_compute_av searches for the type as source or target.
struct FanOutStats {
    uint64_t types = 0;
    double mean = 0;
    uint32_t p50 = 0, p90 = 0, p99 = 0, max = 0;  // nearest-rank percentiles
    uint64_t tail = 0;                            // types with at least half the maximum
};

// The type -> attribute fan-out of the concrete types, domains and other types apart. Domains are
// the types in the attribute `domain` (the reference policy's); a policy without that attribute
// (a synthetic one) counts as domains the types that a role other than object_r authorises.
struct FanOut {
    std::string domains_by;  // "attribute domain" or "roles"
    FanOutStats domains, others;
};
FanOut policy_fan_out(const Policydb &p);

}  // namespace locksim::ss
