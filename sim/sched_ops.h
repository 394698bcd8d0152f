// What the locks (lock_table.h) and RCU (rcu.h) of the simulated platform may ask of the scheduler
// and of the run's accounting. SimPlatform implements it; neither subsystem sees the run queues,
// the CPUs' activities or the other subsystem.
//
// Scheduling: the current task, time, letting time pass on it (advance), sleeping (block_current)
// and waking (wake), spinning with the CPU kept (spin_current, end_spin), the preempt count
// (a spinning lock and a non-preemptible RCU reader raise it) with the preemption points that
// go with it, a task's effective priority (priority inheritance), which task runs on a CPU (RCU's
// quiescent states), and creating a kernel thread (RCU's callback task). Accounting: whether
// statistics are recorded, an operation's statistics, self-check violations, the timeline recorder
// and the event trace; memory: the RCU publication word kept with an accounted allocation.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/task.h"
#include "sim/trace.h"

namespace locksim::sim {

class SchedOps {
  public:
    virtual Task *current() = 0;  // nullptr outside a task (setup)
    virtual Time now() = 0;
    // Time passes on the current task: preemptible as its preempt count and interrupt state say.
    // It is charged to the task's time in `family` (a primitive's cost unless said).
    virtual void advance(Time ns, PriceFamily family = PriceFamily::Primitive) = 0;
    // The current task sleeps until wake(); it leaves its CPU to the next one.
    virtual void block_current() = 0;
    // Makes a sleeping task runnable, woken from `from_cpu` (-1: not from a CPU), paying `extra`
    // (a timer interrupt, a wake-up) when it is switched in; a remote wake-up sends an IPI.
    virtual void wake(Task *t, int from_cpu, Time extra) = 0;
    // The current task spins on its CPU (nothing else runs there) until end_spin(t, cost), after
    // which it spends `cost` and goes on.
    virtual void spin_current() = 0;
    virtual void end_spin(Task *t, Time cost) = 0;
    // preempt_count_inc / _dec without a primitive's cost; the decrement to zero ends the
    // preempt-off section and is a preemption point.
    virtual void preempt_inc(Task *t, const Site &site) = 0;
    virtual void preempt_dec(Task *t, const Site &site) = 0;
    // rt_mutex_setprio: `t`'s effective priority becomes `rank` (priority inheritance); the CPUs
    // concerned reschedule.
    virtual void set_prio(Task *t, int rank) = 0;
    // A preemption point of the current task (a sleeping lock's release).
    virtual void maybe_preempt() = 0;
    virtual void cond_resched(Site site) = 0;
    // Whether `cpu` is to reschedule (a task woken there should run).
    virtual bool need_resched(int cpu) = 0;
    // The task running on `cpu`, nullptr when it is idle.
    virtual Task *running_on(int cpu) = 0;
    virtual const std::vector<std::unique_ptr<Task>> &tasks() const = 0;
    virtual Task *create_kthread(kernel::TaskParams params, std::function<void()> body) = 0;
    // The duration is over: no new work starts.
    virtual bool should_stop() = 0;
    // A hard interrupt handler of `ns` runs on `cpu` now (an expedited grace period's IPI): its
    // time is taken from whatever runs there and counted as the CPU's interrupt time.
    virtual void hard_irq(int cpu, Time ns) = 0;

    virtual bool recording() const = 0;
    virtual kernel::OpStats &op_stats(Label l) = 0;
    virtual void violation(std::string_view kind, std::string message) = 0;
    // The RCU publication word (rcu.h) of the accounted allocation at `p`, nullptr when `p` is
    // not one.
    virtual uint64_t *rcu_publication(const void *p) = 0;
    virtual TraceRecorder *recorder() = 0;
    virtual bool tracing() const = 0;
    virtual void trace_line(std::string line) = 0;

    template <class... A>
    void trace_event(const char *f, const A &...args) {
        if (tracing()) trace_line(fmt::format(fmt::runtime(f), args...));
    }

  protected:
    ~SchedOps() = default;
};

}  // namespace locksim::sim
