// record/run_results.h: what a run's record keeps of its atomic sections.
#include "record/run_results.h"

#include <gtest/gtest.h>

using namespace locksim;
using namespace locksim::kernel;

TEST(RunResults, IntervalStatsKeepTheLongest) {
    IntervalStats st;
    st.keep = 3;
    for (Time len : {5, 1, 9, 3, 7, 9})
        st.add(AtomicInterval{0, len * 10, len, "t", "", "a", "b"});
    ASSERT_EQ(st.longest.size(), 3u);
    EXPECT_EQ(st.longest[0].length, 9);
    EXPECT_EQ(st.longest[1].length, 9);
    EXPECT_EQ(st.longest[2].length, 7);
    EXPECT_EQ(st.length.count(), 6u);
    EXPECT_EQ(st.total, 34);
}
