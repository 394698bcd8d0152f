// The simulated platform: kernel/ implemented on N simulated CPUs in simulated time.
//
// Model (docs/design.md, decisions 2-9):
//  - Tasks are fibers (engine.h). A task runs host code in zero simulated time; time passes in
//    spans: charged work, primitive costs, spinning. A span in which the task is preemptible
//    (preempt count zero, interrupts on, and under PreemptModel::None and ::Voluntary only
//    outside operations) can be preempted; its remainder resumes later. Otherwise a wake-up
//    of a higher-priority task only sets need_resched, honoured at preempt_enable / irq
//    enable / op end, at cond_resched, and under PreemptModel::Voluntary at might_sleep.
//  - Scheduler (sched.cpp), one run queue per CPU, modelled on Linux v6.5 (kernel/sched/core.c,
//    fair.c, rt.c, topology.c; the last release before EEVDF): the real-time class first,
//    SCHED_FIFO and SCHED_RR by priority (a preempted task keeps the head of its level; RR
//    tasks of one level take turns every 100 ms, RR_TIMESLICE), then SCHED_OTHER as CFS:
//    each task's virtual runtime grows by its run time times NICE_0_LOAD / its weight
//    (sched_prio_to_weight by nice level), the task with the smallest runs; a tick ends the
//    current task's turn when it has run its slice of the latency period (6 ms, 0.75 ms per task
//    beyond 8, both times 1 + log2(min(CPUs, 8))) or, after the minimum granularity, trails
//    the leftmost task by more than that slice; a waking task preempts when its virtual runtime
//    is smaller by more than the wake-up granularity (1 ms, scaled alike, in its virtual time).
//    New tasks start at the queue's min_vruntime plus one virtual slice (START_DEBIT); waking
//    ones no earlier than min_vruntime minus half the latency (GENTLE_FAIR_SLEEPERS); a task
//    that moves keeps its lag to min_vruntime. Simplified: one level (no groups), the slice is
//    checked only at ticks (no HRTICK), no buddies. Wake-up placement, within the task's
//    affinity: the pinned CPU, else the last CPU if idle, else any idle CPU, else (real-time)
//    the CPU running the lowest-priority task; an idle CPU pulls a queued task, and every
//    sd_weight ms (times busy_factor 16 on a busy CPU) a CPU pulls one queued SCHED_OTHER task
//    from the CPU with the most runnable tasks when it has two more than itself (one sched
//    domain; load is counted in tasks, not weights). Remote wake-ups cost an IPI.
//    Timer interrupts and ticks on a CPU with interrupts off wait until they are re-enabled.
//  - Interrupt load (SimConfig::irqs): periodic device interrupts on chosen CPUs. The hard
//    handler runs with interrupts off and the softirq work after it (on irq exit) with
//    preemption off: both take their time from whatever runs on that CPU (the running span
//    ends that much later; a switch-in waits), a preemption waits for their end (the irq
//    return is the preemption point), and an interrupt arriving while interrupts are off on
//    that CPU waits for local_irq_enable (several of one source while they are off: one).
//    Their time is counted per CPU (CpuStats::irq_ns, softirq_ns), not as preempt-off or
//    irqs-off sections of the tasks. Simplified: a handler arriving during softirq work runs
//    after it, not inside it (the CPU time is the same). Softirq work that runs code
//    (open_softirq: the network receive path's checks) runs in a per-CPU softirq task that
//    interrupts the running task in place, with the softirq count held; under PREEMPT_RT
//    device interrupts are threaded (a SCHED_FIFO thread per source and CPU runs the handler
//    and its softirq work) and the timer's softirq work goes to ksoftirqd (irq.cpp).
//  - Locks (lock_table.h) and RCU (rcu.h) are classes of their own that reach the scheduler through
//    the narrow SchedOps interface (sched_ops.h); tasks and CPUs are in task.h.
//  - Self-checks become violations in the results (kind strings in record/run_results.h).
//  - Each probe wake-up records what delayed it (wakeup_causes.cpp): the IRQs-off section that held
//  its
//    timer, then per stretch in the run queue the section, non-preemptible kernel code or
//    higher-priority task that held its CPU. The worst `keep_longest` per probe are kept.
//  - Counted cost model: same configuration and seed give byte-identical results.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernel/platform.h"
#include "record/run_results.h"
#include "sim/allocations.h"
#include "sim/config.h"
#include "sim/engine.h"
#include "sim/lock_table.h"
#include "sim/profile.h"
#include "sim/rcu.h"
#include "sim/sched_ops.h"
#include "sim/task.h"
#include "sim/trace.h"

namespace locksim::sim {

class SimPlatform final : public kernel::Platform, private SchedOps {
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
    void charge(Label label, const WorkCounts &counts, Time host_ns) override;
    bool measures_host_time() override { return cfg_.cost_model == CostModel::Measured; }
    int memory_sample_shift() override {
        return caches_ && cfg_.profile.memory.core_lines ? caches_->sample_shift() : -1;
    }
    bool memory_streams() override { return caches_ && caches_->has_first_level(); }
    void ndelay(Time ns, Label label) override;
    void preempt_disable(Site site) override;
    void preempt_enable(Site site) override;
    void local_irq_disable(Site site) override;
    void local_irq_enable(Site site) override;
    bool irqs_disabled() override;
    kernel::LockObject *lock_create(kernel::LockKind kind, std::string_view name) override {
        return locks_.create(kind, name);
    }
    void lock_acquire(kernel::LockObject *lock, LockMode mode, Site site) override;
    bool lock_try(kernel::LockObject *lock, LockMode mode, Site site) override;
    void lock_release(kernel::LockObject *lock, LockMode mode, Site site) override;
    void lock_release_irq(kernel::LockObject *lock, LockMode mode, Site site) override;
    bool preempt_rt() const override { return cfg_.preempt == PreemptModel::Rt; }
    void local_bh_disable(Site site) override;
    void local_bh_enable(Site site) override;
    bool open_softirq(std::string_view irq_kind, std::function<void()> action) override;
    void rcu_read_lock(Site site) override { rcu_.read_lock(site); }
    void rcu_read_unlock(Site site) override { rcu_.read_unlock(site); }
    void synchronize_rcu(bool expedited, Site site) override { rcu_.synchronize(expedited, site); }
    void call_rcu(std::function<void()> callback) override { rcu_.call(std::move(callback)); }
    void rcu_dereferenced(const void *, Site site) override { rcu_.dereferenced(cur_, site); }
    void rcu_published(const void *old_p, const void *new_p) override {
        rcu_.published(old_p, new_p);
    }
    void *mem_alloc(size_t bytes, kernel::AllocKind kind, Site site) override;
    void mem_free(const void *p, Site site) override;
    void mem_charge(const void *p, int64_t bytes) override;
    void op_begin(Label label) override;
    void op_end(Label label) override;

  private:
    // SchedOps (sched_ops.h): what locks_ and rcu_ may ask; now(), should_stop() and
    // cond_resched() are kernel::Platform's above.
    Task *current() override { return cur_; }
    void advance(Time ns, PriceFamily family = PriceFamily::Primitive) override;
    void block_current() override;
    void wake(Task *t, int from_cpu, Time extra) override;
    void spin_current() override;
    void end_spin(Task *t, Time cost) override;
    void preempt_inc(Task *t, const Site &site) override;
    void preempt_dec(Task *t, const Site &site) override;
    void maybe_preempt() override;
    void set_prio(Task *t, int rank) override;
    Task *running_on(int cpu) override { return cpus_[static_cast<size_t>(cpu)].curr; }
    bool need_resched(int cpu) override;
    void hard_irq(int cpu, Time ns) override {
        take_irq_time(cpus_[static_cast<size_t>(cpu)], ns, 0);
    }
    const std::vector<std::unique_ptr<Task>> &tasks() const override { return tasks_; }
    Task *create_kthread(kernel::TaskParams params, std::function<void()> body) override;
    // Statistics are recorded from the start to the end of the drain (drained_): work in flight
    // at the duration is measured in full, and no new work starts after it.
    bool recording() const override { return !drained_; }
    kernel::OpStats &op_stats(Label l) override;
    void violation(std::string_view kind, std::string message) override;
    uint64_t *rcu_publication(const void *p) override;
    TraceRecorder *recorder() override { return recorder_; }
    bool tracing() const override { return cfg_.trace; }
    void trace_line(std::string line) override;

    // --- engine glue (run_loop.cpp; the handlers of ticks, timers and interrupts in sched.cpp,
    // irq.cpp)
    // ---
    static void on_cpu_event(void *self, uint64_t arg);
    static void on_timer(void *self, uint64_t arg);
    static void on_tick(void *self, uint64_t arg);
    static void on_resched_ipi(void *self, uint64_t arg);
    static void on_irq(void *self, uint64_t arg);
    static void on_irq_end(void *self, uint64_t arg);
    static void on_stop(void *self, uint64_t arg);
    static void on_warmup_end(void *self, uint64_t arg);
    static SimConfig checked(SimConfig cfg);
    void reset_stats();
    void cpu_event(Cpu &c, uint64_t gen);
    void start_act(Cpu &c, Act act, Time duration);
    void execute(Cpu &c);
    void suspend_current();
    void task_main(Task *t);
    void task_exit(Task *t);
    // A new task, not yet runnable (create_task wakes it once the run started).
    Task *make_task(kernel::TaskParams params, std::function<void()> body);
    // The duration is over, every task has exited and no RCU callback waits: the run ends.
    void stop_if_done();
    void teardown();

    // --- scheduling (sched.cpp) ---
    Task *self() const { return cur_; }
    Cpu &cpu_of(const Task *t) { return cpus_[static_cast<size_t>(t->cpu)]; }
    bool preemptible(const Task *t) const;
    void go_idle(Cpu &c);
    void enqueue(Cpu &c, Task *t, bool head);
    Task *best_queued(const Cpu &c) const;
    // Whether the next pick on `c` (need_resched set) is another task than `t`, its current
    // one; when it is `t` again, its CFS turn restarts.
    bool should_yield(Cpu &c, Task *t);
    bool allowed(const Task *t, int cpu) const;
    // RR_TIMESLICE (100 ms) in ticks.
    int rr_timeslice_ticks() const { return std::max(1, cfg_.hz / 10); }
    void move_task(Task *t, Cpu &from, Cpu &to);
    void switch_in(Cpu &c, Task *next, Time extra);
    void schedule(Cpu &c);
    int select_cpu(const Task *t) const;
    void request_resched(Cpu &c, int from_cpu);
    void try_preempt(Cpu &c);
    void preempt_self();
    void tick(Cpu &c);
    // CFS (fair.cpp).
    static int64_t nice_weight(int nice);
    void update_curr(Cpu &c);
    void update_min_vruntime(Cpu &c);
    Time sched_slice(const Cpu &c, const Task *t) const;
    void place_entity(Cpu &c, Task *t);
    bool wakeup_preempts(Cpu &c, Task *t);
    void check_preempt_tick(Cpu &c);
    void task_tick_rr(Cpu &c);
    bool load_balance(Cpu &c);  // whether it moved a task
    // Interrupt load and interrupt state (irq.cpp; timer_fire in sched.cpp).
    void start_irq_timers();
    void schedule_irq(Cpu &c, size_t source);
    void deliver_irq(Cpu &c, size_t source);
    // `hard` ns of handler and `soft` of softirq work at irq exit, on `c` now, taken from
    // whatever runs there.
    // Interrupt work on `c` from now: the running span ends that much later. `end_event`: the
    // irq exit is a point where something may happen (softirq work, a preemption) even if
    // nothing asks for it yet; otherwise one is scheduled only when needed (irq_exit_needed).
    void take_irq_time(Cpu &c, Time hard, Time soft, bool end_event = true);
    // The irq exit at c.irq_until runs softirq work and preempts (on_irq_end), once.
    void irq_exit_needed(Cpu &c);
    void timer_fire(Task *t, Cpu &c);
    void irqs_on_work(Cpu &c);
    void irq_off(Task *t, const Site &site);
    void irq_on(Task *t, const Site &site);
    // Softirq context and interrupt threads (irq.cpp).
    void start_irq_threads();
    void wake_irq_thread(Task *t, int cpu);
    void irq_thread_wait();
    void softirq_work(Cpu &c, const IrqSource &src);
    void irq_thread_body(Cpu &c, size_t source);
    void ksoftirqd_body(Cpu &c);
    void softirq_task_body(Cpu &c);
    void rcu_softirq(Cpu &c, bool idle);
    void start_ksoftirqd(Cpu &c);
    // A kernel thread that lives as long as the machine; `start`: runnable at once, else it
    // first runs when woken.
    Task *make_daemon(std::string name, kernel::Sched policy, int prio, int cpu,
                      std::function<void()> body, bool start);
    bool enter_softirq(Cpu &c);
    bool softirq_pending(const Cpu &c) const { return !c.softirq_raised.empty() || c.rcu_softirq; }
    void resume_interrupted(Cpu &c, Task *t);

    // --- probe wake-up causes (wakeup_causes.cpp) ---
    // The stretch [from, to] in which `holder` ran on `c` while probe `q` waited: appended to
    // q's delays as what kept it waiting (nothing when `holder` was preemptible and of lower
    // priority: the wait was then the wake-up path's own cost).
    void note_delay(Task *q, const Task *holder, const Cpu &c, Time from, Time to);
    // Appends a stretch to q's delays, or adds it to the entry it continues.
    void add_delay(Task *q, const DelayNote &d);
    // Hard interrupt work on `c` held off the switch to probe `q` for `length` from `from`.
    void note_irq_delay(Task *q, const Cpu &c, Time from, Time length);
    // The timer of probe `q`, due at `due`, waited from then to now for holder's IRQs-off section.
    void note_timer_held(Task *q, Time due);
    // Before `next` is switched in on `c` (nullptr: before the running task's priority changes):
    // the probes waiting in c's run queue were held by the task that ran there until now.
    void note_probe_waits(Cpu &c, const Task *next);
    // A probe's wake-up is over (it runs, or the run ended with it still waiting).
    void finish_wakeup(Task *t, Time due, Time late, bool open_at_end);

    // --- accounting and checks (accounting.cpp) ---
    void close_section(Task *t, Section &s, bool irq, const Site &end);
    bool charge_section_to_frame(Task *t, const Section &s, bool irq, Time len);
    // `end`: the site that closed the section, or nullptr for a section open at the end.
    // SimConfig::stop_over: ends the run now when, after the warm-up, `value` of the metric at
    // `path` passes `limit` (> 0).
    void stop_if_over(const char *path, Time value, Time limit);
    void record_section(Task *t, const Section &s, bool irq, Time len, const Site *end,
                        bool on_frame);
    // At the end of the drain (`end`): every section, operation, lock wait and probe wake-up
    // still open is counted as censored ("at least" its elapsed part); then recording stops.
    void close_open_at_end(Time end);
    // [from, to) held the CPU: merged with the stretch that `c` holds so far when they meet,
    // else that one is recorded and this one begins (cpu_held_).
    void note_held(Cpu &c, Time from, Time to);
    void record_held(Cpu &c);
    Time window_end() const;  // the end of what a run measures (its duration, or its early stop)
    void note_live_bytes();
    int64_t peak_live_since(const OpFrame &f) const;
    kernel::RunResults collect();

    SimConfig cfg_;
    Engine engine_;
    Time jiffy_ = kernel::kSec / cfg_.hz;
    // CFS tunables as scaled for this machine (get_update_sysctl_factor).
    Time latency_ = 0, min_gran_ = 0, wakeup_gran_ = 0;
    std::vector<Cpu> cpus_;
    std::vector<std::unique_ptr<Task>> tasks_;
    Task *cur_ = nullptr;
    int live_ = 0;
    bool started_ = false;
    bool stop_ = false;                         // the duration is over: no new work
    bool drained_ = false;                      // the drain is over: nothing more is recorded
    kernel::PricedRecord priced_;               // the longest sections and commits by price family
    kernel::RunResults::EarlyStop early_stop_;  // stop_over ended the run (metric not empty)
    bool teardown_ = false;
    int64_t head_key_ = 0;
    int64_t tail_key_ = 0;

    AllocationTable allocs_;
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
    std::map<std::string, Time> wakeup_open_;
    std::map<std::string, std::vector<kernel::WakeupRecord>> wakeup_worst_;
    size_t probes_waiting_ = 0;  // probes with wait_since set
    bool warm_ = false;          // the warm-up is over: what is recorded now counts
    kernel::IntervalStats preempt_off_, irqs_off_;
    kernel::Histogram cpu_held_;
    std::vector<Time> cpu_held_open_;
    Time stats_since_ = 0;  // start of the measured period (the end of the warm-up)
    std::vector<kernel::Violation> violations_;
    std::set<std::string> violation_keys_;
    std::vector<std::string> trace_;
    TraceRecorder *recorder_ = nullptr;
    LockTable locks_{*this, cfg_.profile.primitive, cfg_.preempt, cfg_.rt_mutex_pi,
                     lock_line_model(cfg_)};
    RcuState rcu_{*this, engine_, cfg_, jiffy_};
};

}  // namespace locksim::sim
