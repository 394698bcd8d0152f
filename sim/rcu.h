// RCU of the simulated platform: read sections, grace periods (normal and expedited), call_rcu,
// and the publication records the use-after-free check relies on.
//
// A grace period ends when every CPU has passed a quiescent state (context switch, idle, or a
// tick / interrupt / read-unlock while outside any read section and with preemption and
// interrupts on, as with the consolidated RCU flavours) and no task that entered a read section
// before the grace period began is still inside it (preempted readers under PREEMPT_RCU).
// Normal grace periods finish on a jiffy boundary, one at a time. An expedited one follows
// synchronize_rcu_expedited (kernel/rcu/tree_exp.h, v6.6): after the funnel lock and the hop to
// the rcu_gp workqueue (rcu_exp_setup), sync_rcu_exp_select_cpus sends an IPI to every CPU not
// idle (an idle CPU is in an extended quiescent state and is skipped); rcu_exp_handler's time
// (rcu_exp_handler) is taken from whatever runs there as interrupt time, and reports a quiescent
// state at once or, inside a read section, when it ends; the grace period ends when every CPU
// reported. Under PREEMPT_RT with rcu_normal_after_boot it is a normal grace period.
//
// call_rcu queues a callback on the caller's CPU; after its grace period it runs where the
// kernel runs it (v6.6 and v5.10, kernel/rcu/tree.c: rcu_sched_clock_irq, rcu_pending,
// invoke_rcu_core, rcu_core, rcu_do_batch; kernel/rcu/tree_nocb.h: nocb_cb_wait):
//  - by default in RCU_SOFTIRQ on that CPU: its next tick sees the ready callbacks
//    (rcu_pending) and raises the softirq, which runs at irq exit (kernel/softirq.c, irq_exit)
//    on top of whatever runs there, with preemption off, its time counted as softirq time;
//  - under PREEMPT_RT (use_softirq is !IS_ENABLED(CONFIG_PREEMPT_RT) since v5.4) the tick
//    wakes that CPU's rcuc kthread (rcu_cpu_kthread, SCHED_FIFO at kthread_prio 1 as
//    RCU_BOOST sets it), which invokes them preemptibly (local_bh_disable is preemptible there);
//  - with rcu_nocbs= (SimConfig::rcu_nocbs) the grace-period kthread wakes an rcuo kthread
//    (SCHED_OTHER) at the grace period's end, which invokes each callback with softirqs
//    disabled (preemption off without PREEMPT_RT) and is a preemption point between them.
// In softirq context one rcu_do_batch invokes at most max(blimit 10, ready >> rcu_divisor 7)
// callbacks unless the CPU was idle and nothing needs it, and re-raises the softirq for the
// rest; __do_softirq restarts for them (irq.cpp). Simplified: rcu_do_batch's time limit
// (rcu_resched_ns, for batches over 100) is not modelled; the rcuo kthreads of all CPUs are one
// task, unpinned. With user-space RCU (userspace_rcu_gp) callbacks run on
// liburcu's call_rcu thread, modelled as the rcuo task, and a grace period follows liburcu's
// synchronize_rcu (src/urcu.c, memb flavour, v0.13): it waits for the threads inside a read
// section or, as the real platform makes them readers too, a would-be-atomic one (a thread
// outside both is quiescent at once), then ends userspace_rcu_gp later (its two membarriers), or
// userspace_rcu_sleep later when one of them was still inside after the polling window
// (userspace_rcu_spin: wait_for_readers' RCU_QS_ACTIVE_ATTEMPTS rounds, after which it issues
// more membarriers and sleeps on a futex until the reader's unlock wakes it). The caller runs
// its own grace period there: its wake-up is in those calibrated times.
//
// It talks to the scheduler only through SchedOps (sched_ops.h); the scheduler tells it of
// context switches, idle CPUs, interrupts and tasks that end a read-side or atomic section.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernel/platform.h"
#include "record/run_results.h"
#include "sim/config.h"
#include "sim/engine.h"
#include "sim/sched_ops.h"
#include "sim/task.h"

namespace locksim::sim {

class RcuState {
  public:
    RcuState(SchedOps &ops, Engine &engine, const SimConfig &cfg, Time jiffy)
        : ops_(ops),
          engine_(engine),
          cfg_(cfg),
          jiffy_(jiffy),
          exp_ipi_pending_(static_cast<size_t>(cfg.cpus), 0),
          cpu_cbs_(static_cast<size_t>(cfg.cpus)) {}

    // kernel::Platform's RCU calls.
    void read_lock(const Site &site);
    void read_unlock(const Site &site);
    void synchronize(bool expedited, const Site &site);
    void call(std::function<void()> callback);
    // rcu_dereference: reported where `t` is in no RCU read section and is preemptible (the
    // test is inline: a chain walk dereferences every node).
    void dereferenced(const Task *t, const Site &site) {
        if (t && t->rcu_nesting == 0 && t->preempt_count == 0 && !t->irqs_off)
            suspicious_dereference(*t, site);
    }
    void published(const void *old_p, const void *new_p);
    // An accounted allocation with this publication word is freed: reports a free of an object
    // readers may still hold or that is still published.
    void freeing(uint64_t publication, const Site &site);

    // From the scheduler. `cpu` passed a quiescent state (a context switch, going idle).
    void report_qs(int cpu);
    // An interrupt on `cpu` (the tick, an expedited grace period's IPI): a quiescent state if it
    // interrupted one, else the reader there reports one when its section ends.
    void interrupt(int cpu);
    // Interrupts came back on on `cpu`: an expedited IPI that waited is handled now.
    void irqs_on(int cpu);
    // `t` left a preempt-off or IRQs-off section or a read section: the quiescent state it owes.
    void deferred_qs(Task *t);
    // `t` exits inside a read section: the section ends so that grace periods can.
    void reader_exits(Task *t);
    // Wakes the callback tasks that sleep: callbacks became ready, or the duration is over (they
    // then finish what is queued and exit).
    void kick_callback_task();
    // The tasks that invoke callbacks (rcuo, rcuc): they wait for grace periods, never stuck.
    bool is_callback_task(const Task *t) const;
    // Where callbacks run (the comment at the top).
    enum class CallbackContext : uint8_t { Softirq, Rcuc, Rcuo };
    CallbackContext callback_context() const;
    // rcu_sched_clock_irq on `cpu` (the tick): true when callbacks are ready there and
    // RCU_SOFTIRQ is to be raised; in rcuc context it wakes the CPU's rcuc kthread instead.
    bool tick_callbacks(int cpu);
    // RCU_SOFTIRQ's rcu_core on `cpu`, in softirq context: one rcu_do_batch of the callbacks
    // ready there, at most the batch limit, or more while `idle` (it interrupted the idle task)
    // and nothing needs the CPU. Returns whether some are still ready (the softirq is
    // re-raised).
    bool softirq_callbacks(int cpu, bool idle);
    // Callbacks queued and not yet invoked (the run goes on until none is left).
    bool callbacks_pending() const;

    const kernel::RcuStats &stats() const { return stats_; }
    void reset_stats() { stats_ = kernel::RcuStats{}; }

  private:
    void suspicious_dereference(const Task &t, const Site &site);
    struct QueuedCallback {
        int cpu;  // where call_rcu queued it
        std::function<void()> fn;
    };
    struct GracePeriod {
        uint64_t id = 0;
        bool expedited = false;
        bool started = false;
        bool completing = false;
        Time start = 0;  // the request, for an expedited one
        uint64_t start_seq = 0;
        std::vector<uint8_t> cpu_pending;
        int pending = 0;
        std::vector<Task *> waiters;
        std::vector<QueuedCallback> callbacks;
    };

    static void on_gp_complete(void *self, uint64_t arg);
    static void on_exp_ipi(void *self, uint64_t arg);
    static void on_exp_start(void *self, uint64_t id);
    // rcu_exp_handler on `cpu`: its time, then the quiescent state.
    void exp_handler(int cpu);
    GracePeriod *find_gp(uint64_t id);  // nullptr once it completed
    GracePeriod *request_gp(bool expedited);
    void start_gp(GracePeriod &g);
    void check_gp(GracePeriod &g);
    // check_gp on every grace period that has begun.
    void check_started();
    void complete_gp(GracePeriod &g);
    bool cpu_in_qs(int cpu);
    void callback_task_body();
    void rcuc_body(int cpu);
    // rcu_do_batch: invokes the callbacks of `list` from `head` on, one by one, each with
    // preemption off when `bh_off` (local_bh_disable without PREEMPT_RT), until none is left
    // (the list is then cleared) or, once `limit` were invoked, `stop` says so.
    void do_batch(std::vector<std::function<void()>> &list, size_t &head, bool bh_off,
                  size_t limit = SIZE_MAX, const std::function<bool()> &stop = {});
    // The oldest read section still open (its rcu_start_seq), UINT64_MAX when none.
    uint64_t oldest_reader_seq();

    SchedOps &ops_;
    Engine &engine_;
    const SimConfig &cfg_;
    Time jiffy_;
    // Ordering uses one counter, bumped when a read section begins, a grace period begins and a
    // pointer is unpublished, so "began before" is exact even at equal simulated times.
    uint64_t seq_ = 0;
    std::vector<std::unique_ptr<GracePeriod>> gps_;  // active or queued
    GracePeriod *normal_gp_ = nullptr;               // the normal grace period in progress
    GracePeriod *next_gp_ = nullptr;                 // queued behind it
    uint64_t gp_ids_ = 0;
    std::vector<uint8_t> exp_ipi_pending_;  // by CPU: delivered at local_irq_enable
    // Ready callbacks: for the rcuo task, and by CPU for RCU_SOFTIRQ and the rcuc kthreads.
    std::vector<std::function<void()>> callbacks_ready_;
    size_t callbacks_head_ = 0;
    struct CpuCallbacks {
        std::vector<std::function<void()>> ready;
        size_t head = 0;
        Task *rcuc = nullptr;
        bool rcuc_waiting = false;
    };
    std::vector<CpuCallbacks> cpu_cbs_;
    // The storage of a completed grace period's callback list, reused by the next one.
    std::vector<QueuedCallback> spare_callbacks_;
    Task *cb_task_ = nullptr;  // rcuo
    bool cb_task_waiting_ = false;
    // Read sections in the order they began (rcu_start_seq, task); entries of sections that
    // ended are dropped lazily from the front.
    std::deque<std::pair<uint64_t, Task *>> readers_;
    // Publication of an object: 0 never published, kStillPublished while reachable, else the
    // seq_ at which it was unpublished. An accounted allocation keeps it in its record (freed
    // with it); other objects' are kept here by address.
    std::unordered_map<const void *, uint64_t> published_;
    void set_publication(const void *p, uint64_t publication);
    kernel::RcuStats stats_;
};

}  // namespace locksim::sim
