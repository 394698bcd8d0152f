// rcu-full-copy: Peter Enderborg's 2018 series, v3 ("selinux: Use RCU for the policydb"),
// which duplicated the whole policy for a boolean change by writing it out and reading it
// back, the approach Stephen Smalley objected to as far slower than duplicating only the
// conditional state.
//
// Reader: rcu_read_lock(); rcu_dereference(policy); the service; rcu_read_unlock().
// set_bools, option copy:
//   atomic (as the series did): policy_mutex, then spin_lock(&policy_write_lock) — preemption
//     off — around the whole copy: a buffer and the new policy allocated GFP_ATOMIC,
//     policydb_write of the current policy into the buffer, policydb_read of it back, the
//     buffer freed, audit_log(GFP_ATOMIC) per changed boolean (where the 4.17-era code it
//     changed logged them, inside the write section), new boolean states and
//     evaluate_cond_nodes on the copy, seqno + 1, rcu_assign_pointer; spin_unlock;
//   sleepable: the same under policy_mutex only, the buffer vmalloc'ed and the policy
//     allocated GFP_KERNEL, so the copy is preemptible.
//   Then synchronize_rcu (or the expedited one, option grace_period), free the whole old
//   policy, and the notification path of the kernels the series was written against (v4.17
//   to v5.9 set_bools: avc_ss_reset with its reset callbacks, whose network-cache flush ends
//   in synchronize_net, a second grace period; selnl_notify_policyload,
//   selinux_status_update_policyload, selinux_xfrm_notify_policyload; no NetLabel
//   invalidation; strategies/policy_notify.h). Where the series notified relative to its
//   grace period is not in the record; the order 5.10 merged (publish, wait, free, notify)
//   is used.
// load_policy: policy_mutex; read and convert outside; the swap under policy_write_lock in
//   the atomic variant (mutex only when sleepable); freeze the old SID table; grace period;
//   free; the full notification path (with NetLabel); selinuxfs's rebuild of its boolean and
//   class directories (sel_make_bools, sel_make_classes, sel_make_policycap) and its
//   AUDIT_MAC_POLICY_LOAD record. deny_unknown for the status page is read without a lock, as
//   those kernels do (the series' version of it is not in the record).
// Trades: readers never wait, but each toggle serialises and parses the entire policy (tens of
//   milliseconds on a distribution policy, with preemption off in the atomic variant) and
//   holds two whole policies until the grace period ends.
// Checked against: v4.15-era services.c/selinuxfs.c (stored copies), v5.9 as the removed lines of
//   the 5.10 patches, current services.c (torvalds 002903e1); docs/kernel-eras.md.
#include <memory>

#include "strategies/strategy.h"

namespace locksim::strategies {
namespace {

class RcuFullCopyServer final : public StrategyBase {
  public:
    RcuFullCopyServer(ss::PolicyState st, const CoreConfig &core, bool atomic, bool expedited)
        : StrategyBase("rcu-full-copy", std::move(st), core, true),
          atomic_(atomic),
          expedited_(expedited),
          policy_write_lock_("policy_write_lock") {}

  protected:
    int read_section(ReadFn fn) override { return rcu_read_section(fn); }

    int write_bools(std::span<const int> values, uint32_t *seqno) override {
        static const kernel::Label kCopy("policydb_full_copy");
        const kernel::Gfp gfp = atomic_ ? kernel::Gfp::Atomic : kernel::Gfp::Kernel;
        kernel::mutex_lock(policy_mutex_);
        if (atomic_) kernel::spin_lock(policy_write_lock_);
        PolicyVersion *old = policy_locked();
        int rc = static_cast<size_t>(old->st.db.cond->bools.nprim) == values.size() ? 0 : -EINVAL;
        PolicyVersion *next = nullptr;
        if (!rc) {
            // The buffer the policy is written into and read back from, sized as its image.
            // Freed on every way out, also when the run is torn down inside the copy.
            const auto bytes = static_cast<size_t>(old->image_bytes);
            auto release = [this](void *b) {
                if (atomic_)
                    kernel::kfree(b);
                else
                    kernel::vfree(b);
            };
            std::unique_ptr<void, decltype(release)> buf(
                atomic_ ? kernel::kmalloc(bytes, gfp) : kernel::vmalloc(bytes), release);
            // The core's copy (ss::set_bools_full_copy, the code calibrate and the benchmarks
            // time): policydb_write, policydb_read, the new states, seqno + 1. It keeps the
            // SID table.
            ss::PolicyState copy;
            rc = kernel::compute(kCopy,
                                 [&] { return ss::set_bools_full_copy(old->st, values, &copy); });
            buf.reset();
            if (!rc) {
                // The records of the changed booleans, from the states the old policy holds.
                PolicyNotifier::audit_bool_changes(*old->st.db.cond, values);
                next = new_version(std::move(copy), old->kmem, gfp);  // the same policy
                new_base_charge(next, old->image_bytes, gfp);
                *seqno = next->st.seqno;
                replace_policy(next);  // rcu_assign_pointer
            }
        }
        if (atomic_) kernel::spin_unlock(policy_write_lock_);
        if (next) {
            grace_period(expedited_);
            free_version(old);
            notify_policy_change(*seqno, PolicyChange::BoolsBefore510);
        }
        kernel::mutex_unlock(policy_mutex_);
        return rc;
    }

    int write_load(std::span<const uint8_t> image, uint32_t *seqno) override {
        return load_exclusive(
            image, seqno,
            [&](FunctionRef<void()> swap) {
                if (atomic_) kernel::spin_lock(policy_write_lock_);
                swap();
                if (atomic_) kernel::spin_unlock(policy_write_lock_);
            },
            {.grace_period = true, .expedited = expedited_, .freeze_in_section = true});
    }

  private:
    bool atomic_;
    bool expedited_;
    kernel::Spinlock policy_write_lock_;
};

}  // namespace

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo rcu_full_copy_strategy() {
    return {.name = "rcu-full-copy",
            .summary =
                "rcu_read_lock readers; set_bools deep-copies the whole policydb (write + "
                "read), publishes, synchronize_rcu, frees",
            .models = "Enderborg 2018 series, v3",
            .options = {{.name = "copy",
                         .type = ParamType::String,
                         .doc = "where the copy runs: 'atomic' (under a spinlock, preemption off, "
                                "atomic allocations, as the series did) or 'sleepable' (under a "
                                "mutex)",
                         .default_value = std::string("atomic"),
                         .choices = {"atomic", "sleepable"}},
                        grace_period_option()},
            .kernels = {"4.15", "5.9", "4.15"},
            .make = [](ss::PolicyState st, const CoreConfig &core,
                       const Params &options) -> std::unique_ptr<SecurityServer> {
                return std::make_unique<RcuFullCopyServer>(std::move(st), core,
                                                           options.get_string("copy") == "atomic",
                                                           expedited_grace_period(options));
            }};
}

}  // namespace locksim::strategies
