// What a policy change does after the new policy is in place, written once for every strategy:
// the kernel's notification path (security/selinux/ss/services.c, avc.c, hooks.c, netif.c,
// netnode.c, netport.c, ibpkey.c, netlabel.c, xfrm.h, status.c, netlink.c), the audit record of
// each changed boolean, and selinuxfs's rebuild of its directories after a load (selinuxfs.c).
//
// The sequence, as read in the kernel (docs/kernel-eras.md lists the releases read, 4.15.1 to
// 6.6.0, and tables each step by release):
//
//   avc_ss_reset(seqno)                                        avc.c
//     avc_flush(): every slot, under its spinlock with interrupts off (strategies/avc.cpp)
//     the AVC_CALLBACK_RESET callbacks; avc_add_callback prepends, so they run in the reverse
//     of their registration (selinux_init: netcache, then lsm_notifier; aurule_init later):
//       aurule_avc_callback: audit_update_lsm_rules(): audit_filter_mutex, a walk of the audit
//         filter lists (empty here: no audit rule names an SELinux field)
//       selinux_lsm_notifier_avc_callback: sel_ib_pkey_flush() (sel_ib_pkey_lock,
//         spin_lock_irqsave, 256 buckets), call_blocking_lsm_notifier(LSM_POLICY_CHANGE) (no
//         notifier registered: no InfiniBand device)
//       selinux_netcache_avc_callback: sel_netif_flush (64 buckets), sel_netnode_flush (256),
//         sel_netport_flush (256), each under its spinlock with bottom halves off; then
//         synchronize_net(): synchronize_rcu() as RTNL is not held -- a full grace period on
//         every policy change, whatever lock protects the policy
//     avc_latest_notif_update(seqno)
//   selnl_notify_policyload(seqno): a netlink message (skb allocated GFP_USER) broadcast
//   selinux_status_update_policyload(seqno): the status page under selinux_status_lock (a
//     mutex): sequence odd, policyload, deny_unknown = !security_get_allow_unknown(), sequence
//     even. security_get_allow_unknown reads policydb.allow_unknown with no lock before 5.10
//     (the writer holds the selinuxfs mutex) and under rcu_read_lock since 5.10
//   selinux_netlbl_cache_invalidate(): cipso_v4 and calipso caches, 128 buckets each, each
//     bucket under its spinlock with bottom halves off -- load_policy in every version, and
//     set_bools only since 5.10, when both go through selinux_notify_policy_change
//   selinux_xfrm_notify_policyload(): down_read(&net_rwsem), rt_genid_bump_all() for each
//     network namespace (one here), up_read (v4.15.1: rtnl_lock instead of net_rwsem; 4.17
//     changed it, v4.20.1 has net_rwsem; CONFIG_SECURITY_NETWORK_XFRM, as distributions build)
//
// selinuxfs (sel_write_load) holds its mutex over all of it: sel_mutex in v4.15, fsi->mutex
// from 4.17 to 5.9, selinux_state.policy_mutex since 5.10 (the strategies call it
// policy_mutex). Before 5.10 it remakes the boolean, class and policy capability files after
// security_load_policy has notified; 5.10 on, sel_make_policy_nodes builds the boolean and class
// directories before selinux_policy_commit, and the capability files, made at mount, stay. In
// every version its last step is audit_log(GFP_KERNEL, AUDIT_MAC_POLICY_LOAD).
//
//   the IMA step, 5.12 on and only in a kernel built with CONFIG_IMA (ima.c):
//     5.13 on: selinux_ima_collect_state: a kzalloc'd "initialized=1;enforcing=1;..." string
//       with one "name=1;" per policy capability, ima_measure_critical_data, kfree
//     security_read_state_kernel: vmalloc(policydb.len), policydb_write of the whole current
//       policy into it (rcu_dereference_protected under policy_mutex), then
//       ima_measure_critical_data("selinux-policy-hash"), vfree -- v5.12.9
//       selinux_ima_measure_state, v6.6.0 selinux_ima_measure_state_locked
//     With no IMA policy rule that measures critical data (IMA's default), each
//     ima_measure_critical_data returns at its first test (ima_policy_flag is 0): the cost is
//     the policy written out on every change. Hashing the image under such a rule is not
//     modelled.
//
// Simplifications: the network, InfiniBand and NetLabel caches are empty (the simulated
// workloads send no packets), so a flush costs its bucket walk; bottom halves off is modelled
// as preemption off (spin_lock), which is what it does to latency; the audit record's skb is
// freed at once instead of by kauditd; selinuxfs's genfs lookups per boolean file run without
// the policy's read lock (5.10 on labels the new policy directly; before, it took the read
// lock once per file, which is not modelled).
//
// Costs, through the CPU profile: hash-bucket walks count hash_probe, the netlink message and
// the audit record count alloc/string_byte/call/audit_call and allocate through kmalloc (so
// they show as the commit's allocations), locks and the grace period are kernel primitives,
// and each selinuxfs file made or removed counts vfs_node (profiles/*.toml say how it is set).
#pragma once

#include <cstdint>
#include <span>

#include "kernel/primitives.h"
#include "ss/policydb.h"
#include "strategies/avc.h"
#include "strategies/kernels.h"
#include "strategies/security_server.h"

namespace locksim::strategies {

// Which notification sequence a commit runs.
enum class PolicyChange : uint8_t {
    // security_set_bools before 5.10: no NetLabel cache invalidation.
    BoolsBefore510,
    // security_load_policy before 5.10: the full sequence; security_get_allow_unknown reads the
    // policydb without a lock; then selinuxfs remakes the boolean, class and policy capability
    // files.
    LoadBefore510,
    // selinux_notify_policy_change, 5.10 on (security_load_policy and security_set_bools):
    // security_get_allow_unknown under rcu_read_lock; selinuxfs remakes only the boolean and
    // class directories (sel_make_policy_nodes; the policy capability files are made once, at
    // mount, by sel_fill_super).
    Full,
};

// The files a policy gives selinuxfs: one per boolean, and the class tree's.
struct SelinuxfsFiles {
    uint64_t bools = 0;
    uint64_t classes = 0;
};

class PolicyNotifier {
  public:
    // `xfrm_rtnl`: the xfrm step under rtnl_lock, as before 4.17 (CoreConfig::xfrm_rtnl);
    // `ima`: the IMA step's measurements (CoreConfig::ima).
    PolicyNotifier(kernel::Platform &p, bool xfrm_rtnl, ImaMeasure ima);
    PolicyNotifier(const PolicyNotifier &) = delete;
    PolicyNotifier &operator=(const PolicyNotifier &) = delete;

    // The policy in place once a change is published, as the IMA step reads it: its policydb
    // and policydb.len, the size of the image it was read from.
    struct CurrentPolicy {
        const ss::Policydb &db;
        int64_t image_bytes;
    };

    // The whole sequence above for a change to `seqno`: avc_ss_reset on `avc` with its reset
    // callbacks, then the notifications. `allow_unknown` reads the current policy's
    // handle_unknown inside the strategy's read section (security_get_allow_unknown);
    // `current` is what the IMA step writes out.
    void notify(Avc &avc, uint32_t seqno, PolicyChange change, FunctionRef<bool()> allow_unknown,
                CurrentPolicy current);

    // security_set_bools's audit_log(GFP_ATOMIC, AUDIT_MAC_CONFIG_CHANGE) for each boolean
    // whose state `values` changes in `cond`, where the caller's version has it (inside the
    // write section before 5.10, before publishing the copy since).
    static void audit_bool_changes(const ss::CondPolicy &cond, std::span<const int> values);

    // sel_write_load's audit_log(GFP_KERNEL, AUDIT_MAC_POLICY_LOAD), its last step in every
    // version, still under the selinuxfs mutex.
    static void audit_policy_load();

    // selinuxfs's rebuild after a load, with the writer's mutex held: the old files removed and
    // the new ones made from `db`. Before 5.10 (`change` LoadBefore510), after the commit and
    // its notifications: sel_make_bools, sel_make_classes, sel_make_policycap. 5.10 on (Full),
    // before the commit: sel_make_policy_nodes builds the boolean and class directories in a
    // temporary directory and swaps them in; the policy capability files stay.
    // `old_files`: what the previous policy made (selinuxfs_files of it, taken before it is
    // freed).
    static SelinuxfsFiles selinuxfs_files(const ss::Policydb &db);
    static void rebuild_selinuxfs(SelinuxfsFiles old_files, const ss::Policydb &new_db,
                                  PolicyChange change);
    // The selinuxfs files the rebuild removes and makes (what it counts as vfs_node).
    static uint64_t rebuild_nodes(SelinuxfsFiles old_files, const ss::Policydb &new_db,
                                  PolicyChange change);

  private:
    void reset_callbacks();
    void ima_measure(CurrentPolicy current);
    void flush_buckets(kernel::Spinlock &lock, uint32_t buckets, kernel::Label label);

    kernel::Mutex audit_filter_mutex_;
    kernel::Spinlock sel_ib_pkey_lock_;
    kernel::Spinlock sel_netif_lock_;
    kernel::Spinlock sel_netnode_lock_;
    kernel::Spinlock sel_netport_lock_;
    kernel::Mutex status_lock_;
    kernel::Spinlock cipso_v4_cache_lock_;  // one lock class for the 128 bucket locks
    kernel::Spinlock calipso_cache_lock_;
    kernel::RwSem net_rwsem_;
    kernel::Mutex rtnl_mutex_;
    bool xfrm_rtnl_;
    ImaMeasure ima_;
};

}  // namespace locksim::strategies
