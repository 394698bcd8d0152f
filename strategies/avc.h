// The access vector cache with the kernel's locking (security/selinux/avc.c), the same in front
// of every strategy:
//  - lookups walk a slot's chain under rcu_read_lock, copying the decision out;
//  - a miss computes the decision through the security server (the strategy's read section)
//    after leaving the RCU section, then inserts it: node allocation (GFP_NOWAIT), reclaim of
//    16 nodes from a rotating slot hint (spin_trylock_irqsave per slot) when the count passes
//    the threshold, the seqno check under the global notif_lock, and the chain update under
//    the slot's spinlock with interrupts off; a replaced or reclaimed node is freed by call_rcu;
//  - avc_ss_reset on a policy change takes every slot lock in turn and deletes every node, then
//    runs the reset callbacks (strategies/policy_notify.h) and records the new seqno.
// CoreConfig::avc_lock selects older designs for comparison: AvcLock::Spinlock puts lookup and
// every update under one global spinlock taken with interrupts off (2.6.9's avc_lock);
// AvcLock::Rwlock puts lookups under the read side of one global rwlock and updates under its
// write side (the intermediate variant of KaiGai Kohei's 2004 measurements). In both, the chain
// walks and node lifetimes are the same as with RCU; only the locking differs.
// Every chain walk is charged with kernel::compute(), so a flush followed by a miss storm is
// simulated, not assumed. Misses that refill what a flush removed run as the operation
// "avc_refill", other misses as "avc_miss".
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "kernel/primitives.h"
#include "strategies/rcu_reclaim.h"
#include "strategies/security_server.h"

namespace locksim::strategies {

class Avc {
  public:
    // Misses compute through `server`'s compute_av. Locks are created on `platform`.
    // core.avc_slots must be a power of two (the hash masks with slots - 1): a scenario's is
    // checked where it is read; another here is a CoreConfig built wrong in code
    // (std::invalid_argument).
    Avc(SecurityServer &server, const CoreConfig &core, kernel::Platform &platform);
    ~Avc();  // frees every node; the platform must be current
    Avc(const Avc &) = delete;
    Avc &operator=(const Avc &) = delete;

    // avc_has_perm_noaudit: 0 or -EACCES; `avd` receives the decision.
    int has_perm_noaudit(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested,
                         unsigned flags, ss::AvDecision *avd);
    // avc_has_perm: the same plus the audit decision (the audit variant of CoreConfig).
    int has_perm(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested,
                 ss::AvDecision *avd);
    // avc_ss_reset: flush every slot (avc_flush), run the reset callbacks, then record the new
    // seqno (avc_latest_notif_update), as security/selinux/avc.c does.
    void ss_reset(uint32_t seqno, FunctionRef<void()> reset_callbacks);

    ss::AvcStats stats() const;
    uint32_t slots() const { return static_cast<uint32_t>(slots_.size()); }

  private:
    struct Node {
        uint32_t ssid = 0;
        uint32_t tsid = 0;
        uint16_t tclass = 0;
        ss::AvDecision avd;
        kernel::RcuPointer<Node> next;
    };
    using Slot = kernel::RcuPointer<Node>;

    uint32_t hash(uint32_t ssid, uint32_t tsid, uint32_t tclass) const;
    bool latest_notif_update(uint32_t seqno, bool is_insert);
    void compute_and_insert(uint32_t ssid, uint32_t tsid, uint32_t tclass, ss::AvDecision *avd);
    void insert(uint32_t ssid, uint32_t tsid, uint32_t tclass, const ss::AvDecision &avd);
    void update_node_grant(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t perms,
                           uint32_t seqno);
    Node *alloc_node();
    void reclaim_node();
    void node_delete(Node *n);  // hlist_del_rcu already done: count it and free by call_rcu
    void node_free(Node *n);
    // The update side of slot h: its spinlock, or the global lock (IRQs saved and disabled).
    unsigned long update_lock(uint32_t h);
    void update_unlock(uint32_t h, unsigned long flags);
    bool update_trylock(uint32_t h);  // interrupts already off
    void update_unlock_noirq(uint32_t h);

    SecurityServer &server_;
    ss::AvcConfig cfg_;
    uint32_t threshold_;
    kernel::Platform &platform_;
    std::vector<Slot> slots_;
    AvcLock lock_mode_;
    std::deque<kernel::Spinlock> locks_;  // AvcLock::Rcu: one per slot, lock class "avc_slot"
    std::optional<kernel::Spinlock> global_spin_;  // AvcLock::Spinlock: "avc_lock"
    std::optional<kernel::RwLock> global_rw_;      // AvcLock::Rwlock: "avc_rwlock"
    kernel::Spinlock notif_lock_;
    uint32_t latest_notif_ = 0;  // under notif_lock_
    std::atomic<uint32_t> active_nodes_{0};
    std::atomic<uint32_t> lru_hint_{0};
    std::atomic<int64_t> refill_left_{0};
    RcuReclaimer reclaim_;

    struct Counters {
        std::atomic<uint64_t> hits{0}, misses{0}, allocations{0}, reclaims{0}, frees{0},
            stale_inserts{0}, audits{0};
    };
    Counters n_;
};

}  // namespace locksim::strategies
