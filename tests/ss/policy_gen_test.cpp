// The synthetic generator: libsepol accepts its policies and counts them as we do, and the
// output is a pure function of the options.
#include <gtest/gtest.h>

#include "policy_test_util.h"
#include "ss/policy_gen.h"
#include "util/error.h"

namespace locksim::ss {
namespace {

struct GenCase {
    uint32_t types, booleans, version;
    bool mls;
};

class Generated : public ::testing::TestWithParam<GenCase> {};

TEST_P(Generated, AcceptedByLibsepolWithEqualCounts) {
    GenOptions o;
    o.types = GetParam().types;
    o.booleans = GetParam().booleans;
    o.version = GetParam().version;
    o.mls = GetParam().mls;
    o.seed = 5;
    Policydb db = policy_generate(o);
    std::vector<uint8_t> bytes = policydb_write(db, o.version);
    Policydb back = policydb_read(bytes, "generated");
    testing::expect_counts_equal(back, bytes, "generated");
    PolicyInfo info = policy_info(back);
    EXPECT_EQ(info.at("types"), o.types);
    EXPECT_EQ(info.at("booleans"), o.booleans);
    EXPECT_GT(info.at("avtab_allow"), info.at("avtab_dontaudit"));
    EXPECT_GT(info.at("constraints"), 0u);
    if (o.booleans) {
        EXPECT_GT(info.at("cond_avtab_entries"), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Generated,
                         ::testing::Values(GenCase{8, 0, 33, false}, GenCase{200, 10, 33, true},
                                           GenCase{1000, 60, 33, true},
                                           GenCase{1000, 60, 24, false},
                                           GenCase{3000, 300, 30, true}));

TEST(Generator, DeterministicFromTheSeed) {
    GenOptions o;
    o.types = 300;
    o.booleans = 20;
    auto a = policydb_write(policy_generate(o));
    auto b = policydb_write(policy_generate(o));
    EXPECT_TRUE(a == b);
    o.seed = 2;
    auto c = policydb_write(policy_generate(o));
    EXPECT_FALSE(a == c);
}

TEST(Generator, RefusesImpossibleSizes) {
    GenOptions o;
    o.types = 3;
    EXPECT_THROW(policy_generate(o), UserError);
    o.types = 70000;
    EXPECT_THROW(policy_generate(o), UserError);
}

}  // namespace
}  // namespace locksim::ss
