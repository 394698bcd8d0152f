// percpu-rwsem: not merged anywhere; the policy guarded by a per-CPU reader-writer semaphore
// (include/linux/percpu-rwsem.h, as cgroups and the freezer use it).
//
// Reader: percpu_down_read: while no writer is about (rcu_sync idle) a per-CPU counter
//   increment with preemption off for two instructions — no shared cache line, no atomic;
//   otherwise the slow path: count, and if a writer has blocked readers, uncount and sleep on
//   the semaphore until the writer is done. Then the service, preemptible and sleepable;
//   percpu_up_read decrements the counter of the CPU it runs on.
// set_bools: policy_mutex; percpu_down_write: rcu_sync_enter (synchronize_rcu the first time,
//   so every reader sees the slow path from then on), take the writer side (readers arriving
//   now sleep), block readers, wait until the per-CPU counts sum to zero; the update in place;
//   percpu_up_write (unblock, wake the sleepers; rcu_sync_exit lets readers back onto the fast
//   path after another grace period, by call_rcu); audit_log per changed boolean inside the
//   write section, as v5.9 logs them; then v5.9's notification path: avc_ss_reset (with its
//   reset callbacks and synchronize_net, one more grace period), selnl_notify_policyload,
//   selinux_status_update_policyload, selinux_xfrm_notify_policyload
//   (strategies/policy_notify.h); unmerged, so the kernel's notifications are kept as they
//   were and only the lock changes.
// load_policy: the same exclusive section, only for the swap; read and convert outside; the
//   old policy freed; the full notification path; selinuxfs's rebuild (booleans, classes,
//   policy capabilities) and its AUDIT_MAC_POLICY_LOAD record.
// Trades: readers nearly free and preemptible, but every write costs a grace period before it
//   can even start, readers block for the write, and a writer waits for the longest reader
//   (a get_user_sids) to drain.
// The semaphore is kernel/percpu_rwsem.h (with its simplifications).
// Checked against: v4.15-era services.c/selinuxfs.c (stored copies), v5.9 as the removed lines of
//   the 5.10 patches, current services.c (torvalds 002903e1); docs/kernel-eras.md.
#include "kernel/percpu_rwsem.h"
#include "strategies/strategy.h"

namespace locksim::strategies {
namespace {

class PercpuRwsemServer final : public StrategyBase {
  public:
    PercpuRwsemServer(ss::PolicyState st, const CoreConfig &core)
        : StrategyBase("percpu-rwsem", std::move(st), core, false),
          sem_("percpu_rwsem", platform_) {}

  protected:
    int read_section(ReadFn fn) override {
        kernel::percpu_down_read(sem_);
        int rc = fn(policy_locked()->st);
        kernel::percpu_up_read(sem_);
        return rc;
    }

    int write_bools(std::span<const int> values, uint32_t *seqno) override {
        return set_bools_exclusive(values, seqno, [&](FunctionRef<void()> update) {
            kernel::percpu_down_write(sem_);
            update();
            kernel::percpu_up_write(sem_);
        });
    }

    int write_load(std::span<const uint8_t> image, uint32_t *seqno) override {
        return load_exclusive(
            image, seqno,
            [&](FunctionRef<void()> swap) {
                kernel::percpu_down_write(sem_);
                swap();
                kernel::percpu_up_write(sem_);
            },
            false);
    }

  private:
    kernel::PercpuRwSemaphore sem_;
};

}  // namespace

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo percpu_rwsem_strategy() {
    return {.name = "percpu-rwsem",
            .summary =
                "per-CPU reader counts (readers nearly free, no shared cache line); a "
                "writer flips to the slow path, waits a grace period and for readers to "
                "drain, then holds it exclusively",
            .models = "unmerged: percpu_rw_semaphore as used by cgroups and freezing",
            .options = {},
            .kernels = {"4.15", "5.9", "5.9"},
            .make = make_without_options<PercpuRwsemServer>};
}

}  // namespace locksim::strategies
