// The synthetic generator: libsepol accepts its policies and counts them as we do, and the
// output is a pure function of the options.
#include <gtest/gtest.h>

#include "policy_test_util.h"
#include "ss/policy_gen.h"
#include "ss/policy_info.h"
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

TEST(GenPresets, KeepTheirTotalsAndFanOut) {
    for (const GenPreset &p : gen_presets()) {
        SCOPED_TRACE(std::string(p.name));
        const GenOptions &o = p.options;
        Policydb db = policy_generate(o);
        PolicyInfo info = policy_info(db);
        EXPECT_EQ(info.at("types"), o.types);
        EXPECT_EQ(info.at("attributes"), o.attributes);
        EXPECT_EQ(info.at("booleans"), o.booleans);
        // Duplicate keys are dropped, so a few rules fewer than asked.
        EXPECT_GT(info.at("avtab_entries"), o.rules * 95 / 100);
        EXPECT_LE(info.at("avtab_entries"), o.rules);
        EXPECT_EQ(info.at("cond_avtab_entries"), o.cond_rules);
        // Measured as `policy info --fan-out` measures a distribution's policy: the domains
        // (the types a role authorises) are the generator's first types.
        FanOut f = policy_fan_out(db);
        EXPECT_EQ(f.domains_by, "roles");
        EXPECT_EQ(f.domains.types, o.types / 100 * o.domain_percent);
        EXPECT_EQ(f.domains.types + f.others.types, o.types);
        EXPECT_NEAR(f.domains.mean, o.domain_attrs + 1.0, 0.15 * (o.domain_attrs + 1.0));
        EXPECT_NEAR(f.others.mean, o.type_attrs + 1.0, 0.15 * (o.type_attrs + 1.0));
        EXPECT_LE(f.domains.max, o.domain_attrs_max + 1);
        EXPECT_GE(f.domains.max, o.domain_attrs_max / 2);
        EXPECT_LE(f.others.max, o.type_attrs_max + 1);
        // The tail drawn from [max/2, max] holds about tail_percent of the domains.
        EXPECT_NEAR(100.0 * static_cast<double>(f.domains.tail) / f.domains.types, o.tail_percent,
                    0.5 * o.tail_percent + 1.0);
        EXPECT_FALSE(p.source.empty());
    }
}

TEST(GenPresets, UnknownNameIsAUserError) {
    EXPECT_EQ(find_gen_preset("fedora-27").options.types, 4848u);
    try {
        find_gen_preset("fedora-99");
        FAIL() << "no error";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("debian-refpolicy"), std::string::npos);
    }
}

}  // namespace
}  // namespace locksim::ss
