// The simulated platform: kernel/ implemented on N simulated CPUs in simulated time.
//
// Model (DESIGN.md decisions 2-9):
//  - Tasks are fibers (engine.h). A task runs host code in zero simulated time; time passes in
//    spans: charged work, primitive costs, spinning. A span in which the task is preemptible
//    (preempt count zero, interrupts on, and under PreemptModel::None and ::Voluntary only
//    outside operations) can be preempted; its remainder resumes later. Otherwise a wake-up
//    of a higher-priority task only sets need_resched, honoured at preempt_enable / irq
//    enable / op end, at cond_resched, and under PreemptModel::Voluntary at might_sleep.
//  - Scheduler: SCHED_FIFO by priority (a preempted task keeps the head of its level), then
//    SCHED_OTHER round-robin with a time slice checked at each HZ tick. Wake-up placement: the
//    pinned CPU, else the last CPU if idle, else any idle CPU, else (FIFO) the CPU running the
//    lowest-priority task; an idle CPU pulls a queued task. Remote wake-ups cost an IPI.
//    Timer interrupts and ticks on a CPU with interrupts off wait until they are re-enabled.
//  - Locks: queued spinlock and queued rwlock (spinning with preemption off; readers queue
//    behind a waiting writer; FIFO hand-off with a cache-line transfer), rwsem (sleeping; a
//    waiting writer blocks new readers) and mutex (sleeping, FIFO hand-off). No optimistic
//    spinning on rwsem/mutex owners.
//  - RCU: a grace period ends when every CPU has passed a quiescent state (context switch,
//    idle, or a tick / interrupt / read-unlock while outside any read section and with
//    preemption and interrupts on, as with the consolidated RCU flavours) and no task that
//    entered a read section before the grace period began is still inside it (preempted
//    readers under PREEMPT_RCU). Normal grace periods finish on a jiffy boundary, one at a
//    time; expedited ones IPI every busy CPU and finish at once. call_rcu callbacks run on a
//    callback task, with preemption off, after their grace period.
//  - Self-checks become violations in the results (kind strings in results.h).
//  - Counted cost model: same configuration and seed give byte-identical results.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel/kernel.h"
#include "kernel/results.h"
#include "sim/engine.h"
#include "sim/profile.h"
#include "sim/trace.h"

namespace locksim::sim {

using kernel::Label;
using kernel::LockMode;
using kernel::Site;

enum class CostModel : uint8_t { Counted, Measured };
// Full: CONFIG_PREEMPT. None: CONFIG_PREEMPT_NONE, kernel code is left only at an operation's
// end (the return to user space), cond_resched or a sleep. Voluntary: CONFIG_PREEMPT_VOLUNTARY
// (v6.6, include/linux/kernel.h), None plus a preemption point at every might_sleep(): the
// explicit ones, a sleeping lock's acquisition and a sleeping allocation.
enum class PreemptModel : uint8_t { Full, None, Voluntary };

struct SimConfig {
    int cpus = 4;
    Time duration = kernel::kSec;
    // Statistics gathered before this time are dropped (self-check violations are kept): the
    // caches and queues settle first. Part of `duration`, not added to it.
    Time warmup = 0;
    uint64_t seed = 1;
    CpuProfile profile;  // default: zero work costs, default primitive costs
    CostModel cost_model = CostModel::Counted;
    PreemptModel preempt = PreemptModel::Full;
    bool preempt_rcu = true;
    int hz = 250;
    // RCU as user space has it (liburcu, for comparing with the real-thread platform): when
    // >= 0, a normal grace period waits only for readers that predate it, not for every CPU to
    // pass a quiescent state, and ends this long after the last of them left instead of at
    // the next jiffy. -1: the kernel's RCU.
    Time userspace_rcu_gp = -1;
    Time sched_slice = 3 * kernel::kMsec;
    // After the duration no task starts new work; the work in flight runs on and is measured in
    // full for up to this long. What is still open then is censored ("at least" its elapsed
    // part); a task still running outside any operation then is reported as task_stuck.
    Time drain_limit = kernel::kSec;
    size_t keep_longest = 20;
    size_t stack_size = 256 * 1024;
    bool trace = false;  // keep an event trace (golden tests, debugging)
};

class SimPlatform final : public kernel::Platform {
  public:
    explicit SimPlatform(SimConfig cfg);
    ~SimPlatform() override;
    SimPlatform(const SimPlatform &) = delete;
    SimPlatform &operator=(const SimPlatform &) = delete;

    // Runs the tasks created so far (and those they create) for the configured duration, then
    // lets them finish what is in flight and exit (kthread_should_stop() turns true), for up to
    // drain_limit. Call once.
    kernel::RunResults run();
    const std::vector<std::string> &trace() const { return trace_; }
    const SimConfig &config() const { return cfg_; }
    const Engine &engine() const { return engine_; }
    // Attaches a timeline recorder (sim/trace.h) before run(); it must outlive the run.
    void set_trace_recorder(TraceRecorder *recorder) { recorder_ = recorder; }

    // kernel::Platform
    void create_task(kernel::TaskParams params, std::function<void()> body) override;
    bool should_stop() override { return stop_; }
    Time now() override { return engine_.now(); }
    int num_cpus() override { return cfg_.cpus; }
    int smp_processor_id() override;
    kernel::TaskInfo current_task() override;
    uint64_t get_random_u64() override;
    void sleep_until(Time t, Site site) override;
    void cond_resched(Site site) override;
    void might_sleep(Site site) override;
    void charge(Label label, const ss::WorkCounts &counts, Time host_ns) override;
    bool measures_host_time() override { return cfg_.cost_model == CostModel::Measured; }
    bool models_memory() override { return caches_.has_value(); }
    void ndelay(Time ns, Label label) override;
    void preempt_disable(Site site) override;
    void preempt_enable(Site site) override;
    void local_irq_disable(Site site) override;
    void local_irq_enable(Site site) override;
    bool irqs_disabled() override;
    kernel::LockObject *lock_create(kernel::LockKind kind, std::string_view name) override;
    void lock_acquire(kernel::LockObject *lock, LockMode mode, Site site) override;
    bool lock_try(kernel::LockObject *lock, LockMode mode, Site site) override;
    void lock_release(kernel::LockObject *lock, LockMode mode, Site site) override;
    void rcu_read_lock(Site site) override;
    void rcu_read_unlock(Site site) override;
    void synchronize_rcu(bool expedited, Site site) override;
    void call_rcu(std::function<void()> callback) override;
    void rcu_dereferenced(const void *p, Site site) override;
    void rcu_published(const void *old_p, const void *new_p) override;
    void *mem_alloc(size_t bytes, kernel::AllocKind kind, Site site) override;
    void mem_free(const void *p, Site site) override;
    void mem_charge(const void *p, int64_t bytes) override;
    void op_begin(Label label) override;
    void op_end(Label label) override;

  private:
    struct Task;
    struct Cpu;
    struct Lock;
    struct GracePeriod;

    struct HeldLock {
        Lock *lock;
        LockMode mode;
        Time since;
        Site site;
    };
    // An open operation of a task, with what happens inside it so far. Its parts reach the
    // operation's statistics when it ends inside the recorded window, as its latency does, so
    // a part never counts time of an operation the statistics do not count.
    struct OpFrame {
        Label label;
        Time start;
        int64_t peak_live;  // live bytes at the start; later peaks come from live_peaks_
        uint64_t live_seq;  // live_seq_ at the start
        kernel::OpParts parts;
    };
    // An open atomic section (preemption or interrupts off) of a task.
    struct Section {
        Time start = 0;
        Site site;
        Label label;
    };

    enum class TaskState : uint8_t { New, Runnable, Running, Blocked, Dead };
    enum class Act : uint8_t { Idle, Switching, Span, Spinning, Executing };

    struct Task {
        int id = 0;
        kernel::TaskParams params;
        int rank = 0;  // SCHED_FIFO priority, 0 for SCHED_OTHER
        std::unique_ptr<Fiber> fiber;
        TaskState state = TaskState::New;
        int cpu = -1;  // current or last CPU
        int timer_cpu = -1;
        uint64_t timer_gen = 0;
        Time remaining = 0;   // rest of a preempted span
        Time wake_extra = 0;  // wake-up cost (timer interrupt, IPI) paid at the next switch-in
        int64_t rq_key = 0;
        Time slice_used = 0;
        int preempt_count = 0;
        bool irqs_off = false;
        Section poff, ioff;
        int rcu_nesting = 0;
        uint64_t rcu_start_seq = 0;
        Time rcu_start = 0;
        bool rcu_need_qs = false;
        std::vector<HeldLock> held;
        std::vector<OpFrame> ops;
        Label blame;  // operation of the lock holder this task waits for
        Time wait_start = 0;
        Time probe_due = -1;       // a probe's wake-up time while it sleeps for one, else -1
        bool timer_sleep = false;  // blocked in sleep_until (it wakes by itself)
        std::mt19937_64 rng;
    };

    struct Cpu {
        int id = 0;
        Task *curr = nullptr;
        std::vector<Task *> rq;
        Act act = Act::Idle;
        uint64_t gen = 0;
        Time act_end = 0;
        bool need_resched = false;
        bool resched_tail = false;  // the slice ran out: the current task goes to the tail
        bool tick_pending = false;
        bool exp_ipi_pending = false;
        std::vector<Task *> pending_timers;
        Time busy_since = 0;
        kernel::CpuStats stats;
    };

    struct Waiter {
        Task *task;
        LockMode mode;
    };

    struct Lock : kernel::LockObject {
        Lock(kernel::LockKind k, std::string_view n, int cls) : LockObject(k, n), cls(cls) {}
        int cls;  // lock class: index into classes_ (by name)
        int readers = 0;
        Task *writer = nullptr;
        std::vector<Waiter> waiters;  // FIFO (front = index head)
        size_t head = 0;
        int last_cpu = -1;      // the CPU whose cache holds the lock word
        Time line_free_at = 0;  // until then the line is in flight to another CPU
        bool spins() const {
            return kind == kernel::LockKind::Spinlock || kind == kernel::LockKind::Rwlock;
        }
        bool has_waiters() const { return head < waiters.size(); }
    };

    struct LockClass {
        std::string name;
        kernel::LockStats stats;
        std::vector<int> after;  // lockdep: classes taken while holding this one
    };

    struct GracePeriod {
        uint64_t id = 0;
        bool expedited = false;
        bool started = false;
        bool completing = false;
        Time start = 0;
        uint64_t start_seq = 0;
        std::vector<uint8_t> cpu_pending;
        int pending = 0;
        std::vector<Task *> waiters;
        std::vector<std::function<void()>> callbacks;
    };

    struct Allocation {
        int64_t bytes;
        kernel::AllocKind kind;
        // Publication under RCU: 0 never, kStillPublished while reachable, else the rcu_seq_
        // at which it was unpublished.
        uint64_t rcu = 0;
    };

    // --- engine glue (sched.cpp) ---
    static void on_cpu_event(void *self, uint64_t arg);
    static void on_timer(void *self, uint64_t arg);
    static void on_tick(void *self, uint64_t arg);
    static void on_resched_ipi(void *self, uint64_t arg);
    static void on_stop(void *self, uint64_t arg);
    static void on_warmup_end(void *self, uint64_t arg);
    void reset_stats();
    void cpu_event(Cpu &c, uint64_t gen);
    void start_act(Cpu &c, Act act, Time duration);
    void execute(Cpu &c);
    void suspend_current();
    void task_main(Task *t);
    void task_exit(Task *t);
    void teardown();

    // --- scheduling (sched.cpp) ---
    Task *self() const { return cur_; }
    Cpu &cpu_of(const Task *t) { return cpus_[static_cast<size_t>(t->cpu)]; }
    bool preemptible(const Task *t) const;
    void go_idle(Cpu &c);
    void enqueue(Cpu &c, Task *t, bool head);
    Task *best_queued(const Cpu &c) const;
    bool should_yield(const Cpu &c, const Task *t) const;
    void switch_in(Cpu &c, Task *next, Time extra);
    void schedule(Cpu &c);
    int select_cpu(const Task *t) const;
    void wake(Task *t, int from_cpu, Time extra);
    void request_resched(Cpu &c, int from_cpu);
    void try_preempt(Cpu &c);
    void preempt_self();
    void maybe_preempt();
    void block_current();
    void advance(Time ns);
    void tick(Cpu &c);
    void timer_fire(Task *t, Cpu &c);
    void irqs_on_work(Cpu &c);
    void preempt_inc(Task *t, const Site &site);
    void preempt_dec(Task *t, const Site &site);
    void irq_off(Task *t, const Site &site);
    void irq_on(Task *t, const Site &site);

    // --- locks (locks.cpp) ---
    bool can_take(const Lock &l, LockMode mode) const;
    void take(Lock &l, Task *t, LockMode mode, const Site &site, bool trylock);
    void grant_waiters(Lock &l);
    // Moves the lock word's cache line to `cpu`: free when it is there already, else a
    // transfer, queued behind transfers to other CPUs still in flight (one owner at a time,
    // so CPUs hammering one lock word serialise). Returns the time `cpu` spends on it.
    Time pull_line(Lock &l, int cpu);
    void lockdep_check(Task *t, Lock &l, const Site &site);

    // --- RCU (rcu.cpp) ---
    static void on_gp_complete(void *self, uint64_t arg);
    static void on_exp_ipi(void *self, uint64_t arg);
    GracePeriod *request_gp(bool expedited);
    void start_gp(GracePeriod &g);
    void check_gp(GracePeriod &g);
    void complete_gp(GracePeriod &g);
    bool cpu_in_qs(const Cpu &c) const;
    void report_qs(Cpu &c);
    void deferred_qs(Task *t);
    void exp_ipi(Cpu &c);
    void rcu_callback_task();

    // --- accounting and checks (accounting.cpp) ---
    // Statistics are recorded from the start to the end of the drain (drained_): work in flight
    // at the duration is measured in full, and no new work starts after it.
    bool recording() const { return !drained_; }
    kernel::OpStats &op_stats(Label l);
    // The task's innermost open operation, or nullptr.
    static OpFrame *frame(Task *t) { return t && !t->ops.empty() ? &t->ops.back() : nullptr; }
    Label current_label(const Task *t) const {
        return t->ops.empty() ? Label{} : t->ops.back().label;
    }
    void close_section(Task *t, Section &s, bool irq, const Site &end);
    bool charge_section_to_frame(Task *t, const Section &s, bool irq, Time len);
    // `end`: the site that closed the section, or nullptr for a section open at the end.
    void record_section(Task *t, const Section &s, bool irq, Time len, const Site *end,
                        bool on_frame);
    // At the end of the drain (`end`): every section, operation, lock wait and probe wake-up
    // still open is counted as censored ("at least" its elapsed part); then recording stops.
    void close_open_at_end(Time end);
    void violation(std::string_view kind, std::string message);
    void note_live_bytes();
    // Where the publication state of `p` is kept (Allocation::rcu, or published_).
    uint64_t &publication(const void *p);
    int64_t peak_live_since(const OpFrame &f) const;
    // The oldest read section still open (its rcu_start_seq), UINT64_MAX when none.
    uint64_t oldest_reader_seq();
    kernel::RunResults collect();
    template <class... A>
    void trace_event(const char *fmt, const A &...args);
    void trace_line(std::string line);

    SimConfig cfg_;
    Engine engine_;
    Time jiffy_;
    std::vector<Cpu> cpus_;
    std::vector<std::unique_ptr<Task>> tasks_;
    Task *cur_ = nullptr;
    int live_ = 0;
    bool started_ = false;
    bool stop_ = false;     // the duration is over: no new work
    bool drained_ = false;  // the drain is over: nothing more is recorded
    bool teardown_ = false;
    int64_t head_key_ = 0;
    int64_t tail_key_ = 0;

    std::vector<std::unique_ptr<Lock>> locks_;
    std::vector<LockClass> classes_;
    std::unordered_map<std::string, int> class_ids_;
    std::set<std::pair<int, int>> lock_edges_;
    std::map<std::pair<int, int>, std::string> edge_sites_;

    std::vector<std::unique_ptr<GracePeriod>> gps_;  // active or queued
    GracePeriod *normal_gp_ = nullptr;               // the normal grace period in progress
    GracePeriod *next_gp_ = nullptr;                 // queued behind it
    uint64_t gp_ids_ = 0;
    uint64_t rcu_seq_ = 0;
    std::vector<std::function<void()>> callbacks_ready_;
    size_t callbacks_head_ = 0;
    Task *cb_task_ = nullptr;
    bool cb_task_waiting_ = false;
    // Publication of objects that are not accounted allocations (Allocation::rcu for those
    // that are): object -> unpublish seq.
    std::unordered_map<const void *, uint64_t> published_;

    std::unordered_map<const void *, Allocation> allocs_;
    kernel::MemStats mem_;
    std::vector<kernel::OpStats> op_stats_;  // by label id
    std::vector<uint8_t> op_used_;
    std::map<std::string, kernel::Histogram> wakeup_;
    std::vector<Time> compute_ns_;  // by label id; 0: never charged
    // The memory hierarchy (counted model, a profile with [memory]); its tallies by label id.
    std::optional<CacheHierarchy> caches_;
    std::vector<MemoryTally> stall_;
    // Counted work's speed by CPU, parts per million of the profile's prices (clusters).
    std::vector<int64_t> speed_ppm_;
    // Tasks waiting in any run queue (an idle CPU looks for one to pull only when there is one).
    size_t queued_ = 0;
    // Live-bytes peaks for the operations' peak_live: every note_live_bytes() takes a sequence
    // number; the stack keeps (sequence, live bytes) with live bytes strictly decreasing, so
    // the peak since sequence s is the first entry after s.
    uint64_t live_seq_ = 0;
    std::vector<std::pair<uint64_t, int64_t>> live_peaks_;
    // Read sections in the order they began (rcu_start_seq, task); entries of sections that
    // ended are dropped lazily from the front.
    std::deque<std::pair<uint64_t, Task *>> readers_;
    std::map<std::string, Time> wakeup_open_;
    kernel::IntervalStats preempt_off_, irqs_off_;
    Time stats_since_ = 0;  // start of the measured period (the end of the warm-up)
    kernel::RcuStats rcu_stats_;
    std::vector<kernel::Violation> violations_;
    std::set<std::string> violation_keys_;
    std::vector<std::string> trace_;
    TraceRecorder *recorder_ = nullptr;
};

template <class... A>
void SimPlatform::trace_event(const char *f, const A &...args) {
    if (cfg_.trace) trace_line(fmt::format(fmt::runtime(f), args...));
}

}  // namespace locksim::sim
