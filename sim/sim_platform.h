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
//  - Locks (locks.h) and RCU (rcu.h) are classes of their own that reach the scheduler through
//    the narrow SchedOps interface (sched_ops.h); tasks and CPUs are in task.h.
//  - Self-checks become violations in the results (kind strings in results.h).
//  - Counted cost model: same configuration and seed give byte-identical results.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernel/kernel.h"
#include "kernel/results.h"
#include "sim/config.h"
#include "sim/engine.h"
#include "sim/locks.h"
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
    void charge(Label label, const ss::WorkCounts &counts, Time host_ns) override;
    bool measures_host_time() override { return cfg_.cost_model == CostModel::Measured; }
    bool models_memory() override { return caches_.has_value(); }
    void ndelay(Time ns, Label label) override;
    void preempt_disable(Site site) override;
    void preempt_enable(Site site) override;
    void local_irq_disable(Site site) override;
    void local_irq_enable(Site site) override;
    bool irqs_disabled() override;
    kernel::LockObject *lock_create(kernel::LockKind kind, std::string_view name) override {
        return locks_.create(kind, name);
    }
    void lock_acquire(kernel::LockObject *lock, LockMode mode, Site site) override {
        locks_.acquire(lock, mode, site);
    }
    bool lock_try(kernel::LockObject *lock, LockMode mode, Site site) override {
        return locks_.try_acquire(lock, mode, site);
    }
    void lock_release(kernel::LockObject *lock, LockMode mode, Site site) override {
        locks_.release(lock, mode, site);
    }
    void rcu_read_lock(Site site) override { rcu_.read_lock(site); }
    void rcu_read_unlock(Site site) override { rcu_.read_unlock(site); }
    void synchronize_rcu(bool expedited, Site site) override { rcu_.synchronize(expedited, site); }
    void call_rcu(std::function<void()> callback) override { rcu_.call(std::move(callback)); }
    void rcu_dereferenced(const void *p, Site site) override { rcu_.dereferenced(p, site); }
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
    void advance(Time ns) override;
    void block_current() override;
    void wake(Task *t, int from_cpu, Time extra) override;
    void spin_current() override;
    void end_spin(Task *t, Time cost) override;
    void preempt_inc(Task *t, const Site &site) override;
    void preempt_dec(Task *t, const Site &site) override;
    void maybe_preempt() override;
    Task *running_on(int cpu) override { return cpus_[static_cast<size_t>(cpu)].curr; }
    const std::vector<std::unique_ptr<Task>> &tasks() const override { return tasks_; }
    Task *create_kthread(kernel::TaskParams params, std::function<void()> body) override;
    // Statistics are recorded from the start to the end of the drain (drained_): work in flight
    // at the duration is measured in full, and no new work starts after it.
    bool recording() const override { return !drained_; }
    kernel::OpStats &op_stats(Label l) override;
    void violation(std::string_view kind, std::string message) override;
    TraceRecorder *recorder() override { return recorder_; }
    bool tracing() const override { return cfg_.trace; }
    void trace_line(std::string line) override;

    struct Allocation {
        int64_t bytes;
        kernel::AllocKind kind;
    };

    // --- engine glue (sched.cpp) ---
    static void on_cpu_event(void *self, uint64_t arg);
    static void on_timer(void *self, uint64_t arg);
    static void on_tick(void *self, uint64_t arg);
    static void on_resched_ipi(void *self, uint64_t arg);
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
    void request_resched(Cpu &c, int from_cpu);
    void try_preempt(Cpu &c);
    void preempt_self();
    void tick(Cpu &c);
    void timer_fire(Task *t, Cpu &c);
    void irqs_on_work(Cpu &c);
    void irq_off(Task *t, const Site &site);
    void irq_on(Task *t, const Site &site);

    // --- accounting and checks (accounting.cpp) ---
    void close_section(Task *t, Section &s, bool irq, const Site &end);
    bool charge_section_to_frame(Task *t, const Section &s, bool irq, Time len);
    // `end`: the site that closed the section, or nullptr for a section open at the end.
    void record_section(Task *t, const Section &s, bool irq, Time len, const Site *end,
                        bool on_frame);
    // At the end of the drain (`end`): every section, operation, lock wait and probe wake-up
    // still open is counted as censored ("at least" its elapsed part); then recording stops.
    void close_open_at_end(Time end);
    void note_live_bytes();
    int64_t peak_live_since(const OpFrame &f) const;
    kernel::RunResults collect();

    SimConfig cfg_;
    Engine engine_;
    Time jiffy_ = kernel::kSec / cfg_.hz;
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
    std::map<std::string, Time> wakeup_open_;
    kernel::IntervalStats preempt_off_, irqs_off_;
    Time stats_since_ = 0;  // start of the measured period (the end of the warm-up)
    std::vector<kernel::Violation> violations_;
    std::set<std::string> violation_keys_;
    std::vector<std::string> trace_;
    TraceRecorder *recorder_ = nullptr;
    LockTable locks_{*this, cfg_.profile.primitive, cfg_.preempt};
    RcuState rcu_{*this, engine_, cfg_, jiffy_};
};

}  // namespace locksim::sim
