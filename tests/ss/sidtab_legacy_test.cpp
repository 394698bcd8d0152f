// The legacy era's SID -> context: a walk of the SID's ascending chain (128 chains), so a search
// visits about N/128 nodes; an unknown SID walks its chain and then the unlabeled SID's.
#include <gtest/gtest.h>

#include "sidtab_test_util.h"
#include "ss/sidtab.h"
#include "util/work_meter.h"

namespace locksim::ss {
namespace {

uint64_t probes_of_search(Sidtab &t, uint32_t sid) {
    WorkCounts w;
    {
        WorkMeterScope s(&w);
        t.search_entry(sid);
    }
    return w[Work::HashProbe];
}

TEST(SidtabLegacy, SearchWalksTheChain) {
    Sidtab t(0, SidtabEra::Legacy);
    ASSERT_EQ(t.set_initial(SECINITSID_UNLABELED, testing::typed_context(1)), 0);
    uint32_t last = 0;
    for (uint32_t i = 0; i < 1280; ++i)
        ASSERT_EQ(t.context_to_sid(testing::typed_context(100 + i), &last), 0);
    // SIDs 3, 131, 259, ... share a chain: the last SID of the table is behind about
    // (last - 3) / 128 other nodes of its chain that exist (initial SIDs other than 3 unset).
    const uint32_t ahead = (last - SECINITSID_UNLABELED) / kSidtabLegacyBuckets;
    const Sidtab::Entry *e = t.search_entry(last);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->sid, last);
    // A SID whose chain ends before it: every node of the chain, then the unlabeled SID (the
    // first node of its chain).
    EXPECT_EQ(t.search_entry(last + kSidtabLegacyBuckets)->sid, SECINITSID_UNLABELED);
    const uint64_t near = probes_of_search(t, kSecInitSidNum + 1);
    const uint64_t far = probes_of_search(t, last);
    EXPECT_EQ(near, 1u);
    EXPECT_GE(far, 10u);
    EXPECT_LE(far, ahead + 1);
    EXPECT_GT(probes_of_search(t, last + kSidtabLegacyBuckets), far);
    // The hash era indexes: one probe whatever the SID.
    Sidtab h(0, SidtabEra::Hash);
    ASSERT_EQ(h.set_initial(SECINITSID_UNLABELED, testing::typed_context(1)), 0);
    for (uint32_t i = 0; i < 1280; ++i)
        ASSERT_EQ(h.context_to_sid(testing::typed_context(100 + i), &last), 0);
    EXPECT_EQ(probes_of_search(h, last), 1u);
}

// sidtab_search_context (v4.15): a context's search goes bucket by bucket (SID & 127), each
// chain in ascending SID order, so the context of SID 128 (the first node of bucket 0) is found
// at once, and that of SID 129 (bucket 1's first) behind every node of bucket 0.
TEST(SidtabLegacy, ContextSearchGoesBucketByBucket) {
    Sidtab t(0, SidtabEra::Legacy);
    ASSERT_EQ(t.set_initial(SECINITSID_UNLABELED, testing::typed_context(1)), 0);
    uint32_t type_of[2] = {0, 0}, in_bucket0 = 0;
    for (uint32_t i = 0; i < 1280; ++i) {
        uint32_t sid = 0;
        ASSERT_EQ(t.context_to_sid(testing::typed_context(100 + i), &sid), 0);
        if (sid == 128 || sid == 129) type_of[sid - 128] = 100 + i;
        in_bucket0 += sid % kSidtabLegacyBuckets == 0;
    }
    ASSERT_NE(type_of[0], 0u);
    ASSERT_NE(type_of[1], 0u);
    auto probes = [&t](uint32_t type) {
        WorkCounts w;
        uint32_t sid = 0;
        {
            WorkMeterScope s(&w);
            EXPECT_EQ(t.context_to_sid(testing::typed_context(type), &sid), 0);
        }
        return w[Work::HashProbe] + w[Work::ScanEntry];  // the small cache, the nodes
    };
    const uint64_t first = probes(type_of[0]), second = probes(type_of[1]);
    EXPECT_LE(first, kSidtabCacheLen + 1);  // the small cache, then one node
    EXPECT_EQ(second - first, in_bucket0);
    EXPECT_EQ(in_bucket0, 10u);
}

TEST(SidtabLegacy, UnknownAndInvalidGiveUnlabeled) {
    Sidtab t(0, SidtabEra::Legacy);
    ASSERT_EQ(t.set_initial(SECINITSID_UNLABELED, testing::typed_context(1)), 0);
    Context bad;
    bad.str = "u:r:gone_t";
    uint32_t sid = 0;
    ASSERT_EQ(t.context_to_sid(bad, &sid), 0);
    EXPECT_EQ(t.search_entry(sid)->sid, SECINITSID_UNLABELED);
    EXPECT_EQ(t.search_entry(sid, true)->sid, sid);
    EXPECT_EQ(t.search_entry(5000)->sid, SECINITSID_UNLABELED);
    EXPECT_EQ(t.search_entry(SECSID_NULL)->sid, SECINITSID_UNLABELED);
    Sidtab empty(0, SidtabEra::Legacy);
    EXPECT_EQ(empty.search_entry(7), nullptr);
}

}  // namespace
}  // namespace locksim::ss
