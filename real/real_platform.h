// The real platform: kernel/ implemented on host threads with real primitives, to measure what
// the primitives cost on the user's hardware and to check the simulator against reality.
//
// Model, and where it differs from the kernel (and from sim/):
//  - Tasks are host threads, started by run() (or at once when created from a running task),
//    pinned to TaskParams::cpu when RealConfig::pin is set, SCHED_FIFO when asked for and
//    permitted (results.config says when it was not). Time is the host's steady clock, in
//    nanoseconds since the platform was created.
//  - Preemption and interrupts cannot be switched off in user space. preempt_disable and
//    local_irq_disable open "would-be-atomic" sections: they are timed and reported exactly as
//    the simulator reports preempt-off and IRQs-off sections (results.config["atomic_sections"]
//    says they are would-be-atomic), the self-checks treat them as atomic (sleeping inside one is
//    reported), and for RCU they are read-side sections, as a preempt-off region is a reader in
//    the consolidated kernel RCU (percpu-rwsem's fast path relies on that).
//  - Locks: real/locks.h, with wait and hold times per lock class.
//  - RCU: liburcu, memb flavour. Every thread that runs kernel/ code registers with it.
//    synchronize_rcu waits for a real grace period (liburcu has no expedited variant: the
//    expedited call is the same wait, counted separately); call_rcu callbacks run on liburcu's
//    callback thread with the platform installed, inside a would-be-atomic section.
//  - Memory: every accounted allocation carries a 16-byte header (size, kind, a magic word), so
//    accounting needs no table; each thread keeps its bytes to itself until one of its
//    operations ends (or it ends, or they reach 64 KiB), then folds them into the live and
//    peak counts: exact live bytes, a peak low by at most 64 KiB per other allocating thread.
//  - Self-checks (RealConfig::checks, on for torture runs): the RCU publication table (liburcu's
//    lock-free rculfhash: object -> when it was unpublished) and the reader scan that catch a
//    free before the grace period, as the simulator's rcu_free_in_use check does, and keep such
//    an object intact (mem_quarantine) so the readers still using it do not crash. Off by
//    default, because the check puts a shared counter in every read section.
//  - Metrics: per-thread statistics (TBB enumerable_thread_specific) merged after the run; the
//    kept longest atomic sections travel from the worker threads to the collector (the thread in
//    run()) through one Boost.Lockfree single-producer queue per thread, so no measured path
//    takes a lock. The collector is a Boost.Asio loop that also ends the run after the duration
//    or on SIGINT / SIGTERM (asio::signal_set).
//  - Probe tasks (TaskParams::probe) sleep on a Boost.Asio steady_timer of their own io_context
//    and record how late each wake-up was, as cyclictest does.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kernel/platform.h"
#include "record/run_results.h"

namespace locksim::real {

using kernel::Time;

struct RealConfig {
    int cpus = 0;  // CPUs the tasks see (num_online_cpus, smp_processor_id range); 0: the host's
    Time duration = kernel::kSec;
    // After the stop, how long the work in flight may run on and still be recorded in full; what
    // is open after it is censored ("at least" its elapsed part).
    Time drain_limit = kernel::kSec;
    uint64_t seed = 1;
    bool pin = true;                 // pin a task with TaskParams::cpu >= 0 to that host CPU
    bool fifo = true;                // SCHED_FIFO for Sched::Fifo tasks when permitted
    bool checks = false;             // RCU use-after-free checks (torture); costs on read sections
    bool handle_signals = false;     // SIGINT / SIGTERM end the run early (the command line)
    bool report_violations = false;  // also print each violation to stderr when it happens
    size_t keep_longest = 20;
    // Operations whose thread's CPU time and involuntary context switches are read from the host
    // at their start and end (OpParts::host_cpu_ns, host_preemptions): two system calls at each
    // end, so meant for long operations (a commit), not for the reads.
    std::vector<kernel::Label> host_clock_ops;
};

class RealPlatform final : public kernel::Platform {
  public:
    explicit RealPlatform(RealConfig cfg);
    ~RealPlatform() override;
    RealPlatform(const RealPlatform &) = delete;
    RealPlatform &operator=(const RealPlatform &) = delete;

    // Starts the tasks created so far, lets them run for the configured duration (or until
    // request_stop or a signal), tells them to stop (kthread_should_stop()), records the work in
    // flight until it ends or drain_limit has passed, joins them, waits for pending call_rcu
    // callbacks and returns the results. Call once.
    kernel::RunResults run();
    // Ends the run early (thread-safe).
    void request_stop();
    const RealConfig &config() const { return cfg_; }
    // The run ended on SIGINT / SIGTERM.
    bool interrupted() const { return interrupted_.load(); }
    // The drain is over: nothing more is recorded, and what is open now is censored.
    bool drained() const;

    // kernel::Platform
    void create_task(kernel::TaskParams params, std::function<void()> body) override;
    bool should_stop() override { return stop_.load(std::memory_order_relaxed); }
    Time now() override;
    int num_cpus() override { return ncpus_; }
    int smp_processor_id() override;
    kernel::TaskInfo current_task() override;
    uint64_t get_random_u64() override;
    void sleep_until(Time t, kernel::Site site) override;
    void cond_resched(kernel::Site site) override;
    void charge(kernel::Label label, const WorkCounts &counts, Time host_ns) override;
    bool counts_work() override { return false; }  // the host's time is the cost
    bool measures_host_time() override { return true; }
    void ndelay(Time ns, kernel::Label label) override;
    void preempt_disable(kernel::Site site) override;
    void preempt_enable(kernel::Site site) override;
    void local_irq_disable(kernel::Site site) override;
    void local_irq_enable(kernel::Site site) override;
    bool irqs_disabled() override;
    kernel::LockObject *lock_create(kernel::LockKind kind, std::string_view name) override;
    void lock_acquire(kernel::LockObject *lock, kernel::LockMode mode, kernel::Site site) override;
    bool lock_try(kernel::LockObject *lock, kernel::LockMode mode, kernel::Site site) override;
    void lock_release(kernel::LockObject *lock, kernel::LockMode mode, kernel::Site site) override;
    void rcu_read_lock(kernel::Site site) override;
    void rcu_read_unlock(kernel::Site site) override;
    void synchronize_rcu(bool expedited, kernel::Site site) override;
    void call_rcu(std::function<void()> callback) override;
    void rcu_dereferenced(const void *p, kernel::Site site) override;
    void rcu_published(const void *old_p, const void *new_p) override;
    void *mem_alloc(size_t bytes, kernel::AllocKind kind, kernel::Site site) override;
    void mem_free(const void *p, kernel::Site site) override;
    bool mem_quarantine(const void *p, kernel::Site site) override;
    void mem_charge(const void *p, int64_t bytes) override;
    void op_begin(kernel::Label label) override;
    void op_end(kernel::Label label) override;

    struct State;  // everything else (real/platform_state.h, one file per topic beside this one)

  private:
    RealConfig cfg_;
    int ncpus_;
    std::atomic<bool> stop_{false};
    std::atomic<bool> interrupted_{false};
    std::unique_ptr<State> s_;
};

// The factory the runner and the command line use.
std::unique_ptr<RealPlatform> make_real_platform(RealConfig cfg);

}  // namespace locksim::real
