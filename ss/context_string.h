// Security contexts as strings, the way the kernel reads and writes them:
// `user:role:type` followed on an MLS policy by `:low[-high]`, each level `sens[:cats]` with
// cats a comma-separated list of names and `first.last` ranges (string_to_context_struct,
// mls_context_to_sid, context_struct_to_string, mls_sid_to_context).
#pragma once

#include <string>
#include <string_view>

#include "ss/context.h"
#include "ss/policydb.h"

namespace locksim::ss {

// Looks every name up in `p` and fills `c`; no authorisation checks. Stops at an embedded NUL
// as the kernel's copy does. 0, or -EINVAL for any malformed or unknown part (an MLS field on a
// non-MLS policy, a missing one on an MLS policy, an attribute as the type, a reversed category
// range).
int context_parse(const PolicyBase &p, std::string_view str, Context &c);

// context_parse followed by policydb_context_isvalid: 0 or -EINVAL.
int string_to_context(const PolicyBase &p, std::string_view str, Context &c,
                      LevelCheck how = LevelCheck::Contains);

// The kernel's text form (categories: `c0,c1` for two in a row, `c0.c3` for three or more).
// An invalid context kept by its string prints that string.
std::string context_to_string(const PolicyBase &p, const Context &c);
void context_to_string_append(const PolicyBase &p, const Context &c, std::string &out);

// The MLS part alone (`s0-s1:c0.c3`), empty for a non-MLS policy.
std::string mls_to_string(const PolicyBase &p, const MlsRange &r);

}  // namespace locksim::ss
