// A linear or legacy SID-table scan records for the cache model only the entries whose lines the
// sampling keeps, and counts the others' touches (Sidtab::scan_lines). What it records must be
// what recording every line gives: the same lines, in the same order, with the same kinds, and
// the same number of touches. A recording that marks streams records every line (no entry is
// skipped), so with the stream marks taken off it is the reference.
#include <gtest/gtest.h>

#include <vector>

#include "sidtab_test_util.h"
#include "ss/sidtab.h"
#include "util/work_meter.h"

namespace locksim::ss {
namespace {

// Same user, role and type; categories {k, k + 500} on both levels (k + 500 in a second node), so
// that every compare goes past the type and reads the first category node of each level.
Context mcs_context(uint32_t k) {
    Context c = testing::typed_context(7);
    for (MlsLevel &l : c.range.level) {
        l.sens = 1;
        l.cat.set_bit(k, true);
        l.cat.set_bit(k + 500, true);
    }
    return c;
}

struct Recorded {
    std::vector<uint64_t> lines;
    uint64_t touches = 0;
};

// The lookup of c (present in t), after lookups of the contexts of `flush` fill the small cache
// in the same order each time: every recording of c then scans alike.
Recorded record(Sidtab &t, const Context &c, const std::vector<Context> &flush, int shift,
                bool streams) {
    uint32_t sid = 0;
    for (const Context &f : flush)
        EXPECT_EQ(t.context_to_sid(f, &sid), 0);
    WorkCounts w;
    w.line_shift = shift;
    w.streams = streams;
    {
        WorkMeterScope meter(&w);
        EXPECT_EQ(t.context_to_sid(c, &sid), 0);
    }
    Recorded r{{}, w.line_touches};
    for (uint64_t l : w.lines)
        r.lines.push_back(l & ~kStreamedLine);
    return r;
}

void expect_as_every_line(SidtabEra era) {
    Sidtab t(0, era);
    ASSERT_EQ(t.set_initial(SECINITSID_UNLABELED, testing::typed_context(1)), 0);
    uint32_t sid = 0;
    for (uint32_t k = 0; k < 600; ++k) {
        // Other types between, whose compares stop at the type.
        ASSERT_EQ(t.context_to_sid(testing::typed_context(100 + k), &sid), 0);
        ASSERT_EQ(t.context_to_sid(mcs_context(k), &sid), 0);
    }
    std::vector<Context> flush;
    for (uint32_t k = 0; k < kSidtabCacheLen; ++k)
        flush.push_back(testing::typed_context(100 + k));
    // The last context inserted (found behind about every entry) and one half way; sampled at
    // one line in 8, then every line (a new sampling: the entries' plans are worked out again).
    for (int shift : {3, 0}) {
        for (uint32_t k : {599u, 300u}) {
            const Recorded every = record(t, mcs_context(k), flush, shift, true);
            const Recorded planned = record(t, mcs_context(k), flush, shift, false);
            EXPECT_GT(every.touches, k) << "a scan, not the small cache";
            EXPECT_EQ(planned.touches, every.touches) << "shift " << shift;
            EXPECT_EQ(planned.lines, every.lines) << "shift " << shift;
            if (shift == 3) {
                EXPECT_LT(every.lines.size(), every.touches / 4) << "the sampling keeps a few";
                EXPECT_GT(every.lines.size(), 0u);
            }
        }
    }
}

TEST(SidtabScanLines, LegacyRecordsWhatEveryLineGives) {
    expect_as_every_line(SidtabEra::Legacy);
}

TEST(SidtabScanLines, LinearRecordsWhatEveryLineGives) {
    expect_as_every_line(SidtabEra::Linear);
}

}  // namespace
}  // namespace locksim::ss
