// The warm-up: statistics from before it are dropped, violations are kept.
#include <gtest/gtest.h>

#include "kernel/preempt.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using namespace locksim::sim::testing;

TEST(Warmup, DropsStatisticsGatheredBeforeIt) {
    for (Time warmup : {Time{0}, 5 * kMsec}) {
        sim::SimConfig cfg = zero_config(1, 10 * kMsec);
        cfg.warmup = warmup;
        sim::SimPlatform p(cfg);
        {
            PlatformScope scope(p);
            create_task({"worker"}, [] {
                static const Label op("op");
                for (Time t = 0; !kthread_should_stop();) {
                    sleep_until(t += kMsec);
                    OpScope s(op);
                    preempt_disable();
                    ndelay(10 * kUsec);
                    preempt_enable();
                }
            });
        }
        RunResults r = p.run();
        // Operations at 1, 2, ... 9 ms (and one at 10 ms as the run stops).
        const uint64_t ops = r.ops.at("op").completed;
        const uint64_t sections = r.preempt_off.length.count();
        if (warmup == 0) {
            EXPECT_GE(ops, 9u);
            EXPECT_EQ(r.duration_ns, 10 * kMsec);
        } else {
            EXPECT_GE(ops, 4u);
            EXPECT_LE(ops, 6u);
            EXPECT_EQ(r.duration_ns, 5 * kMsec);
        }
        EXPECT_EQ(sections, ops);
    }
}

TEST(Warmup, KeepsViolationsFromBeforeIt) {
    sim::SimConfig cfg = zero_config(1, 10 * kMsec);
    cfg.warmup = 5 * kMsec;
    sim::SimPlatform p(cfg);
    {
        PlatformScope scope(p);
        create_task({"broken"}, [] {
            sleep_until(kMsec);
            preempt_disable();
            msleep(1);  // sleeping in atomic context, before the warm-up ends
            preempt_enable();
        });
    }
    RunResults r = p.run();
    EXPECT_EQ(r.count_violations("sleep_in_atomic"), 1u);
}
