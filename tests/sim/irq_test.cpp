// Interrupt load as work: handlers and softirq work take their time from the tasks, wait while
// interrupts are off, and hold off preemption until they end. Short simulated runs on a profile
// where only explicit work costs time.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <set>
#include <stdexcept>
#include <string>

#include "kernel/preempt.h"
#include "kernel/rwlock.h"
#include "kernel/spinlock.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::IrqSource;
using locksim::sim::SimPlatform;
using locksim::sim::testing::zero_config;

namespace {

// Work done by a CPU-bound task on CPU 0 in one simulated second, under `irqs`.
struct HogRun {
    Time work = 0;
    RunResults results;
};

HogRun hog_under(std::vector<IrqSource> irqs) {
    auto cfg = zero_config(1, 1 * kSec);
    cfg.irqs = std::move(irqs);
    SimPlatform sim(cfg);
    HogRun run;
    sim.create_task({"hog", Sched::Other, 0, 0, false}, [&] {
        while (!kthread_should_stop()) {
            ndelay(25 * kUsec);
            run.work += 25 * kUsec;
        }
    });
    run.results = sim.run();
    return run;
}

}  // namespace

// Handlers of 10 us at 10 kHz take 10% of the CPU: the task does 90% of a second's work. The
// last piece started before the end finishes in the drain, so the work is 900 ms to within one
// piece.
TEST(Irq, LoadLowersThroughputByItsCpuShare) {
    const HogRun idle = hog_under({});
    const HogRun loaded =
        hog_under({{.kind = "timer", .cpus = {}, .rate = 10000, .handler = 10 * kUsec}});
    EXPECT_EQ(idle.work, 1 * kSec);
    EXPECT_GE(loaded.work, 900 * kMsec);
    EXPECT_LE(loaded.work, 900 * kMsec + 25 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].irq_ns, 10000 * 10 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].softirq_ns, 0);
}

// The softirq work after the handler takes its time too: 4 us + 6 us at 20 kHz is 20%.
TEST(Irq, SoftirqWorkTakesItsShareToo) {
    const HogRun loaded = hog_under({{.kind = "network",
                                      .cpus = {},
                                      .rate = 20000,
                                      .handler = 4 * kUsec,
                                      .softirq = 6 * kUsec}});
    EXPECT_GE(loaded.work, 800 * kMsec);
    EXPECT_LE(loaded.work, 800 * kMsec + 25 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].irq_ns, 20000 * 4 * kUsec);
    EXPECT_EQ(loaded.results.cpus[0].softirq_ns, 20000 * 6 * kUsec);
}

// Only the CPUs a source names take its interrupts.
TEST(Irq, OnlyTheNamedCpusTakeTheLoad) {
    auto cfg = zero_config(2, 100 * kMsec);
    cfg.irqs = {{.kind = "block", .cpus = {1}, .rate = 1000, .handler = 50 * kUsec}};
    SimPlatform sim(cfg);
    auto r = sim.run();
    EXPECT_EQ(r.cpus[0].irq_ns, 0);
    EXPECT_EQ(r.cpus[1].irq_ns, 99 * 50 * kUsec);  // at 1, 2, ... 99 ms: no task runs past 100
}

// A real-time task whose timer fires while the CPU is in a handler and its softirq work starts
// when they end: the interrupt return is the preemption point.
TEST(Irq, WakeupDuringInterruptWorkWaitsForItsEnd) {
    auto cfg = zero_config(1, 20 * kMsec);
    cfg.irqs = {{.kind = "network",
                 .cpus = {},
                 .rate = 1000,
                 .handler = 20 * kUsec,
                 .softirq = 30 * kUsec}};
    SimPlatform sim(cfg);
    Time hog_work = 0, woke = -1;
    sim.create_task({"hog", Sched::Other, 0, 0, false}, [&] {
        while (!kthread_should_stop()) {
            ndelay(10 * kUsec);
            hog_work += 10 * kUsec;
        }
    });
    sim.create_task({"rt", Sched::Fifo, 80, 0, true}, [&] {
        sleep_until(5 * kMsec + 10 * kUsec);  // 10 us into the interrupt at 5 ms
        woke = now();
    });
    auto r = sim.run();
    EXPECT_EQ(woke, 5 * kMsec + 50 * kUsec);
    EXPECT_EQ(r.wakeup_latency.at("rt").max(), 40 * kUsec);
}

// An interrupt arriving while interrupts are off on its CPU is handled at local_irq_enable.
TEST(Irq, HandlerWaitsWhileInterruptsAreOff) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.irqs = {{.kind = "timer", .cpus = {}, .rate = 1000, .handler = 100 * kUsec}};
    SimPlatform sim(cfg);
    Time after_enable = -1, next_done = -1;
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        sleep_until(1500 * kUsec);  // after the first handler (1.0-1.1 ms)
        local_irq_disable();
        ndelay(1 * kMsec);     // 1.5-2.5 ms: the 2 ms interrupt waits
        local_irq_enable();    // the handler runs now: 2.5-2.6 ms
        after_enable = now();  // the next instruction comes after it
        ndelay(100 * kUsec);   // 2.6-2.7 ms
        next_done = now();
    });
    auto r = sim.run();
    EXPECT_EQ(after_enable, 2600 * kUsec);
    EXPECT_EQ(next_done, 2700 * kUsec);
    EXPECT_EQ(r.irqs_off.longest.front().length, 1 * kMsec);
}

// spin_unlock_irqrestore turns interrupts on before preemption: the interrupt that waited in
// the section (handler, then its softirq work on irq exit) runs inside the preempt-off
// section, as ftrace's preemptoff tracer counts it. The irqs-off section is the lock's alone.
TEST(Irq, IrqUnlockRunsThePendingInterruptWithPreemptionOff) {
    auto cfg = zero_config(1, 10 * kMsec);
    cfg.irqs = {
        {.kind = "timer", .cpus = {}, .rate = 1000, .handler = 100 * kUsec, .softirq = 30 * kUsec}};
    SimPlatform sim(cfg);
    Time after_unlock = -1;
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        Spinlock lock("irq_lock");
        sleep_until(1500 * kUsec);  // after the first interrupt (1.0-1.13 ms)
        unsigned long flags = spin_lock_irqsave(lock);
        ndelay(1 * kMsec);  // 1.5-2.5 ms: the 2 ms interrupt waits
        spin_unlock_irqrestore(lock, flags);
        after_unlock = now();
    });
    auto r = sim.run();
    EXPECT_EQ(after_unlock, 2630 * kUsec);
    ASSERT_FALSE(r.irqs_off.longest.empty());
    EXPECT_EQ(r.irqs_off.longest.front().length, 1 * kMsec);
    ASSERT_FALSE(r.preempt_off.longest.empty());
    EXPECT_EQ(r.preempt_off.longest.front().length, 1130 * kUsec);
}

// The scheduler tick takes its interrupt's time from the task it interrupts, inside the
// preempt-off section that task has open, as ftrace's preemptoff tracer counts it; an idle CPU's
// tick is stopped and costs nothing. At HZ=250 the ticks at 4 and 8 ms fall in a section from 1
// to 11 ms.
TEST(Irq, TheTickTakesItsTimeInsideTheSectionItInterrupts) {
    auto cfg = zero_config(1, 20 * kMsec);
    cfg.profile.primitive.tick_irq = 10 * kUsec;
    SimPlatform sim(cfg);
    Time done = -1;
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        sleep_until(1 * kMsec);
        preempt_disable();
        ndelay(10 * kMsec);
        preempt_enable();
        done = now();
    });
    auto r = sim.run();
    EXPECT_EQ(done, 11 * kMsec + 20 * kUsec);
    ASSERT_FALSE(r.preempt_off.longest.empty());
    EXPECT_EQ(r.preempt_off.longest.front().length, 10 * kMsec + 20 * kUsec);
    EXPECT_EQ(r.cpus[0].irq_ns, 2 * 10 * kUsec);
}

// The hrtimer interrupt that wakes a sleeper is paid by the task it interrupts (its section
// grows by the handler), not by the sleeper at its switch-in. The hog's own timer (4 ms, on the
// idle CPU) lets it start its section at 4.02 ms; the sleeper's, due at 5 ms, lengthens that
// section to 2.02 ms, and the sleeper runs when it ends, at 6.04 ms.
TEST(Irq, AWakeupTimerIsPaidByTheTaskItInterrupts) {
    auto cfg = zero_config(1, 20 * kMsec);
    cfg.profile.primitive.timer_irq = 20 * kUsec;
    SimPlatform sim(cfg);
    Time woke = -1;
    sim.create_task({"hog", Sched::Other, 0, 0, false}, [&] {
        sleep_until(4 * kMsec);
        preempt_disable();
        ndelay(2 * kMsec);
        preempt_enable();
    });
    sim.create_task({"rt", Sched::Fifo, 80, 0, true}, [&] {
        sleep_until(5 * kMsec);
        woke = now();
    });
    auto r = sim.run();
    ASSERT_FALSE(r.preempt_off.longest.empty());
    EXPECT_EQ(r.preempt_off.longest.front().length, 2 * kMsec + 20 * kUsec);
    EXPECT_EQ(woke, 6 * kMsec + 40 * kUsec);
    EXPECT_EQ(r.wakeup_latency.at("rt").max(), 1 * kMsec + 40 * kUsec);
    EXPECT_EQ(r.cpus[0].irq_ns, 2 * 20 * kUsec);
}

// Interrupt work that would leave its CPU no time is a configuration built wrong in code (a
// scenario file's [[machine.irq]] is refused where it is read, with its place).
TEST(Irq, LoadThatLeavesNoTimeIsRefusedAsMisuse) {
    auto cfg = zero_config(2, 10 * kMsec);
    cfg.irqs = {{.kind = "network",
                 .cpus = {1},
                 .rate = 10000,
                 .handler = 60 * kUsec,
                 .softirq = 40 * kUsec}};
    EXPECT_THROW(SimPlatform{cfg}, std::invalid_argument);
    cfg.irqs[0].softirq = 39 * kUsec;
    EXPECT_NO_THROW(SimPlatform{cfg});
}

namespace {

// One network source on CPU 0 with a 2 us handler and 3 us of softirq time, `rate` times a
// second.
locksim::sim::SimConfig network_config(int cpus, Time duration, int64_t rate) {
    auto cfg = zero_config(cpus, duration);
    cfg.irqs = {
        {.kind = "network", .cpus = {0}, .rate = rate, .handler = 2 * kUsec, .softirq = 3 * kUsec}};
    return cfg;
}

}  // namespace

// Code given to a source's softirq (open_softirq) runs once per interrupt in softirq context on
// the CPU the interrupt hit, on top of the running task, even inside its preempt-off section:
// handler, softirq time and the code's own 5 us come out of the task's second.
TEST(Irq, SoftirqCodeRunsOnTopOfTheInterruptedTask) {
    SimPlatform sim(network_config(1, 1 * kSec, 10000));
    int runs = 0;
    std::set<std::string> where;
    ASSERT_TRUE(sim.open_softirq("network", [&] {
        ++runs;
        where.insert(std::string(current_task().name));
        ndelay(5 * kUsec);
    }));
    EXPECT_FALSE(sim.open_softirq("block", [] {}));
    Time work = 0;
    sim.create_task({"hog", Sched::Other, 0, 0, false}, [&] {
        while (!kthread_should_stop()) {
            preempt_disable();
            ndelay(25 * kUsec);
            preempt_enable();
            work += 25 * kUsec;
        }
    });
    auto r = sim.run();
    EXPECT_EQ(runs, 9999);  // at 100 us, 200 us, ... 999.9 ms; none raised after the duration
    EXPECT_EQ(where, std::set<std::string>{"softirq/0"});
    EXPECT_GE(work, 900 * kMsec);
    EXPECT_LE(work, 900 * kMsec + 25 * kUsec);
    EXPECT_TRUE(r.violations.empty());
    // The hog's sections went on across the softirq work: none was cut short.
    EXPECT_GE(r.preempt_off.longest.front().length, 25 * kUsec);
}

// Softirq work raised while softirqs are disabled on the CPU runs at the local_bh_enable that
// ends the section, before the task goes on.
TEST(Irq, SoftirqWaitsForLocalBhEnable) {
    SimPlatform sim(network_config(1, 10 * kMsec, 10000));
    int runs = 0, in_section = -1, after = -1;
    sim.open_softirq("network", [&] { ++runs; });
    sim.create_task({"t", Sched::Other, 0, 0, false}, [&] {
        local_bh_disable();
        ndelay(950 * kUsec);  // interrupts at 100 ... 900 us raise their work meanwhile
        in_section = runs;
        local_bh_enable();
        after = runs;
    });
    sim.run();
    EXPECT_EQ(in_section, 0);
    EXPECT_EQ(after, 9);
}

// Under PREEMPT_RT the network interrupt is threaded: its code runs in the interrupt's SCHED_FIFO
// thread, which a higher-priority task preempts. Without RT the softirq work delays that task,
// and its wake-up names softirq work as the cause.
TEST(Irq, ThreadedUnderRtSoAProbePreemptsTheWork) {
    auto probe_late = [](locksim::sim::PreemptModel model, std::string *who, std::string *cause) {
        auto cfg = network_config(1, 1 * kMsec, 10000);
        cfg.preempt = model;
        SimPlatform sim(cfg);
        sim.open_softirq("network", [who] {
            *who = std::string(current_task().name);
            ndelay(90 * kUsec);
        });
        sim.create_task({"probe", Sched::Fifo, 99, 0, true},
                        [] { sleep_until(150 * kUsec); });  // inside the first interrupt's work
        auto r = sim.run();
        EXPECT_TRUE(r.violations.empty());
        if (!r.wakeup_worst.empty() && r.wakeup_worst.front().cause())
            *cause = r.wakeup_worst.front().cause()->kind;
        return r.wakeup_latency.at("probe").max();
    };
    std::string who, cause;
    // 100 us: 2 us handler, 3 us softirq time, 90 us of code: until 195 us.
    EXPECT_EQ(probe_late(locksim::sim::PreemptModel::Full, &who, &cause), 45 * kUsec);
    EXPECT_EQ(who, "softirq/0");
    EXPECT_EQ(cause, "softirq");
    cause.clear();
    EXPECT_EQ(probe_late(locksim::sim::PreemptModel::Rt, &who, &cause), 0);
    EXPECT_EQ(who, "irq/0-network/0");
}

// A queued rwlock's reader in softirq context waits only for a writer holding the lock, not for
// one queued: the softirq work interrupted a reader that the queued writer waits for, so queuing
// behind the writer would never end (queued_read_lock_slowpath's in_interrupt() case).
TEST(Irq, SoftirqReaderPassesAQueuedWriter) {
    auto cfg = network_config(2, 1 * kMsec, 8000);
    SimPlatform sim(cfg);
    RwLock lock("policy_rwlock", sim);
    Time softirq_in = -1, writer_in = -1;
    sim.open_softirq("network", [&] {
        read_lock(lock);
        if (softirq_in < 0) softirq_in = now();
        read_unlock(lock);
    });
    sim.create_task({"reader", Sched::Other, 0, 0, false}, [&] {
        read_lock(lock);
        ndelay(200 * kUsec);  // the interrupt at 125 us comes inside
        read_unlock(lock);
    });
    sim.create_task({"writer", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        write_lock_irq(lock);
        writer_in = now();
        write_unlock_irq(lock);
    });
    auto r = sim.run();
    EXPECT_TRUE(r.violations.empty());
    EXPECT_EQ(softirq_in, 130 * kUsec);  // after the handler and the softirq time
    EXPECT_EQ(writer_in, 205 * kUsec);   // the reader's 200 us, plus the 5 us of interrupt work
}

namespace {

// When each interrupt of kind `kind` reached CPU `cpu` in a 10 ms run of an idle machine.
std::vector<Time> arrivals(std::vector<IrqSource> irqs, uint64_t seed, const std::string &kind,
                           int cpu = 0) {
    auto cfg = zero_config(2, 10 * kMsec);
    cfg.irqs = std::move(irqs);
    cfg.seed = seed;
    cfg.trace = true;
    SimPlatform sim(cfg);
    sim.create_task({"idle", Sched::Other, 0, 0, false}, [] {});
    sim.run();
    std::vector<Time> at;
    const std::string what = fmt::format(" cpu{} irq {}", cpu, kind);
    for (const std::string &line : sim.trace())
        if (line.size() > 12 && line.substr(12) == what)
            at.push_back(std::stoll(line.substr(0, 12)));
    return at;
}

IrqSource network(bool drawn, Time jitter) {
    return {.kind = "network",
            .cpus = {},
            .rate = 1000,
            .handler = 1 * kUsec,
            .drawn_phase = drawn,
            .jitter = jitter};
}

}  // namespace

// Without a drawn phase a source fires at its period; with one, its first interrupt on each
// CPU comes at a phase in [0, period) that the seed chooses, and every later one is due a
// period after the one before, late by at most the jitter.
TEST(Irq, DrawnPhaseAndJitter) {
    const std::vector<Time> fixed = arrivals({network(false, 0)}, 1, "network");
    ASSERT_EQ(fixed.size(), 9u);  // at 1 ms to 9 ms: the one due as the run ends is not taken
    EXPECT_EQ(fixed[0], 1 * kMsec);
    std::set<Time> firsts;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
        const std::vector<Time> at = arrivals({network(true, 50 * kUsec)}, seed, "network");
        ASSERT_GE(at.size(), 9u);
        EXPECT_LE(at[0], 1 * kMsec - 1 + 50 * kUsec);  // a phase below the period, its jitter
        firsts.insert(at[0]);
        std::set<Time> gaps;
        for (size_t k = 1; k < at.size(); ++k) {
            EXPECT_GE(at[k] - at[k - 1], 1 * kMsec - 50 * kUsec);
            EXPECT_LE(at[k] - at[k - 1], 1 * kMsec + 50 * kUsec);
            gaps.insert(at[k] - at[k - 1]);
        }
        EXPECT_GT(gaps.size(), 1u) << "the jitter moves each interrupt";
    }
    EXPECT_GE(firsts.size(), 7u) << "the seeds put the source at other phases";
    // The other CPU draws its own phase.
    EXPECT_NE(arrivals({network(true, 0)}, 3, "network", 0),
              arrivals({network(true, 0)}, 3, "network", 1));
}

// A source's phase comes from a stream of its own: adding a source of another kind before it
// leaves its interrupts where they were.
TEST(Irq, AddingASourceMovesNoOther) {
    IrqSource block{
        .kind = "block", .cpus = {}, .rate = 3000, .handler = 1 * kUsec, .drawn_phase = true};
    for (uint64_t seed = 1; seed <= 3; ++seed) {
        const std::vector<Time> alone = arrivals({network(true, 20 * kUsec)}, seed, "network");
        const std::vector<Time> with =
            arrivals({block, network(true, 20 * kUsec)}, seed, "network");
        ASSERT_FALSE(alone.empty());
        EXPECT_EQ(alone, with);
    }
}
