// The calibration: the fit recovers known costs, keeps fixed kinds and stays non-negative; a
// quick calibration on the Debian policy writes a profile that reads back and predicts each
// operation from its counts.
#include "calibrate/calibrate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <vector>

#include "sim/profile.h"
#include "util/error.h"
#include "util/line_set.h"

namespace locksim {
namespace {

using locksim::Work;
constexpr size_t K = locksim::kWorkKinds;

size_t idx(Work w) {
    return static_cast<size_t>(w);
}

// Samples whose times follow `truth` exactly, from counts mixing several kinds.
std::vector<CalibrationSample> samples_from(const std::array<double, K> &truth) {
    std::vector<CalibrationSample> out;
    for (size_t i = 0; i < 3 * K; ++i) {
        CalibrationSample s;
        s.name = "op" + std::to_string(i);
        for (size_t k = 0; k < K; ++k)
            s.counts.n[k] = (k == i % K ? 1000 : 0) + ((i * 7 + k * 3) % 5) * 10;
        for (size_t k = 0; k < K; ++k)
            s.host_ns += static_cast<double>(s.counts.n[k]) * truth[k];
        out.push_back(s);
    }
    return out;
}

// An operation of `calls` calls and `probes` hash probes timed at `host_ns`.
CalibrationSample fast_op(uint64_t calls, uint64_t probes, double host_ns) {
    CalibrationSample fast;
    fast.name = "fast";
    fast.counts.n[idx(Work::Call)] = calls;
    fast.counts.n[idx(Work::HashProbe)] = probes;
    fast.host_ns = host_ns;
    return fast;
}

TEST(CalibrateFit, RecoversTheCostsTheTimesFollow) {
    std::array<double, K> truth{}, prior{};
    for (size_t k = 0; k < K; ++k) {
        truth[k] = 0.5 + static_cast<double>(k);
        prior[k] = 3.0;
    }
    auto w = fit_work_costs(samples_from(truth), prior, 1e-9, {});
    for (size_t k = 0; k < K; ++k)
        EXPECT_NEAR(w[k], truth[k], truth[k] * 1e-3) << locksim::kWorkNames[k];
}

TEST(CalibrateFit, FixedKindsKeepThePriorAndNoCostIsNegative) {
    std::array<double, K> truth{}, prior{};
    truth.fill(2.0);
    prior.fill(2.0);
    std::vector<CalibrationSample> s = samples_from(truth);
    // One operation far faster than its counts allow: the unconstrained answer is negative.
    s.push_back(fast_op(1000000, 0, 1));
    std::array<bool, K> fixed{};
    fixed[idx(Work::AuditCall)] = true;
    std::array<double, K> biased = prior;
    biased[idx(Work::AuditCall)] = 123.0;
    auto w = fit_work_costs(s, biased, 1e-6, fixed);
    EXPECT_EQ(w[idx(Work::AuditCall)], 123.0);
    for (size_t k = 0; k < K; ++k)
        EXPECT_GE(w[k], 0.0) << locksim::kWorkNames[k];
    EXPECT_LT(w[idx(Work::Call)], 0.01);
}

TEST(CalibrateFit, KindsNoOperationUsesStayAtThePrior) {
    std::array<double, K> truth{}, prior{};
    truth.fill(1.0);
    prior.fill(7.0);
    std::vector<CalibrationSample> s;
    CalibrationSample one;
    one.counts.n[idx(Work::HashProbe)] = 100;
    one.host_ns = 100;
    s.push_back(one);
    auto w = fit_work_costs(s, prior, 0.01, {});
    EXPECT_NEAR(w[idx(Work::HashProbe)], 1.0, 0.05);
    EXPECT_DOUBLE_EQ(w[idx(Work::AvtabNode)], 7.0);
}

// Timings with a relative error of up to 1.5% (a fixed pattern): every price's interval holds
// the price the times follow, excludes zero, and is a few percent wide.
TEST(CalibrateIntervals, HoldTheTruthAndExcludeZeroWhereTheTimingsTellKindsApart) {
    std::array<double, K> truth{}, prior{};
    for (size_t k = 0; k < K; ++k) {
        truth[k] = 0.5 + static_cast<double>(k);
        prior[k] = 3.0;
    }
    std::vector<CalibrationSample> s = samples_from(truth);
    for (size_t i = 0; i < s.size(); ++i)
        s[i].host_ns *= 1.0 + 0.015 * (static_cast<double>(i % 5) - 2.0) / 2.0;
    const auto w = fit_work_costs(s, prior, 1e-6, {});
    const auto in = price_intervals(s, prior, 1e-6, {}, w);
    for (size_t k = 0; k < K; ++k) {
        SCOPED_TRACE(locksim::kWorkNames[k]);
        EXPECT_TRUE(in[k].counted);
        EXPECT_TRUE(in[k].identified);
        EXPECT_GT(in[k].low, 0.0);
        // Holds the truth, within the few percent the timings' errors allow.
        EXPECT_LE(in[k].low, truth[k]);
        EXPECT_GE(in[k].high, truth[k]);
        EXPECT_GT(in[k].low, 0.8 * truth[k]) << price_text(in[k]);
        EXPECT_LT(in[k].high, 1.25 * truth[k]) << price_text(in[k]);
        EXPECT_EQ(price_text(in[k]).find("not identified"), std::string::npos);
    }
}

// Two kinds always counted together in the same proportion can stand in for each other: zero
// fits the timings for either, so neither is identified, however the fit split them; a kind no
// operation counts is not identified either (any price fits); a fixed one keeps its price.
TEST(CalibrateIntervals, KindsTheTimingsCannotTellApartAreNotIdentified) {
    std::vector<CalibrationSample> s;
    for (int i = 1; i <= 6; ++i) {
        CalibrationSample op;
        op.name = "op" + std::to_string(i);
        op.counts.n[idx(Work::HashProbe)] = 100u * static_cast<uint64_t>(i);
        op.counts.n[idx(Work::AvtabNode)] = 200u * static_cast<uint64_t>(i);  // always 2x
        op.counts.n[idx(Work::Call)] = 1000u * static_cast<uint64_t>(7 - i);
        op.host_ns = 100.0 * i * 1.0 + 200.0 * i * 2.0 + 1000.0 * (7 - i) * 0.5;
        s.push_back(op);
    }
    std::array<double, K> prior{};
    prior.fill(1.0);
    std::array<bool, K> fixed{};
    fixed[idx(Work::AuditCall)] = true;
    const auto w = fit_work_costs(s, prior, 1e-6, fixed);
    const auto in = price_intervals(s, prior, 1e-6, fixed, w);
    EXPECT_TRUE(in[idx(Work::Call)].identified);
    EXPECT_NEAR(in[idx(Work::Call)].fitted, 0.5, 0.01);
    for (Work k : {Work::HashProbe, Work::AvtabNode}) {
        SCOPED_TRACE(locksim::kWorkNames[idx(k)]);
        EXPECT_TRUE(in[idx(k)].counted);
        EXPECT_FALSE(in[idx(k)].identified);
        EXPECT_EQ(in[idx(k)].low, 0.0);
        EXPECT_NE(price_text(in[idx(k)]).find("not identified by this host's timings"),
                  std::string::npos);
    }
    const PriceInterval &unused = in[idx(Work::StringByte)];
    EXPECT_FALSE(unused.counted);
    EXPECT_FALSE(unused.identified);
    EXPECT_FALSE(std::isfinite(unused.high));
    EXPECT_NE(price_text(unused).find("no operation counts it"), std::string::npos);
    EXPECT_TRUE(in[idx(Work::AuditCall)].fixed);
    EXPECT_NE(price_text(in[idx(Work::AuditCall)]).find("kept from the base"), std::string::npos);
}

// A price fitted to zero (an operation faster than its other counts allow, so its calls would
// need a negative price) is reported with the note, never as a bare zero.
TEST(CalibrateIntervals, APriceFittedToZeroIsNotIdentified) {
    std::array<double, K> truth{}, prior{};
    truth.fill(2.0);
    prior.fill(2.0);
    std::vector<CalibrationSample> s = samples_from(truth);
    s.push_back(fast_op(1000000, 1000, 1000));  // the probes alone: 2000 ns at the truth
    const auto w = fit_work_costs(s, prior, 1e-6, {});
    const auto in = price_intervals(s, prior, 1e-6, {}, w);
    ASSERT_EQ(w[idx(Work::Call)], 0.0);
    EXPECT_FALSE(in[idx(Work::Call)].identified) << price_text(in[idx(Work::Call)]);
    EXPECT_NE(price_text(in[idx(Work::Call)]).find("not identified"), std::string::npos);
}

std::vector<uint8_t> default_policy() {
    std::ifstream f(std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33", std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

TEST(Calibrate, QuickRunOnTheDebianPolicyWritesAProfileThatReadsBack) {
    CalibrateOptions o;
    o.policy_image = default_policy();
    ASSERT_FALSE(o.policy_image.empty());
    o.policy_name = "default";
    o.base = sim::find_profile("x86-modern");
    o.rounds = 1;
    o.batch_ms = 0.001;
    o.max_buffer_bytes = size_t{16} << 20;
    Calibration c = calibrate(o);
    ASSERT_GE(c.samples.size(), 8u);
    bool validate_read = false;
    for (const auto &s : c.samples) {
        EXPECT_GT(s.host_ns, 0) << s.name;
        EXPECT_GT(s.host_cold_ns, 0) << s.name;
        EXPECT_GT(s.predicted_ns, 0) << s.name;
        EXPECT_GT(s.predicted_cold_ns, 0) << s.name;
        // A call read from empty caches finds no more lines in memory than the same call
        // repeated, and stalls as long or longer: within 1 % where its lines exceed the caches
        // (the approximate LRU may then miss a few more the second time, from the last level).
        EXPECT_GE(s.cold.dram, s.hot.dram) << s.name;
        EXPECT_GE(s.stall_cold_ns, s.stall_hot_ns * 0.99) << s.name;
        validate_read |= s.name.starts_with("validate read") && !s.lines.empty();
    }
    EXPECT_TRUE(validate_read) << "validate's own decisions are timed, with their lines";
    // And its context reader's lookups (the Debian policy has categories): parsed, hashed, found.
    bool context_read = false;
    for (const auto &s : c.samples)
        if (s.name.starts_with("validate read, contexts")) {
            context_read = s.fitted;
            EXPECT_GT(s.counts[Work::StringByte], 0u) << s.name;
            EXPECT_GT(s.counts[Work::HashProbe], 0u) << s.name;
            EXPECT_EQ(s.counts[Work::Alloc], s.counts[Work::Free]) << s.name;
        }
    EXPECT_TRUE(context_read) << "validate's context lookups are timed and fitted";
    // The scan that prices scan_entry: timed, and counting one per entry it looked at.
    bool scanned = false;
    for (const auto &s : c.samples)
        if (s.name.starts_with("context_to_sid scan")) {
            scanned = true;
            EXPECT_GE(s.counts[Work::ScanEntry], 4000u) << s.name;
            EXPECT_FALSE(s.lines.empty()) << s.name;
        }
    EXPECT_TRUE(scanned) << "a SID table scan is timed";
    // The fitted profile predicts the host times it was fitted to: over the operations, the
    // median of predicted / host lies within a factor of 3 of 1, warm and cold. (A prediction
    // from the base profile's costs, or with the cache stall counted twice, lies far outside;
    // single operations may be off by more, which is why the median is taken.)
    auto median_ratio = [&](auto predicted, auto host) {
        std::vector<double> r;
        for (const auto &s : c.samples)
            r.push_back(predicted(s) / host(s));
        std::sort(r.begin(), r.end());
        return r[r.size() / 2];
    };
    const double warm = median_ratio([](const auto &s) { return s.predicted_ns; },
                                     [](const auto &s) { return s.host_ns; });
    const double cold = median_ratio([](const auto &s) { return s.predicted_cold_ns; },
                                     [](const auto &s) { return s.host_cold_ns; });
    EXPECT_GT(warm, 1.0 / 3);
    EXPECT_LT(warm, 3.0);
    EXPECT_GT(cold, 1.0 / 3);
    EXPECT_LT(cold, 3.0);
    // The host's caches and latencies, as the [memory] table the cache model reads.
    const sim::MemoryProfile &m = c.profile.memory;
    EXPECT_EQ(m.private_kib, c.memory.private_kib);
    EXPECT_GE(m.llc_kib, m.private_kib);
    EXPECT_GT(c.memory.dram_ns, 0);
    EXPECT_GE(m.dram_ns, 0);
    EXPECT_GE(m.llc_ns, 0);
    EXPECT_TRUE(c.profile.calibration.contains("memory"));
    // How long lines stay while the CPU sleeps: measured, and what the profile states.
    ASSERT_EQ(c.memory.idle_us.size(), c.memory.idle_ns.size());
    EXPECT_GE(c.memory.idle_us.size(), 4u);
    for (double ns : c.memory.idle_ns)
        EXPECT_GT(ns, 0);
    EXPECT_GT(c.memory.idle_hot_ns, 0);
    const auto [private_life, llc_life] = idle_lifetimes_us(c.memory);
    EXPECT_EQ(m.private_lifetime_us, private_life);
    EXPECT_EQ(m.llc_lifetime_us, llc_life);
    // A search of the rule table costs something: its probe (the hash and the slot), its nodes,
    // or both. Which one the fit prices depends on the host's timings.
    EXPECT_GT(c.profile.work_ps[idx(Work::AvtabNode)] + c.profile.work_ps[idx(Work::HashProbe)], 0);
    // The operation that prices a probe apart from the nodes: searches that find an empty slot.
    bool empty_slots = false;
    for (const auto &s : c.samples)
        if (s.name.starts_with("avtab search")) {
            empty_slots = true;
            EXPECT_GT(s.counts.n[idx(Work::HashProbe)], 0u) << s.name;
            EXPECT_EQ(s.counts.n[idx(Work::AvtabNode)], 0u) << s.name;
        }
    EXPECT_TRUE(empty_slots);
    EXPECT_EQ(c.profile.work_ps[idx(Work::AuditCall)], o.base.work_ps[idx(Work::AuditCall)]);
    // The chases validate repeats: every level chased, in the record the profile keeps.
    ASSERT_FALSE(c.memory.chases.empty());
    EXPECT_EQ(c.memory.chases.front().level, "private");
    EXPECT_EQ(c.memory.chases.back().level, "memory");
    EXPECT_EQ(c.memory.chases.back().ns, c.memory.dram_ns);
    const ChaseSet recorded = parse_chase_record(c.profile.calibration.at(kHostChaseKey));
    ASSERT_EQ(recorded.size(), c.memory.chases.size());
    for (size_t i = 0; i < recorded.size(); ++i) {
        EXPECT_EQ(recorded[i].level, c.memory.chases[i].level);
        EXPECT_EQ(recorded[i].kib, c.memory.chases[i].kib);
        EXPECT_NEAR(recorded[i].ns, c.memory.chases[i].ns, 0.05);
    }
    // Each operation timed in every pass: its spread is a ratio of two of them.
    for (const auto &s : c.samples) {
        EXPECT_GE(s.host_spread, 1.0) << s.name;
        EXPECT_GE(s.host_cold_spread, 1.0) << s.name;
    }
    EXPECT_TRUE(c.profile.calibration.contains(kUrcuGracePeriodKey));
    EXPECT_GE(std::stod(c.profile.calibration.at(kUrcuGracePeriodKey)), 0);
    sim::CpuProfile back = sim::parse_profile(sim::format_profile(c.profile), "written");
    EXPECT_EQ(back.work_ps, c.profile.work_ps);
    EXPECT_EQ(back.calibration, c.profile.calibration);
    EXPECT_EQ(back.primitive.spin_acquire, c.profile.primitive.spin_acquire);
    EXPECT_EQ(back.name, "host");
    EXPECT_EQ(back.memory.private_kib, m.private_kib);
    EXPECT_EQ(back.memory.llc_kib, m.llc_kib);
    EXPECT_DOUBLE_EQ(back.memory.llc_ns, m.llc_ns);
    EXPECT_DOUBLE_EQ(back.memory.dram_ns, m.dram_ns);
    EXPECT_EQ(back.memory.sample_one_in, m.sample_one_in);
    EXPECT_TRUE(back.memory.latency().private_lines > 0) << "the cache model is on";
    // The first level, where the host says what it is: inside the private level, its misses
    // priced at most at the private level's whole chase latency, written and read back.
    if (c.memory.l1_kib > 0) {
        EXPECT_EQ(m.l1_kib, c.memory.l1_kib);
        EXPECT_LT(2 * m.l1_kib, m.private_kib);
        EXPECT_GE(m.l2_ns, 0);
        EXPECT_LE(m.l2_ns, c.memory.private_ns + 0.05);
        EXPECT_LE(m.l2_ns, m.llc_ns);
        EXPECT_EQ(back.memory.l1_kib, m.l1_kib);
        EXPECT_DOUBLE_EQ(back.memory.l2_ns, m.l2_ns);
    } else {
        EXPECT_EQ(m.l1_kib, 0);
    }
    // The random decisions read at most half the private cache (their hot time is its).
    for (const auto &s : c.samples)
        if (s.name.starts_with("compute_av x")) {
            LineSet read;
            for (uint64_t line : s.lines)
                read.insert(line_tag(line));
            EXPECT_LE(read.size() * 64 * 2, static_cast<uint64_t>(m.private_kib) * 1024 + 64 * 400)
                << "at most one decision's lines over half of it";
        }
    // The same four decisions repeated are shown, not fitted; every other operation is.
    for (const auto &s : c.samples)
        EXPECT_EQ(s.fitted, s.name.find("pool 4") == std::string::npos) << s.name;
    // Memory-level parallelism: measured within its bounds, written and read back. A search that
    // finds an empty slot reads slots only (independent reads); compute_av also walks chains.
    EXPECT_GT(c.memory.independent_ns, 0);
    EXPECT_GE(c.memory.mlp, 1);
    EXPECT_LE(c.memory.mlp, sim::MemoryProfile::kMaxMlp);
    EXPECT_EQ(m.mlp, c.memory.mlp);
    EXPECT_EQ(back.memory.mlp, m.mlp);
    for (const auto &s : c.samples) {
        const uint64_t misses = s.cold.llc_hits + s.cold.dram;
        const uint64_t independent = s.cold.llc_independent + s.cold.dram_independent;
        if (s.name.starts_with("avtab search")) {
            EXPECT_GT(misses, 0u) << s.name;
            EXPECT_EQ(independent, misses) << s.name;
        }
        // Slots and arrays are read at addresses known ahead; a chain's nodes and an ebitmap's
        // are each loaded through the read before; new objects are written. A search reads
        // avtab nodes through their chain; a commit or a copy through a list's array.
        const bool search = s.name.starts_with("compute_av") ||
                            s.name.starts_with("avtab search") ||
                            s.name.starts_with("validate read");
        // A SID table's scan loads each entry's first category node ahead of the compare,
        // not waited for by the walk to the next entry.
        const bool scan = s.name.starts_with("context_to_sid scan");
        size_t misread = 0;
        for (uint64_t line : s.lines) {
            const bool dep = line_dependent(line), written = line_written(line);
            const bool independent = !dep && !written;
            bool ok = true;
            switch (line_region(line)) {
                case MemRegion::AvtabSlots:
                case MemRegion::SidtabSlots:
                case MemRegion::AvcSlots:
                    ok = independent;
                    break;
                case MemRegion::AvtabNode:
                    ok = search ? dep : !dep || !written;
                    break;
                case MemRegion::EbitmapNode:
                    ok = !independent || scan;
                    break;
                case MemRegion::Constraint:
                case MemRegion::AvcNode:
                    ok = !independent;
                    break;
                case MemRegion::Stream:
                    ok = !dep;
                    break;
                case MemRegion::SidtabEntry:
                case MemRegion::SidtabString:
                case MemRegion::CondNode:
                    break;
            }
            misread += !ok;
        }
        EXPECT_EQ(misread, 0u) << s.name << ": lines recorded with the wrong dependence";
    }
    // Every unit's price with its interval; none at zero without the note.
    for (size_t k = 0; k < K; ++k) {
        const std::string key = std::string("unit: ") + std::string(locksim::kWorkNames[k]);
        ASSERT_TRUE(back.calibration.contains(key)) << key;
        const std::string &text = back.calibration.at(key);
        EXPECT_NE(text.find(" ns"), std::string::npos) << text;
        if (c.profile.work_ps[k] == 0 || c.prices[k].low == 0) {
            EXPECT_NE(text.find("not identified"), std::string::npos) << key << ": " << text;
        }
    }
}

TEST(CalibrateIdle, ALevelsLifetimeIsTheShortestSleepFromWhichItsLinesAreGone) {
    MemoryMeasure m;
    m.idle_hot_ns = 6, m.idle_llc_ns = 18, m.idle_cold_ns = 86;
    m.idle_us = {100, 300, 1000, 3000, 10000, 30000};
    // Kept after 1 ms (a slow round at 300 us is noise: a longer sleep kept them), from the
    // last level after 3 ms (limit sqrt(6 * 18) = 10.4), gone from it after 10 ms (the coldest
    // chase, 120 after 30 ms, is the cold reference: limit sqrt(18 * 120) = 46.5).
    m.idle_ns = {6.3, 12, 6.4, 26, 72, 120};
    auto [p, l] = idle_lifetimes_us(m);
    EXPECT_EQ(p, 3000);
    EXPECT_EQ(l, 10000);
    // Never gone from the last level: no lifetime there.
    m.idle_ns = {6.3, 6.3, 6.4, 26, 30, 35};
    std::tie(p, l) = idle_lifetimes_us(m);
    EXPECT_EQ(p, 3000);
    EXPECT_EQ(l, 0);
    // References that do not tell the levels apart: nothing is said.
    m.idle_llc_ns = 7, m.idle_ns = {6.3, 12, 20, 26, 72, 120};
    std::tie(p, l) = idle_lifetimes_us(m);
    EXPECT_EQ(p, 0);
    EXPECT_EQ(l, 10000);  // the last level's limit, sqrt(7 * 120) = 29, is passed from 10 ms on
    // An eviction the last level partly kept (33 ns, under 1.5x the evicted private level's 32):
    // the chase after the longest sleep is the cold reference.
    m.idle_hot_ns = 6.3, m.idle_llc_ns = 32, m.idle_cold_ns = 33;
    m.idle_ns = {6.3, 6.3, 6.4, 68, 46, 114};
    std::tie(p, l) = idle_lifetimes_us(m);
    EXPECT_EQ(p, 3000);
    EXPECT_EQ(l, 30000);  // limit sqrt(32 * 114) = 60.4: 46 at 10 ms is under it, 114 is not
}

TEST(CalibrateChase, TheRecordReadsBackAndABadOneIsNamed) {
    const ChaseSet set = {{"private", 1024, 7.1}, {"llc", 32768, 41.06}, {"memory", 1048576, 98}};
    const std::string text = chase_record(set);
    EXPECT_EQ(text,
              "private 7.1 ns in 1024 KiB; llc 41.1 ns in 32768 KiB; memory 98.0 ns in "
              "1048576 KiB");
    const ChaseSet back = parse_chase_record(text);
    ASSERT_EQ(back.size(), 3u);
    EXPECT_EQ(back[2].level, "memory");
    EXPECT_EQ(back[2].kib, 1048576);
    EXPECT_DOUBLE_EQ(back[1].ns, 41.1);
    for (const char *bad : {"", "private 7.1 ns in 1024", "private 7.1 us in 1024 KiB",
                            "private 7.1 ns in 1024 KiB; memory", "private -3 ns in 1024 KiB",
                            "private 7.1 ns in 1024 KiB extra", "private 7.1 ns in 0 KiB"}) {
        try {
            parse_chase_record(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find(kHostChaseKey), std::string::npos) << e.what();
        }
    }
}

TEST(CalibrateChase, TheLargestMoveIsEitherWayOverTheLevelsInCommon) {
    const ChaseSet then = {{"private", 1024, 7}, {"memory", 1048576, 200}};
    EXPECT_DOUBLE_EQ(largest_move(then, then), 1.0);
    // Memory twice as fast, the private level 10% slower: 2 either way.
    EXPECT_DOUBLE_EQ(largest_move(then, {{"private", 1024, 7.7}, {"memory", 1048576, 100}}), 2.0);
    EXPECT_DOUBLE_EQ(largest_move(then, {{"private", 1024, 14}}), 2.0);
    EXPECT_DOUBLE_EQ(largest_move(then, {{"llc", 32768, 40}}), 0.0);
    // Timed again: the same buffers, a latency each.
    const ChaseSet now = chase_again({{"private", 64, 1}}, 10000, 1);
    ASSERT_EQ(now.size(), 1u);
    EXPECT_EQ(now[0].kib, 64);
    EXPECT_GT(now[0].ns, 0);
}

TEST(Calibrate, PointerChaseFollowsOneCycleThroughEveryLine) {
    for (size_t n : {2u, 3u, 1000u}) {
        std::vector<uint32_t> perm = cyclic_permutation(n, 7);
        std::vector<bool> seen(n);
        uint32_t at = 0;
        for (size_t i = 0; i < n; ++i) {
            EXPECT_FALSE(seen[at]) << "index " << at << " visited twice, n = " << n;
            seen[at] = true;
            at = perm[at];
        }
        EXPECT_EQ(at, 0u) << "n = " << n;
    }
    EXPECT_NE(cyclic_permutation(1000, 7), cyclic_permutation(1000, 8));
    EXPECT_GT(pointer_chase_ns(64 * 1024, 10000, 1), 0);
}

}  // namespace
}  // namespace locksim

// liburcu's grace period beside a busy CPU is timed again while the busy thread had less than
// 90% of its CPU (another process took the rest: less to interrupt), and said so when it never
// had it.
TEST(CalibrateGracePeriod, TimedAgainUntilTheBusyThreadHadItsCpu) {
    std::vector<locksim::BesideBusy> timings{{500, 0.0}, {9000, 0.5}, {31000, 0.97}, {32000, 1.0}};
    size_t calls = 0;
    auto next = [&] { return timings[calls++]; };
    bool had_cpu = false;
    EXPECT_EQ(locksim::time_beside_busy(next, 5, &had_cpu), 31000);
    EXPECT_TRUE(had_cpu);
    EXPECT_EQ(calls, 3u);

    std::vector<locksim::BesideBusy> shared{{500, 0.0}, {9000, 0.5}, {12000, 0.6}};
    calls = 0;
    auto never = [&] { return shared[calls++]; };
    EXPECT_EQ(locksim::time_beside_busy(never, 3, &had_cpu), 12000);
    EXPECT_FALSE(had_cpu);
    EXPECT_EQ(calls, 3u);
}
