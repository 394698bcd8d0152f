// The real platform's primitives and bookkeeping: mutual exclusion of every lock kind under
// real contention, grace periods that wait for readers, call_rcu, accounted memory, the
// self-checks, and what a run reports. No timing thresholds: only orders and counts.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>

#include "kernel/mutex.h"
#include "kernel/rcu.h"
#include "kernel/rwlock.h"
#include "kernel/rwsem.h"
#include "kernel/spinlock.h"
#include "real_test_util.h"

namespace locksim::real::test {
namespace {

using kernel::kMsec;
using kernel::kUsec;

constexpr int kThreads = 4;
constexpr int kRounds = 2000;

TEST(RealLocks, SpinlockExcludes) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, kThreads);
    kernel::Spinlock l("test_spin");
    int64_t counter = 0;  // plain: a data race if the lock does not exclude
    for (int i = 0; i < kThreads; ++i)
        p.create_task({"inc"}, [&] {
            for (int n = 0; n < kRounds; ++n) {
                kernel::spin_lock(l);
                ++counter;
                kernel::spin_unlock(l);
            }
            stop.done();
        });
    kernel::RunResults r = p.run();
    EXPECT_EQ(counter, int64_t{kThreads} * kRounds);
    EXPECT_EQ(r.locks["test_spin"].acquisitions[0], uint64_t{kThreads} * kRounds);
    EXPECT_EQ(r.locks["test_spin"].kind, "spinlock");
    // Every hold was a would-be-atomic section.
    EXPECT_GE(r.preempt_off.length.count(), uint64_t{kThreads} * kRounds);
    EXPECT_EQ(r.platform, "real");
    EXPECT_NE(r.config["atomic_sections"].find("would-be-atomic"), std::string::npos);
}

TEST(RealLocks, RwlockWritersExcludeReadersAndWriters) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 4);
    kernel::RwLock l("test_rw");
    std::atomic<int> readers_in{0};
    std::atomic<bool> overlap{false};
    int64_t counter = 0;
    for (int i = 0; i < kThreads; ++i)
        p.create_task({"rw"}, [&, i] {
            for (int n = 0; n < kRounds; ++n) {
                if ((n + i) % 4 == 0) {
                    kernel::write_lock(l);
                    if (readers_in.load()) overlap = true;
                    ++counter;
                    kernel::write_unlock(l);
                } else {
                    kernel::read_lock(l);
                    ++readers_in;
                    (void)counter;
                    --readers_in;
                    kernel::read_unlock(l);
                }
            }
            stop.done();
        });
    kernel::RunResults r = p.run();
    EXPECT_FALSE(overlap.load());
    EXPECT_EQ(counter, int64_t{kThreads} * kRounds / 4);
    EXPECT_EQ(r.locks["test_rw"].acquisitions[0] + r.locks["test_rw"].acquisitions[1],
              uint64_t{kThreads} * kRounds);
}

TEST(RealLocks, SleepingLocksExclude) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 4);
    kernel::Mutex m("test_mutex");
    kernel::RwSem s("test_rwsem");
    int64_t a = 0, b = 0;
    for (int i = 0; i < kThreads; ++i)
        p.create_task({"sleepers"}, [&] {
            for (int n = 0; n < kRounds / 4; ++n) {
                kernel::mutex_lock(m);
                ++a;
                kernel::mutex_unlock(m);
                kernel::down_write(s);
                ++b;
                kernel::up_write(s);
                kernel::down_read(s);
                (void)b;
                kernel::up_read(s);
            }
            stop.done();
        });
    kernel::RunResults r = p.run();
    EXPECT_EQ(a, int64_t{kThreads} * kRounds / 4);
    EXPECT_EQ(b, int64_t{kThreads} * kRounds / 4);
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
}

TEST(RealRcu, GracePeriodWaitsForTheReader) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    std::atomic<int> step{0};
    std::atomic<bool> gp_returned_early{false};
    p.create_task({"reader"}, [&] {
        kernel::rcu_read_lock();
        step = 1;
        while (step.load() < 2)
            std::this_thread::yield();
        // The updater is inside synchronize_rcu now (or about to be): it must not return
        // while this section lasts.
        for (int i = 0; i < 200; ++i) {
            if (step.load() == 3) gp_returned_early = true;
            std::this_thread::yield();
        }
        kernel::rcu_read_unlock();
    });
    p.create_task({"updater"}, [&] {
        while (step.load() < 1)
            std::this_thread::yield();
        step = 2;
        kernel::synchronize_rcu();
        step = 3;
        stop.done();
    });
    kernel::RunResults r = p.run();
    EXPECT_FALSE(gp_returned_early.load());
    EXPECT_EQ(step.load(), 3);
    EXPECT_EQ(r.rcu.grace_periods, 1u);
}

TEST(RealRcu, CallbacksRunAfterReadersWithThePlatform) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    std::atomic<int> ran{0};
    std::atomic<bool> had_platform{true};
    p.create_task({"caller"}, [&] {
        for (int i = 0; i < 100; ++i)
            kernel::call_rcu([&] {
                if (!kernel::current_or_null()) had_platform = false;
                void *q = kernel::kmalloc(16, kernel::Gfp::Atomic);
                kernel::kfree(q);
                ++ran;
            });
        while (ran.load() < 100)  // callbacks are counted until the run stops
            std::this_thread::yield();
        stop.done();
    });
    kernel::RunResults r = p.run();  // waits for the callbacks (rcu_barrier)
    EXPECT_EQ(ran.load(), 100);
    EXPECT_TRUE(had_platform.load());
    EXPECT_EQ(r.rcu.callbacks_invoked, 100u);
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
}

// Threads keep their own bytes off the shared count until an operation ends (a count shared by
// every kmalloc moved its line between CPUs each time): the live bytes at the end are exact, a
// peak is at least what one thread saw and at most the sum, and one allocation past the batch
// is folded in at once.
TEST(RealMemory, ThreadsFoldTheirBytesIntoExactTotals) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 2);
    std::vector<void *> kept[2];
    for (int i = 0; i < 2; ++i)
        p.create_task({"alloc" + std::to_string(i)}, [&, i] {
            for (int n = 0; n < 100; ++n) {
                kernel::OpScope op("alloc_op");
                void *x = kernel::kmalloc(5000, kernel::Gfp::Kernel);
                kept[i].push_back(kernel::kmalloc(100, kernel::Gfp::Kernel));
                kernel::kfree(x);
            }
            stop.done();
        });
    kernel::RunResults r = p.run();
    EXPECT_EQ(r.memory.live_bytes, 2 * 100 * 100);
    EXPECT_GE(r.memory.peak_bytes, 100 * 100 + 5000);
    EXPECT_LE(r.memory.peak_bytes, 2 * (100 * 100 + 5000));
    EXPECT_EQ(r.memory.frees, 200u);
    for (auto &v : kept)
        for (void *x : v)
            kernel::kfree(x);
}

TEST(RealMemory, AllocationPastTheBatchIsFoldedAtOnce) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    void *big = nullptr;
    int64_t seen_by_other = -1;
    p.create_task({"big"}, [&] {
        big = kernel::vmalloc(1 << 20);
        // Another thread's operation sees it as live from its start.
        std::thread other([&] {
            kernel::PlatformScope inner(p);
            kernel::OpScope op("look");
            void *x = kernel::kmalloc(8, kernel::Gfp::Kernel);
            kernel::kfree(x);
        });
        other.join();
        stop.done();
    });
    kernel::RunResults r = p.run();
    seen_by_other = r.ops["look"].peak_live_bytes;
    EXPECT_GE(seen_by_other, 1 << 20);
    EXPECT_EQ(r.memory.live_bytes, 1 << 20);
    kernel::vfree(big);
}

// The host's clock on an operation: read only for the labels the configuration names; a thread
// cannot run for longer than the operation lasted, nor while it slept.
TEST(RealHostClock, CountsTheNamedOperationsAndNotTheirSleep) {
    RealConfig cfg = short_run(kUpperBound);
    cfg.host_clock_ops = {kernel::Label("clocked_op")};
    RealPlatform p(cfg);
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    constexpr int kOps = 5;
    constexpr unsigned kSleepMs = 20;
    std::atomic<uint64_t> sink{0};
    auto spin = [&] {
        for (uint64_t i = 0; i < 200000; ++i)
            sink.fetch_add(i, std::memory_order_relaxed);
    };
    p.create_task({"worker"}, [&] {
        for (int n = 0; n < kOps; ++n) {
            {
                kernel::OpScope op("clocked_op");
                spin();
                kernel::msleep(kSleepMs);
            }
            kernel::OpScope op("plain_op");
            spin();
        }
        stop.done();
    });
    kernel::RunResults r = p.run();
    const kernel::OpStats &clocked = r.ops["clocked_op"], &plain = r.ops["plain_op"];
    ASSERT_EQ(clocked.completed, static_cast<uint64_t>(kOps));
    ASSERT_EQ(plain.completed, static_cast<uint64_t>(kOps));
    EXPECT_GT(clocked.host_cpu_ns, 0);
    EXPECT_LE(clocked.host_cpu_ns, clocked.latency.sum() - kOps * kSleepMs * kMsec);
    EXPECT_EQ(plain.host_cpu_ns, 0);
    EXPECT_EQ(plain.host_preemptions, 0u);
    // The results file carries the host's figures where they were measured, and only there.
    const nlohmann::json j = r;
    EXPECT_EQ(j["ops"]["clocked_op"]["host_cpu_ns"], clocked.host_cpu_ns);
    EXPECT_FALSE(j["ops"]["plain_op"].contains("host_cpu_ns"));
}

// A task's sleep ends when it is due, as in the simulator: its thread has no timer slack
// beyond the least Linux allows (a SCHED_OTHER thread's default is 50 us; the workloads draw
// their own).
TEST(RealTasks, SleepWithoutTheHostsTimerSlack) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    std::atomic<long> slack{-1};
    p.create_task({"sleeper"}, [&] {
        slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        stop.done();
    });
    p.run();
    EXPECT_EQ(slack.load(), 1);
}

TEST(RealMemory, AccountsLiveAndPeakBytes) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    void *kept = nullptr;
    p.create_task({"alloc"}, [&] {
        {
            kernel::OpScope op("alloc_op");
            void *a = kernel::kmalloc(1000, kernel::Gfp::Kernel);
            void *b = kernel::vmalloc(5000);
            kernel::kmem_charge(b, 3000);
            kernel::vfree(b);
            kernel::kfree(a);
            kept = kernel::kmalloc(100, kernel::Gfp::Atomic);
        }
        stop.done();
    });
    kernel::RunResults r = p.run();
    EXPECT_EQ(r.memory.live_bytes, 100);
    EXPECT_EQ(r.memory.peak_bytes, 9000);
    EXPECT_EQ(r.memory.allocs_sleeping, 2u);
    EXPECT_EQ(r.memory.allocs_atomic, 1u);
    EXPECT_EQ(r.memory.frees, 2u);
    EXPECT_EQ(r.ops["alloc_op"].completed, 1u);
    EXPECT_EQ(r.ops["alloc_op"].bytes_allocated, 9100);
    kernel::kfree(kept);
}

// The host's time is the real platform's cost of core work: compute() runs the core with no
// work meter (counting would add its own time to the time measured), also after a
// compute_break(), and a meter outside the span counts none of the span's work.
TEST(RealWork, ComputeRunsTheCoreWithoutAMeter) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    std::atomic<bool> metered{true}, metered_after_break{true};
    WorkCounts outer;
    p.create_task({"core"}, [&] {
        {
            WorkMeterScope meter(&outer);
            kernel::OpScope op("core_op");
            kernel::compute(kernel::Label("core_work"), [&] {
                metered = ThreadSlot<WorkCounts>::current != nullptr;
                count_work(Work::AvtabNode, 5);
                kernel::compute_break(kernel::Label("core_work_2"), [] {});
                metered_after_break = ThreadSlot<WorkCounts>::current != nullptr;
                count_work(Work::AvtabNode, 5);
            });
        }
        stop.done();
    });
    kernel::RunResults r = p.run();
    EXPECT_FALSE(metered.load());
    EXPECT_FALSE(metered_after_break.load());
    EXPECT_EQ(outer.n[static_cast<size_t>(Work::AvtabNode)], 0u);
    EXPECT_EQ(r.ops["core_op"].completed, 1u);
    EXPECT_TRUE(r.compute_ns.count("core_work"));
}

TEST(RealChecks, SleepingInAWouldBeAtomicSectionIsReported) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    kernel::Spinlock l("outer");
    kernel::Mutex m("inner");
    p.create_task({"bad"}, [&] {
        kernel::spin_lock(l);
        kernel::mutex_lock(m);  // BUG: sleeps with a spinlock held
        kernel::mutex_unlock(m);
        void *q = kernel::kmalloc(8, kernel::Gfp::Kernel);  // BUG: sleeping allocation
        kernel::spin_unlock(l);
        kernel::kfree(q);
        stop.done();
    });
    kernel::RunResults r = p.run();
    EXPECT_EQ(r.count_violations("sleep_in_atomic"), 2u) << violations_text(r);
    ASSERT_FALSE(r.preempt_off.longest.empty());
    EXPECT_NE(r.preempt_off.longest[0].start_site.find("spin_lock @ platform_test.cpp"),
              std::string::npos)
        << r.preempt_off.longest[0].start_site;
    EXPECT_EQ(r.preempt_off.longest[0].task, "bad");
}

TEST(RealChecks, FreeBeforeTheGracePeriodIsReported) {
    RealPlatform p(short_run(kUpperBound, true));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    kernel::RcuPointer<int> ptr;
    int *first = kernel::knew<int>(kernel::Gfp::Kernel, 1);
    kernel::rcu_assign_pointer(ptr, first);
    std::atomic<int> step{0};
    p.create_task({"reader"}, [&] {
        kernel::rcu_read_lock();
        int *v = kernel::rcu_dereference(ptr);
        step = 1;
        while (step.load() < 2)
            std::this_thread::yield();
        (void)v;  // not read: the object is gone
        kernel::rcu_read_unlock();
    });
    p.create_task({"updater"}, [&] {
        while (step.load() < 1)
            std::this_thread::yield();
        int *old = kernel::rcu_replace_pointer(ptr, kernel::knew<int>(kernel::Gfp::Kernel, 2));
        kernel::kdelete(old);  // BUG: no grace period
        step = 2;
        stop.done();
    });
    kernel::RunResults r = p.run();
    EXPECT_EQ(r.count_violations("rcu_free_in_use"), 1u) << violations_text(r);
    kernel::kdelete(kernel::rcu_dereference_protected(ptr));
}

TEST(RealChecks, DereferenceOutsideAReaderIsReported) {
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    kernel::RcuPointer<int> ptr;
    p.create_task({"bad"}, [&] {
        (void)kernel::rcu_dereference(ptr);
        stop.done();
    });
    kernel::RunResults r = p.run();
    EXPECT_EQ(r.count_violations("suspicious_rcu_usage"), 1u) << violations_text(r);
}

// The run ends once the probe has woken up eight times (however loaded the machine is: no
// timing is assumed), so its wake-ups, the worker's operations and the run's length are there.
TEST(RealRun, OperationsProbesAndSignalsOfARun) {
    RealConfig cfg = short_run(kUpperBound);
    RealPlatform p(cfg);
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, 1);
    p.create_task({"worker"}, [&] {
        while (!kernel::kthread_should_stop()) {
            kernel::OpScope op("work");
            kernel::ndelay(10 * kUsec);
        }
    });
    kernel::TaskParams probe{"probe"};
    probe.probe = true;
    probe.policy = kernel::Sched::Fifo;
    probe.priority = 99;
    constexpr int kWakeups = 8;
    p.create_task(probe, [&] {
        kernel::Time next = kernel::now();
        for (int i = 0; i < kWakeups && !kernel::kthread_should_stop(); ++i) {
            next += kMsec;
            kernel::sleep_until(next);
        }
        stop.done();
    });
    kernel::RunResults r = p.run();
    EXPECT_GT(r.ops["work"].completed, 0u);
    EXPECT_GE(r.wakeup_latency["probe"].count(), static_cast<uint64_t>(kWakeups));
    // What delayed a wake-up is the host kernel's to know: no cause is made up, and why is said.
    EXPECT_TRUE(r.wakeup_worst.empty());
    EXPECT_NE(r.wakeup_causes_absent.find("host kernel"), std::string::npos);
    const nlohmann::json j = r;
    EXPECT_FALSE(j.contains("wakeup_worst"));
    EXPECT_EQ(j.at("wakeup_worst_absent"), r.wakeup_causes_absent);
    EXPECT_FALSE(r.config["sched_fifo"].empty());
    EXPECT_GE(r.duration_ns, kWakeups * kMsec);
    EXPECT_FALSE(p.interrupted());
}

}  // namespace
}  // namespace locksim::real::test
