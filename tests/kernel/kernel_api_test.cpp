#include "kernel/platform.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "record/run_results.h"

using namespace locksim::kernel;

TEST(KernelApi, LabelsAreInterned) {
    Label a("compute_av"), b(std::string("compute_av")), c("set_bools");
    EXPECT_TRUE(a == b);
    EXPECT_FALSE(a == c);
    EXPECT_EQ(a.name(), "compute_av");
    EXPECT_TRUE(Label().empty());
    EXPECT_EQ(label_name(a.id()), "compute_av");
}

TEST(KernelApi, NoPlatformIsALogicError) {
    EXPECT_EQ(current_or_null(), nullptr);
    EXPECT_THROW((void)now(), std::logic_error);
}

TEST(KernelApi, SiteNamesFileAndLine) {
    Site s{"read_lock", std::source_location::current()};
    EXPECT_NE(s.str().find("read_lock @ kernel_api_test.cpp:"), std::string::npos) << s.str();
}

TEST(KernelApi, IntervalStatsKeepTheLongest) {
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
