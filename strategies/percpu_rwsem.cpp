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
#include "strategies/reader_writer.h"

namespace locksim::strategies {
namespace {

// A per-CPU reader-writer semaphore (kernel/percpu_rwsem.h).
struct PolicyPercpuRwsem {
    static constexpr const char *kName = "percpu-rwsem";
    explicit PolicyPercpuRwsem(kernel::Platform &p) : sem("percpu_rwsem", p) {}
    void read_lock() { kernel::percpu_down_read(sem); }
    void read_unlock() { kernel::percpu_up_read(sem); }
    void write_lock() { kernel::percpu_down_write(sem); }
    void write_unlock() { kernel::percpu_up_write(sem); }
    kernel::PercpuRwSemaphore sem;
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
            .make = make_without_options<ReaderWriterServer<PolicyPercpuRwsem>>};
}

}  // namespace locksim::strategies
