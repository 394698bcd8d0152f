// The verdict from real short runs: what is in flight at the end is counted as "at least" and
// fails pick's limits; the warm-up drops only what ended before it; seeds that disagree make
// an unstable verdict.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/pick.h"
#include "analysis/results_file.h"
#include "analysis/table.h"
#include "runner/runner.h"
#include "tests/runner/run_all.h"

using namespace locksim;
using kernel::kMsec;
using kernel::kUsec;
using locksim::testing::run_all;

namespace {

// Two CPUs, the Debian policy, two tasks making system calls.
const std::string kTwoCpusWithSyscalls = R"(
[machine]
cpus = 2
[policy]
source = "debian-default"
[[workload]]
kind = "syscalls"
tasks = 2
)";

// rcu-full-copy with its copy made atomically (the 2018 series); a commit every `period`, the
// first at the phase `seed` draws for it. `drain`: how long the work in flight may run on after
// the duration ("": the default, 1 s).
Scenario full_copy(const std::string &duration, const std::string &warmup,
                   const std::string &period, int seed, const std::string &mode = "periodic",
                   const std::string &drain = "") {
    return parse_scenario(R"(
name = "in-flight"
seeds = [)" + std::to_string(seed) +
                              R"(]
duration = ")" + duration + R"("
warmup = ")" + warmup + R"("
)" + (drain.empty() ? "" : "drain = \"" + drain + "\"\n") +
                              R"(
strategies = []
[[strategy]]
name = "rcu-full-copy"
copy = "atomic"
)" + kTwoCpusWithSyscalls + R"(
[[workload]]
kind = "setsebool"
period = ")" + period + R"("
mode = ")" + mode + R"("
[[workload]]
kind = "probe"
period = "1ms"
)",
                          "in-flight.toml");
}

}  // namespace

TEST(Verdict, CommitInFlightAtTheEndIsMeasuredInFullWithinTheDrain) {
    // A commit at 26.1 ms of a 30 ms run (seed 4 draws that phase of its 30 ms period): its
    // atomic copy is still running at 30 ms. It runs on (no new commit starts) and is measured
    // in full: its grace periods, its preempt-off copy.
    analysis::ResultsFile file = run_all(full_copy("30ms", "0ms", "30ms", 4));
    std::vector<analysis::RunSummary> sums = file.summaries("in-flight");
    ASSERT_EQ(sums.size(), 1u);
    const analysis::RunSummary &s = sums[0];
    EXPECT_FALSE(s.toggle_incomplete());
    EXPECT_EQ(s.toggle_count, 1u);
    EXPECT_EQ(file.runs[0].at("toggle").at("incomplete"), false);
    EXPECT_FALSE(s.preempt_off_open.max_censored);
    EXPECT_EQ(s.preempt_off_open.open_at_end, 0u);
    EXPECT_FALSE(s.probe_open.max_censored);
    const nlohmann::json &longest = file.runs[0].at("detail").at("preempt_off").at("longest");
    ASSERT_FALSE(longest.empty());
    EXPECT_GT(longest[0].at("start_ns").get<int64_t>(), 25 * kMsec);
    EXPECT_NE(longest[0].at("end_site"), "(open at the end)");
    // It ended after the duration, and its parts were measured: the copy and a grace period.
    EXPECT_GT(longest[0].at("start_ns").get<int64_t>() + s.preempt_off_max_ns, 30 * kMsec);
    EXPECT_GE(s.toggle_max_ns, s.preempt_off_max_ns);
    EXPECT_GT(s.toggle_preempt_off_ns, 0);
    EXPECT_GT(s.toggle_gp_wait_ns, 0);
    // Only the one commit: none started after the duration.
    const nlohmann::json &ops = file.runs[0].at("detail").at("ops");
    EXPECT_EQ(ops.at("setsebool").at("completed").get<uint64_t>(), 1u);
}

TEST(Verdict, CommitStillInFlightAfterTheDrainIsAtLeastItsElapsedPartAndMeetsNoLimit) {
    // The same commit with a drain of 1 ms: its copy is still running when the drain ends.
    analysis::ResultsFile file = run_all(full_copy("30ms", "0ms", "30ms", 4, "periodic", "1ms"));
    std::vector<analysis::RunSummary> sums = file.summaries("in-flight");
    ASSERT_EQ(sums.size(), 1u);
    const analysis::RunSummary &s = sums[0];
    const nlohmann::json &longest = file.runs[0].at("detail").at("preempt_off").at("longest");
    ASSERT_FALSE(longest.empty());
    const int64_t started = longest[0].at("start_ns").get<int64_t>();
    ASSERT_GT(started, 25 * kMsec);
    // The section opened by the copy, closed at the end: at least what elapsed of it.
    EXPECT_GE(s.preempt_off_max_ns, 30 * kMsec - started);
    EXPECT_GT(s.preempt_off_max_ns, 1 * kMsec);
    EXPECT_TRUE(s.preempt_off_open.max_censored);
    EXPECT_EQ(longest[0].at("end_site"), "(open at the end)");
    EXPECT_TRUE(s.toggle_incomplete());
    EXPECT_EQ(s.toggle_count, 0u);
    // Censored, not a broken design: the committer was inside its operation, not stuck.
    EXPECT_EQ(s.violations, 0u);
    EXPECT_GE(s.toggle_max_ns, s.preempt_off_max_ns);
    EXPECT_EQ(file.runs[0].at("toggle").at("incomplete"), true);
    EXPECT_GE(file.runs[0].at("preempt_off").at("open_at_end").get<uint64_t>(), 1u);

    EXPECT_NE(analysis::format_table(sums).find("\u2265"), std::string::npos);
    // Neither limit is met: the preempt-off section is too long already, and the commit never
    // completed, even with a commit limit it has not reached yet.
    analysis::Limits limits{{"preempt_off.max_ns", {100 * kUsec}}, {"toggle.max_ns", {10 * kMsec}}};
    analysis::Pick p = analysis::pick(sums, limits);
    EXPECT_FALSE(p.any_meets());
    std::string text = analysis::format_pick(p, limits);
    EXPECT_EQ(text.find("meets the limits"), std::string::npos) << text;
    EXPECT_NE(text.find("incomplete"), std::string::npos) << text;
    analysis::Limits generous{{"preempt_off.max_ns", {1000 * kMsec}},
                              {"toggle.max_ns", {1000 * kMsec}}};
    EXPECT_FALSE(analysis::pick(sums, generous).any_meets());
}

TEST(Verdict, WarmUpDropsOnlyWhatEndedBeforeIt) {
    // The copy begins at about 27.3 ms (seed 31's phase of an 80 ms period: the run's only
    // commit) and runs past a 30 ms warm-up: it still counts, in full.
    auto worst = [](const std::string &warmup) {
        return run_all(full_copy("80ms", warmup, "80ms", 31)).summaries("w")[0];
    };
    analysis::RunSummary none = worst("0ms"), warm = worst("30ms");
    EXPECT_FALSE(none.preempt_off_open.max_censored);
    EXPECT_GT(none.preempt_off_max_ns, 5 * kMsec);
    EXPECT_EQ(warm.preempt_off_max_ns, none.preempt_off_max_ns);
    EXPECT_EQ(warm.toggle_max_ns, none.toggle_max_ns);
}

TEST(Verdict, SeedsThatDisagreeMakeAnUnstableVerdict) {
    // rwlock with logins: how late the real-time probe wakes depends on where the long
    // read-side sections fall, which the seed moves. A limit between the per-seed worst cases is
    // met by some seeds and not by others.
    Scenario s = parse_scenario(R"(
name = "seeds"
duration = "30ms"
warmup = "0ms"
seeds = [1, 2, 3, 4]
strategies = ["rwlock"]
)" + kTwoCpusWithSyscalls + R"(
[[workload]]
kind = "login"
period = "5ms"
users = ["staff_u", "unconfined_u"]
[[workload]]
kind = "probe"
period = "500us"
)",
                                "seeds.toml");
    std::vector<analysis::RunSummary> sums = run_all(s).summaries("seeds");
    ASSERT_EQ(sums.size(), 4u);
    std::vector<int64_t> worst;
    for (const auto &r : sums)
        worst.push_back(r.probe_max_ns);
    auto [lo, hi] = std::minmax_element(worst.begin(), worst.end());
    ASSERT_LT(*lo, *hi) << "the seeds agree; the test needs a scenario where they do not";
    analysis::Limits limits{{"probe_wakeup.max_ns", {(*lo + *hi) / 2}}};
    analysis::Pick p = analysis::pick(sums, limits);
    ASSERT_EQ(p.ranked.size(), 1u);
    EXPECT_FALSE(p.ranked[0].meets);  // judged by its worst seed
    EXPECT_TRUE(p.ranked[0].unstable);
    std::string text = analysis::format_pick(p, limits);
    EXPECT_NE(text.find("**unstable**"), std::string::npos) << text;
    EXPECT_NE(text.find("of 4 seeds meet it (unstable)"), std::string::npos) << text;
    // The table shows one row with the worst over seeds, and the spread below it.
    std::string table = analysis::format_table(sums);
    EXPECT_NE(table.find("spread over seeds"), std::string::npos) << table;
    EXPECT_NE(table.find(analysis::human_ns(*lo) + "-" + analysis::human_ns(*hi)),
              std::string::npos)
        << table;
}

TEST(Verdict, SeedsMayBeACount) {
    auto seeds = [](const std::string &value) {
        return parse_scenario("seeds = " + value + R"(
strategies = "all"
[[workload]]
kind = "syscalls"
)",
                              "seeds.toml")
            .seeds;
    };
    EXPECT_EQ(seeds("3"), (std::vector<int64_t>{1, 2, 3}));
    EXPECT_EQ(seeds("[7, 9]"), (std::vector<int64_t>{7, 9}));
    EXPECT_ANY_THROW(seeds("0"));  // a user error naming the place
}
