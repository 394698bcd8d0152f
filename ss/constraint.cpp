#include <cstdint>

#include "ss/constraint_eval.h"
#include "util/work_meter.h"

namespace locksim::ss {
namespace {

bool role_dominates(const PolicyBase &p, uint32_t r1, uint32_t r2) {
    const RoleDatum *role = p.roles.by_value(r1);
    return role && role->dominates.get_bit(r2 - 1);
}

// Compares two levels with a constraint operator; -1 for an unknown operator.
int level_op(uint32_t op, const MlsLevel &l1, const MlsLevel &l2) {
    switch (op) {
        case CEXPR_EQ:
            return mls_level_eq(l1, l2);
        case CEXPR_NEQ:
            return !mls_level_eq(l1, l2);
        case CEXPR_DOM:
            return mls_level_dom(l1, l2);
        case CEXPR_DOMBY:
            return mls_level_dom(l2, l1);
        case CEXPR_INCOMP:
            return mls_level_incomp(l2, l1);
        default:
            return -1;
    }
}

// The value of one CEXPR_ATTR node; -1 when malformed.
int eval_attr(const PolicyBase &p, const Context &s, const Context &t, const ConstraintExpr &e) {
    const MlsRange &sr = s.range, &tr = t.range;
    switch (e.attr) {
        case CEXPR_USER:
        case CEXPR_TYPE: {
            uint32_t v1 = e.attr == CEXPR_USER ? s.user : s.type;
            uint32_t v2 = e.attr == CEXPR_USER ? t.user : t.type;
            if (e.op == CEXPR_EQ) return v1 == v2;
            if (e.op == CEXPR_NEQ) return v1 != v2;
            return -1;
        }
        case CEXPR_ROLE:
            switch (e.op) {
                case CEXPR_EQ:
                    return s.role == t.role;
                case CEXPR_NEQ:
                    return s.role != t.role;
                case CEXPR_DOM:
                    return role_dominates(p, s.role, t.role);
                case CEXPR_DOMBY:
                    return role_dominates(p, t.role, s.role);
                case CEXPR_INCOMP:
                    return !role_dominates(p, s.role, t.role) && !role_dominates(p, t.role, s.role);
                default:
                    return -1;
            }
        case CEXPR_L1L2:
            return level_op(e.op, sr.level[0], tr.level[0]);
        case CEXPR_L1H2:
            return level_op(e.op, sr.level[0], tr.level[1]);
        case CEXPR_H1L2:
            return level_op(e.op, sr.level[1], tr.level[0]);
        case CEXPR_H1H2:
            return level_op(e.op, sr.level[1], tr.level[1]);
        case CEXPR_L1H1:
            return level_op(e.op, sr.level[0], sr.level[1]);
        case CEXPR_L2H2:
            return level_op(e.op, tr.level[0], tr.level[1]);
        default:
            return -1;
    }
}

int eval_names(const Context &s, const Context &t, const Context *x, const ConstraintExpr &e) {
    const Context *c = &s;
    if (e.attr & CEXPR_TARGET)
        c = &t;
    else if (e.attr & CEXPR_XTARGET)
        c = x;
    if (!c) return -1;
    uint32_t val;
    if (e.attr & CEXPR_USER)
        val = c->user;
    else if (e.attr & CEXPR_ROLE)
        val = c->role;
    else if (e.attr & CEXPR_TYPE)
        val = c->type;
    else
        return -1;
    bool in = val != 0 && e.names.get_bit(val - 1);
    if (e.op == CEXPR_EQ) return in;
    if (e.op == CEXPR_NEQ) return !in;
    return -1;
}

}  // namespace

bool constraint_expr_eval(const PolicyBase &p, const Context &scontext, const Context &tcontext,
                          const Context *xcontext, const std::vector<ConstraintExpr> &expr) {
    bool stack[kConstraintStackDepth];
    int sp = -1;
    for (const ConstraintExpr &e : expr) {
        count_work(Work::ConstraintNode);
        if (e.line) touch_line(mem_line(MemRegion::Constraint, e.line, 0), Access::Dependent);
        switch (e.expr_type) {
            case CEXPR_NOT:
                if (sp < 0) return false;
                stack[sp] = !stack[sp];
                break;
            case CEXPR_AND:
                if (sp < 1) return false;
                --sp;
                stack[sp] = stack[sp] && stack[sp + 1];
                break;
            case CEXPR_OR:
                if (sp < 1) return false;
                --sp;
                stack[sp] = stack[sp] || stack[sp + 1];
                break;
            case CEXPR_ATTR:
            case CEXPR_NAMES: {
                if (sp == static_cast<int>(kConstraintStackDepth) - 1) return false;
                int v = e.expr_type == CEXPR_ATTR ? eval_attr(p, scontext, tcontext, e)
                                                  : eval_names(scontext, tcontext, xcontext, e);
                if (v < 0) return false;
                stack[++sp] = v != 0;
                break;
            }
            default:
                return false;
        }
    }
    return sp == 0 && stack[0];
}

}  // namespace locksim::ss
