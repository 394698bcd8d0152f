#include "sim/profile.h"

#include <gtest/gtest.h>

#include <cmath>
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

// A profile written before scan_entry existed still loads: a scan's step costs its hash_probe,
// as it did when the scan counted one.
TEST(Profile, OlderProfileWithoutScanEntryPricesItAsAHashProbe) {
    CpuProfile old = sh4_without("scan_entry");
    const auto scan = static_cast<size_t>(Work::ScanEntry);
    const auto probe = static_cast<size_t>(Work::HashProbe);
    EXPECT_GT(old.work_ps[probe], 0);
    EXPECT_EQ(old.work_ps[scan], old.work_ps[probe]);
    CpuProfile stated = find_profile("sh4");
    stated.work_ps[scan] = 1234;
    EXPECT_EQ(parse_profile(format_profile(stated), "new.toml").work_ps[scan], 1234);
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

// Every shipped profile states how uncertain each price family is, and why; the file's
// [uncertainty] round-trips, a family left out takes its default, and a mistake names the place.
TEST(Profile, UncertaintyIsStatedAndChecked) {
    for (const auto &n : list_profiles()) {
        const CpuProfile p = find_profile(n);
        for (size_t k = 0; k < kPriceFamilies; ++k) {
            EXPECT_TRUE(p.uncertainty.stated[k]) << n << " " << kPriceFamilyNames[k];
            EXPECT_GE(p.uncertainty.factor[k], 1.0) << n;
        }
        EXPECT_FALSE(p.uncertainty.why.empty()) << n;
    }
    const CpuProfile p = find_profile("x86-modern");
    const CpuProfile back = parse_profile(format_profile(p), "roundtrip.toml");
    EXPECT_EQ(back.uncertainty.factor, p.uncertainty.factor);
    EXPECT_EQ(back.uncertainty.why, p.uncertainty.why);
    std::string text = format_profile(p);
    text.erase(text.find("[uncertainty]"));
    const CpuProfile partial = parse_profile(text + "[uncertainty]\nwork = 1.2\n", "partial.toml");
    EXPECT_EQ(partial.uncertainty.factor[0], 1.2);
    EXPECT_TRUE(partial.uncertainty.stated[0]);
    EXPECT_EQ(partial.uncertainty.factor[2], kDefaultUncertainty[2]);
    EXPECT_FALSE(partial.uncertainty.stated[2]);
    for (const auto &[line, why] : {std::pair{"cache = 2", "unknown price family 'cache'"},
                                    std::pair{"work = 0.5", "'work' must be a factor from 1"}}) {
        try {
            (void)parse_profile(text + "[uncertainty]\n" + line + "\n", "u.toml");
            FAIL() << "accepted " << line;
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("u.toml:"), std::string::npos) << e.what();
        }
    }
}

// A world's prices: each family multiplied by its factor, the others as they were.
TEST(Profile, WithPricesScalesEachFamilyAlone) {
    const CpuProfile p = find_profile("x86-server");
    EXPECT_EQ(with_prices(p, kNominalPrices).work_ps, p.work_ps);
    const CpuProfile w = with_prices(p, {2.0, 1.0, 1.0, 1.0});
    for (size_t i = 0; i < kWorkKinds; ++i)
        EXPECT_EQ(w.work_ps[i], 2 * p.work_ps[i]);
    EXPECT_EQ(w.primitive.ipi, p.primitive.ipi);
    EXPECT_EQ(w.memory.dram_ns, p.memory.dram_ns);
    const CpuProfile m = with_prices(p, {1.0, 1.5, 1.0, 1.0});
    EXPECT_DOUBLE_EQ(m.memory.dram_ns, 1.5 * p.memory.dram_ns);
    EXPECT_DOUBLE_EQ(m.memory.llc_ns, 1.5 * p.memory.llc_ns);
    EXPECT_EQ(m.work_ps, p.work_ps);
    const CpuProfile g = with_prices(p, {1.0, 1.0, 3.0, 0.5});
    EXPECT_EQ(g.primitive.context_switch, 3 * p.primitive.context_switch);
    EXPECT_EQ(g.primitive.rcu_exp_setup,
              std::llround(0.5 * static_cast<double>(p.primitive.rcu_exp_setup)));
    EXPECT_EQ(g.primitive.rcu_exp_handler,
              std::llround(0.5 * static_cast<double>(p.primitive.rcu_exp_handler)));
}
