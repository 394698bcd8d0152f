// Duplicating a policy for a boolean change, the two ways the kernel record knows:
//  - cond_policydb_dup (Linux 5.10+): deep-copy only the conditional state (the boolean table,
//    the conditional avtab, the conditional node list); the copy shares everything else;
//  - the full copy of the 2018 V3 series: policydb_write into a buffer, policydb_read back.
#pragma once

#include <memory>

#include "ss/conditional.h"
#include "ss/policydb.h"

namespace locksim::ss {

// A deep copy of the conditional state: same booleans, a conditional avtab with the same slot
// count and chain order, and nodes whose rule lists point into the new table.
std::shared_ptr<CondPolicy> cond_policy_dup(const CondPolicy &orig);

// `dst` becomes a shallow copy of `orig` with its own conditional state.
void cond_policydb_dup(Policydb &dst, const Policydb &orig);

// A copy that shares nothing, made by serialising and reading back.
Policydb policydb_full_copy(const Policydb &orig);

}  // namespace locksim::ss
