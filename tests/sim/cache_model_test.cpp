// The memory hierarchy of the counted model: its caches' replacement, its prices, how a compute
// span pays them, clusters' speeds, and the shipped profiles' derivations from their figures.
#include "sim/cache_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "sim/profile.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::CacheHierarchy;
using locksim::sim::MemoryLatency;
using locksim::sim::MemoryTally;
using locksim::sim::SimPlatform;
using locksim::sim::TagCache;
using locksim::sim::testing::zero_config;

TEST(TagCache, KeepsALineForAtLeastHalfItsCapacity) {
    TagCache c(8);  // two generations of 4
    EXPECT_FALSE(c.touch(100));
    EXPECT_TRUE(c.touch(100));
    // Four other lines: 100 is still held (between half and all of the capacity).
    for (uint64_t t = 1; t <= 4; ++t)
        EXPECT_FALSE(c.touch(t));
    EXPECT_TRUE(c.touch(100));
    // A full capacity of other lines, never 100: it is gone.
    for (uint64_t t = 10; t < 18; ++t)
        c.touch(t);
    EXPECT_FALSE(c.touch(100));
}

TEST(TagCache, ALineNobodyTouchesLeavesAfterHalfItsLifetimeToAllOfIt) {
    TagCache c(1024, 1000);  // lines live 1000 ns untouched: the generations turn every 500
    EXPECT_FALSE(c.touch(1, 0));
    EXPECT_TRUE(c.touch(1, 499));    // the same half lifetime
    EXPECT_TRUE(c.touch(1, 999));    // touched at 499: kept through the next half
    EXPECT_TRUE(c.touch(1, 1499));   // touched at 999: kept through the next half
    EXPECT_FALSE(c.touch(1, 2500));  // untouched 1001 ns: gone
    EXPECT_FALSE(c.touch(2, 2500));
    EXPECT_FALSE(c.touch(2, 3500));  // untouched 1000 ns, two halves on: gone
    EXPECT_FALSE(c.touch(3, 3999));
    EXPECT_TRUE(c.touch(3, 4000));  // 1 ns on, the next half: kept
    TagCache forever(1024);
    EXPECT_FALSE(forever.touch(1, 0));
    EXPECT_TRUE(forever.touch(1, 1'000'000'000));
}

TEST(TagCache, ALoopLargerThanTheCacheAlwaysMisses) {
    TagCache c(64);
    uint64_t hits = 0;
    for (int round = 0; round < 4; ++round)
        for (uint64_t t = 0; t < 256; ++t)
            hits += c.touch(t);
    EXPECT_EQ(hits, 0u);
    TagCache big(1024);
    for (int round = 0; round < 4; ++round)
        for (uint64_t t = 0; t < 256; ++t)
            hits += big.touch(t);
    EXPECT_EQ(hits, 3u * 256);
}

TEST(CacheHierarchy, PricesPrivateHitsLastLevelHitsAndMemory) {
    MemoryLatency lat{.private_lines = 16, .llc_lines = 1024, .llc_ps = 10'000, .dram_ps = 60'000};
    CacheHierarchy h(lat, {0, 0});
    std::vector<uint64_t> lines = {1, 2, 3};
    MemoryTally t;
    EXPECT_EQ(h.price(0, lines, t), 3 * 60'000);  // cold
    EXPECT_EQ(h.price(0, lines, t), 0);           // in CPU 0's private cache
    EXPECT_EQ(h.price(1, lines, t), 3 * 10'000);  // CPU 1 finds them in the last level
    EXPECT_EQ(t.touches, 9u);
    EXPECT_EQ(t.dram, 3u);
    EXPECT_EQ(t.llc_hits, 3u);
    EXPECT_EQ(t.stall_ps, 3 * 60'000 + 3 * 10'000);
}

namespace {

sim::CpuProfile memory_profile() {
    sim::CpuProfile p = sim::testing::zero_profile();
    p.work_ps[static_cast<size_t>(Work::AvtabNode)] = 1000;  // 1 ns when hot
    p.memory.private_kib = 64;
    p.memory.llc_kib = 1024;
    p.memory.llc_ns = 10;
    p.memory.dram_ns = 50;
    p.memory.sample_one_in = 1;  // every line: exact prices
    return p;
}

// The time of one compute span on `cpu` that visits `n` avtab nodes on distinct lines.
std::vector<Time> spans(sim::SimConfig cfg, std::vector<int> cpus, uint64_t n) {
    SimPlatform sim(cfg);
    std::vector<Time> took;
    for (size_t i = 0; i < cpus.size(); ++i)
        sim.create_task({"t" + std::to_string(i), Sched::Other, 0, cpus[i], false}, [&, i, n] {
            sleep_until(static_cast<Time>(i) * kMsec);
            Time t0 = now();
            compute("walk", [n] {
                for (uint64_t k = 0; k < n; ++k) {
                    count_work(Work::AvtabNode);
                    touch_line(mem_line(MemRegion::AvtabNode, 1, k), Access::Dependent);
                }
            });
            took.push_back(now() - t0);
        });
    sim.run();
    return took;
}

}  // namespace

TEST(CacheCost, ColdThenHotThenFromTheLastLevel) {
    auto cfg = zero_config(2, 10 * kMsec);
    cfg.profile = memory_profile();
    auto took = spans(cfg, {0, 0, 1}, 100);
    ASSERT_EQ(took.size(), 3u);
    EXPECT_EQ(took[0], 100 * (1 + 50));  // every line from memory
    EXPECT_EQ(took[1], 100 * 1);         // the same CPU again: hot
    EXPECT_EQ(took[2], 100 * (1 + 10));  // another CPU: the shared last level
}

TEST(CacheCost, WithoutAMemoryTableEveryUnitCostsItsPrice) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.profile = memory_profile();
    cfg.profile.memory = {};
    auto took = spans(cfg, {0, 0}, 100);
    EXPECT_EQ(took, (std::vector<Time>{100, 100}));
}

// [memory] core_lines = false: the core records nothing, so its work costs the hot prices
// (the lock words' lines are still modelled): the peer that measures the core's lines alone.
TEST(CacheCost, WithoutTheCoresLinesEveryUnitCostsItsPrice) {
    auto cfg = zero_config(2, 10 * kMsec);
    cfg.profile = memory_profile();
    cfg.profile.memory.core_lines = false;
    EXPECT_EQ(spans(cfg, {0, 0, 1}, 100), (std::vector<Time>{100, 100, 100}));
    const sim::CpuProfile back = sim::parse_profile(sim::format_profile(cfg.profile), "lines.toml");
    EXPECT_FALSE(back.memory.core_lines);
    std::string bad = sim::format_profile(cfg.profile);
    bad.replace(bad.find("core_lines = false"), 18, "core_lines = 3");
    EXPECT_THROW((void)sim::parse_profile(bad, "bad.toml"), UserError);
}

TEST(CacheCost, StallsAreReportedByLabelAndRunsRepeatExactly) {
    auto run = [] {
        auto cfg = zero_config(2, 10 * kMsec);
        cfg.profile = memory_profile();
        SimPlatform sim(cfg);
        for (int i = 0; i < 2; ++i)
            sim.create_task({"t" + std::to_string(i), Sched::Other, 0, i, false}, [] {
                for (int rep = 0; rep < 3; ++rep)
                    compute("walk", [rep] {
                        for (uint64_t k = 0; k < 3000; k += 1 + rep) {
                            count_work(Work::AvtabNode);
                            touch_line(mem_line(MemRegion::AvtabNode, 1, k), Access::Dependent);
                        }
                    });
            });
        return sim.run();
    };
    auto a = run();
    auto b = run();
    EXPECT_EQ(sim::testing::results_json(a), sim::testing::results_json(b));
    const MemoryStall &s = a.memory_stall.at("walk");
    EXPECT_GT(s.dram, 0u);
    EXPECT_GT(s.llc_hits, 0u);
    EXPECT_EQ(s.stall_ns, static_cast<Time>(s.dram * 50 + s.llc_hits * 10));
    EXPECT_LT(s.stall_ns, a.compute_ns.at("walk"));
}

// Set sampling: a call's estimate from a 1/32 sample stays near the exact model's stall on
// working sets larger than the caches, and every run gives the same estimate.
TEST(CacheHierarchy, SampledEstimateFollowsTheExactModel) {
    MemoryLatency lat{
        .private_lines = 4096, .llc_lines = 65536, .llc_ps = 10'000, .dram_ps = 60'000};
    auto total = [&](int64_t sample) {
        MemoryLatency l = lat;
        l.sample = sample;
        CacheHierarchy h(l, {0, 0});
        MemoryTally t;
        for (uint64_t call = 0; call < 400; ++call) {
            std::vector<uint64_t> lines;
            for (uint64_t k = 0; k < 2000; ++k)
                lines.push_back(
                    mem_line(MemRegion::AvtabNode, 1, (call * 7919 + k * 104729) % 100000));
            h.price(static_cast<int>(call % 2), lines, t);
        }
        return t.stall_ps;
    };
    const double exact = static_cast<double>(total(1));
    EXPECT_NEAR(static_cast<double>(total(32)) / exact, 1.0, 0.15);
    EXPECT_EQ(total(32), total(32));
}

TEST(Clusters, ALittleCpuRunsCountedWorkAtItsSpeed) {
    auto cfg = zero_config(2, 10 * kMsec);
    cfg.profile = memory_profile();
    cfg.profile.memory = {};
    cfg.profile.clusters = {{"big", 1, 1.0, 0, 0}, {"little", 1, 0.25, 0, 1}};
    auto took = spans(cfg, {0, 1}, 100);
    EXPECT_EQ(took, (std::vector<Time>{100, 400}));
    // More CPUs than the clusters hold: a scenario's machine.cpus is checked against its profile
    // where it is read; built in code, it is misuse.
    cfg.cpus = 3;
    EXPECT_THROW(SimPlatform{cfg}, std::invalid_argument);
}

// Every shipped profile with [published] figures keeps the derivation its text states: the
// private and last-level sizes, the extra latency of a last-level hit and of memory beyond a
// private hit, a chain node as a private hit plus a 3-cycle compare, the lock line's transfer,
// and a little cluster's speed as its clock ratio times its work per cycle.
TEST(ProfileDerivation, ShippedProfilesFollowTheirPublishedFigures) {
    int checked = 0;
    for (const std::string &name : sim::list_profiles()) {
        sim::CpuProfile p = sim::find_profile(name);
        if (p.published.empty()) continue;
        SCOPED_TRACE(name);
        ++checked;
        auto fig = [&](const char *k) {
            EXPECT_TRUE(p.published.count(k)) << k;
            return p.published.count(k) ? p.published.at(k) : 0.0;
        };
        const double ghz = fig("clock_ghz");
        const double l2_ns = fig("l2_cycles") / ghz;
        EXPECT_EQ(p.memory.private_kib, static_cast<int64_t>(fig("l2_kib")));
        EXPECT_EQ(p.memory.llc_kib, static_cast<int64_t>(fig("l3_kib")));
        EXPECT_NEAR(p.memory.llc_ns, (fig("l3_cycles") - fig("l2_cycles")) / ghz, 0.1);
        EXPECT_NEAR(p.memory.dram_ns, fig("dram_ns") - l2_ns, 0.1);
        const double node_ns = (fig("l2_cycles") + 3) / ghz;
        EXPECT_NEAR(p.work_ps[static_cast<size_t>(Work::AvtabNode)] / 1000.0, node_ns, 0.1);
        EXPECT_NEAR(static_cast<double>(p.primitive.cacheline_transfer),
                    fig("core_to_core_cycles") / ghz, 1.0);
        for (const sim::CpuCluster &c : p.clusters) {
            if (c.speed == 1.0) continue;
            EXPECT_NEAR(c.speed, fig("little_clock_ghz") / ghz * fig("little_work_per_cycle"),
                        0.01);
            EXPECT_EQ(c.private_kib, static_cast<int64_t>(fig("little_l2_kib")));
        }
    }
    EXPECT_GE(checked, 4);
    // KaiGai's 2004 machine class (scenarios/repro/kaigai-avc-scaling.toml) is among them.
    EXPECT_FALSE(sim::find_profile("itanium2").published.empty());
}

// Profile `text` is refused with a message naming the file's place and saying `why`.
static void expect_profile_rejected(const std::string &text, const std::string &why) {
    try {
        (void)sim::parse_profile(text, "f.toml");
        ADD_FAILURE() << "accepted: " << why;
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("f.toml:"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
}

TEST(ProfileFormat, MemoryClustersAndFiguresRoundTripAndBadOnesAreNamed) {
    sim::CpuProfile p = sim::find_profile("phone-big-little");
    sim::CpuProfile back = sim::parse_profile(sim::format_profile(p), "rt.toml");
    EXPECT_EQ(back.memory.latency().llc_ps, p.memory.latency().llc_ps);
    ASSERT_EQ(back.clusters.size(), 2u);
    EXPECT_EQ(back.clusters[1].first_cpu, 4);
    EXPECT_EQ(back.clusters[1].private_kib, 128);
    EXPECT_EQ(back.published, p.published);
    const std::string base = "name = \"x\"\nderivation = \"d\"\n[work_ns]\n";
    std::string work;
    for (auto k : kWorkNames)
        work += std::string(k) + " = 1\n";
    try {
        (void)sim::parse_profile(base + work + "[memory]\nprivate_kib = 1\n", "m.toml");
        FAIL() << "accepted [memory] without llc_kib";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("m.toml:"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("llc_kib"), std::string::npos) << e.what();
    }
    EXPECT_THROW(
        (void)sim::parse_profile(base + work + "[[cluster]]\nname = \"a\"\ncpus = 0\n", "c.toml"),
        UserError);
}

// Memory-level parallelism: an independent read's miss costs the latency over [memory] mlp, a
// dependent one (a chain's next node) the whole latency; mlp 1 prices both alike.
TEST(CacheHierarchy, IndependentMissesOverlapByTheParallelism) {
    MemoryLatency lat{
        .private_lines = 16, .llc_lines = 1024, .llc_ps = 10'000, .dram_ps = 60'000, .mlp = 4};
    CacheHierarchy h(lat, {0, 0});
    const std::vector<uint64_t> independent = {1, 2, 3};
    const std::vector<uint64_t> dependent = {4 | kDependentLine, 5 | kDependentLine};
    MemoryTally t;
    EXPECT_EQ(h.price(0, independent, t), 3 * 15'000);  // 60 ns over 4
    EXPECT_EQ(h.price(0, dependent, t), 2 * 60'000);
    EXPECT_EQ(h.price(1, independent, t), 3 * 2'500);  // from the last level: 10 ns over 4
    EXPECT_EQ(t.dram, 5u);
    EXPECT_EQ(t.dram_independent, 3u);
    EXPECT_EQ(t.llc_independent, 3u);
    // The dependence bit names no other line: the lines are cached as themselves.
    EXPECT_EQ(h.price(0, std::vector<uint64_t>{1 | kDependentLine, 4}, t), 0);
    // mlp 1: the same price either way.
    lat.mlp = 1;
    CacheHierarchy one(lat, {0});
    EXPECT_EQ(
        one.price(0, independent, t),
        one.price(0,
                  std::vector<uint64_t>{7 | kDependentLine, 8 | kDependentLine, 9 | kDependentLine},
                  t));
}

TEST(CacheHierarchy, ARecordedLineKeepsItsDependenceOutOfTheSample) {
    WorkCounts c;
    c.line_shift = 2;
    {
        WorkMeterScope scope(&c);
        for (uint64_t k = 0; k < 400; ++k)
            touch_line(mem_line(MemRegion::AvtabNode, 1, k),
                       k % 2 ? Access::Dependent : Access::Independent);
    }
    EXPECT_EQ(c.line_touches, 400u);
    ASSERT_FALSE(c.lines.empty());
    for (uint64_t recorded : c.lines) {
        // Sampled as the line itself; the bit says how it was read.
        EXPECT_TRUE(line_sampled(line_tag(recorded), 2));
        EXPECT_EQ(line_dependent(recorded), (line_tag(recorded) & 0xfffffffff) % 2 == 1);
    }
}

TEST(ProfileFormat, MemoryLevelParallelismRoundTripsAndIsChecked) {
    sim::CpuProfile p = sim::find_profile("xeon-w3520");
    EXPECT_EQ(p.memory.mlp, 1);  // unstated: no overlap
    EXPECT_EQ(sim::format_profile(p).find("mlp"), std::string::npos);
    p.memory.mlp = 3.5;
    const sim::CpuProfile back = sim::parse_profile(sim::format_profile(p), "rt.toml");
    EXPECT_EQ(back.memory.mlp, 3.5);
    EXPECT_EQ(back.memory.latency().mlp, 3.5);
    std::string text = sim::format_profile(p);
    text.replace(text.find("mlp = 3.5"), 9, "mlp = 0.5");
    expect_profile_rejected(text, "'mlp' must be from 1");
}

// A first level inside the private one ([memory] l1_kib): a line the private level holds but the
// first does not costs l2_ns (over mlp when independent); one the prefetchers bring along (a
// stream's next line) costs nothing; misses beyond are priced as without a first level.
TEST(CacheHierarchy, AFirstLevelPricesItsMissesAtTheSecondLevelsLatency) {
    MemoryLatency lat{.private_lines = 64,
                      .l1_lines = 4,
                      .l2_ps = 5'000,
                      .llc_lines = 1024,
                      .llc_ps = 20'000,
                      .dram_ps = 60'000,
                      .mlp = 4};
    CacheHierarchy h(lat, {0});
    std::vector<uint64_t> eight;  // eight lines of one object, far apart: no stream
    for (uint64_t i = 0; i < 8; ++i)
        eight.push_back(mem_line(MemRegion::AvtabNode, 1, i * 100) | kDependentLine);
    MemoryTally t;
    EXPECT_EQ(h.price(0, eight, t), 8 * 60'000);  // cold
    // Again: the private level holds the eight, the first level (four lines) none of the first
    // six any more.
    EXPECT_EQ(h.price(0, std::span(eight).first(6), t), 6 * 5'000);
    EXPECT_EQ(t.l2_hits, 6u);
    EXPECT_EQ(t.l2_independent, 0u);
    // The last two just read: in the first level.
    EXPECT_EQ(h.price(0, std::span(eight).subspan(4, 2), t), 0);
    // Independent reads overlap by mlp; a streamed line comes with the prefetchers.
    std::vector<uint64_t> other = {line_tag(eight[0]), line_tag(eight[1]) | kStreamedLine};
    EXPECT_EQ(h.price(0, other, t), 5'000 / 4);
    EXPECT_EQ(t.l2_independent, 1u);
    // Without a first level the same lines are private hits, at no cost.
    lat.l1_lines = 0;
    CacheHierarchy flat(lat, {0});
    EXPECT_EQ(flat.price(0, eight, t), 8 * 60'000);
    EXPECT_EQ(flat.price(0, eight, t), 0);
}

// The recording marks a line a little ahead of one of the last few lines of the same object
// (an array or a slab walked in order), whatever else is read in between; not a line behind,
// far ahead, or in another object.
TEST(CacheHierarchy, TheRecordingMarksStreams) {
    WorkCounts c;
    c.line_shift = 0;
    c.streams = true;  // as where the model has a first level
    auto line = [](uint64_t object, uint64_t index) {
        return mem_line(MemRegion::SidtabEntry, object, index);
    };
    {
        WorkMeterScope scope(&c);
        touch_line(line(1, 10), Access::Independent);       // first: no stream
        touch_line(line(2, 500), Access::Dependent);        // another object
        touch_line(line(1, 12), Access::Independent);       // two lines on: streamed
        touch_line(line(2, 506), Access::Dependent);        // six lines on, object 2: streamed
        touch_line(line(1, 9), Access::Independent);        // behind 10 and 12: no
        touch_line(line(1, 12 + 40), Access::Independent);  // 40 lines on: no
        touch_line(line(3, 13), Access::Independent);       // object 3: no
    }
    ASSERT_EQ(c.lines.size(), 7u);
    const std::vector<bool> want = {false, false, true, true, false, false, false};
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(line_streamed(c.lines[i]), want[i]) << i;
        EXPECT_FALSE(line_streamed(line_tag(c.lines[i]))) << i;
    }
    EXPECT_TRUE(line_dependent(c.lines[3]));
    EXPECT_EQ(line_tag(c.lines[3]), line(2, 506));
    // Where the model has no first level, nothing is marked (the recording saves the work).
    WorkCounts flat;
    flat.line_shift = 0;
    {
        WorkMeterScope scope(&flat);
        for (uint64_t i = 0; i < 8; ++i)
            touch_line(line(1, i), Access::Independent);
    }
    for (uint64_t recorded : flat.lines)
        EXPECT_FALSE(line_streamed(recorded));
}

TEST(ProfileFormat, AFirstLevelRoundTripsAndIsChecked) {
    sim::CpuProfile p = sim::find_profile("xeon-w3520");
    EXPECT_EQ(p.memory.l1_kib, 0);  // unstated: no first level
    EXPECT_EQ(sim::format_profile(p).find("l1_kib"), std::string::npos);
    p.memory.l1_kib = 48;
    p.memory.l2_ns = 7.5;
    const sim::CpuProfile back = sim::parse_profile(sim::format_profile(p), "rt.toml");
    EXPECT_EQ(back.memory.l1_kib, 48);
    EXPECT_EQ(back.memory.l2_ns, 7.5);
    EXPECT_EQ(back.memory.latency().l1_lines, 48 * 1024 / 64);
    EXPECT_EQ(back.memory.latency().l2_ps, 7'500);
    std::string text = sim::format_profile(p);
    std::string no_l2 = text;
    no_l2.erase(no_l2.find("l2_ns = 7.5\n"), 12);
    expect_profile_rejected(no_l2, "needs both 'l1_kib'");
    std::string too_big = text;
    too_big.replace(too_big.find("l1_kib = 48"), 11, "l1_kib = 99999");
    expect_profile_rejected(too_big, "must be smaller than 'private_kib'");
}

TEST(ProfileFormat, LifetimesRoundTripAndAreChecked) {
    sim::CpuProfile p = sim::find_profile("xeon-w3520");
    EXPECT_EQ(p.memory.private_lifetime_us, 0);  // unstated: lines stay until replaced
    EXPECT_EQ(sim::format_profile(p).find("lifetime"), std::string::npos);
    p.memory.private_lifetime_us = 3000;
    p.memory.llc_lifetime_us = 10000.5;
    const sim::CpuProfile back = sim::parse_profile(sim::format_profile(p), "rt.toml");
    EXPECT_EQ(back.memory.latency().private_lifetime_ns, 3'000'000);
    EXPECT_EQ(back.memory.latency().llc_lifetime_ns, 10'000'500);
    std::string text = sim::format_profile(p);
    text.replace(text.find("private_lifetime_us = 3000"), 26, "private_lifetime_us = 0");
    expect_profile_rejected(text, "'private_lifetime_us' must be a time");
}

// Lines age out of every level with their lifetimes: a CPU that comes back after one finds
// them in the level that still holds them.
TEST(CacheHierarchy, LinesLeaveEachLevelAfterItsLifetime) {
    MemoryLatency lat{.private_lines = 64,
                      .llc_lines = 1024,
                      .llc_ps = 20'000,
                      .dram_ps = 60'000,
                      .private_lifetime_ns = 1'000,
                      .llc_lifetime_ns = 10'000};
    CacheHierarchy h(lat, {0});
    const std::vector<uint64_t> read = {mem_line(MemRegion::AvtabNode, 1, 7) | kDependentLine};
    MemoryTally t;
    // The CPU idles between its reads (its idle clock keeps up with the time).
    EXPECT_EQ(h.price(0, read, t, 0, 0), 60'000);
    EXPECT_EQ(h.price(0, read, t, 400, 400), 0);           // within the private lifetime
    EXPECT_EQ(h.price(0, read, t, 2'500, 2'500), 20'000);  // gone from the private level only
    EXPECT_EQ(h.price(0, read, t, 2'600, 2'600), 0);
    EXPECT_EQ(h.price(0, read, t, 30'000, 30'000), 60'000);  // gone from both
    // A CPU busy since (its idle clock stopped) keeps its private lines, whatever the time.
    EXPECT_EQ(h.price(0, read, t, 100'000, 30'000), 0);
}

// A store to a line where it already was (Access::Modified) takes it from every other CPU:
// their next read misses (the last level serves it); the store is free where its CPU's caches
// hold the line, an independent miss where they do not.
TEST(CacheHierarchy, AStoreInPlaceTakesTheLineFromTheOthers) {
    MemoryLatency lat{
        .private_lines = 64, .llc_lines = 1024, .llc_ps = 20'000, .dram_ps = 60'000, .mlp = 4};
    CacheHierarchy h(lat, {0, 0});
    const uint64_t line = mem_line(MemRegion::AvtabNode, 1, 7);
    const std::vector<uint64_t> read = {line | kDependentLine}, store = {line | kModifiedLine};
    MemoryTally t;
    EXPECT_EQ(h.price(0, read, t), 60'000);       // CPU 0 reads it from memory
    EXPECT_EQ(h.price(0, read, t), 0);            // and holds it
    EXPECT_EQ(h.price(1, store, t), 20'000 / 4);  // CPU 1 takes it (a store: over mlp)
    EXPECT_EQ(h.price(1, store, t), 0);           // held: free
    EXPECT_EQ(h.price(0, read, t), 20'000);       // CPU 0's copy is gone: from the last level
    EXPECT_EQ(h.price(0, read, t), 0);            // and now held again
    EXPECT_EQ(h.price(1, store, t), 0);           // CPU 1 still holds it: free, but
    EXPECT_EQ(h.price(1, store, t), 0);           // (twice)
    EXPECT_EQ(h.price(0, read, t), 20'000);       // CPU 0's copy is gone again
    EXPECT_EQ(h.price(0, read, t), 0);
    EXPECT_EQ(h.price(1, read, t), 0);  // CPU 1 reads what it stored
    // Without stores the same reads stay where they are.
    const std::vector<uint64_t> other = {mem_line(MemRegion::AvtabNode, 1, 8) | kDependentLine};
    EXPECT_EQ(h.price(0, other, t), 60'000);
    EXPECT_EQ(h.price(1, other, t), 20'000);
    EXPECT_EQ(h.price(0, other, t), 0);
    // The kinds are told apart.
    EXPECT_TRUE(line_modified(store[0]));
    EXPECT_FALSE(line_dependent(store[0]));
    EXPECT_FALSE(line_written(store[0]));
    EXPECT_EQ(line_tag(store[0]), line);
}
