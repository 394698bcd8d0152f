// Tasks and CPUs of the simulated platform, as the scheduler (sched.cpp), the accounting
// (accounting.cpp), the locks (locks.h) and RCU (rcu.h) share them. Like task_struct, a task
// carries every subsystem's per-task state (preempt count, RCU read-side nesting, held locks);
// each subsystem changes only its own fields.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "kernel/kernel.h"
#include "kernel/results.h"
#include "sim/engine.h"

namespace locksim::sim {

using kernel::Label;
using kernel::LockMode;
using kernel::Site;

struct Lock;  // sim/locks.h

struct HeldLock {
    Lock *lock;
    LockMode mode;
    Time since;
    Site site;
};

// An open operation of a task, with what happens inside it so far. Its parts reach the
// operation's statistics when it ends inside the recorded window, as its latency does, so a part
// never counts time of an operation the statistics do not count.
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
    // RCU (rcu.h): read-side nesting, when the outermost section began (its sequence number
    // and time), and whether a quiescent state is to be reported when it ends.
    int rcu_nesting = 0;
    uint64_t rcu_start_seq = 0;
    Time rcu_start = 0;
    bool rcu_need_qs = false;
    std::vector<HeldLock> held;  // locks.h
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
    std::vector<Task *> pending_timers;
    Time busy_since = 0;
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
