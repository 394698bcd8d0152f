// rwsem: Peter Enderborg's 2018 series, v1 (policy_rwlock turned into a sleeping
// reader-writer semaphore).
//
// Reader: down_read(&policy_rwsem) around every read-side service: sleeping, preemptible; a
//   reader that finds a writer holding or waiting sleeps until the writer is done.
// set_bools: the v4.17-v5.9 code with the lock replaced: policy_mutex, then
//   down_write(&policy_rwsem) for the whole update in place (audit_log per changed boolean,
//   states, evaluate_cond_nodes, seqno); readers sleep while it runs; after up_write the
//   notification path of those kernels: avc_ss_reset (with its reset callbacks and
//   synchronize_net, one grace period), selnl_notify_policyload,
//   selinux_status_update_policyload, selinux_xfrm_notify_policyload
//   (strategies/policy_notify.h).
// load_policy: policy_mutex; policydb_read and the SID table conversion outside; down_write
//   only for the swap; the old policy freed at once; the full notification path (with
//   NetLabel); selinuxfs's rebuild of its boolean, class and policy capability files and its
//   AUDIT_MAC_POLICY_LOAD record.
// Trades: no preempt-off reader section, but readers still block for every write (and pay a
//   sleep and a wake-up when they do); read-side calls from atomic context become impossible.
// Checked against: v4.15-era services.c/selinuxfs.c (stored copies), v5.9 as the removed lines of
//   the 5.10 patches, current services.c (torvalds 002903e1); docs/kernel-eras.md.
#include "strategies/reader_writer.h"

namespace locksim::strategies {
namespace {

// policy_rwsem: a sleeping reader-writer semaphore.
struct PolicyRwsem {
    static constexpr const char *kName = "rwsem";
    explicit PolicyRwsem(kernel::Platform &p) : policy_rwsem("policy_rwsem", p) {}
    void read_lock() { kernel::down_read(policy_rwsem); }
    void read_unlock() { kernel::up_read(policy_rwsem); }
    void write_lock() { kernel::down_write(policy_rwsem); }
    void write_unlock() { kernel::up_write(policy_rwsem); }
    kernel::RwSem policy_rwsem;
};

}  // namespace

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo rwsem_strategy() {
    return {.name = "rwsem",
            .summary =
                "down_read (sleeping, preemptible) around every read; set_bools under "
                "down_write",
            .models = "Enderborg 2018 series, v1",
            .options = {},
            .kernels = {"4.15", "5.9", "4.15"},
            .make = make_without_options<ReaderWriterServer<PolicyRwsem>>};
}

}  // namespace locksim::strategies
