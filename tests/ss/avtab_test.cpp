#include "ss/avtab.h"

#include <gtest/gtest.h>

namespace locksim::ss {
namespace {

AvtabDatum data(uint32_t v) {
    AvtabDatum d;
    d.u.data = v;
    return d;
}

TEST(Avtab, SlotSizingFollowsTheKernel) {
    struct Case {
        uint32_t nrules, nslot;
    } cases[] = {{1, 2},
                 {4, 2},
                 {8, 4},
                 {100, 32},
                 {102340, 32768},
                 {1u << 20, 1u << 16},
                 {100000000, 1u << 16}};
    for (auto c : cases) {
        Avtab t;
        t.alloc(c.nrules);
        EXPECT_EQ(t.nslot(), c.nslot) << c.nrules;
        EXPECT_EQ(t.mask(), c.nslot - 1);
    }
    Avtab empty;
    empty.alloc(0);
    EXPECT_EQ(empty.nslot(), 0u);
    EXPECT_EQ(empty.insert({1, 1, 1, AVTAB_ALLOWED}, data(1)), nullptr);
}

TEST(Avtab, InsertSearchAndDuplicates) {
    Avtab t;
    t.alloc(1000);
    for (uint16_t s = 1; s <= 30; ++s)
        for (uint16_t c = 1; c <= 5; ++c) {
            ASSERT_NE(t.insert({s, static_cast<uint16_t>(s + 1), c, AVTAB_ALLOWED}, data(s * c)),
                      nullptr);
            ASSERT_NE(t.insert({s, static_cast<uint16_t>(s + 1), c, AVTAB_AUDITDENY}, data(~0u)),
                      nullptr);
        }
    EXPECT_EQ(t.nel(), 300u);
    EXPECT_EQ(t.insert({3, 4, 2, AVTAB_ALLOWED}, data(9)), nullptr);  // duplicate
    const AvtabDatum *d = t.search({7, 8, 3, AVTAB_ALLOWED});
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->u.data, 21u);
    EXPECT_EQ(t.search({7, 8, 3, AVTAB_AUDITALLOW}), nullptr);
    EXPECT_EQ(t.search({7, 9, 3, AVTAB_ALLOWED}), nullptr);
    // A search for several kinds finds the first present.
    EXPECT_NE(t.search_node({7, 8, 3, AVTAB_AV}), nullptr);
    // Chains are sorted by key.
    for (uint32_t i = 0; i < t.nslot(); ++i)
        for (AvtabNode *n = t.slot(i); n && n->next; n = n->next) {
            auto k = [](const AvtabKey &x) {
                return std::tuple(x.source_type, x.target_type, x.target_class);
            };
            EXPECT_LE(k(n->key), k(n->next->key));
        }
    WorkCounts w;
    {
        WorkMeterScope s(&w);
        t.search({7, 8, 3, AVTAB_ALLOWED});
    }
    EXPECT_GE(w[Work::AvtabNode], 1u);
    EXPECT_EQ(w[Work::HashProbe], 1u) << "a search hashes its key and loads the slot once";
    // A key whose slot is empty costs its probe and no node, as avtab_search_node's loop, which
    // starts at the slot's head, does nothing more.
    for (uint16_t s = 100; s < 200; ++s) {
        AvtabKey k{s, s, 9, AVTAB_ALLOWED};
        if (t.slot(avtab_hash(k, t.mask()))) continue;
        WorkCounts e;
        {
            WorkMeterScope m(&e);
            EXPECT_EQ(t.search_node(k), nullptr);
        }
        EXPECT_EQ(e[Work::HashProbe], 1u);
        EXPECT_EQ(e[Work::AvtabNode], 0u);
        return;
    }
    ADD_FAILURE() << "no key with an empty slot";
}

TEST(Avtab, ConditionalTableKeepsRepeatsAndEnabled) {
    Avtab t;
    t.alloc(16);
    AvtabNode *a = t.insert_nonunique({1, 2, 3, AVTAB_ALLOWED}, data(1));
    AvtabNode *b = t.insert_nonunique({1, 2, 3, AVTAB_ALLOWED | AVTAB_ENABLED}, data(2));
    AvtabNode *c = t.insert_nonunique({1, 2, 3, AVTAB_AUDITDENY}, data(4));
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(t.nel(), 3u);
    // Search ignores ENABLED; the caller checks it.
    uint32_t enabled_allowed = 0, seen = 0;
    for (AvtabNode *n = t.search_node({1, 2, 3, AVTAB_ALLOWED}); n;
         n = Avtab::search_node_next(n, AVTAB_ALLOWED)) {
        ++seen;
        if (n->key.specified & AVTAB_ENABLED) enabled_allowed |= n->datum.u.data;
    }
    EXPECT_EQ(seen, 2u);
    EXPECT_EQ(enabled_allowed, 2u);
    // alloc_dup keeps the slot count, and a node's xperms are copied into the table.
    Avtab dup;
    dup.alloc_dup(t);
    EXPECT_EQ(dup.nslot(), t.nslot());
    EXPECT_EQ(dup.nel(), 0u);
    AvtabExtendedPerms xp;
    xp.specified = AVTAB_XPERMS_IOCTLFUNCTION;
    xp.perms[0] = 0xff;
    AvtabDatum xd;
    xd.u.xperms = &xp;
    AvtabNode *x = dup.insert({1, 1, 1, AVTAB_XPERMS_ALLOWED}, xd);
    ASSERT_NE(x, nullptr);
    EXPECT_NE(x->datum.u.xperms, &xp);
    EXPECT_EQ(x->datum.u.xperms->perms[0], 0xffu);
}

TEST(Avtab, HashSpreadsRealisticKeys) {
    Avtab t;
    t.alloc(20000);
    uint32_t n = 0;
    for (uint16_t s = 1; s <= 200 && n < 20000; ++s)
        for (uint16_t tt = 1; tt <= 100 && n < 20000; ++tt, ++n)
            t.insert({s, tt, static_cast<uint16_t>(1 + n % 7), AVTAB_ALLOWED}, data(1));
    auto st = t.chain_stats();
    EXPECT_GT(st.used_slots, t.nslot() * 9 / 10);
    EXPECT_LT(st.max_chain, 16u);
}

// Each simulation job numbers its tables from 1 (its results must not depend on the tables
// other jobs made before it on the thread); a scope inside another goes on with the outer
// numbering, so that two live tables never share a generation.
TEST(Avtab, GenerationsStartAgainInEachOutermostScope) {
    uint32_t first = 0;
    {
        Avtab::GenerationScope job;
        Avtab a;
        first = a.generation();
        {
            Avtab::GenerationScope inner;
            Avtab b;
            EXPECT_NE(b.generation(), a.generation());
        }
        Avtab c;
        EXPECT_NE(c.generation(), a.generation());
    }
    Avtab outside;  // made between jobs
    {
        Avtab::GenerationScope job;
        Avtab a;
        EXPECT_EQ(a.generation(), first);
    }
}

}  // namespace
}  // namespace locksim::ss
