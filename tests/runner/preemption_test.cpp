// The preemption models from real runs: PREEMPT_VOLUNTARY lies between PREEMPT_NONE and
// PREEMPT (full). A login's get_user_sids under the rwsem design takes down_read for each AVC
// miss of its candidate checks, a might_sleep() point; a real-time probe waking on the CPU of
// a login waits, under none, for the whole operation to end, under voluntary for the next
// might_sleep, under full not at all while the login is preemptible.
#include <gtest/gtest.h>

#include "analysis/results_file.h"
#include "runner/runner.h"

using namespace locksim;

namespace {

analysis::RunSummary run_with(const std::string &preemption) {
    Scenario s = parse_scenario(R"(strategies = ["rwsem"]
name = "preemption"
duration = "60ms"
warmup = "2ms"
[machine]
cpus = 2
preemption = ")" + preemption + R"("
preempt_rcu = false
[policy]
source = "debian-default"
[[workload]]
kind = "login"
tasks = 2
period = "2ms"
users = ["unconfined_u", "staff_u"]
[[workload]]
kind = "probe"
period = "200us"
)",
                                "preemption.toml");
    std::vector<Scenario> points = expand_sweep(s);
    RunOptions o;
    o.wall_clock = false;
    analysis::ResultsFile r = run_jobs(s, plan_runs(points), o);
    EXPECT_EQ(r.runs.at(0).at("detail").at("config").at("preempt").get<std::string>(), preemption);
    auto sums = r.summaries("preemption");
    EXPECT_EQ(sums.size(), 1u);
    return sums.at(0);
}

}  // namespace

TEST(Preemption, VoluntaryLiesBetweenNoneAndFull) {
    analysis::RunSummary none = run_with("none"), voluntary = run_with("voluntary"),
                         full = run_with("full");
    ASSERT_GT(none.probe_count, 100u);
    ASSERT_GT(voluntary.probe_count, 100u);
    ASSERT_GT(full.probe_count, 100u);
    // The worst wake-up of the probe: the might_sleep points cut the longest wait short, and
    // full preemption cuts it shorter still.
    EXPECT_LT(voluntary.probe_max_ns, none.probe_max_ns);
    EXPECT_LE(full.probe_max_ns, voluntary.probe_max_ns);
    EXPECT_LT(full.probe_max_ns, none.probe_max_ns);
}
