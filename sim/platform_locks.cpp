// The platform's lock calls and softirq sections: the lock table (lock_table.h), and under
// PREEMPT_RT (v6.12) the RCU read section an rt_mutex-based lock's holder is in
// (kernel/locking/spinlock_rt.c: rt_spin_lock takes rcu_read_lock() after the lock,
// rt_spin_unlock drops it before; migrate_disable is not modelled).
#include "sim/sim_platform.h"

namespace locksim::sim {

void SimPlatform::lock_acquire(kernel::LockObject *lock, LockMode mode, Site site) {
    locks_.acquire(lock, mode, site);
    if (cur_ && LockTable::is_rt(lock)) rcu_.read_lock(site);
}

bool SimPlatform::lock_try(kernel::LockObject *lock, LockMode mode, Site site) {
    if (!locks_.try_acquire(lock, mode, site)) return false;
    if (cur_ && LockTable::is_rt(lock)) rcu_.read_lock(site);
    return true;
}

void SimPlatform::lock_release(kernel::LockObject *lock, LockMode mode, Site site) {
    if (cur_ && LockTable::is_rt(lock)) rcu_.read_unlock(site);
    locks_.release(lock, mode, site);
}

// spin_unlock_irq / _irqrestore and write_unlock_irq* (v6.6 include/linux/spinlock_api_smp.h,
// __raw_spin_unlock_irqrestore; v5.10 the same): the lock word is released, interrupts come
// back on, and only then preemption, so an interrupt pending during the section (and softirq
// work it raises, run on its exit) lengthens the preempt-off section, as ftrace's preemptoff
// tracer counts it.
void SimPlatform::lock_release_irq(kernel::LockObject *lock, LockMode mode, Site site) {
    Task *t = cur_;
    if (t && LockTable::is_rt(lock)) rcu_.read_unlock(site);
    const bool owes_preempt = locks_.release(lock, mode, site, true);
    local_irq_enable(site);  // the interrupt work delivered now runs before preempt_enable
    if (owes_preempt) preempt_dec(t, site);
}

// Without PREEMPT_RT the softirq count is part of preempt_count: a preempt-off section, and
// softirq work raised meanwhile on this CPU runs at the local_bh_enable that ends it, before
// preemption comes back on (__local_bh_enable_ip). Under PREEMPT_RT (kernel/softirq.c,
// __local_bh_disable_ip) a task takes the per-CPU softirq lock and rcu_read_lock(): it stays
// preemptible, inside an RCU read section (the per-CPU lock is not modelled).
void SimPlatform::local_bh_disable(Site site) {
    if (cfg_.preempt == PreemptModel::Rt) {
        rcu_.read_lock(site);
        return;
    }
    preempt_disable(site);
    if (cur_) ++cur_->bh_disabled;
}

void SimPlatform::local_bh_enable(Site site) {
    if (cfg_.preempt == PreemptModel::Rt) {
        rcu_.read_unlock(site);
        return;
    }
    if (Task *t = cur_;
        t && t->bh_disabled > 0 && --t->bh_disabled == 0 && enter_softirq(cpu_of(t)))
        suspend_current();  // back when the softirq work is done
    preempt_enable(site);
}

}  // namespace locksim::sim
