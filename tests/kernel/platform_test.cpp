// kernel/platform.h: labels, sites, and the calling thread's platform.
#include "kernel/platform.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using namespace locksim::kernel;

TEST(PlatformApi, LabelsAreInterned) {
    Label a("compute_av"), b(std::string("compute_av")), c("set_bools");
    EXPECT_TRUE(a == b);
    EXPECT_FALSE(a == c);
    EXPECT_EQ(a.name(), "compute_av");
    EXPECT_TRUE(Label().empty());
    EXPECT_EQ(label_name(a.id()), "compute_av");
}

TEST(PlatformApi, NoPlatformIsALogicError) {
    EXPECT_EQ(current_or_null(), nullptr);
    EXPECT_THROW((void)now(), std::logic_error);
}

TEST(PlatformApi, SiteNamesFileAndLine) {
    Site s{"read_lock", locksim::SourceLocation::current()};
    EXPECT_NE(s.str().find("read_lock @ platform_test.cpp:"), std::string::npos) << s.str();
}
