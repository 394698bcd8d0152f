// rcu-cond-dup: the design merged in Linux 5.10 (Stephen Smalley, "selinux: convert policy
// read-write lock to RCU", 1b8b31a2e612, and "selinux: refactor changing booleans",
// c7c556f1e81b; after KaiGai Kohei's 2004 RCU proposal).
//
// Reader: rcu_read_lock(); policy = rcu_dereference(state->policy); the service;
//   rcu_read_unlock(). Preemptible under PREEMPT_RCU, preempt-off otherwise. A reader that
//   must add a SID to a SID table frozen by a policy load gets -ESTALE and retries with the
//   new policy.
// set_bools (security_set_bools, v5.10 and unchanged since, read in a recent services.c and
//   the 5.10 patches), under policy_mutex (taken by selinuxfs's sel_commit_bools_write):
//   kmemdup of the policy struct (a shallow copy sharing the policy base and the SID table) +
//   cond_policydb_dup (boolean table, conditional avtab and conditional node list
//   deep-copied); audit_log(GFP_ATOMIC) for each changed boolean (under the mutex only);
//   new boolean states, evaluate_cond_nodes, seqno + 1; rcu_assign_pointer;
//   synchronize_rcu (or the expedited one, by the option grace_period); free the old
//   conditional state and struct; then selinux_notify_policy_change: avc_ss_reset (AVC flush;
//   reset callbacks: audit rules, IB pkey cache + LSM notifier chain, network caches +
//   synchronize_net, a second grace period), selnl_notify_policyload,
//   selinux_status_update_policyload, selinux_netlbl_cache_invalidate,
//   selinux_xfrm_notify_policyload (strategies/policy_notify.h). Two grace periods in a row.
// load_policy (sel_write_load + security_load_policy + selinux_policy_commit, v5.10): under
//   policy_mutex: policydb_read, booleans preserved, live SID table conversion (sidtab_convert,
//   as today: mirroring begins under the table's spinlock, the entries are converted outside
//   it a leaf at a time, the new hash table is built under it; readers' inserts meanwhile are
//   mirrored into the new table); sel_make_policy_nodes (selinuxfs's boolean and class
//   directories rebuilt before the commit); freeze the old table around rcu_assign_pointer;
//   synchronize_rcu; free the old policy; selinux_notify_policy_change; back in selinuxfs,
//   audit_log(AUDIT_MAC_POLICY_LOAD). The policy capability files are not remade (5.10 makes
//   them once, at mount).
// Trades: readers never wait and copies are only the conditional state, but setsebool waits
//   two grace periods and memory holds two conditional states until the first ends.
// Checked against: v5.10.13 selinuxfs.c (Rtoax/linux-5.10.13 3ef831be), the 5.10 RCU patch as
//   merged, current services.c (torvalds 002903e1); docs/kernel-eras.md.
#include "strategies/rcu_cond_dup.h"

namespace locksim::strategies {

RcuCondDupServer::RcuCondDupServer(std::string name, ss::PolicyState st, const CoreConfig &core,
                                   bool expedited)
    : StrategyBase(std::move(name), std::move(st), core, true), expedited_(expedited) {}

int RcuCondDupServer::read_section(ReadFn fn) {
    return rcu_read_section(fn);
}

int RcuCondDupServer::write_bools(std::span<const int> values, uint32_t *seqno) {
    static const kernel::Label kDup("cond_policydb_dup");
    kernel::mutex_lock(policy_mutex_);
    PolicyVersion *old = policy_locked();
    PolicyVersion *next = kernel::knew<PolicyVersion>(kernel::Gfp::Kernel);  // kmemdup
    int rc =
        kernel::compute(kDup, [&] { return ss::set_bools_cond_dup(old->st, values, &next->st); });
    if (rc) {
        kernel::kdelete(next);
        kernel::mutex_unlock(policy_mutex_);
        return rc;
    }
    next->kmem = old->kmem;  // the same policy: kmemdup + cond_policydb_dup's slab bytes
    kernel::kmem_charge(next, next->kmem.duplicate());
    // audit_log for each changed boolean (the old version still holds the old states).
    PolicyNotifier::audit_bool_changes(*old->st.db.cond, values);
    next->base_mem = old->base_mem;  // the shared base now belongs to the new version
    next->image_bytes = old->image_bytes;
    old->base_mem = nullptr;
    *seqno = next->st.seqno;
    replace_policy(next);  // rcu_assign_pointer
    retire_bools(old);
    notify_policy_change(*seqno, PolicyChange::Full);
    kernel::mutex_unlock(policy_mutex_);
    return 0;
}

void RcuCondDupServer::retire_bools(PolicyVersion *old) {
    grace_period(expedited_);
    free_version(old);  // cond_policydb_destroy_dup + kfree
}

int RcuCondDupServer::write_load(std::span<const uint8_t> image, uint32_t *seqno) {
    kernel::mutex_lock(policy_mutex_);
    PolicyVersion *old = policy_locked();
    const SelinuxfsFiles old_files = PolicyNotifier::selinuxfs_files(old->st.db);
    int rc;
    if (PolicyVersion *next = prepare_load(image, *old, &rc)) {
        // sel_make_policy_nodes: selinuxfs's new directories, built before the commit.
        PolicyNotifier::rebuild_selinuxfs(old_files, next->st.db, PolicyChange::Full);
        // selinux_policy_commit
        commit_load(*old, [&] { replace_policy(next); });  // inside sidtab_freeze_begin .. end
        *seqno = next->st.seqno;
        grace_period(expedited_);
        free_version(old, true);  // selinux_policy_free: sidtab_destroy, then policydb_destroy
        notify_policy_change(*seqno, PolicyChange::Full);
        PolicyNotifier::audit_policy_load();
    }
    kernel::mutex_unlock(policy_mutex_);
    return rc;
}

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo rcu_cond_dup_strategy() {
    return {.name = "rcu-cond-dup",
            .summary =
                "rcu_read_lock readers; set_bools under policy_mutex duplicates only the "
                "conditional policy, publishes, synchronize_rcu, frees the old "
                "conditional state",
            .models = "KaiGai 2004 / Smalley, merged in 5.10 (c7c556f1e81b, 1b8b31a2e612)",
            .options = {grace_period_option()},
            .kernels = {"5.10", "", "6.6"},
            .make = [](ss::PolicyState st, const CoreConfig &core,
                       const Params &options) -> std::unique_ptr<SecurityServer> {
                return std::make_unique<RcuCondDupServer>("rcu-cond-dup", std::move(st), core,
                                                          expedited_grace_period(options));
            }};
}

}  // namespace locksim::strategies
