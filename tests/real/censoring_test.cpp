// On host threads too, what is still open when the run ends is counted, up to the end, as a
// lower bound: a would-be-atomic section and an operation that outlast the run.
#include <gtest/gtest.h>

#include "real_test_util.h"

namespace locksim::real::test {
namespace {

TEST(RealRun, SectionsAndOperationsOpenAtTheEndAreCountedUpToIt) {
    // The run is asked to end from inside the section, so it is open then however late the
    // thread started on a loaded machine.
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    p.create_task({"committer"}, [&] {
        kernel::OpScope op("commit");
        kernel::preempt_disable();
        stop.done();
        while (!kernel::kthread_should_stop()) {
        }
        kernel::preempt_enable();
    });
    kernel::RunResults r = p.run();
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
