// A security context as the security server holds it (the kernel's struct context): user, role
// and type values, the MLS range, and for a context that is not valid under the loaded policy
// (kept after a policy reload), its original string with user/role/type set to 0.
#pragma once

#include <cstdint>
#include <string>

#include "ss/mls_types.h"

namespace locksim::ss {

struct Context {
    uint32_t user = 0;
    uint32_t role = 0;
    uint32_t type = 0;
    MlsRange range;
    std::string str;  // non-empty only for an invalid context kept by its string

    bool is_invalid() const { return !str.empty(); }
};

// context_cmp: equal contexts.
inline bool context_equal(const Context &c1, const Context &c2) {
    if (!c1.str.empty() || !c2.str.empty()) return c1.str == c2.str;
    return c1.user == c2.user && c1.role == c2.role && c1.type == c2.type &&
           mls_range_eq(c1.range, c2.range);
}

}  // namespace locksim::ss
