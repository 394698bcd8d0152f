#include "sim/profile.h"

#include <gtest/gtest.h>

#include <tuple>

#include "util/error.h"

using namespace locksim;
using namespace locksim::sim;

TEST(Profile, ShippedProfilesLoadAndSayHowTheyWereDerived) {
    auto names = list_profiles();
    for (const char *want : {"x86-modern", "xeon-w3520", "arm-xscale", "sh4"})
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    for (const auto &n : names) {
        CpuProfile p = find_profile(n);
        EXPECT_EQ(p.name, n);
        EXPECT_FALSE(p.derivation.empty());
        EXPECT_GT(p.primitive.context_switch, 0);
    }
}

TEST(Profile, CallsCostMostOnSh4) {
    // The 2007 thread: function calls dominate the AVC path on SH-4, far less on x86.
    auto share = [](const CpuProfile &p) {
        WorkCounts avc_hit;
        avc_hit.n[static_cast<size_t>(Work::HashProbe)] = 2;
        avc_hit.n[static_cast<size_t>(Work::Call)] = 8;
        avc_hit.n[static_cast<size_t>(Work::AuditCall)] = 1;
        WorkCounts calls;
        calls.n[static_cast<size_t>(Work::Call)] = 8;
        calls.n[static_cast<size_t>(Work::AuditCall)] = 1;
        return static_cast<double>(p.cost(calls)) / static_cast<double>(p.cost(avc_hit));
    };
    EXPECT_GT(share(find_profile("sh4")), share(find_profile("arm-xscale")));
    EXPECT_GT(share(find_profile("sh4")), 0.9);
}

TEST(Profile, CountedCostIsExactIntegerArithmetic) {
    CpuProfile p = find_profile("x86-modern");
    WorkCounts c;
    c.n[static_cast<size_t>(Work::BytesCopied)] = 1000000;  // 0.1 ns each
    EXPECT_EQ(p.cost(c), 100000);
}

TEST(Profile, FormatRoundTrips) {
    CpuProfile p = find_profile("xeon-w3520");
    p.calibration["host"] = "test";
    CpuProfile back = parse_profile(format_profile(p), "roundtrip.toml");
    EXPECT_EQ(back.work_ps, p.work_ps);
    EXPECT_EQ(back.primitive.ipi, p.primitive.ipi);
    EXPECT_EQ(back.calibration.at("host"), "test");
    EXPECT_EQ(back.derivation, p.derivation);
}

namespace {
// The sh4 profile as written before work kind `key` existed: without its line.
CpuProfile sh4_without(const std::string &key) {
    std::string text = format_profile(find_profile("sh4"));
    const size_t at = text.find(key + " = ");
    EXPECT_NE(at, std::string::npos) << key;
    if (at != std::string::npos) text.erase(at, text.find('\n', at) + 1 - at);
    return parse_profile(text, "old.toml");
}
}  // namespace

// A profile written before vfs_node existed still loads; the cost is derived from its alloc.
TEST(Profile, OlderProfileWithoutVfsNodeDerivesIt) {
    CpuProfile old = sh4_without("vfs_node");
    const auto vfs = static_cast<size_t>(Work::VfsNode);
    const auto alloc = static_cast<size_t>(Work::Alloc);
    EXPECT_EQ(old.work_ps[vfs], kVfsNodePerAlloc * old.work_ps[alloc]);
    EXPECT_EQ(find_profile("x86-modern").work_ps[vfs], 1000000);  // 1 us, as written
}

// A profile written before cache_free existed still loads; the price is derived from its free.
TEST(Profile, OlderProfileWithoutCacheFreeDerivesIt) {
    CpuProfile old = sh4_without("cache_free");
    const auto cache_free = static_cast<size_t>(Work::CacheFree);
    EXPECT_EQ(old.work_ps[cache_free], 800000);                        // 4/5 of sh4's 1000 ns free
    EXPECT_EQ(find_profile("x86-modern").work_ps[cache_free], 20000);  // 20 ns, as written
}

TEST(Profile, ErrorsNameFileLineAndColumn) {
    std::string bad = format_profile(find_profile("x86-modern")) + "\n[primitive_ns]\n";
    try {
        (void)parse_profile("name = \"x\"\nderivation = \"d\"\n[work_ns]\navtab_nod = 1\n",
                            "bad.toml");
        FAIL() << "accepted an unknown work kind";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("bad.toml:4:1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("avtab_nod"), std::string::npos);
    }
    EXPECT_THROW((void)parse_profile("name = [", "broken.toml"), UserError);
    EXPECT_THROW((void)parse_profile("name = \"x\"\n", "noderiv.toml"), UserError);
    EXPECT_THROW((void)find_profile("no-such-cpu"), UserError);
    EXPECT_THROW((void)parse_profile(bad, "dup.toml"), UserError);  // table defined twice
}

// A cost, a scale or a speed so large (or small) that the engine's 64-bit sums would overflow
// is refused where it is written; the largest accepted cost still prices work exactly.
TEST(Profile, OverflowingNumbersAreRefused) {
    const std::string text = format_profile(find_profile("sh4"));
    auto with = [&](const std::string &from, const std::string &to) {
        const size_t at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return std::string(text).replace(at, from.size(), to);
    };
    for (const auto &[from, to, why] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"\ncall = ", "\ncall = 1e308 #", "'call' must be a number of nanoseconds from 0"},
             {"\ncall = ", "\ncall = 1000001 #", "'call' must be a number of nanoseconds from 0"},
             {"\nwakeup = ", "\nwakeup = 1e30 #", "'wakeup' must be a number of nanoseconds"},
             {"\nscale = ", "\nscale = 1e300 #", "'scale' must be from 0 to 1000000"}}) {
        try {
            (void)parse_profile(with(from, to), "big.toml");
            ADD_FAILURE() << "accepted " << to;
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find("big.toml:"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
    CpuProfile most = parse_profile(with("\ncall = ", "\ncall = 1000000 #"), "most.toml");
    EXPECT_EQ(most.work_ps[static_cast<size_t>(Work::Call)], 1'000'000'000);
    const std::string clusters = format_profile(find_profile("phone-big-little"));
    const size_t at = clusters.find("speed = ");
    ASSERT_NE(at, std::string::npos);
    std::string slow = clusters;
    slow.replace(at, clusters.find('\n', at) - at, "speed = 1e-9");
    EXPECT_THROW((void)parse_profile(slow, "slow.toml"), UserError);
}
