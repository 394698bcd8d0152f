// Tasks and CPUs of the simulated platform, as the scheduler (sched.cpp), the accounting
// (accounting.cpp), the locks (lock_table.h) and RCU (rcu.h) share them. Like task_struct, a task
// carries every subsystem's per-task state (preempt count, RCU read-side nesting, held locks);
// each subsystem changes only its own fields.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "kernel/platform.h"
#include "record/run_results.h"
#include "sim/engine.h"

namespace locksim::sim {

using kernel::Label;
using kernel::LockMode;
using kernel::Site;

struct Lock;  // sim/lock_table.h

// The softirq task's priority: above every SCHED_FIFO task (softirq context runs before any).
inline constexpr int kIrqContextRank = 100;

// An engine event about one CPU carries the CPU in the low bits of its argument and a number
// (the CPU's activity generation, a grace period's id) above them.
inline constexpr int kEventCpuBits = 16;
inline uint64_t cpu_event_arg(uint64_t number, int cpu) {
    return (number << kEventCpuBits) | static_cast<uint64_t>(cpu);
}
inline int event_cpu(uint64_t arg) {
    return static_cast<int>(arg & ((uint64_t{1} << kEventCpuBits) - 1));
}
inline uint64_t event_number(uint64_t arg) {
    return arg >> kEventCpuBits;
}

struct HeldLock {
    Lock *lock;
    LockMode mode;
    Time since;
    Site site;
};

// An open operation of a task, with what happens inside it so far. Its parts reach the
// operation's statistics when it ends inside the recorded window, as its latency does, so a part
// never counts time of an operation the statistics do not count.
// A task's time so far by price family (work, memory, primitive, grace_period: sim/profile.h),
// as charged; a section or a commit notes it at its start, and its own is the difference.
using PricedNs = decltype(kernel::PricedItem::family);

struct OpFrame {
    Label label;
    Time start;
    int64_t peak_live;  // live bytes at the start; later peaks come from the platform's record
    uint64_t live_seq;  // the platform's live-bytes sequence number at the start
    kernel::OpParts parts;
};

// An open atomic section (preemption or interrupts off) of a task.
struct Section {
    Time start = 0;
    Site site;
    Label label;
};

enum class TaskState : uint8_t { New, Runnable, Running, Blocked, Dead };
// What a CPU is doing: nothing, a context switch, a span of time (work, a primitive's cost),
// spinning for a lock, or running host code of its task in zero simulated time.
enum class Act : uint8_t { Idle, Switching, Span, Spinning, Executing };

struct Task;

// One stretch of a probe's wake-up as the simulator notes it, without strings: it becomes a
// kernel::WakeupDelay only for a wake-up that is kept or traced (wakeup_causes.cpp).
enum class DelayKind : uint8_t {
    Task,
    KernelCode,
    PreemptOff,
    IrqsOff,
    Overdue,
    Softirq,
    PiChain,
    Irq
};
struct DelayNote {
    DelayKind kind = DelayKind::Task;
    int cpu = 0;
    const Task *holder = nullptr;  // the task that held the CPU (the probe itself when overdue)
    Label label;
    Site site;
    Time start = 0;
    Time length = 0;
    Time delayed_ns = 0;
    // PiChain: the waiter whose priority the holder inherited, and the lock it waits for.
    const Task *booster = nullptr;
    const Lock *lock = nullptr;
};

struct Task {
    int id = 0;
    kernel::TaskParams params;
    int rank =
        0;  // SCHED_FIFO / SCHED_RR priority, 0 for SCHED_OTHER; raised by priority inheritance
    int normal_rank = 0;            // rank without inheritance (normal_prio)
    Lock *pi_blocked_on = nullptr;  // the rt_mutex-based lock the task waits for (lock_table.h)
    // While boosted: the waiter whose priority it inherited, and the lock that waiter waits for.
    const Task *pi_donor = nullptr;
    const Lock *pi_donor_lock = nullptr;
    // CFS (SCHED_OTHER): load weight, virtual runtime, run time in total and at the pick.
    int64_t weight = 1024;
    int64_t vruntime = 0;
    Time exec_start = 0;
    Time sum_exec = 0;
    Time prev_sum_exec = 0;
    bool placed = false;  // has been placed on a run queue once (START_DEBIT only then)
    int rr_ticks = 0;     // SCHED_RR: ticks left of its time slice
    std::unique_ptr<Fiber> fiber;
    TaskState state = TaskState::New;
    int cpu = -1;  // current or last CPU
    int timer_cpu = -1;
    uint64_t timer_gen = 0;
    Time remaining = 0;    // rest of a preempted span
    Time wake_extra = 0;   // wake-up cost (an IPI, a kthread's wake) paid at the next switch-in
    Time own_irq_ns = 0;   // the hrtimer interrupt that woke it, until it is switched in,
    int own_irq_cpu = -1;  // and the CPU it took
    int64_t rq_key = 0;
    int preempt_count = 0;
    bool irqs_off = false;
    Section poff, ioff;
    PricedNs priced{};  // charged so far, by price family
    // Where SimConfig::record_priced: `priced` when the open preempt-off and irqs-off sections
    // and the open boolean commit began.
    PricedNs poff_priced_at{}, ioff_priced_at{}, commit_priced_at{};
    // The latest closed sections and when they ended (-1: none yet), for wake-up causes.
    Section last_poff, last_ioff;
    Time last_poff_end = -1, last_ioff_end = -1;
    Label last_op;  // the latest operation that ended
    // RCU (rcu.h): read-side nesting, when the outermost section began (its sequence number
    // and time), and whether a quiescent state is to be reported when it ends.
    int rcu_nesting = 0;
    uint64_t rcu_start_seq = 0;
    Time rcu_start = 0;
    bool rcu_need_qs = false;
    std::vector<HeldLock> held;  // lock_table.h
    std::vector<OpFrame> ops;
    Label blame;  // operation of the lock holder this task waits for
    Time wait_start = 0;
    Time probe_due = -1;       // a probe's wake-up time while it sleeps for one, else -1
    bool timer_sleep = false;  // blocked in sleep_until (it wakes by itself)
    // A probe's wake-up in progress: what delayed it so far; since when it waits in a run queue
    // (-1: not waiting there); the task whose IRQs-off section holds its timer.
    std::vector<DelayNote> delays;
    Time wait_since = -1;
    Task *timer_held_by = nullptr;
    // Interrupt context (irq.cpp): the per-CPU softirq task runs with it; `bh_disabled` counts
    // local_bh_disable nesting without PREEMPT_RT (softirq work waits for local_bh_enable);
    // `irq_idle`: an interrupt's kernel thread waiting for work.
    bool irq_context = false;
    int bh_disabled = 0;
    bool irq_idle = false;
    bool daemon = false;  // lives as long as the machine: the end of a run does not wait for it
    std::mt19937_64 rng;
};

struct Cpu {
    int id = 0;
    Task *curr = nullptr;
    Task *last = nullptr;  // the task switched in last (nullptr after idle)
    std::vector<Task *> rq;
    Act act = Act::Idle;
    uint64_t gen = 0;
    Time act_end = 0;
    Time irq_until = 0;     // interrupt work (hard handler and softirq) ends
    Time irq_exit_at = -1;  // when the last on_irq_end was scheduled for
    bool need_resched = false;
    bool resched_tail = false;  // an RR slice ran out: the current task goes to the tail
    bool tick_pending = false;
    std::vector<Task *> pending_timers;
    std::vector<size_t> pending_irqs;  // interrupt sources waiting for local_irq_enable
    // Per interrupt source hitting this CPU: when its next interrupt is due (before its
    // jitter), and the stream its phase and jitter are drawn from (irq.cpp).
    struct IrqTimer {
        Time due = 0;
        std::mt19937_64 rng;
    };
    std::vector<IrqTimer> irq_timers;
    // Softirq work (irq.cpp): sources whose raised work waits, per kind of context that runs it
    // (the softirq task without PREEMPT_RT; ksoftirqd and each interrupt's thread under it).
    std::vector<size_t> softirq_raised, ksoftirqd_raised;
    bool rcu_softirq = false;         // RCU_SOFTIRQ raised: call_rcu callbacks are ready
    bool ksoftirqd_rcu = false;       // ... and handed to ksoftirqd
    std::vector<int> thread_raised;   // per source: interrupts its thread has yet to handle
    std::vector<Task *> irq_threads;  // per source: its thread on this CPU (PREEMPT_RT)
    Task *softirq_task = nullptr;     // runs raised work in softirq context (not PREEMPT_RT)
    Task *ksoftirqd = nullptr;    // PREEMPT_RT: the timer's softirq work; RCU_SOFTIRQ's leftovers
    Task *interrupted = nullptr;  // the task the softirq task interrupted
    Time interrupted_at = 0;      // ... since then
    bool interrupted_spinning = false;  // ... while it spun for a lock not yet granted
    int64_t min_vruntime = 0;           // CFS: never decreases
    uint64_t ticks = 0;
    // Periodic balancing (rebalance_domains): the tick of the last one, and the domain's
    // balance_interval in ms (sd_weight from the start, doubled up to twice that while the CPUs
    // are balanced).
    int64_t last_balance = 0;
    int64_t balance_interval_ms = 0;
    Time busy_since = 0;
    // The CPU's time idle since the run began (the cache model's clock for its private levels,
    // whose lines leave while the CPU idles), and when its current idle stretch began.
    Time idle_total = 0;
    Time idle_since = 0;
    // The stretch of time, so far, in which this CPU could not switch to a woken task of the
    // highest priority (its sections and interrupt time merged; SimPlatform::note_held); -1: none.
    Time held_start = -1, held_end = -1;
    kernel::CpuStats stats;
};

// The task's innermost open operation, or nullptr.
inline OpFrame *frame(Task *t) {
    return t && !t->ops.empty() ? &t->ops.back() : nullptr;
}
inline Label current_label(const Task *t) {
    return t->ops.empty() ? Label{} : t->ops.back().label;
}

}  // namespace locksim::sim
