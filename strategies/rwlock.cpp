// rwlock: the security server's locking before Linux 5.10 (security/selinux/ss/services.c as
// of v5.9, `policy_rwlock`; selinuxfs serialising writers with its mutex).
//
// Reader: read_lock(&policy_rwlock) around every read-side service — a queued rwlock, so the
//   reader spins with preemption off while it waits and holds it with preemption off for the
//   whole lookup (a get_user_sids candidate loop included); new readers queue behind a waiting
//   writer.
// set_bools (security_set_bools, v5.9; the same since v4.15): policy_mutex (selinuxfs's
//   mutex), then write_lock_irq(&policy_rwlock) for the whole update in place: for each
//   changed boolean audit_log(GFP_ATOMIC) -- inside the IRQs-off section --, the boolean
//   states, evaluate_cond_nodes, seqno + 1: interrupts and preemption off on the writer's CPU,
//   every reader spinning; write_unlock_irq; then avc_ss_reset (AVC flush; reset callbacks:
//   audit rules, IB pkey cache + LSM notifier chain, network caches + synchronize_net, one
//   grace period), selnl_notify_policyload, selinux_status_update_policyload (its
//   security_get_allow_unknown reads the policydb without the lock),
//   selinux_xfrm_notify_policyload; no NetLabel invalidation before 5.10
//   (strategies/policy_notify.h).
// load_policy (sel_write_load + security_load_policy, v5.9): policy_mutex; policydb_read and
//   the live SID table conversion outside the policy lock; write_lock_irq only for the swap;
//   the old policy is freed at once (no reader can hold it); avc_ss_reset,
//   selnl_notify_policyload, selinux_status_update_policyload,
//   selinux_netlbl_cache_invalidate, selinux_xfrm_notify_policyload; back in selinuxfs,
//   sel_make_bools, sel_make_classes, sel_make_policycap, audit_log(AUDIT_MAC_POLICY_LOAD)
//   under its mutex.
// Trades: the simplest design and no copies, paid for in preempt-off latency on every CPU that
//   reads while anything holds the lock.
// Checked against: v4.15-era services.c/selinuxfs.c (stored copies), v5.9 as the removed lines of
//   the 5.10 patches, current services.c (torvalds 002903e1); docs/kernel-eras.md.
#include "strategies/reader_writer.h"

namespace locksim::strategies {
namespace {

// policy_rwlock: a queued rwlock, the writer's side with interrupts off.
struct PolicyRwlock {
    static constexpr const char *kName = "rwlock";
    explicit PolicyRwlock(kernel::Platform &p) : policy_rwlock("policy_rwlock", p) {}
    void read_lock() { kernel::read_lock(policy_rwlock); }
    void read_unlock() { kernel::read_unlock(policy_rwlock); }
    void write_lock() { kernel::write_lock_irq(policy_rwlock); }
    void write_unlock() { kernel::write_unlock_irq(policy_rwlock); }
    kernel::RwLock policy_rwlock;
};

}  // namespace

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo rwlock_strategy() {
    return {.name = "rwlock",
            .summary =
                "read_lock (spinning, preempt-off) around every read; set_bools under "
                "write_lock_irq",
            .models = "kernels before 5.10: policy_rwlock",
            .options = {},
            .kernels = {"4.15", "5.9", "5.9"},
            .make = make_without_options<ReaderWriterServer<PolicyRwlock>>};
}

}  // namespace locksim::strategies
