#include "ss/conditional.h"

namespace locksim::ss {

int cond_evaluate_expr(const std::vector<CondExpr> &expr, const Symtab<BoolDatum> &bools) {
    count_work(Work::ConstraintNode, expr.size());
    int stack[kCondExprMaxDepth];
    int sp = -1;
    for (const CondExpr &e : expr) {
        switch (e.expr_type) {
            case COND_BOOL: {
                if (sp == static_cast<int>(kCondExprMaxDepth) - 1) return -1;
                const BoolDatum *b = bools.by_value(e.boolean);
                if (!b) return -1;
                stack[++sp] = b->state;
                break;
            }
            case COND_NOT:
                if (sp < 0) return -1;
                stack[sp] = !stack[sp];
                break;
            case COND_OR:
            case COND_AND:
            case COND_XOR:
            case COND_EQ:
            case COND_NEQ: {
                if (sp < 1) return -1;
                int b = stack[sp--];
                int &a = stack[sp];
                switch (e.expr_type) {
                    case COND_OR:
                        a = a || b;
                        break;
                    case COND_AND:
                        a = a && b;
                        break;
                    case COND_XOR:
                        a = a ^ b;
                        break;
                    case COND_EQ:
                        a = a == b;
                        break;
                    default:
                        a = a != b;
                        break;
                }
                break;
            }
            default:
                return -1;
        }
    }
    return sp == 0 ? stack[0] : -1;
}

void cond_evaluate_nodes(CondPolicy &cond, bool force) {
    for (CondNode &node : cond.cond_list) {
        int new_state = cond_evaluate_expr(node.expr, cond.bools);
        if (new_state == node.cur_state && !force) continue;
        node.cur_state = new_state;
        count_work(Work::AvtabToggle, node.true_list.size() + node.false_list.size());
        for (AvtabNode *n : node.true_list) {
            if (new_state <= 0)
                n->key.specified &= static_cast<uint16_t>(~AVTAB_ENABLED);
            else
                n->key.specified |= AVTAB_ENABLED;
        }
        for (AvtabNode *n : node.false_list) {
            if (new_state != 0)  // true, or malformed
                n->key.specified &= static_cast<uint16_t>(~AVTAB_ENABLED);
            else
                n->key.specified |= AVTAB_ENABLED;
        }
    }
}

}  // namespace locksim::ss
