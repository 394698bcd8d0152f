// The kernel's slab bytes of a policy (ss::policy_kmem): the size classes, and on every policy
// the relations its parts must keep; the calls that free them (policydb_destroy,
// cond_policydb_destroy_dup, sidtab_destroy), counted by hand on small tables.
#include <gtest/gtest.h>

#include <memory>

#include "policy_test_util.h"
#include "sidtab_test_util.h"
#include "ss/policy_gen.h"
#include "ss/policy_mem.h"

namespace locksim::ss::testing {
namespace {

TEST(PolicyKmem, KmallocSizeClasses) {
    EXPECT_EQ(kmalloc_bytes(0), 0);
    EXPECT_EQ(kmalloc_bytes(1), 8);
    EXPECT_EQ(kmalloc_bytes(9), 16);
    EXPECT_EQ(kmalloc_bytes(72), 96);
    EXPECT_EQ(kmalloc_bytes(97), 128);
    EXPECT_EQ(kmalloc_bytes(200), 256);
    EXPECT_EQ(kmalloc_bytes(620), 1024);
    EXPECT_EQ(kmalloc_bytes(8192), 8192);
    EXPECT_EQ(kmalloc_bytes(8193), 16384);   // three pages: an order-2 block
    EXPECT_EQ(kmalloc_bytes(20000), 32768);  // five pages: an order-3 block
}

TEST(PolicyKmem, PartsOfEveryPolicy) {
    for (const std::string &path : all_policies()) {
        SCOPED_TRACE(path);
        Policydb p = policydb_read(load_bytes(path), path);
        PolicyKmem k = policy_kmem(p);
        const CondPolicy &c = *p.cond;
        // The avtabs' nodes are at least there, 24 bytes each.
        EXPECT_GE(k.base, 24 * static_cast<int64_t>(p.b().te_avtab.nel()));
        EXPECT_GE(k.cond_dup, 24 * static_cast<int64_t>(c.te_cond_avtab.nel()));
        // What the read allocates beyond the duplicate: the boolean names and their
        // val_to_name array, which the duplicate shares.
        int64_t names = kmalloc_bytes(c.bools.nprim * sizeof(void *));
        for (const auto &b : c.bools.entries())
            names += kmalloc_bytes(b->name.size() + 1);
        EXPECT_EQ(k.cond - k.cond_dup, names);
        EXPECT_EQ(k.whole(), k.policy_struct + k.base + k.cond);
        EXPECT_EQ(k.duplicate(), k.policy_struct + k.cond_dup);
        EXPECT_GT(k.whole(), k.duplicate());
    }
}

template <class D>
D *add(Symtab<D> &tab, const char *name, uint32_t value) {
    auto d = std::make_unique<D>();
    d->name = name;
    d->value = value;
    return tab.add(std::move(d));
}

// Three types, one role whose types span two ebitmap nodes, one boolean: every object counted
// by hand from the kernel's destroy functions (v5.10 policydb_destroy, cond_policydb_destroy).
TEST(PolicyKmem, FreesOfAHandCountedPolicy) {
    Policydb db;
    auto base = std::make_shared<PolicyBase>();
    auto cond = std::make_shared<CondPolicy>();
    base->types.init(3);
    for (uint32_t v = 1; v <= 3; ++v)
        add(base->types, v == 1 ? "a_t" : v == 2 ? "b_t" : "c_t", v);
    base->types.nprim = 3;
    base->roles.init(1);
    RoleDatum *r = add(base->roles, "r", 1);
    r->types.set_bit(0, true);
    r->types.set_bit(400, true);  // a second node (a node holds 6 x 64 bits)
    base->roles.nprim = 1;
    cond->bools.init(1);
    add(cond->bools, "b", 1);
    cond->bools.nprim = 1;
    db.base = base;
    db.cond = cond;
    PolicyKmem k = policy_kmem(db);

    // types: per type its name, its datum (kfree) and its hashtab node (kmem_cache_free), the
    // slots: 7 + 3. role: name, datum, node, the two nodes of `types`, the slots: 3 + 3.
    // boolean: name, datum, node, slots: 3 + 1. sym_val_to_name of the three tables: 3.
    // role_val_to_struct, type_val_to_struct, bool_val_to_struct: 3.
    EXPECT_EQ(k.destroy_total(), (FreeCalls{.kfree = 7 + 3 + 3 + 3 + 3, .cache_free = 3 + 3 + 1}));
    // cond_policydb_destroy_dup: the boolean's datum and node, the slots, bool_val_to_struct.
    EXPECT_EQ(k.destroy_dup, (FreeCalls{.kfree = 3, .cache_free = 1}));
    // A cond_resched() before each symbol table: the roles, the types and the booleans' frees
    // are in separate stretches.
    EXPECT_GE(k.destroy.size(), 3u);
}

TEST(PolicyKmem, FreesGrowWithTheObjects) {
    GenOptions small, large;
    small.types = 500;
    large.types = 2000;
    const FreeCalls s = policy_kmem(policy_generate(small)).destroy_total();
    const FreeCalls l = policy_kmem(policy_generate(large)).destroy_total();
    // Four times the types, about four times the rules (20 per type): about four times the frees.
    const double ratio = static_cast<double>(l.calls()) / static_cast<double>(s.calls());
    EXPECT_GT(ratio, 3.0) << s.calls() << " -> " << l.calls();
    EXPECT_LT(ratio, 5.0) << s.calls() << " -> " << l.calls();
}

TEST(PolicyKmem, DuplicateFreesEveryConditionalNode) {
    for (const std::string &path : all_policies()) {
        SCOPED_TRACE(path);
        Policydb p = policydb_read(load_bytes(path), path);
        PolicyKmem k = policy_kmem(p);
        const CondPolicy &c = *p.cond;
        int64_t xperms = 0;
        c.te_cond_avtab.for_each([&](const AvtabNode &n) {
            if (n.key.specified & AVTAB_XPERMS) ++xperms;
        });
        // avtab_destroy: a kmem_cache_free per node (and per extended-permission datum);
        // hashtab_destroy: one per boolean's node.
        EXPECT_EQ(k.destroy_dup.cache_free,
                  static_cast<int64_t>(c.te_cond_avtab.nel() + c.bools.nel()) + xperms);
        // The whole policy frees at least every avtab node, and more than its duplicate.
        EXPECT_GE(k.destroy_total().cache_free,
                  static_cast<int64_t>(p.b().te_avtab.nel() + c.te_cond_avtab.nel()));
        EXPECT_GT(k.destroy_total().kfree, k.destroy_dup.kfree);
    }
}

// sidtab_destroy by era: pages of the tree (5.x) or the chain nodes (4.15), each entry's
// ebitmap nodes, the cached strings.
TEST(PolicyKmem, SidtabFreesByEra) {
    for (SidtabEra era : {SidtabEra::Hash, SidtabEra::Linear, SidtabEra::Legacy}) {
        SCOPED_TRACE(sidtab_era_name(era));
        Sidtab t(era == SidtabEra::Hash ? 4 : 0, era);
        ASSERT_EQ(t.set_initial(SECINITSID_KERNEL, typed_context(1)), 0);
        // 100 dynamic SIDs: three leaves of 39 entries and the inner page above them.
        for (uint32_t i = 0; i < 100; ++i) {
            Context c = typed_context(2 + i);
            if (i == 0) c.range.level[0].cat.set_bit(200, true);  // one ebitmap node
            uint32_t sid;
            ASSERT_EQ(t.context_to_sid(c, &sid), 0);
            if (era == SidtabEra::Hash && i < 2) t.sid2str_put(sid, "u:r:t");
        }
        const FreeCalls f = sidtab_destroy_calls(t);
        EXPECT_EQ(f.cache_free, 1);
        if (era == SidtabEra::Legacy)
            EXPECT_EQ(f.kfree, 101 + 1);  // a node per SID, the bucket array
        else
            EXPECT_EQ(f.kfree, 3 + 1 + (era == SidtabEra::Hash ? 2 : 0));
    }
}

}  // namespace
}  // namespace locksim::ss::testing
