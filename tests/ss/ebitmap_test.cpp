#include "ss/ebitmap.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "ss/binary_io.h"

namespace locksim::ss {
namespace {

Ebitmap from_set(const std::set<uint32_t> &s) {
    Ebitmap e;
    for (uint32_t b : s)
        e.set_bit(b, true);
    return e;
}

std::set<uint32_t> random_set(std::mt19937 &rng, uint32_t range, uint32_t n) {
    std::set<uint32_t> s;
    for (uint32_t i = 0; i < n; ++i)
        s.insert(rng() % range);
    return s;
}

TEST(Ebitmap, SetGetClearAcrossNodes) {
    Ebitmap e;
    EXPECT_TRUE(e.empty());
    for (uint32_t b : {0u, 63u, 64u, 383u, 384u, 1023u, 5000u})
        e.set_bit(b, true);
    EXPECT_EQ(e.cardinality(), 7u);
    EXPECT_EQ(e.node_count(), 4u);  // [0,384) [384,768) [768,1152) [4992,5376)
    EXPECT_EQ(e.highbit(), 5376u);
    EXPECT_EQ(e.last_set_bit(), 5000u);
    EXPECT_TRUE(e.get_bit(383));
    EXPECT_FALSE(e.get_bit(382));
    e.set_bit(5000, false);  // empties the last node: highbit shrinks
    EXPECT_EQ(e.highbit(), 1152u);
    std::vector<uint32_t> bits(e.bits().begin(), e.bits().end());
    EXPECT_EQ(bits, (std::vector<uint32_t>{0, 63, 64, 383, 384, 1023}));
}

TEST(Ebitmap, CopyCmpAndOr) {
    std::mt19937 rng(7);
    for (int i = 0; i < 200; ++i) {
        auto a = random_set(rng, 3000, rng() % 60), b = random_set(rng, 3000, rng() % 60);
        Ebitmap ea = from_set(a), eb = from_set(b);
        Ebitmap copy = ea;
        EXPECT_TRUE(ebitmap_cmp(copy, ea));
        EXPECT_EQ(ebitmap_cmp(ea, eb), a == b);
        std::set<uint32_t> i_and, i_or = a;
        for (uint32_t x : a)
            if (b.count(x)) i_and.insert(x);
        i_or.insert(b.begin(), b.end());
        EXPECT_TRUE(ebitmap_cmp(ebitmap_and(ea, eb), from_set(i_and)));
        EXPECT_TRUE(ebitmap_cmp(ebitmap_or(ea, eb), from_set(i_or)));
    }
}

// contains(last_e2bit) against a bit-by-bit reference on random bitmaps, including subsets,
// supersets and bounds that cut through e2.
TEST(Ebitmap, ContainsMatchesBitByBitReference) {
    std::mt19937 rng(11);
    int true_results = 0;
    for (int i = 0; i < 3000; ++i) {
        uint32_t range = 1 + rng() % 2048;
        auto a = random_set(rng, range, rng() % 200);
        std::set<uint32_t> b;
        if (rng() % 2) {  // mostly a subset of a
            for (uint32_t x : a)
                if (rng() % 3 == 0) b.insert(x);
            if (rng() % 4 == 0) b.insert(rng() % range);
        } else {
            b = random_set(rng, range, rng() % 50);
        }
        uint32_t last = rng() % 3 == 0 ? 0 : rng() % (range + 10);
        bool expect = true;
        for (uint32_t x : b)
            if (!a.count(x) || (last && x > last)) expect = false;
        Ebitmap ea = from_set(a), eb = from_set(b);
        EXPECT_EQ(ebitmap_contains(ea, eb, last), expect) << i;
        EXPECT_EQ(ebitmap_contains_bitwise(ea, eb, last), expect) << i;
        true_results += expect;
    }
    EXPECT_GT(true_results, 300);
}

TEST(Ebitmap, ContainsCountsFarLessWorkThanBitByBit) {
    Ebitmap all, some;
    for (uint32_t b = 0; b < 1024; ++b) {
        all.set_bit(b, true);
        if (b % 2) some.set_bit(b, true);
    }
    WorkCounts fast, slow;
    {
        WorkMeterScope s(&fast);
        EXPECT_TRUE(ebitmap_contains(all, some, 1024));
    }
    {
        WorkMeterScope s(&slow);
        EXPECT_TRUE(ebitmap_contains_bitwise(all, some, 1024));
    }
    EXPECT_EQ(slow[Work::BitIteration], 512u);
    EXPECT_GT(slow[Work::EbitmapNode], 10 * fast[Work::EbitmapNode]);
}

TEST(Ebitmap, CmpCountsEveryNodePairItComparesTheDifferingOneIncluded) {
    // ebitmap_cmp: a call (out of line in the kernel), the high bits first, then node by node a
    // memcmp of the maps until one differs.
    auto cmp_work = [](const Ebitmap &a, const Ebitmap &b) {
        WorkCounts w;
        WorkMeterScope s(&w);
        ebitmap_cmp(a, b);
        return w;
    };
    // Three nodes each (bits up to 1000), differing in the second node: two pairs compared.
    const Ebitmap a = from_set({1, 500, 1000}), b = from_set({1, 501, 1000});
    WorkCounts w = cmp_work(a, b);
    EXPECT_EQ(w[Work::EbitmapNode], 2u);
    EXPECT_EQ(w[Work::EbitmapWord], 2u * kEbitmapUnitNumbers);
    EXPECT_EQ(w[Work::Call], 1u);
    // Equal: every pair.
    w = cmp_work(a, a);
    EXPECT_EQ(w[Work::EbitmapNode], 3u);
    // Different high bits: no node compared.
    w = cmp_work(a, from_set({1}));
    EXPECT_EQ(w[Work::EbitmapNode], 0u);
    EXPECT_EQ(w[Work::EbitmapWord], 0u);
    EXPECT_EQ(w[Work::Call], 1u) << "the call is made all the same";
}

TEST(Ebitmap, ReadWriteRoundTrip) {
    std::mt19937 rng(3);
    for (int i = 0; i < 100; ++i) {
        Ebitmap e = from_set(random_set(rng, 5000, rng() % 100));
        BinaryWriter w;
        ebitmap_write(w, e);
        auto bytes = w.take();
        BinaryReader r(bytes, "test");
        Ebitmap back;
        ebitmap_read(r, back);
        EXPECT_TRUE(ebitmap_cmp(e, back));
        EXPECT_EQ(r.remaining(), 0u);
    }
}

TEST(Ebitmap, ReadRejectsMalformedMaps) {
    auto bad = [](std::vector<uint32_t> words) {
        std::vector<uint8_t> bytes(words.size() * 4);
        std::memcpy(bytes.data(), words.data(), bytes.size());
        BinaryReader r(bytes, "test");
        Ebitmap e;
        EXPECT_THROW(ebitmap_read(r, e), UserError);
    };
    bad({32, 64, 0});                      // map unit
    bad({64, 64, 0});                      // high bit with no maps
    bad({64, 64, 1, 7, 1, 0});             // unaligned start bit
    bad({64, 64, 1, 0, 0, 0});             // empty map
    bad({64, 128, 2, 64, 1, 0, 0, 1, 0});  // out of order
    bad({64, 4096, 1, 0, 1, 0});           // high bit far beyond the last map
    bad({64, 64, 0x7fffffff});             // impossible count
}

}  // namespace
}  // namespace locksim::ss
