// validate's simulated side (validate/side.h) with the host's load beside it.
#include <gtest/gtest.h>

#include "strategy_test_util.h"
#include "validate/side.h"

namespace locksim::strategies::test {
namespace {

// Ten CPU-bound tasks beside the reader and the writer on two CPUs, as validate gives the
// simulation when ten other tasks were runnable on the host: the load was there first, so the
// reader runs from the start and gets its share of a short run (a reader created before the
// load waited for every one of those tasks, past 40 ms, and validate failed the run).
TEST(ValidateSide, TheReaderRunsFromTheStartBesideTheHostsLoad) {
    sim::SimConfig cfg = sim_config(2, 40 * kernel::kMsec);
    sim::SimPlatform sim(cfg);
    StrategySpec spec{.name = "rwlock", .label = "rwlock"};
    TortureConfig tc;
    tc.readers = 1;
    tc.reader_hold = 0;
    tc.queries = 4;
    tc.writer_period = 5 * kernel::kMsec;
    Side side = run_side(sim, read_bytes(fixture("cond.33")), spec, CoreConfig{}, tc, 10);
    EXPECT_FALSE(side.torture.failed()) << side.torture.failures.front();
    // A fair share is 2 CPUs over 12 tasks, about 6.7 ms of the 40; each read takes a few us.
    EXPECT_GT(side.torture.reads, 100u);
}

}  // namespace
}  // namespace locksim::strategies::test
