// Evaluation of constraint and validatetrans expressions (the kernel's constraint_expr_eval):
// a stack machine over the attributes of the source (u1 r1 t1 l1 h1), target (u2 r2 t2 l2 h2)
// and, for validatetrans, the third context (u3 r3 t3).
#pragma once

#include <vector>

#include "ss/constraint.h"
#include "ss/context.h"
#include "ss/policydb.h"

namespace locksim::ss {

// True when the expression holds. A malformed expression (stack overflow or underflow, an
// unknown operator, an xcontext attribute without xcontext) evaluates to false, as the kernel's
// BUG() paths return 0. Each node counts one ConstraintNode.
bool constraint_expr_eval(const PolicyBase &p, const Context &scontext, const Context &tcontext,
                          const Context *xcontext, const std::vector<ConstraintExpr> &expr);

}  // namespace locksim::ss
