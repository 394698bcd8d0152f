// The cost models: counted work x profile, or host time x scale.
#include <gtest/gtest.h>

#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

TEST(Cost, CountedWorkIsChargedThroughTheProfile) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.profile.work_ps[static_cast<size_t>(Work::AvtabNode)] = 2500;  // 2.5 ns
    SimPlatform sim(cfg);
    Time took = -1;
    int answer = 0;
    static const Label op("compute_av");
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        OpScope scope(op);
        Time t0 = now();
        answer = compute("avtab_search", [] {
            count_work(Work::AvtabNode, 1000);
            return 42;
        });
        took = now() - t0;
    });
    auto r = sim.run();
    EXPECT_EQ(answer, 42);
    EXPECT_EQ(took, 2500);
    EXPECT_EQ(r.compute_ns.at("avtab_search"), 2500);
    EXPECT_EQ(r.ops.at("compute_av").compute_ns, 2500);
    EXPECT_EQ(r.ops.at("compute_av").latency.max(), 2500);
}

// validate's simulator pays for the real platform's bookkeeping around every compute() span,
// also one broken by compute_break (two spans), and also a span that counted nothing.
TEST(Cost, HostSpanOverheadIsChargedToEverySpan) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.profile.work_ps[static_cast<size_t>(Work::AvtabNode)] = 2500;  // 2.5 ns
    cfg.host_span_overhead = 70;
    SimPlatform sim(cfg);
    Time took = -1;
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        Time t0 = now();
        compute("avtab_search", [] {
            count_work(Work::AvtabNode, 1000);
            compute_break("after_break", [] {});
            count_work(Work::AvtabNode, 1000);
        });
        compute("nothing", [] {});
        took = now() - t0;
    });
    auto r = sim.run();
    EXPECT_EQ(took, 2500 + 70 + 2500 + 70 + 70);
    EXPECT_EQ(r.compute_ns.at("avtab_search"), 2570);
    EXPECT_EQ(r.compute_ns.at("after_break"), 2570);
    EXPECT_EQ(r.compute_ns.at("nothing"), 70);
}

// Kernel code the core only counts (kernel::stand_in) is priced as any work in a run, and at
// nothing where the simulator is compared with host threads (price_stand_ins off), which still
// pay the span's own overhead; compute() spans are priced either way.
TEST(Cost, StandInsArePricedUnlessComparedWithTheHost) {
    for (bool priced : {true, false}) {
        auto cfg = zero_config(1, 10 * kMsec);
        cfg.profile.work_ps[static_cast<size_t>(Work::StringByte)] = 2000;  // 2 ns
        cfg.host_span_overhead = 30;
        cfg.price_stand_ins = priced;
        SimPlatform sim(cfg);
        sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
            stand_in("audit_log", [] { count_work(Work::StringByte, 100); });
            compute("context_to_string", [] { count_work(Work::StringByte, 100); });
        });
        auto r = sim.run();
        EXPECT_EQ(r.compute_ns.at("audit_log"), (priced ? 200 : 0) + 30) << priced;
        EXPECT_EQ(r.compute_ns.at("context_to_string"), 200 + 30) << priced;
    }
}

TEST(Cost, MeasuredModelUsesHostTime) {
    auto cfg = zero_config(1, 10 * kSec);
    cfg.cost_model = sim::CostModel::Measured;
    cfg.profile.measured_scale = 1.0;
    SimPlatform sim(cfg);
    Time took = -1;
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        Time t0 = now();
        compute("spin", [] {
            volatile uint64_t x = 0;
            for (int i = 0; i < 100000; ++i)
                x = x + static_cast<uint64_t>(i);
        });
        took = now() - t0;
    });
    sim.run();
    EXPECT_GT(took, 0);  // no bound on its size: host time varies
}

// Each interrupt toggle costs irq_toggle, the enable as the disable (calibrate halves the pair
// it times), and both are inside the irqs-off section; preempt_toggle the same for preemption.
TEST(Cost, BothTogglesOfAPairAreCharged) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.profile.primitive.irq_toggle = 100;
    cfg.profile.primitive.preempt_toggle = 10;
    SimPlatform sim(cfg);
    Time took = -1;
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        Time t0 = now();
        local_irq_disable();
        local_irq_enable();
        preempt_disable();
        preempt_enable();
        took = now() - t0;
    });
    auto r = sim.run();
    EXPECT_EQ(took, 2 * 100 + 2 * 10);
    EXPECT_EQ(r.irqs_off.length.max(), 200);
    EXPECT_EQ(r.preempt_off.length.max(), 20);
}
