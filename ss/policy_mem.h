// What a policy occupies in the kernel's memory: the slab bytes of every object that
// policydb_read allocates for it, and of those that cond_policydb_dup allocates for a copy of
// its conditional state. One walk over the structures gives both, by the same rule, so a
// whole-policy copy and a conditional duplicate are charged alike. The same walk counts the
// calls that free those objects again, as the kernel's destroy functions make them: one
// kfree per kmalloc'd object, one kmem_cache_free per cache object.
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
// Frees, v5.10 and v5.9 (the same functions): ss/policydb.c policydb_destroy (the symbol tables'
// *_destroy callbacks through hashtab_map, hashtab_destroy, the val_to_name / val_to_struct
// arrays, ocontext_destroy, the genfs list, role_tr_destroy, the role_allow list,
// filenametr_destroy, range_tr_destroy, type_attr_map_array), ss/avtab.c avtab_destroy
// (kmem_cache_free per node and per extended-permission datum), ss/ebitmap.c ebitmap_destroy
// (kmem_cache_free per node), ss/hashtab.c hashtab_destroy (kmem_cache_free per node, kfree of
// the slots), ss/conditional.c cond_policydb_destroy and cond_policydb_destroy_dup, ss/context.h
// context_destroy (the string of an invalid context, the two levels' ebitmaps). policydb_destroy
// calls cond_resched() before each symbol table, each ocontext list and each genfs entry and
// role_allow entry, and after each filename_trans and range_tr entry (filenametr_destroy,
// range_tr_destroy); avtab_destroy and cond_policydb_destroy_dup never do. A kfree(NULL) (an
// empty list, a class without a common) is not counted. v4.15.1 frees the same objects but keeps
// role transitions in a list (a kfree per node, a cond_resched before each) and filename
// transitions one datum per key; the walk follows the structures this model holds (5.8 on).
// Simplified: the class-to-kernel mapping (selinux_map), the per-class permission
// val_to_name arrays the kernel does not keep, and slab metadata (partial slabs, per-CPU
// caches) are not counted; the model's reverse attribute map (attr_type_map) is not a kernel
// structure and is not counted either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/policydb.h"
#include "ss/sidtab.h"

namespace locksim::ss {

// Calls that free memory, by kind (priced apart: Work::Free and Work::CacheFree).
struct FreeCalls {
    int64_t kfree = 0;       // kfree / kvfree of a kmalloc'd object
    int64_t cache_free = 0;  // kmem_cache_free of an avtab node, ebitmap node, hashtab node ...
    FreeCalls &operator+=(const FreeCalls &o) {
        kfree += o.kfree;
        cache_free += o.cache_free;
        return *this;
    }
    int64_t calls() const { return kfree + cache_free; }
    friend bool operator==(const FreeCalls &, const FreeCalls &) = default;
};

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

    // policydb_destroy of the whole policy (without the struct selinux_policy's own kfree),
    // in the kernel's order, cut at its cond_resched() points: the frees between two points.
    // A list that reschedules at every entry is cut every kDestroyEntriesPerStretch entries.
    std::vector<FreeCalls> destroy;
    // cond_policydb_destroy_dup of a duplicate (5.10's selinux_policy_cond_free, without the
    // struct's kfree): one stretch, no cond_resched.
    FreeCalls destroy_dup;

    // What a whole new policy holds (policydb_read).
    int64_t whole() const { return policy_struct + base + cond; }
    // What a conditional duplicate allocates (kmemdup + cond_policydb_dup).
    int64_t duplicate() const { return policy_struct + cond_dup; }
    // Every free of policydb_destroy.
    FreeCalls destroy_total() const;
};

// Entries of a list that reschedules at every entry (filename transitions ...) charged in one
// stretch: enough to keep the stretches few, few enough to keep each a few microseconds.
inline constexpr int64_t kDestroyEntriesPerStretch = 32;

// The bytes a kmalloc of `n` bytes takes (its SLUB size class, or its page block).
int64_t kmalloc_bytes(size_t n);

PolicyKmem policy_kmem(const Policydb &p);

// sidtab_destroy of a SID table as its era's kernel frees it (no cond_resched in any era):
//   legacy (v4.15.1 ss/sidtab.c sidtab_destroy): per entry, initial SIDs included,
//     context_destroy and the chain node's kfree; the bucket array's kfree;
//   linear (v5.0.1 sidtab_destroy, sidtab_destroy_tree): context_destroy of each initial SID
//     and of each entry of the tree, a kfree per tree page (leaves of kSidtabLeafEntries
//     entries, inner pages of 512 pointers);
//   hash eras (v5.9.1 and v5.10.7 sidtab_destroy_entry): the same, plus the kfree of each
//     entry's cached string.
// context_destroy (ss/context.h): kfree of an invalid context's string, ebitmap_destroy of its
// range's two levels. The struct sidtab's own kfree (5.x) is left to the caller.
FreeCalls sidtab_destroy_calls(const Sidtab &t);

}  // namespace locksim::ss
