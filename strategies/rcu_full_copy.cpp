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
//     buffer freed, new boolean states and evaluate_cond_nodes on the copy, seqno + 1,
//     rcu_assign_pointer; spin_unlock;
//   sleepable: the same under policy_mutex only, the buffer vmalloc'ed and the policy
//     allocated GFP_KERNEL, so the copy is preemptible.
//   Then avc_ss_reset, synchronize_rcu (or the expedited one, option grace_period), free the
//   whole old policy.
// load_policy: policy_mutex; read and convert outside; the swap under policy_write_lock in
//   the atomic variant (mutex only when sleepable); freeze the old SID table; avc_ss_reset;
//   grace period; free.
// Trades: readers never wait, but each toggle serialises and parses the entire policy (tens of
//   milliseconds on a distribution policy, with preemption off in the atomic variant) and
//   holds two whole policies until the grace period ends.
#include <algorithm>

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
        static const kernel::Label kWrite("policydb_write");
        static const kernel::Label kRead("policydb_read");
        static const kernel::Label kSet("cond_set_bools");
        const kernel::Gfp gfp = atomic_ ? kernel::Gfp::Atomic : kernel::Gfp::Kernel;
        kernel::mutex_lock(policy_mutex_);
        if (atomic_) kernel::spin_lock(policy_write_lock_);
        PolicyVersion *old = policy_locked();
        int rc = static_cast<size_t>(old->st.db.cond->bools.nprim) == values.size() ? 0 : -EINVAL;
        PolicyVersion *next = nullptr;
        if (!rc) {
            const uint32_t version = std::max<uint32_t>(old->st.db.version(), 24);
            std::vector<uint8_t> image =
                kernel::compute(kWrite, [&] { return ss::policydb_write(old->st.db, version); });
            // The buffer the image lives in while it is read back.
            void *buf =
                atomic_ ? kernel::kmalloc(image.size(), gfp) : kernel::vmalloc(image.size());
            ss::PolicyState copy = old->st;  // keeps the SID table
            copy.db = kernel::compute(kRead, [&] { return ss::policydb_read(image, "copy"); });
            if (atomic_)
                kernel::kfree(buf);
            else
                kernel::vfree(buf);
            kernel::compute(kSet, [&] {
                ss::cond_set_bools(*copy.db.cond, values);
                ++copy.seqno;
            });
            next = new_version(std::move(copy), gfp);
            new_base_charge(next, static_cast<int64_t>(image.size()), gfp);
            *seqno = next->st.seqno;
            replace_policy(next);  // rcu_assign_pointer
        }
        if (atomic_) kernel::spin_unlock(policy_write_lock_);
        if (next) {
            notify_policy_change(*seqno);
            grace_period(expedited_);
            free_version(old);
        }
        kernel::mutex_unlock(policy_mutex_);
        return rc;
    }

    int write_load(std::span<const uint8_t> image, uint32_t *seqno) override {
        kernel::mutex_lock(policy_mutex_);
        PolicyVersion *old = policy_locked();
        int rc;
        if (PolicyVersion *next = prepare_load(image, *old, &rc)) {
            if (atomic_) kernel::spin_lock(policy_write_lock_);
            commit_load(*old, [&] { replace_policy(next); });
            *seqno = next->st.seqno;
            if (atomic_) kernel::spin_unlock(policy_write_lock_);
            notify_policy_change(*seqno);
            grace_period(expedited_);
            free_version(old);
        }
        kernel::mutex_unlock(policy_mutex_);
        return rc;
    }

  private:
    bool atomic_;
    bool expedited_;
    kernel::Spinlock policy_write_lock_;
};

}  // namespace

std::unique_ptr<StrategyBase> make_rcu_full_copy(ss::PolicyState st, const CoreConfig &core,
                                                 const Params &options) {
    return std::make_unique<RcuFullCopyServer>(std::move(st), core,
                                               options.get_string("copy") == "atomic",
                                               expedited_grace_period(options));
}

}  // namespace locksim::strategies
