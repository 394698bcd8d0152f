// Constraints and validatetrans rules (the kernel's constraint.h): a permission mask and an
// expression in postfix order, evaluated with a small stack by the services.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ss/ebitmap.h"

namespace locksim::ss {

// ConstraintExpr::expr_type
inline constexpr uint32_t CEXPR_NOT = 1;
inline constexpr uint32_t CEXPR_AND = 2;
inline constexpr uint32_t CEXPR_OR = 3;
inline constexpr uint32_t CEXPR_ATTR = 4;   // compare two attributes of the contexts
inline constexpr uint32_t CEXPR_NAMES = 5;  // compare an attribute to a set of names

// ConstraintExpr::attr
inline constexpr uint32_t CEXPR_USER = 1;
inline constexpr uint32_t CEXPR_ROLE = 2;
inline constexpr uint32_t CEXPR_TYPE = 4;
inline constexpr uint32_t CEXPR_TARGET = 8;    // the target context's attribute
inline constexpr uint32_t CEXPR_XTARGET = 16;  // the third context's (validatetrans)
inline constexpr uint32_t CEXPR_L1L2 = 32;
inline constexpr uint32_t CEXPR_L1H2 = 64;
inline constexpr uint32_t CEXPR_H1L2 = 128;
inline constexpr uint32_t CEXPR_H1H2 = 256;
inline constexpr uint32_t CEXPR_L1H1 = 512;
inline constexpr uint32_t CEXPR_L2H2 = 1024;

// ConstraintExpr::op
inline constexpr uint32_t CEXPR_EQ = 1;
inline constexpr uint32_t CEXPR_NEQ = 2;
inline constexpr uint32_t CEXPR_DOM = 3;
inline constexpr uint32_t CEXPR_DOMBY = 4;
inline constexpr uint32_t CEXPR_INCOMP = 5;

// The source-level type set a NAMES expression was written with (policy version 29 and later);
// the kernel keeps it only to write it back.
struct TypeSet {
    Ebitmap types;
    Ebitmap negset;
    uint32_t flags = 0;
};

struct ConstraintExpr {
    uint32_t expr_type = 0;
    uint32_t attr = 0;
    uint32_t op = 0;
    // The node's name for the cache model (each a node of the kernel's list: read through the
    // one before); 0: not named.
    uint32_t line = 0;
    Ebitmap names;                        // NAMES: values as bits (value - 1)
    std::unique_ptr<TypeSet> type_names;  // NAMES with version >= 29
};

struct Constraint {
    uint32_t permissions = 0;          // permission mask (unused for validatetrans)
    std::vector<ConstraintExpr> expr;  // postfix order
};

// The expression depth limit the reader enforces (the kernel's constraint stack).
inline constexpr uint32_t kConstraintStackDepth = 32;

}  // namespace locksim::ss
