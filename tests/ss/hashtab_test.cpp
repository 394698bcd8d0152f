#include "ss/hashtab.h"

#include <gtest/gtest.h>

#include <string>

#include "ss/symtab.h"

namespace locksim::ss {

struct TestNamed {
    std::string name;
    uint32_t value = 0;
    bool alias = false;
};
template <>
inline bool symtab_is_primary(const TestNamed &d) {
    return !d.alias;
}

namespace {

struct IntTraits {
    static uint32_t hash(uint32_t k) { return k * 2654435761u; }
    static int cmp(uint32_t a, uint32_t b) { return a < b ? -1 : a > b ? 1 : 0; }
};

TEST(Hashtab, SizingInsertSearchDuplicates) {
    Hashtab<uint32_t, int, IntTraits> h(100);
    EXPECT_EQ(h.size(), 128u);
    for (uint32_t i = 0; i < 1000; ++i)
        ASSERT_NE(h.insert(i, static_cast<int>(i) * 2), nullptr);
    EXPECT_EQ(h.nel(), 1000u);
    EXPECT_EQ(h.insert(5, 0), nullptr);
    ASSERT_NE(h.search(999), nullptr);
    EXPECT_EQ(*h.search(999), 1998);
    EXPECT_EQ(h.search(1000), nullptr);
    // Chains are sorted, so a miss stops early; each node examined is one probe.
    WorkCounts w;
    {
        WorkMeterScope s(&w);
        h.search(1000);
    }
    EXPECT_LE(w[Work::HashProbe], 16u);
    auto [longest, used] = h.chain_stats();
    EXPECT_EQ(used, 128u);
    EXPECT_GE(longest, 1000u / 128u);
    Hashtab<uint32_t, int, IntTraits> copy = h;
    EXPECT_EQ(copy.nel(), 1000u);
    EXPECT_EQ(*copy.search(10), 20);
    uint64_t sum = 0;
    copy.for_each([&](uint32_t k, int) { sum += k; });
    EXPECT_EQ(sum, 999u * 1000u / 2);
}

TEST(Hashtab, StringKeysUseTheSymbolHash) {
    EXPECT_EQ(symhash(""), 0u);
    EXPECT_EQ(symhash("a"), static_cast<uint32_t>('a'));
    EXPECT_EQ(symhash("ab"), (static_cast<uint32_t>('a') << 4) ^ 'b');
    Hashtab<std::string_view, int, StringKeyTraits> h(4);
    std::string names[] = {"file", "dir", "process", "socket", "lnk_file"};
    for (int i = 0; i < 5; ++i)
        h.insert(names[i], i);
    EXPECT_EQ(*h.search("process"), 2);
    EXPECT_EQ(h.search("proc"), nullptr);
}

TEST(Symtab, ByNameByValueAliasesAndCopy) {
    Symtab<TestNamed> s;
    s.init(4);
    s.add(std::make_unique<TestNamed>(TestNamed{"a", 1}));
    s.add(std::make_unique<TestNamed>(TestNamed{"b", 2}));
    s.add(std::make_unique<TestNamed>(TestNamed{"b_alias", 2, true}));
    EXPECT_EQ(s.add(std::make_unique<TestNamed>(TestNamed{"a", 3})), nullptr);
    s.nprim = 2;
    ASSERT_TRUE(s.index());
    EXPECT_EQ(s.by_value(2)->name, "b");
    EXPECT_EQ(s.find("b_alias")->value, 2u);
    EXPECT_EQ(s.by_value(3), nullptr);
    EXPECT_EQ(s.by_value(0), nullptr);
    EXPECT_EQ(s.nel(), 3u);
    Symtab<TestNamed> c = s;
    c.find("a")->value = 1;
    EXPECT_NE(c.find("a"), s.find("a"));
    EXPECT_EQ(c.by_value(2)->name, "b");
    s.nprim = 1;
    EXPECT_FALSE(s.index());  // value 2 above nprim
}

}  // namespace
}  // namespace locksim::ss
