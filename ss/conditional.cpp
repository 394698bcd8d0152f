#include "ss/conditional.h"

#include <algorithm>

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

namespace {
constexpr uint64_t kCondNodeBytes = 56;
constexpr uint64_t kPartLineBits = 16;              // lines of one array, at most
constexpr uint64_t kBoolLines = uint64_t{1} << 35;  // the booleans' datums, after the arrays
}  // namespace

void CondPolicy::touch_node(size_t i, Access access) const {
    for (uint64_t line = i * kCondNodeBytes / 64; line <= (i * kCondNodeBytes + 55) / 64; ++line)
        touch_line(mem_line(MemRegion::CondNode, lines, line), access);
}

void CondPolicy::touch_part(size_t i, Part part, size_t bytes, Access access) const {
    const uint64_t base = ((uint64_t{i} * 3 + static_cast<uint64_t>(part) + 1) << kPartLineBits);
    const uint64_t n = std::min<uint64_t>((bytes + 63) / 64, uint64_t{1} << kPartLineBits);
    for (uint64_t k = 0; k < n; ++k)
        touch_line(mem_line(MemRegion::CondNode, lines, base + k), access);
}

void CondPolicy::touch_bool(uint32_t value, Access access) const {
    touch_line(mem_line(MemRegion::CondNode, lines, kBoolLines + value), access);
}

void CondPolicy::touch_expr(size_t i) const {
    // Loaded through the node's entry, but no node's loads wait for another node's: a commit's
    // walk over the array overlaps them as it overlaps the entries (Access::Independent; only a
    // list, whose next address is in the node just read, is walked one miss at a time).
    const CondNode &node = cond_list[i];
    touch_part(i, Part::Expr, node.expr.size() * sizeof(CondExpr), Access::Independent);
    for (const CondExpr &e : node.expr)
        if (e.expr_type == COND_BOOL) touch_bool(e.boolean, Access::Independent);
}

void cond_evaluate_nodes(CondPolicy &cond, bool force) {
    const Avtab &table = cond.te_cond_avtab;
    for (size_t i = 0; i < cond.cond_list.size(); ++i) {
        CondNode &node = cond.cond_list[i];
        int new_state = cond_evaluate_expr(node.expr, cond.bools);
        const bool changed = new_state != node.cur_state || force;
        // The node (its cur_state stored in place where it changes), then its expression.
        cond.touch_node(i, changed ? Access::Modified : Access::Independent);
        cond.touch_expr(i);
        if (!changed) continue;
        node.cur_state = new_state;
        count_work(Work::AvtabToggle, node.true_list.size() + node.false_list.size());
        // The lists are arrays of pointers: every rule's address is known once the array is
        // read, so the rules' misses may overlap. Each rule's flag is stored in place.
        using Part = CondPolicy::Part;
        cond.touch_part(i, Part::TrueList, node.true_list.size() * sizeof(AvtabNode *),
                        Access::Independent);
        for (const AvtabNode *n : node.true_list)
            table.touch_node(*n, Access::Modified);
        cond.touch_part(i, Part::FalseList, node.false_list.size() * sizeof(AvtabNode *),
                        Access::Independent);
        for (const AvtabNode *n : node.false_list)
            table.touch_node(*n, Access::Modified);
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
