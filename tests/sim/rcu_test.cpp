// RCU: grace periods wait for every pre-existing reader; callbacks run after one.
#include <gtest/gtest.h>

#include <vector>

#include "kernel/preempt.h"
#include "kernel/rcu.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimConfig;
using locksim::sim::SimPlatform;

namespace {

struct Interval {
    Time begin, end;
};

}  // namespace

// Outside the anonymous namespace: the test class derived from them is defined at file scope.
struct GpCase {
    bool preempt_rcu;
    bool expedited;
};

class GracePeriod : public ::testing::TestWithParam<GpCase> {};

// Readers of random lengths on 4 CPUs, preempted now and then by a FIFO task, and a writer
// calling synchronize_rcu in a loop: no reader that began before a call may end after it
// returns, and the grace period is at least as long as the longest such reader's remainder.
TEST_P(GracePeriod, NeverShorterThanAPreExistingReader) {
    SimConfig cfg;
    cfg.cpus = 4;
    cfg.duration = 200 * kMsec;
    cfg.seed = 99;
    cfg.preempt_rcu = GetParam().preempt_rcu;
    SimPlatform sim(cfg);
    std::vector<Interval> readers, gps;
    for (int i = 0; i < 6; ++i)
        sim.create_task({"reader" + std::to_string(i), Sched::Other, 0, i % 4, false}, [&] {
            while (!kthread_should_stop()) {
                rcu_read_lock();
                Time b = now();
                ndelay(static_cast<Time>(get_random_below(400)) * kUsec);
                readers.push_back({b, now()});  // before unlock: it may preempt us at once
                rcu_read_unlock();
                ndelay(static_cast<Time>(get_random_below(50)) * kUsec);
            }
        });
    sim.create_task({"hog", Sched::Fifo, 10, 1, false}, [&] {
        for (Time t = kMsec; !kthread_should_stop(); t += 3 * kMsec) {
            sleep_until(t);
            ndelay(700 * kUsec);
        }
    });
    bool exp = GetParam().expedited;
    sim.create_task({"writer", Sched::Other, 0, 3, false}, [&] {
        while (!kthread_should_stop()) {
            Time b = now();
            if (exp)
                synchronize_rcu_expedited();
            else
                synchronize_rcu();
            gps.push_back({b, now()});
            msleep(1);
        }
    });
    auto r = sim.run();
    ASSERT_GT(gps.size(), 10u);
    size_t overlapping = 0;
    for (const Interval &g : gps)
        for (const Interval &rd : readers)
            if (rd.begin < g.begin && rd.end > g.begin) {
                ++overlapping;
                EXPECT_LE(rd.end, g.end) << "reader [" << rd.begin << "," << rd.end
                                         << ") outlived gp [" << g.begin << "," << g.end << ")";
            }
    EXPECT_GT(overlapping, 10u);  // the check had something to check
    EXPECT_TRUE(r.violations.empty());
    uint64_t n = exp ? r.rcu.expedited_grace_periods : r.rcu.grace_periods;
    EXPECT_GE(n, gps.size() - 1);
}

INSTANTIATE_TEST_SUITE_P(Flavours, GracePeriod,
                         ::testing::Values(GpCase{true, false}, GpCase{false, false},
                                           GpCase{true, true}, GpCase{false, true}),
                         [](const auto &info) {
                             return std::string(info.param.preempt_rcu ? "preempt_rcu"
                                                                       : "no_preempt_rcu") +
                                    (info.param.expedited ? "_expedited" : "");
                         });

TEST(Rcu, ExpeditedIsFasterThanNormalOnABusyMachine) {
    auto run = [](bool exp) {
        SimConfig cfg;
        cfg.cpus = 2;
        cfg.duration = 100 * kMsec;
        SimPlatform sim(cfg);
        sim.create_task({"busy", Sched::Other, 0, 0, false}, [] {
            while (!kthread_should_stop())
                ndelay(50 * kUsec);
        });
        sim.create_task({"writer", Sched::Other, 0, 1, false}, [exp] {
            while (!kthread_should_stop()) {
                exp ? synchronize_rcu_expedited() : synchronize_rcu();
                msleep(2);
            }
        });
        return sim.run();
    };
    auto normal = run(false), expedited = run(true);
    EXPECT_GT(normal.rcu.grace_period_ns.mean(),
              4 * expedited.rcu.expedited_grace_period_ns.mean());
}

TEST(Rcu, CallRcuRunsTheCallbackAfterAGracePeriod) {
    SimConfig cfg;
    cfg.cpus = 2;
    cfg.duration = 50 * kMsec;
    SimPlatform sim(cfg);
    RcuPointer<int> ptr;
    Time reader_end = -1, freed_at = -1;
    sim.create_task({"reader", Sched::Other, 0, 0, false}, [&] {
        rcu_read_lock();
        int *p = rcu_dereference(ptr);
        ndelay(5 * kMsec);
        EXPECT_NE(p, nullptr);
        rcu_read_unlock();
        reader_end = now();
    });
    sim.create_task({"writer", Sched::Other, 0, 1, false}, [&] {
        ndelay(kMsec);
        int *old = rcu_replace_pointer(ptr, knew<int>(Gfp::Kernel, 2));
        call_rcu([&, old] {
            kdelete(old);
            freed_at = now();
        });
    });
    {
        kernel::PlatformScope setup(sim);
        rcu_assign_pointer(ptr, knew<int>(Gfp::Kernel, 1));
    }
    auto r = sim.run();
    EXPECT_GE(freed_at, reader_end);
    EXPECT_EQ(r.rcu.callbacks_invoked, 1u);
    EXPECT_TRUE(r.violations.empty()) << r.violations.front().message;
    EXPECT_EQ(r.memory.live_bytes, static_cast<int64_t>(sizeof(int)));
    EXPECT_EQ(r.memory.peak_bytes, static_cast<int64_t>(2 * sizeof(int)));
    kernel::PlatformScope scope(sim);
    kdelete(rcu_dereference_protected(ptr));
}

namespace {

// Three CPUs busy outside any read section, a fourth that only runs a writer calling
// synchronize_rcu_expedited in a loop (idle while it waits).
RunResults expedited_loop(sim::PreemptModel preempt, uint64_t *calls) {
    SimConfig cfg;
    cfg.cpus = 4;
    cfg.duration = 20 * kMsec;
    cfg.preempt = preempt;
    cfg.profile.primitive.ipi = 1500;
    cfg.profile.primitive.rcu_exp_setup = 7000;
    cfg.profile.primitive.rcu_exp_handler = 900;
    cfg.profile.primitive.tick_irq = 0;  // the handlers' interrupt time alone
    cfg.profile.primitive.timer_irq = 0;
    SimPlatform sim(cfg);
    for (int c = 0; c < 3; ++c)
        sim.create_task({"busy" + std::to_string(c), Sched::Other, 0, c, false}, [] {
            while (!kthread_should_stop())
                ndelay(30 * kUsec);
        });
    sim.create_task({"writer", Sched::Other, 0, 3, false}, [calls] {
        while (!kthread_should_stop()) {
            synchronize_rcu_expedited();
            ++*calls;
            msleep(1);
        }
    });
    return sim.run();
}

}  // namespace

// The funnel and workqueue hop, the IPI to each busy CPU, its handler there: every busy CPU
// loses one handler's time per grace period, the idle one none, and each grace period lasts
// setup + IPI (the handler reports its quiescent state).
TEST(Rcu, ExpeditedGracePeriodCostsEveryBusyCpuOneHandler) {
    uint64_t calls = 0;
    auto r = expedited_loop(sim::PreemptModel::Full, &calls);
    ASSERT_GT(calls, 5u);
    EXPECT_EQ(r.rcu.expedited_grace_periods, calls);
    EXPECT_EQ(r.rcu.grace_periods, 0u);
    EXPECT_EQ(r.rcu.expedited_grace_period_ns.min(), 8500);
    EXPECT_EQ(r.rcu.expedited_grace_period_ns.max(), 8500);
    ASSERT_EQ(r.cpus.size(), 4u);
    for (int c = 0; c < 3; ++c)
        EXPECT_EQ(r.cpus[static_cast<size_t>(c)].irq_ns, static_cast<Time>(calls) * 900)
            << "cpu " << c;
    EXPECT_EQ(r.cpus[3].irq_ns, 0);
}

// PREEMPT_RT with rcu_normal_after_boot: the expedited call waits a normal grace period (it
// ends on a jiffy) and sends no IPI.
TEST(Rcu, ExpeditedIsANormalGracePeriodUnderRt) {
    uint64_t calls = 0;
    auto r = expedited_loop(sim::PreemptModel::Rt, &calls);
    ASSERT_GT(calls, 2u);
    EXPECT_EQ(r.rcu.expedited_grace_periods, 0u);
    EXPECT_EQ(r.rcu.grace_periods, calls);
    EXPECT_EQ(r.cpus[0].irq_ns, 0);
    EXPECT_GT(r.rcu.grace_period_ns.min(), 8500);
}

namespace {

// Where a call_rcu callback ran: its task, CPU and time, and the run.
struct CallbackRun {
    std::string task;
    int cpu = -1;
    Time start = -1, end = -1;
    Time fifo_woke = -1;  // when a FIFO task due during the callback ran on its CPU
    RunResults r;
};

// A task on CPU 1 queues a callback that does 300 us of work and keeps the CPU busy meanwhile;
// a SCHED_FIFO task on CPU 1 is due in the middle of the callback's work.
CallbackRun callback_where(sim::PreemptModel preempt, bool nocbs) {
    SimConfig cfg;
    cfg.cpus = 2;
    cfg.duration = 40 * kMsec;
    cfg.preempt = preempt;
    cfg.rcu_nocbs = nocbs;
    cfg.profile.primitive.rcu_callback = 50;
    cfg.profile.primitive.tick_irq = 1600;
    SimPlatform sim(cfg);
    CallbackRun out;
    sim.create_task({"user", Sched::Other, 0, 1, false}, [&] {
        ndelay(kMsec);
        call_rcu([&] {
            out.task = current_task().name;
            out.cpu = smp_processor_id();
            out.start = now();
            ndelay(300 * kUsec);
            out.end = now();
        });
        while (!kthread_should_stop())
            ndelay(50 * kUsec);
    });
    sim.create_task({"fifo", Sched::Fifo, 50, 1, false}, [&] {
        // Due once the callback has begun: the grace period ends on a jiffy (4 ms) after 1 ms.
        while (out.start < 0 && !kthread_should_stop())
            msleep(1);
        if (out.start < 0) return;
        sleep_until(out.start + 100 * kUsec);
        out.fifo_woke = now();
    });
    out.r = sim.run();
    return out;
}

Time softirq_total(const RunResults &r) {
    Time s = 0;
    for (const auto &c : r.cpus)
        s += c.softirq_ns;
    return s;
}

}  // namespace

// By default the callback runs in RCU_SOFTIRQ on the CPU that queued it, at the exit of its
// tick: softirq time of that CPU, inside a preempt-off section of its softirq context, which a
// SCHED_FIFO task due meanwhile waits for.
TEST(RcuCallbacks, RunInRcuSoftirqOnTheQueuingCpu) {
    CallbackRun c = callback_where(sim::PreemptModel::Full, false);
    ASSERT_GE(c.start, 0);
    EXPECT_EQ(c.task, "softirq/1");
    EXPECT_EQ(c.cpu, 1);
    // The tick's 1.6 us, then rcu_do_batch's 50 ns for the callback (a tick every 4 ms).
    EXPECT_EQ(c.start % (kSec / 250), 1600 + 50) << "after a tick's exit";
    EXPECT_EQ(c.r.cpus[1].softirq_ns, 50 + 300 * kUsec);
    EXPECT_EQ(c.r.cpus[0].softirq_ns, 0);
    EXPECT_GE(c.fifo_woke, c.end);
    bool section = false;
    for (const auto &iv : c.r.preempt_off.longest)
        section |= iv.task == "softirq/1" && iv.cpu == 1 && iv.length >= 50 + 300 * kUsec &&
                   iv.label == "rcu_core";
    EXPECT_TRUE(section) << "a preempt-off section of the softirq context, named rcu_core";
    EXPECT_EQ(c.r.ops.at("rcu_core").completed, 1u);
    EXPECT_EQ(c.r.rcu.callbacks_invoked, 1u);
    EXPECT_TRUE(c.r.violations.empty()) << c.r.violations.front().message;
}

// rcu_nocbs: the rcuo kthread invokes it, no softirq time anywhere.
TEST(RcuCallbacks, RunInTheRcuoKthreadWithNocbs) {
    CallbackRun c = callback_where(sim::PreemptModel::Full, true);
    ASSERT_GE(c.start, 0);
    EXPECT_EQ(c.task, "rcuo");
    EXPECT_EQ(softirq_total(c.r), 0);
    EXPECT_EQ(c.r.rcu.callbacks_invoked, 1u);
    EXPECT_TRUE(c.r.violations.empty()) << c.r.violations.front().message;
}

// PREEMPT_RT: the rcuc kthread of the queuing CPU invokes it, preemptibly: the SCHED_FIFO task
// due meanwhile runs at once, before the callback's work ends.
TEST(RcuCallbacks, RunInTheCpusRcucKthreadUnderRt) {
    for (bool nocbs : {false, true}) {
        CallbackRun c = callback_where(sim::PreemptModel::Rt, nocbs);
        ASSERT_GE(c.start, 0);
        EXPECT_EQ(c.task, nocbs ? "rcuo" : "rcuc/1");
        EXPECT_EQ(softirq_total(c.r), 0);
        if (c.cpu == 1) {
            EXPECT_GE(c.fifo_woke, 0);
            EXPECT_LT(c.fifo_woke, c.end) << "preempted the callback";
        }
        EXPECT_TRUE(c.r.violations.empty()) << c.r.violations.front().message;
    }
}

namespace {

enum class Holder { None, PreemptOff, IrqsOff, ReadSection, PreemptOffLate };

// Two CPUs, every cost zero, the user-space model: a liburcu grace period of 40 us, a polling
// window of 3 us and 100 us past a reader it slept for. On CPU 1 a task is inside `holder` from
// 0 to `until` (PreemptOffLate: from 15 us, after the grace period began); on CPU 0 a writer
// calls synchronize_rcu at 10 us. How long the call took.
Time userspace_gp(Holder holder, Time until, Time sleep = 100 * kUsec) {
    SimConfig cfg = sim::testing::zero_config(2, 10 * kMsec);
    cfg.userspace_rcu_gp = 40 * kUsec;
    cfg.userspace_rcu_spin = 3 * kUsec;
    cfg.userspace_rcu_sleep = sleep;
    SimPlatform sim(cfg);
    Time took = -1;
    sim.create_task({"holder", Sched::Other, 0, 1, false}, [&] {
        switch (holder) {
            case Holder::None:
                return;
            case Holder::PreemptOff:
                preempt_disable();
                ndelay(until);
                preempt_enable();
                return;
            case Holder::IrqsOff:
                local_irq_disable();
                ndelay(until);
                local_irq_enable();
                return;
            case Holder::ReadSection:
                rcu_read_lock();
                ndelay(until);
                rcu_read_unlock();
                return;
            case Holder::PreemptOffLate:
                ndelay(15 * kUsec);
                preempt_disable();
                ndelay(until - 15 * kUsec);
                preempt_enable();
                return;
        }
    });
    sim.create_task({"writer", Sched::Other, 0, 0, false}, [&] {
        sleep_until(10 * kUsec);
        const Time t0 = now();
        synchronize_rcu();
        took = now() - t0;
    });
    auto r = sim.run();
    EXPECT_TRUE(r.violations.empty()) << r.violations.front().message;
    return took;
}

}  // namespace

// liburcu's synchronize_rcu as the real platform meets it: a thread inside a read section or a
// would-be-atomic one (the real platform makes it a liburcu reader) holds the grace period; one
// still inside after the polling window makes it end the slept-for time after it left; one
// that began after the grace period, or none, leaves it at its two membarriers.
TEST(UserspaceRcu, GracePeriodFollowsLiburcusWaitForReaders) {
    EXPECT_EQ(userspace_gp(Holder::None, 0), 40 * kUsec);
    EXPECT_EQ(userspace_gp(Holder::PreemptOff, 50 * kUsec), 40 * kUsec + 100 * kUsec);
    EXPECT_EQ(userspace_gp(Holder::IrqsOff, 50 * kUsec), 40 * kUsec + 100 * kUsec);
    EXPECT_EQ(userspace_gp(Holder::ReadSection, 50 * kUsec), 40 * kUsec + 100 * kUsec);
    // Left 2 us into the grace period, within the polling window.
    EXPECT_EQ(userspace_gp(Holder::PreemptOff, 12 * kUsec), 2 * kUsec + 40 * kUsec);
    EXPECT_EQ(userspace_gp(Holder::PreemptOffLate, 50 * kUsec), 40 * kUsec);
    // A profile without the slept-for time: the two membarriers after the reader left.
    EXPECT_EQ(userspace_gp(Holder::PreemptOff, 50 * kUsec, 0), 40 * kUsec + 40 * kUsec);
}

// validate charges the real platform's call_rcu to the caller; a run charges nothing for it.
TEST(UserspaceRcu, HostCallRcuIsChargedToTheCaller) {
    for (Time cost : {Time{0}, Time{500}}) {
        SimConfig cfg = sim::testing::zero_config(1, 10 * kMsec);
        cfg.userspace_rcu_gp = 40 * kUsec;
        cfg.host_call_rcu = cost;
        SimPlatform sim(cfg);
        Time took = -1;
        int freed = 0;
        sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
            const Time t0 = now();
            for (int i = 0; i < 10; ++i)
                call_rcu([&freed] { ++freed; });
            took = now() - t0;
        });
        sim.run();
        EXPECT_EQ(took, 10 * cost);
        EXPECT_EQ(freed, 10);
    }
}
