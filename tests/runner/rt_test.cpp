// PREEMPT_RT from real runs of the main job (scenarios/default.toml, the rwlock design, one
// seed, shortened): on RT its read_lock and write_lock_irq sleep (rt_mutex-based rwlock_t), so
// its worst preempt-off section falls to the sections that stay atomic, below a fifth of the
// non-RT run's (none of the modelled ones stays atomic there).
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/runner/run_all.h"

using namespace locksim;
using locksim::testing::run_all;

namespace {

analysis::RunSummary run_default(sim::PreemptModel preemption) {
    Scenario s = load_scenario(std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/default.toml");
    s.machine.preemption = preemption;
    s.seeds = {1};
    s.duration_ns = 300'000'000;
    s.warmup_ns = 10'000'000;
    std::erase_if(s.strategies, [](const StrategySpec &st) { return st.name != "rwlock"; });
    EXPECT_EQ(s.strategies.size(), 1u);
    auto sums = run_all(s).summaries(s.name);
    EXPECT_EQ(sums.size(), 1u);
    return sums.at(0);
}

}  // namespace

TEST(PreemptRt, RwlockWorstPreemptOffFallsBelowAFifth) {
    const analysis::RunSummary full = run_default(sim::PreemptModel::Full);
    const analysis::RunSummary rt = run_default(sim::PreemptModel::Rt);
    ASSERT_GT(full.preempt_off_count, 0u);
    // What stays atomic on RT is none of the modelled sections (the RCU callbacks run in the
    // rcuc kthreads, preemptible): the worst is 0 there.
    EXPECT_LT(rt.preempt_off_max_ns * 5, full.preempt_off_max_ns);
    // The non-RT worst section is the rwlock's own; on RT it is not.
    EXPECT_NE(full.preempt_off_worst_site.find("lock"), std::string::npos);
    EXPECT_EQ(rt.violations, 0u);
    // PREEMPT_RT is fully preemptible: no wake-up waits for kernel code as such, only for what
    // still holds preemption or interrupts off, or for another task.
    EXPECT_EQ(rt.probe_worst_cause.find("non-preemptible kernel code"), std::string::npos)
        << rt.probe_worst_cause;
}
