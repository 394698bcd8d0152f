// The cache model over the security server's own structures, from real simulated runs: a SID
// table's linear scan (the 5.0-5.5 era's context_to_sid) costs a miss per entry once the table
// no longer fits a CPU's private cache, and its private-cache price when it does.
#include <gtest/gtest.h>

#include <vector>

#include "sim/sim_platform.h"
#include "sim_test_util.h"
#include "ss/sidtab.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;

namespace {

constexpr int64_t kProbePs = 1000;            // a probe (an entry looked at) when hot: 1 ns
constexpr int64_t kLlcNs = 10, kDramNs = 50;  // simulated times are in ns

// `private_life_us`, `llc_life_us`: the lines' lifetimes in the private and last levels (0: none).
sim::SimConfig config(bool memory, double private_life_us = 0, double llc_life_us = 0) {
    auto cfg = sim::testing::zero_config(1, 100 * kMsec);
    cfg.profile.work_ps[static_cast<size_t>(Work::HashProbe)] = kProbePs;
    if (memory) {
        cfg.profile.memory.private_kib = 64;  // 1024 lines
        cfg.profile.memory.llc_kib = 8192;
        cfg.profile.memory.llc_ns = kLlcNs;
        cfg.profile.memory.dram_ns = kDramNs;
        cfg.profile.memory.sample_one_in = 1;  // every line: exact prices
        cfg.profile.memory.private_lifetime_us = private_life_us;
        cfg.profile.memory.llc_lifetime_us = llc_life_us;
    }
    return cfg;
}

// MCS-style contexts: one user, role and type, each with categories of its own (as a phone's
// apps have), so that a scan compares every entry's categories; or, with `typed`, each of a
// type of its own, so that a scan reads each entry's type and nothing else.
ss::Context app_context(uint32_t i, bool typed = false) {
    ss::Context c;
    c.user = c.role = 1;
    c.type = typed ? 1 + i : 1;
    for (ss::MlsLevel &l : c.range.level) {
        l.sens = 1;
        l.cat.set_bit(i % 256, true);
        l.cat.set_bit(256 + (i / 256) % 256, true);
    }
    return c;
}

// Three context_to_sid calls for contexts the table lacks (each a scan of every entry), timed
// in a task on the simulated CPU; the table of `entries` is built before the run. The task
// sleeps `idle` between scans; the run's profile is `cfg` (config(memory) by default).
std::vector<Time> scans(uint32_t entries, bool memory, bool typed = false, Time idle = 0,
                        const sim::SimConfig *cfg = nullptr,
                        ss::SidtabEra era = ss::SidtabEra::Linear) {
    ss::Sidtab table(0, era);
    for (uint32_t i = 0; i < entries; ++i) {
        uint32_t sid = 0;
        EXPECT_EQ(table.context_to_sid(app_context(i, typed), &sid), 0);
    }
    SimPlatform sim(cfg ? *cfg : config(memory));
    std::vector<Time> took;
    sim.create_task({"scanner", Sched::Other, 0, 0, false}, [&] {
        for (uint32_t k = 0; k < 3; ++k) {
            const ss::Context fresh = app_context(entries + 1000 + k, typed);
            const Time t0 = now();
            compute("context_to_sid", [&] {
                uint32_t sid = 0;
                // The reverse lookup alone: the miss of the scan, not the insert after it.
                sid = table.lookup(fresh, 0);
                EXPECT_EQ(sid, 0u);
            });
            took.push_back(now() - t0);
            if (idle > 0) sleep_for(idle);
        }
    });
    sim.run();
    return took;
}

}  // namespace

TEST(CoreLines, AScanOfATableLargerThanThePrivateCacheMissesOnEveryEntry) {
    // 4000 entries of 104 bytes, and their categories' nodes: several times the 64 KiB cache.
    const uint32_t n = 4000;
    const std::vector<Time> flat = scans(n, false), model = scans(n, true);
    ASSERT_EQ(model.size(), 3u);
    // Without the model an entry costs its probe; every scan the same.
    EXPECT_EQ(flat[0], flat[1]);
    const double hot = static_cast<double>(flat[1]) / n;
    // The first scan finds nothing cached; the rescans find the entries in the last level only:
    // each entry pays at least the last level's latency on top of its probe.
    for (size_t k = 0; k < model.size(); ++k)
        EXPECT_GE(static_cast<double>(model[k]) / n, hot + kLlcNs) << "scan " << k;
    EXPECT_GE(static_cast<double>(model[0]) / n, hot + kDramNs);
}

TEST(CoreLines, AScanThatReadsOnlyTheEntriesMissesOnEveryEntry) {
    // Every entry of another type: the scan reads each entry's type (a line per 104-byte entry,
    // 6500 lines for 4000) and no category.
    const uint32_t n = 4000;
    const std::vector<Time> flat = scans(n, false, true), model = scans(n, true, true);
    ASSERT_EQ(model.size(), 3u);
    const double hot = static_cast<double>(flat[1]) / n;
    for (size_t k = 1; k < model.size(); ++k)
        EXPECT_GE(static_cast<double>(model[k]) / n, hot + kLlcNs) << "scan " << k;
}

TEST(CoreLines, ARescanOfATableThatFitsCostsItsPrivateCachePrice) {
    // 100 entries: about 200 lines with their categories, within the 1024-line private cache.
    const uint32_t n = 100;
    const std::vector<Time> flat = scans(n, false), model = scans(n, true);
    ASSERT_EQ(model.size(), 3u);
    EXPECT_GT(model[0], flat[0]);  // the first scan misses
    EXPECT_EQ(model[1], flat[1]);  // the rescans do not
    EXPECT_EQ(model[2], flat[2]);
}

TEST(CoreLines, ARescanAfterTheLinesLifetimeFindsThemInTheLevelThatStillHoldsThem) {
    // The table that fits the private cache, scanned every 5 ms of sleep: with lines living 1 ms
    // in the private level, each rescan finds its entries in the last level alone; with 1 ms in
    // the last level too, in memory; after a sleep of 0.2 ms (within half the lifetime) in the
    // private level, at its price.
    const uint32_t n = 100;
    const Time idle = 5 * kMsec;
    const std::vector<Time> flat = scans(n, false, false, idle);
    const double hot = static_cast<double>(flat[1]) / n;
    const sim::SimConfig keep_all = config(true), private_only = config(true, 1000),
                         neither = config(true, 1000, 1000);
    const std::vector<Time> kept = scans(n, true, false, idle, &keep_all),
                            llc = scans(n, true, false, idle, &private_only),
                            dram = scans(n, true, false, idle, &neither),
                            brief = scans(n, true, false, 200 * kUsec, &neither);
    EXPECT_EQ(kept[1], flat[1]);
    EXPECT_EQ(brief[1], flat[1]);
    EXPECT_EQ(brief[2], flat[2]);
    for (size_t k = 1; k < 3; ++k) {
        EXPECT_GE(static_cast<double>(llc[k]) / n, hot + kLlcNs) << "scan " << k;
        EXPECT_LT(static_cast<double>(llc[k]) / n, hot + kDramNs) << "scan " << k;
        EXPECT_GE(static_cast<double>(dram[k]) / n, hot + kDramNs) << "scan " << k;
    }
}

TEST(CoreLines, ALegacyChainHidesTheNextNodesLatencyBehindADeepCompareOnly) {
    // The legacy era's scan walks 128 chains, each node through the one before. With a first
    // level, a node the private level holds costs l2_ns where the compare of the node before
    // stopped at the type (every entry of another type) and nothing where it went on to the
    // range (entries of one type), as a core loads the next node meanwhile.
    const uint32_t n = 1000;
    constexpr double kL2Ns = 5;
    sim::SimConfig first = config(true);
    first.profile.memory.private_kib = 2048;
    first.profile.memory.l1_kib = 4;
    first.profile.memory.l2_ns = kL2Ns;
    first.profile.memory.mlp = 64;
    const sim::SimConfig flat_cfg = config(false);
    auto extra_per_node = [&](bool typed) {
        const std::vector<Time> flat = scans(n, false, typed, 0, &flat_cfg, ss::SidtabEra::Legacy);
        const std::vector<Time> model = scans(n, true, typed, 0, &first, ss::SidtabEra::Legacy);
        return static_cast<double>(model[2] - flat[2]) / n;
    };
    const double shallow = extra_per_node(true), deep = extra_per_node(false);
    EXPECT_GE(shallow, 0.9 * kL2Ns);
    EXPECT_LE(deep, 0.3 * kL2Ns);
}
