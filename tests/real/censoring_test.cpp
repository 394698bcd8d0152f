// On host threads too, the work in flight when the run is stopped runs on and is recorded in
// full; what is still open when the drain ends is counted, up to then, as a lower bound.
#include <gtest/gtest.h>

#include "kernel/preempt.h"
#include "real_test_util.h"

namespace locksim::real::test {
namespace {

// A committer asks the run to end from inside its operation and preempt-off section, then
// leaves the section when `over(platform)` turns true.
kernel::RunResults committer_run(RealConfig cfg, bool (*over)(RealPlatform &)) {
    RealPlatform p(cfg);
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    p.create_task({"committer"}, [&] {
        kernel::OpScope op("commit");
        kernel::preempt_disable();
        stop.done();
        while (!over(p)) {
        }
        kernel::preempt_enable();
    });
    return p.run();
}

TEST(RealRun, WorkInFlightAtTheStopIsRecordedInFull) {
    // The section and the operation end after the stop, within the drain.
    kernel::RunResults r = committer_run(
        short_run(kUpperBound), [](RealPlatform &) { return kernel::kthread_should_stop(); });
    EXPECT_TRUE(r.preempt_off.open_at_end.empty());
    EXPECT_EQ(r.preempt_off.length.count(), 1u);
    ASSERT_FALSE(r.preempt_off.longest.empty());
    EXPECT_NE(r.preempt_off.longest.front().end_site, "(open at the end)");
    EXPECT_EQ(r.ops["commit"].completed, 1u);
    EXPECT_TRUE(r.ops["commit"].open_at_end.empty());
    EXPECT_GE(r.ops["commit"].latency.max(), r.preempt_off.length.max());
}

TEST(RealRun, SectionsAndOperationsOpenAfterTheDrainAreCountedUpToIt) {
    // The section outlasts a 1 ms drain: it ends only once the drain is over.
    RealConfig cfg = short_run(kUpperBound);
    cfg.drain_limit = kernel::kMsec;
    kernel::RunResults r = committer_run(cfg, [](RealPlatform &p) { return p.drained(); });
    ASSERT_EQ(r.preempt_off.open_at_end.size(), 1u);
    EXPECT_GT(r.preempt_off.open_at_end[0], 0);
    EXPECT_EQ(r.preempt_off.length.max(), r.preempt_off.open_at_end[0]);
    ASSERT_FALSE(r.preempt_off.longest.empty());
    EXPECT_EQ(r.preempt_off.longest.front().end_site, "(open at the end)");
    EXPECT_EQ(r.ops["commit"].completed, 0u);
    ASSERT_EQ(r.ops["commit"].open_at_end.size(), 1u);
    EXPECT_GE(r.ops["commit"].open_at_end[0], r.preempt_off.open_at_end[0]);
}

}  // namespace
}  // namespace locksim::real::test
