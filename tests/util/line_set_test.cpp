#include "util/line_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "util/work_meter.h"

namespace locksim::ss {
namespace {

// Random calls' lines, with repeats (a small pool) and without (a large one), of every size up
// to several growths of the set, through one set reused across calls as the memo reuses it.
TEST(LineSet, DistinctSampledLinesMatchASortedReference) {
    std::mt19937_64 rng(7);
    LineSet seen;
    for (int call = 0; call < 400; ++call) {
        const uint64_t pool = call % 2 ? 50 + rng() % 500 : uint64_t{1} << 40;
        const size_t n = rng() % (call % 5 == 0 ? 20000 : 700);
        const int shift = static_cast<int>(rng() % 6);
        std::vector<uint64_t> lines;
        for (size_t i = 0; i < n; ++i)
            lines.push_back(mem_line(static_cast<MemRegion>(rng() % 3), rng() % 4, rng() % pool));

        std::vector<uint64_t> want = lines;
        std::sort(want.begin(), want.end());
        want.erase(std::unique(want.begin(), want.end()), want.end());
        const uint64_t distinct = want.size();
        std::erase_if(want, [shift](uint64_t l) { return !line_sampled(l, shift); });

        EXPECT_EQ(keep_distinct_sampled(lines, shift, seen), distinct) << "call " << call;
        EXPECT_EQ(lines, want) << "call " << call;
    }
}

// A line's access kind (dependent, written) is not part of it: a line read both ways is one
// line, and it is sampled as its tag is (as the cache model samples it).
TEST(LineSet, AccessKindsDoNotChangeALineOrItsSample) {
    LineSet seen;
    for (int shift = 1; shift <= 4; ++shift) {
        std::vector<uint64_t> tags, lines;
        for (uint64_t k = 0; k < 2000; ++k)
            tags.push_back(mem_line(MemRegion::AvtabNode, 3, k));
        for (uint64_t t : tags) {
            lines.push_back(t | kDependentLine);
            lines.push_back(t);
            lines.push_back(t | kWrittenLine);
        }
        EXPECT_EQ(keep_distinct_sampled(lines, shift, seen), tags.size());
        std::vector<uint64_t> want;
        for (uint64_t t : tags)
            if (line_sampled(t, shift)) want.push_back(t | kDependentLine);  // the first kept
        EXPECT_EQ(lines, want) << "shift " << shift;
    }
}

// More clears than the one-byte stamps count, so they wrap.
TEST(LineSet, InsertAndContainsFollowAStdSetAcrossClears) {
    std::mt19937_64 rng(11);
    LineSet s;
    for (int round = 0; round < 600; ++round) {
        std::set<uint64_t> ref;
        s.clear();
        const uint64_t pool = 1 + rng() % 5000;
        for (int i = 0; i < 400 + round % 7 * 300; ++i) {
            const uint64_t tag = rng() % pool;
            ASSERT_EQ(s.contains(tag), ref.count(tag) == 1);
            ASSERT_EQ(s.insert(tag), ref.insert(tag).second);
        }
        EXPECT_EQ(s.size(), ref.size());
    }
}

}  // namespace
}  // namespace locksim::ss
