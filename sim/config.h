// Configuration of the simulated platform (sim/sim_platform.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernel/platform.h"
#include "sim/profile.h"

namespace locksim::sim {

enum class CostModel : uint8_t { Counted, Measured };
// Full: CONFIG_PREEMPT. None: CONFIG_PREEMPT_NONE, kernel code is left only at an operation's
// end (the return to user space), cond_resched or a sleep. Voluntary: CONFIG_PREEMPT_VOLUNTARY
// (v6.6, include/linux/kernel.h), None plus a preemption point at every might_sleep(): the
// explicit ones, a sleeping lock's acquisition and a sleeping allocation. Rt: CONFIG_PREEMPT_RT
// (v6.12, mainline since then): Full, with spinlock_t and rwlock_t sleeping rt_mutex-based
// locks (sim/lock_table.h), their _irq forms leaving interrupts on, and local_bh_disable() a
// preemptible section (kernel/softirq.c's RT variant); PREEMPT_RCU is implied.
enum class PreemptModel : uint8_t { Full, None, Voluntary, Rt };
// Kernel code is preemptible wherever the preempt count is zero and interrupts are on.
inline bool fully_preemptible(PreemptModel m) {
    return m == PreemptModel::Full || m == PreemptModel::Rt;
}

// How waiters spin on a spinning lock's word, for the lock-line model (sim/lock_table.h), which
// applies only with a profile that models caches ([memory]). Queued: the queued spinlock and
// queued rwlock (v4.2 on; v6.x kernel/locking/qspinlock.c, qrwlock.c): one waiter spins on the
// lock word, the rest on their own MCS nodes. Byte: the test-and-test-and-set byte lock of
// 2.6.9 (include/asm-ia64/spinlock.h, asm-i386/spinlock.h) and its rwlock: every waiter spins
// on the lock word and all retry the atomic when it is released.
enum class SpinlockImpl : uint8_t { Queued, Byte };

// A device interrupt source ([[machine.irq]] in a scenario, read and checked there): `rate`
// interrupts per second on each of `cpus` (empty: every CPU), one every period() ns. Its hard
// handler costs `handler`, the softirq work raised by it `softirq` (0: none), and `work` (set
// by open_softirq) is code that softirq runs, once per interrupt. Under PREEMPT_RT every kind
// but the timer is a threaded interrupt whose thread runs at SCHED_FIFO `thread_priority`.
// With `drawn_phase` the first interrupt on each CPU is due at a time in [0, period) drawn from
// the run's seed (a stream of its own per source and CPU: util/seed_stream.h), else at the
// period; each next one is due a period after the previous one was, and each arrives late by a
// draw in [0, jitter].
// Preconditions (SimPlatform asserts them; a scenario's reader refuses them with the place):
// rate in [1, kSec], costs and jitter not negative, jitter shorter than the period, CPUs on the
// machine, and the sources' work on each CPU shorter than its time.
struct IrqSource {
    std::string kind;  // what the results call it (timer, network, block)
    std::vector<int> cpus;
    int64_t rate = 0;  // per second, as the scenario gives it
    Time handler = 0;
    Time softirq = 0;
    int thread_priority = 50;  // MAX_RT_PRIO / 2, as setup_irq_thread's sched_set_fifo gives
    bool drawn_phase = false;
    Time jitter = 0;
    std::function<void()> work;
    Time period() const { return kernel::kSec / rate; }
    bool threaded(PreemptModel m) const { return m == PreemptModel::Rt && kind != "timer"; }
    bool hits(int cpu) const {
        return cpus.empty() || std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
    }
};

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
    // Under Rt: rcupdate.rcu_normal_after_boot, whose default is IS_ENABLED(CONFIG_PREEMPT_RT)
    // (kernel/rcu/update.c, v6.6): once booted, synchronize_rcu_expedited waits for a normal
    // grace period (rcu_gp_is_normal). Without Rt it is off.
    bool rcu_normal_after_boot = true;
    // rcu_nocbs= on every CPU (CONFIG_RCU_NOCB_CPU, kernel/rcu/tree_nocb.h, v6.6): call_rcu
    // callbacks are invoked by rcuo kthreads instead of RCU_SOFTIRQ (sim/rcu.h).
    bool rcu_nocbs = false;
    // Under Rt: rt_mutex priority inheritance (kernel/locking/rtmutex.c). Off only to show what
    // it prevents; the kernel has no such switch.
    bool rt_mutex_pi = true;
    int hz = 250;
    SpinlockImpl spinlock = SpinlockImpl::Queued;
    // RCU as user space has it (liburcu, for comparing with the real-thread platform): when
    // >= 0, a normal grace period waits only for readers that predate it, not for every CPU to
    // pass a quiescent state, and ends this long after the last of them left instead of at
    // the next jiffy. -1: the kernel's RCU.
    Time userspace_rcu_gp = -1;
    // How liburcu waits for a thread still inside a read section when its grace period flips
    // (src/urcu.c, wait_for_readers): it polls for this long (RCU_QS_ACTIVE_ATTEMPTS rounds), then
    // issues further membarriers and sleeps on a futex until the reader's unlock wakes it; the
    // grace period then ends userspace_rcu_sleep after the reader left instead of
    // userspace_rcu_gp. 0: no such path (the grace period always ends userspace_rcu_gp after).
    Time userspace_rcu_spin = 0;
    Time userspace_rcu_sleep = 0;
    // What the real-thread platform spends around each compute() span beyond the work in it
    // (its clock reads and the charge's bookkeeping), charged to every span when comparing with
    // it (validate). A kernel has no such cost: 0 everywhere else.
    Time host_span_overhead = 0;
    // What the real-thread platform spends queuing one call_rcu callback (a strategy's deferred
    // free, with liburcu's call_rcu under it), charged to the caller when comparing with it
    // (validate). 0 everywhere else: the kernel's call_rcu is not priced.
    Time host_call_rcu = 0;
    // Whether work counted in kernel::stand_in spans is priced (kernel code the core only
    // counts). Off where the simulator is compared with the real platform, which runs nothing
    // for it (validate).
    bool price_stand_ins = true;
    // CFS tunables before scaling by 1 + log2(min(CPUs, 8)) (sysctl_sched_latency,
    // sysctl_sched_min_granularity, sysctl_sched_wakeup_granularity in v6.5 fair.c).
    Time sched_latency = 6 * kernel::kMsec;
    Time sched_min_granularity = 750 * kernel::kUsec;
    Time sched_wakeup_granularity = 1 * kernel::kMsec;
    std::vector<IrqSource> irqs;
    // After the duration no task starts new work; the work in flight runs on and is measured in
    // full for up to this long. What is still open then is censored ("at least" its elapsed
    // part); a task still running outside any operation then is reported as task_stuck.
    Time drain_limit = kernel::kSec;
    // Ends the run as soon as, after the warm-up, a preempt-off or IRQs-off section, a boolean
    // commit or a probe wake-up passes its limit here (0: none): a design over a limit needs no
    // more of its run to be judged over it (`locksim robust`). What was measured until then is
    // kept, and RunResults::early_stop says when and why.
    struct StopOver {
        Time preempt_off = 0, irqs_off = 0, commit = 0, wakeup = 0;
        bool any() const { return preempt_off > 0 || irqs_off > 0 || commit > 0 || wakeup > 0; }
    };
    StopOver stop_over;
    // Keep the longest sections and commits with their time by price family (RunResults::priced,
    // what robust re-prices); off, they cost nothing.
    bool record_priced = false;
    size_t keep_longest = 20;
    size_t stack_size = 256 * 1024;
    bool trace = false;  // keep an event trace (golden tests, debugging)
};

}  // namespace locksim::sim
