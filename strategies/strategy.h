// What every strategy shares: the read-side services written once over a virtual read
// section, the AVC in front, the published policy version with its accounted memory, and the
// load_policy steps every design performs the same way. A strategy file supplies its read
// section and its writer paths (set_bools, load_policy), kernel-style, against kernel/platform.h.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "kernel/primitives.h"
#include "ss/policy_mem.h"
#include "strategies/avc.h"
#include "strategies/catalog.h"
#include "strategies/policy_notify.h"
#include "strategies/rcu_reclaim.h"

namespace locksim::strategies {

// One policy version (the kernel's struct selinux_policy), in accounted memory, charged by
// ss::policy_kmem's rule (the kernel's slab bytes, v5.10): the object carries what a
// conditional duplicate allocates (the struct and the copied conditional state); `base_mem`
// carries the rest of a whole policy (the policy base, the boolean names) and belongs to
// exactly one version: a shallow copy takes it over from the version it copies, so freeing the
// old version frees only what it alone owned, and the peak shows what a copy really cost.
struct PolicyVersion {
    ss::PolicyState st;
    void *base_mem = nullptr;
    int64_t image_bytes = 0;  // its binary image's size (what a full copy writes and reads)
    ss::PolicyKmem kmem;      // the policy's slab bytes (the same for every copy of it)
};

// How a design's load_policy differs around its exclusive section (StrategyBase::load_exclusive).
struct LoadSteps {
    // A grace period (synchronize_rcu, or its expedited form) before the old version is freed:
    // readers may still hold it without the write side excluding them.
    bool grace_period = false;
    bool expedited = false;
    // The old SID table frozen around the swap inside the section, not once after it.
    bool freeze_in_section = false;
};

class StrategyBase : public SecurityServer {
  public:
    // `rcu_published`: the policy pointer is published under RCU (readers may hold an old
    // version until a grace period ends); otherwise a lock keeps readers out while it changes.
    StrategyBase(std::string name, ss::PolicyState initial, const CoreConfig &core,
                 bool rcu_published);
    ~StrategyBase() override;

    std::string_view name() const final { return name_; }
    int avc_has_perm(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested,
                     ss::AvDecision *avd) final;
    int compute_av(uint32_t ssid, uint32_t tsid, uint32_t tclass, ss::AvDecision *avd) final;
    int file_permission(const FileCheck &check) final;
    int context_to_sid(std::string_view context, uint32_t *sid) final;
    int sid_to_context(uint32_t sid, std::string *out) final;
    int transition_sid(uint32_t ssid, uint32_t tsid, uint32_t tclass, std::string_view objname,
                       uint32_t *out_sid) final;
    int get_user_sids(uint32_t fromsid, std::string_view username,
                      std::vector<uint32_t> *sids) final;
    int read_policy(ReadFn fn) final;
    int set_bools(std::span<const int> values, uint32_t *seqno) final;
    int load_policy(std::span<const uint8_t> image, uint32_t *seqno) final;
    const ss::PolicyState &setup_state() const final;
    ss::AvcStats avc_stats() const final { return avc_.stats(); }
    uint64_t sidtab_mirror_collisions() const final {
        return policy_locked()->st.sidtab->locking()->mirror_collisions();
    }

  protected:
    // The strategy's read-side section around `fn(current policy)`; returns what fn returns.
    virtual int read_section(ReadFn fn) = 0;
    // The writer paths, each inside its operation scope; on success *seqno is the committed
    // policy's sequence number. They call notify_policy_change where the kernel does.
    virtual int write_bools(std::span<const int> values, uint32_t *seqno) = 0;
    virtual int write_load(std::span<const uint8_t> image, uint32_t *seqno) = 0;

    // The RCU reader every RCU design shares: rcu_read_lock, rcu_dereference, fn, unlock.
    int rcu_read_section(ReadFn fn) {
        kernel::rcu_read_lock();
        int rc = fn(policy_rcu()->st);
        kernel::rcu_read_unlock();
        return rc;
    }

    // --- the published policy ---
    // Read side of an RCU strategy (inside rcu_read_lock).
    PolicyVersion *policy_rcu() const { return kernel::rcu_dereference(policy_); }
    // Under the lock that keeps writers (or readers and writers) out.
    PolicyVersion *policy_locked() const { return kernel::rcu_dereference_protected(policy_); }
    // Makes `v` current and returns the previous version: rcu_replace_pointer for an RCU
    // strategy, a plain store under the writer's exclusive lock otherwise.
    PolicyVersion *replace_policy(PolicyVersion *v);

    // --- versions in accounted memory ---
    // A version object (kmalloc with `gfp`) with the policy's slab bytes `kmem`, charged with
    // what a conditional duplicate allocates (kmem.duplicate()).
    PolicyVersion *new_version(ss::PolicyState st, const ss::PolicyKmem &kmem, kernel::Gfp gfp);
    // The same for a policy whose bytes are not known yet (ss::policy_kmem walks it).
    PolicyVersion *new_version(ss::PolicyState st, kernel::Gfp gfp);
    // A new charge for the rest of the whole policy of `v` (a full copy or a newly read
    // policy: kmem.whole() in all), whose binary image has `image_bytes`; `v` owns it.
    static void new_base_charge(PolicyVersion *v, int64_t image_bytes, kernel::Gfp gfp);
    // Frees the version as the kernel does, each destroy charged under its own label (one
    // compute per stretch between the kernel's cond_resched() points, a kfree priced as
    // Work::Free and a kmem_cache_free as Work::CacheFree, counted by ss::policy_kmem
    // and ss::sidtab_destroy_calls):
    //  - a version that owns its base (a whole policy): "policydb_destroy", and when its SID
    //    table is not the current policy's (a load), "sidtab_destroy" of that table, after the
    //    policydb (security_load_policy up to 5.9) or, with `sidtab_first`, before it (5.10's
    //    selinux_policy_free);
    //  - a conditional duplicate: "cond_policydb_destroy_dup" (5.10's selinux_policy_cond_free);
    // then the struct's kfree. The C++ objects are destroyed with the work meter off, so that
    // only the charged counts stand for the kernel's frees.
    void free_version(PolicyVersion *v, bool sidtab_first = false);
    // call_rcu(free_version): freed after a grace period, from the callback context.
    void free_version_rcu(PolicyVersion *v);

    // avc_ss_reset with its reset callbacks and the notifications after it, in the kernel's
    // order (strategies/policy_notify.h); every strategy calls this where its kernel does.
    void notify_policy_change(uint32_t seqno, PolicyChange change);

    // security_load_policy's first half, the same for every design and run outside the policy
    // lock with the writer mutex held: policydb_read of the image, the booleans preserved by
    // name and the live SID table conversion from `old`. The result is a version charged with
    // the new policy's bytes (ss::policy_kmem: the whole policy), or nullptr with
    // *rc set.
    PolicyVersion *prepare_load(std::span<const uint8_t> image, const PolicyVersion &old, int *rc);
    // With the kernel's freeze (CoreConfig::sidtab_freeze), the old SID table stops mirroring
    // and is frozen (inserts get -ESTALE): its lock is held around `publish`
    // (selinux_policy_commit's sidtab_freeze_begin .. _end, 5.10.30 on), or taken once after
    // the swap. Without it, `publish` alone: the old table mirrors until it is freed.
    void commit_load(const PolicyVersion &old, FunctionRef<void()> publish);
    void commit_load(const PolicyVersion &old) {
        commit_load(old, [] {});
    }

    // The writer paths of the designs that change the policy in place under an exclusive
    // section: `exclusive(step)` takes the strategy's write side, runs `step`, releases it.
    using Exclusive = FunctionRef<void(FunctionRef<void()>)>;
    // security_set_bools as before 5.10: policy_mutex; exclusive { audit_log per changed
    // boolean, set_bools_inplace }; the notification path without NetLabel (v5.9).
    int set_bools_exclusive(std::span<const int> values, uint32_t *seqno, Exclusive exclusive);
    // sel_write_load + security_load_policy as before 5.10: policy_mutex; prepare_load
    // outside; exclusive { swap }; freeze the old SID table (LoadSteps says where); free the
    // old version (after a grace period if LoadSteps asks for one); the whole notification
    // path; selinuxfs's rebuild of its boolean and class directories.
    int load_exclusive(std::span<const uint8_t> image, uint32_t *seqno, Exclusive exclusive,
                       LoadSteps steps = {});

    kernel::Platform &platform_;
    // Serialises writers (selinuxfs's sel_mutex before 5.10, policy_mutex since).
    kernel::Mutex policy_mutex_;

  private:
    std::string name_;
    bool rcu_published_;
    bool sidtab_freeze_;
    kernel::RcuPointer<PolicyVersion> policy_;
    RcuReclaimer reclaim_;
    Avc avc_;
    FileHook file_hook_;
    PolicyNotifier notifier_;
};

// The maker of a catalog entry whose strategy takes no options: `Server(initial, core)`.
template <class Server>
std::unique_ptr<SecurityServer> make_without_options(ss::PolicyState initial,
                                                     const CoreConfig &core, const Params &) {
    return std::make_unique<Server>(std::move(initial), core);
}

// The option `grace_period` (normal or expedited) of the RCU designs' entries, and
// synchronize_rcu or synchronize_rcu_expedited by its value.
ParamSpec grace_period_option();
bool expedited_grace_period(const Params &options);
inline void grace_period(bool expedited) {
    if (expedited)
        kernel::synchronize_rcu_expedited();
    else
        kernel::synchronize_rcu();
}

}  // namespace locksim::strategies
