// MLS operations of the security server (the kernel's mls.c): level and range checks live in
// policydb.h (mls_level_isvalid and friends); this header adds what services need to build new
// contexts: copying ranges, the object-creation MLS rules, the user range for get_user_sids,
// and converting a range to another policy's values.
#pragma once

#include <cstdint>

#include "ss/context.h"
#include "ss/policydb.h"

namespace locksim::ss {

// Sets newcontext's range for a new object/process (mls_compute_sid): range_transition rules,
// the class's default_range, else the source's range (full for a process or a socket when
// `sock`, its low level otherwise). 0, or -EINVAL (no common sensitivity for glblub, unknown
// kind). A no-op on a non-MLS policy.
int mls_compute_sid(const PolicyBase &p, const Context &scontext, const Context &tcontext,
                    uint32_t tclass, uint32_t specified, Context &newcontext, bool sock = false);

// The range a login from `fromcon` may get as `user` (mls_setup_user_range): 0 or -EINVAL.
int mls_setup_user_range(const PolicyBase &p, const Context &fromcon, const UserDatum &user,
                         Context &usercon);

// Re-maps the range of `c` (values of `oldp`) to the values of `newp` by name; -EINVAL when a
// sensitivity or category is gone.
int mls_convert_context(const PolicyBase &oldp, const PolicyBase &newp, Context &c);

// The greatest lower bound of two ranges (DEFAULT_GLBLUB); -EINVAL when they share no
// sensitivity.
int mls_range_glblub(MlsRange &dst, const MlsRange &r1, const MlsRange &r2);

// Copies: the whole range, or the low level into both ends, or the high level into both.
void mls_context_cpy(Context &dst, const Context &src);
void mls_context_cpy_low(Context &dst, const Context &src);
void mls_context_cpy_high(Context &dst, const Context &src);

}  // namespace locksim::ss
