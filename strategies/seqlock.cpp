// seqlock: not merged anywhere; readers run without taking any lock and retry when a writer
// overlapped them (include/linux/seqlock.h: read_seqbegin / read_seqretry, with
// read_seqlock_excl as the fallback; the seqlock and its barriers are kernel/seqlock.h).
//
// Reader: rcu_read_lock (so a policy replaced by a load is freed only after a grace period);
//   then up to max_retries times: read_seqbegin (spinning preemptibly while a write is in
//   progress), rcu_dereference(policy), the service, read_seqretry; after max_retries
//   overlapped attempts, read_seqlock_excl — the writer's spinlock, preemption off — around
//   the service; rcu_read_unlock.
// set_bools: the v5.9 code with the lock replaced: policy_mutex; write_seqlock (spinlock,
//   preemption off, sequence odd) around the update in place, audit_log per changed boolean
//   included (where v5.9 has it, inside the write section); write_sequnlock; then v5.9's
//   notification path: avc_ss_reset (with its reset callbacks and synchronize_net, one grace
//   period), selnl_notify_policyload, selinux_status_update_policyload,
//   selinux_xfrm_notify_policyload (strategies/policy_notify.h). Nothing was ever posted for
//   this design; keeping the kernel's notifications as they were is the choice that changes
//   only the lock.
// load_policy: policy_mutex; read and convert outside; write_seqlock only for the swap;
//   freeze the old SID table; synchronize_rcu; free the old policy (5.10's order); the full
//   notification path; selinuxfs's rebuild of its boolean, class and policy capability files
//   and its AUDIT_MAC_POLICY_LOAD record.
// Trades: readers never block a writer and the write section is short (no copy at all), but a
//   reader redoes its whole lookup when a toggle overlaps it (a long get_user_sids may retry
//   until it falls back to the lock and holds preemption off for its whole length), and the
//   policy code must survive reading a half-updated policy before the retry — the kernel's
//   policydb code was never written for that. (The simulation runs each lookup atomically on
//   the host, so it shows the retries and their cost, not torn reads.)
// Checked against: v4.15-era services.c/selinuxfs.c (stored copies), v5.9 as the removed lines of
//   the 5.10 patches, current services.c (torvalds 002903e1); docs/kernel-eras.md.
#include "kernel/seqlock.h"
#include "strategies/strategy.h"
#include "util/sanitizers.h"

#if LOCKSIM_TSAN
extern "C" void AnnotateIgnoreReadsBegin(const char *file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char *file, int line);
#endif

namespace locksim::strategies {
namespace {

// The optimistic read races with the writer by design (KCSAN's data_race()); its result is
// used only when read_seqretry says no write overlapped. Tell ThreadSanitizer so on real threads.
template <class F>
int racy_read(F &&f) {
#if LOCKSIM_TSAN
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    int rc = f();
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    return rc;
#else
    return f();
#endif
}

class SeqlockServer final : public StrategyBase {
  public:
    SeqlockServer(ss::PolicyState st, const CoreConfig &core, int64_t max_retries)
        : StrategyBase("seqlock", std::move(st), core, true),
          max_retries_(max_retries),
          lock_("policy_seqlock") {}

  protected:
    int read_section(ReadFn fn) override {
        kernel::rcu_read_lock();
        int rc = 0;
        for (int64_t tries = 0;; ++tries) {
            if (tries == max_retries_) {  // read_seqlock_excl
                kernel::read_seqlock_excl(lock_);
                rc = fn(policy_rcu()->st);
                kernel::read_sequnlock_excl(lock_);
                break;
            }
            uint64_t seq = kernel::read_seqbegin(lock_);
            PolicyVersion *p = policy_rcu();
            rc = racy_read([&] { return fn(p->st); });
            if (!kernel::read_seqretry(lock_, seq)) break;
        }
        kernel::rcu_read_unlock();
        return rc;
    }

    int write_bools(std::span<const int> values, uint32_t *seqno) override {
        return set_bools_exclusive(values, seqno, [&](FunctionRef<void()> update) {
            kernel::write_seqlock(lock_);
            update();
            kernel::write_sequnlock(lock_);
        });
    }

    int write_load(std::span<const uint8_t> image, uint32_t *seqno) override {
        return load_exclusive(image, seqno,
                              [&](FunctionRef<void()> swap) {
                                  kernel::write_seqlock(lock_);
                                  swap();
                                  kernel::write_sequnlock(lock_);
                              },
                              {.grace_period = true});
    }

  private:
    int64_t max_retries_;
    kernel::Seqlock lock_;
};

}  // namespace

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo seqlock_strategy() {
    return {.name = "seqlock",
            .summary =
                "readers run without a lock and retry if a writer overlapped (seqcount); "
                "set_bools updates in place under the write seqlock",
            .models = "unmerged: read_seqbegin / read_seqretry around the services",
            .options = {{.name = "max_retries",
                         .type = ParamType::Int,
                         .doc = "retries before a reader falls back to taking the lock",
                         .default_value = int64_t{8},
                         .min = 1,
                         .max = 1000}},
            .kernels = {"4.15", "5.9", "5.9"},
            .make = [](ss::PolicyState st, const CoreConfig &core,
                       const Params &options) -> std::unique_ptr<SecurityServer> {
                return std::make_unique<SeqlockServer>(std::move(st), core,
                                                       options.get_int("max_retries"));
            }};
}

}  // namespace locksim::strategies
