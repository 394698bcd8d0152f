// What a policy occupies in the kernel's memory: the slab bytes of every object that
// policydb_read allocates for it, and of those that cond_policydb_dup allocates for a copy of
// its conditional state. One walk over the structures gives both, by the same rule, so a
// whole-policy copy and a conditional duplicate are charged alike.
//
// Kernel: Linux v5.10 (security/selinux/ss/policydb.c, avtab.c, ebitmap.c, hashtab.c,
// conditional.c, services.c), x86-64 with SLUB:
//  - kmem_cache objects: avtab_node 24 bytes, avtab_extended_perms 40 (36 rounded to the
//    word), ebitmap_node 64, hashtab_node 24;
//  - kmalloc / kzalloc / kcalloc / kmemdup / kstrdup: the size class that holds the request
//    (8, 16, 32, 64, 96, 128, 192, 256, 512 bytes ... 8 KiB), above 8 KiB whole pages in a
//    power-of-two block; kvcalloc is kmalloc while that succeeds;
//  - struct sizes from the v5.10 headers: perm_datum 4, common_datum 32, class_datum 72,
//    role_datum 40, type_datum 12, user_datum 96, level_datum 16 + its mls_level 24,
//    cat_datum 8, cond_bool_datum 8, constraint_node 24, constraint_expr 48, type_set 40,
//    role_trans_key 12 + datum 4, role_allow 16, filename_trans_key 16 + datum 32,
//    range_trans 12 + mls_range 48, ocontext 200, genfs 24, cond_node 56, cond_expr_node 8,
//    struct selinux_policy (with its policydb) 620.
// Simplified: the class-to-kernel mapping (selinux_map), the per-class permission
// val_to_name arrays the kernel does not keep, and slab metadata (partial slabs, per-CPU
// caches) are not counted; the model's reverse attribute map (attr_type_map) is not a kernel
// structure and is not counted either.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ss/policydb.h"

namespace locksim::ss {

struct PolicyKmem {
    // policydb_read: everything but the conditional state (symbols, strings, hash tables,
    // val_to_name / val_to_struct arrays, the unconditional avtab, constraints, transitions,
    // object contexts, type_attr_map_array, ebitmaps).
    int64_t base = 0;
    // policydb_read: the conditional state (the boolean table with its names, bool_val_to_struct,
    // the conditional avtab, the cond_node array and its lists).
    int64_t cond = 0;
    // cond_policydb_dup, as security_set_bools does it since 5.10: the boolean hash table with
    // new datums (the names are shared), bool_val_to_struct, the conditional avtab's slots and
    // nodes, the cond_node array, its expressions and lists.
    int64_t cond_dup = 0;
    // The struct selinux_policy (and its policydb) that both a full copy and the kmemdup of
    // security_set_bools allocate.
    int64_t policy_struct = 0;

    // What a whole new policy holds (policydb_read).
    int64_t whole() const { return policy_struct + base + cond; }
    // What a conditional duplicate allocates (kmemdup + cond_policydb_dup).
    int64_t duplicate() const { return policy_struct + cond_dup; }
};

// The bytes a kmalloc of `n` bytes takes (its SLUB size class, or its page block).
int64_t kmalloc_bytes(size_t n);

PolicyKmem policy_kmem(const Policydb &p);

}  // namespace locksim::ss
