// The kernel's slab bytes of a policy (ss::policy_kmem): the size classes, and on every policy
// the relations its parts must keep.
#include <gtest/gtest.h>

#include "policy_test_util.h"
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

}  // namespace
}  // namespace locksim::ss::testing
