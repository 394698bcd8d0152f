// Booleans and conditional rules (the kernel's conditional.h), gathered in CondPolicy: the part
// of a policy that `security_set_bools` changes. A Policydb holds it behind its own pointer so a
// duplicate (cond_policydb_dup) can deep-copy just this and share everything else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ss/avtab.h"
#include "ss/symtab.h"
#include "util/work_meter.h"

namespace locksim::ss {

struct BoolDatum {
    std::string name;
    uint32_t value = 0;
    int state = 0;  // 0 or 1
};

// CondExpr::expr_type
inline constexpr uint32_t COND_BOOL = 1;  // push the boolean's state
inline constexpr uint32_t COND_NOT = 2;
inline constexpr uint32_t COND_OR = 3;
inline constexpr uint32_t COND_AND = 4;
inline constexpr uint32_t COND_XOR = 5;
inline constexpr uint32_t COND_EQ = 6;
inline constexpr uint32_t COND_NEQ = 7;
inline constexpr uint32_t COND_LAST = COND_NEQ;

// The evaluation stack depth (the kernel's COND_EXPR_MAXDEPTH).
inline constexpr uint32_t kCondExprMaxDepth = 10;

struct CondExpr {
    uint32_t expr_type = 0;
    uint32_t boolean = 0;  // boolean value for COND_BOOL
};

// One conditional block: an expression in postfix order and the rules in force when it is true
// and when it is false. The lists point at nodes of CondPolicy::te_cond_avtab.
struct CondNode {
    int cur_state = 0;
    std::vector<CondExpr> expr;
    std::vector<AvtabNode *> true_list;
    std::vector<AvtabNode *> false_list;
};

struct CondPolicy {
    Symtab<BoolDatum> bools;  // p_bools and bool_val_to_struct
    Avtab te_cond_avtab;
    std::vector<CondNode> cond_list;
    // The conditional policy's name for the cache model (a copy gets its own).
    uint32_t lines = next_line_object();

    // The lines of the kernel's layout (5.7 on): an array of 56-byte struct cond_node, each with
    // three arrays of its own (the expression's 8-byte nodes, the true and false lists'
    // pointers), and the booleans' datums.
    enum class Part : uint8_t { Expr, TrueList, FalseList };
    // Node i's entry in the array (at an address known ahead).
    void touch_node(size_t i, Access access) const;
    // One of node i's arrays, `bytes` long, in order.
    void touch_part(size_t i, Part part, size_t bytes, Access access) const;
    // Boolean `value`'s datum, through bool_val_to_struct.
    void touch_bool(uint32_t value, Access access) const;
    // Evaluating node i's expression reads its array and the datum of every boolean it names.
    void touch_expr(size_t i) const;
};

// Evaluates a postfix expression over the booleans' states: 1, 0, or -1 when malformed
// (stack under/overflow, unknown boolean or operator).
int cond_evaluate_expr(const std::vector<CondExpr> &expr, const Symtab<BoolDatum> &bools);

// Re-evaluates every node; where the result differs from cur_state (or `force`), sets ENABLED
// on the list now in force and clears it on the other (evaluate_cond_nodes). A malformed
// expression disables both lists.
void cond_evaluate_nodes(CondPolicy &cond, bool force = false);

}  // namespace locksim::ss
