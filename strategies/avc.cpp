#include "strategies/avc.h"

#include <cerrno>
#include <stdexcept>

#include "record/op_names.h"

namespace locksim::strategies {

using kernel::Label;
using locksim::count_work;
using locksim::Work;

namespace {

const Label &label_lookup() {
    static const Label l("avc_lookup");
    return l;
}

// hlist_add_head_rcu / hlist_del_rcu / hlist_replace_rcu: the chain links are RCU pointers;
// the platform is told what becomes reachable and what stops being reachable, so that a free
// before the grace period is caught.
template <class N>
void publish_node(kernel::RcuPointer<N> &link, N *node) {
    link.raw().store(node, std::memory_order_release);
    kernel::current().rcu_published(nullptr, node);
}
template <class N>
void unlink_node(kernel::RcuPointer<N> &link, N *node) {
    link.raw().store(kernel::rcu_dereference_protected(node->next), std::memory_order_release);
    kernel::current().rcu_published(node, nullptr);
}

}  // namespace

Avc::Avc(SecurityServer &server, const CoreConfig &core, kernel::Platform &platform)
    : server_(server),
      cfg_(core.avc),
      threshold_(core.avc_threshold),
      platform_(platform),
      slots_(core.avc_slots),
      lock_mode_(core.avc_lock),
      notif_lock_("avc_notif", platform) {
    if (core.avc_slots == 0 || (core.avc_slots & (core.avc_slots - 1)))
        throw std::invalid_argument("AVC slot count must be a power of two");
    switch (lock_mode_) {
        case AvcLock::Rcu:
            for (uint32_t i = 0; i < core.avc_slots; ++i)
                locks_.emplace_back("avc_slot", platform);
            break;
        case AvcLock::Spinlock:
            global_spin_.emplace("avc_lock", platform);
            break;
        case AvcLock::Rwlock:
            global_rw_.emplace("avc_rwlock", platform);
            break;
    }
}

unsigned long Avc::update_lock(uint32_t h) {
    switch (lock_mode_) {
        case AvcLock::Spinlock:
            return kernel::spin_lock_irqsave(*global_spin_);
        case AvcLock::Rwlock:
            return kernel::write_lock_irqsave(*global_rw_);
        case AvcLock::Rcu:
            break;
    }
    return kernel::spin_lock_irqsave(locks_[h]);
}

void Avc::update_unlock(uint32_t h, unsigned long flags) {
    switch (lock_mode_) {
        case AvcLock::Spinlock:
            return kernel::spin_unlock_irqrestore(*global_spin_, flags);
        case AvcLock::Rwlock:
            return kernel::write_unlock_irqrestore(*global_rw_, flags);
        case AvcLock::Rcu:
            break;
    }
    kernel::spin_unlock_irqrestore(locks_[h], flags);
}

bool Avc::update_trylock(uint32_t h) {
    switch (lock_mode_) {
        case AvcLock::Spinlock:
            return kernel::spin_trylock(*global_spin_);
        case AvcLock::Rwlock:
            return kernel::write_trylock(*global_rw_);
        case AvcLock::Rcu:
            break;
    }
    return kernel::spin_trylock(locks_[h]);
}

void Avc::update_unlock_noirq(uint32_t h) {
    switch (lock_mode_) {
        case AvcLock::Spinlock:
            return kernel::spin_unlock(*global_spin_);
        case AvcLock::Rwlock:
            return kernel::write_unlock(*global_rw_);
        case AvcLock::Rcu:
            break;
    }
    kernel::spin_unlock(locks_[h]);
}

Avc::~Avc() {
    kernel::PlatformScope scope(platform_);
    reclaim_.flush();
    for (Slot &s : slots_) {
        Node *n = kernel::rcu_dereference_protected(s);
        while (n) {
            Node *next = kernel::rcu_dereference_protected(n->next);
            platform_.rcu_published(n, nullptr);
            kernel::kdelete(n);
            n = next;
        }
    }
}

uint32_t Avc::hash(uint32_t ssid, uint32_t tsid, uint32_t tclass) const {
    return (ssid ^ (tsid << 2) ^ (tclass << 4)) & static_cast<uint32_t>(slots_.size() - 1);
}

ss::AvcStats Avc::stats() const {
    ss::AvcStats s;
    s.hits = n_.hits;
    s.misses = n_.misses;
    s.lookups = s.hits + s.misses;
    s.allocations = n_.allocations;
    s.reclaims = n_.reclaims;
    s.frees = n_.frees;
    s.stale_inserts = n_.stale_inserts;
    s.audits = n_.audits;
    return s;
}

// avc_latest_notif_update, under the global notif_lock.
bool Avc::latest_notif_update(uint32_t seqno, bool is_insert) {
    unsigned long flags = kernel::spin_lock_irqsave(notif_lock_);
    bool stale = false;
    if (is_insert)
        stale = seqno < latest_notif_;
    else if (seqno > latest_notif_)
        latest_notif_ = seqno;
    kernel::spin_unlock_irqrestore(notif_lock_, flags);
    return stale;
}

void Avc::node_free(Node *n) {
    kernel::kdelete(n);
    ++n_.frees;
}

void Avc::node_delete(Node *n) {
    --active_nodes_;
    reclaim_.defer([this, n] { node_free(n); });
}

// avc_reclaim_node: up to 16 nodes, slot by slot from the rotating hint, skipping slots whose
// lock is busy.
void Avc::reclaim_node() {
    static const Label kReclaim("avc_reclaim");
    const uint32_t mask = static_cast<uint32_t>(slots_.size() - 1);
    uint32_t freed = 0;
    std::vector<Node *> victims;  // one slot's; its storage is reused from slot to slot
    for (uint32_t tries = 0; tries < slots_.size(); ++tries) {
        uint32_t h = (++lru_hint_) & mask;
        unsigned long flags = kernel::local_irq_save();
        if (!update_trylock(h)) {
            kernel::local_irq_restore(flags);
            continue;
        }
        kernel::rcu_read_lock();
        victims.clear();
        kernel::compute(kReclaim, [&] {
            Slot &head = slots_[h];
            while (Node *n = kernel::rcu_dereference_protected(head)) {
                count_work(Work::HashProbe);
                unlink_node(head, n);
                victims.push_back(n);
                if (freed + victims.size() >= ss::kAvcCacheReclaim) break;
            }
        });
        for (Node *n : victims)
            node_delete(n);
        freed += static_cast<uint32_t>(victims.size());
        n_.reclaims += victims.size();
        kernel::rcu_read_unlock();
        update_unlock_noirq(h);
        kernel::local_irq_restore(flags);
        if (freed >= ss::kAvcCacheReclaim) return;
    }
}

// avc_alloc_node: GFP_NOWAIT, then reclaim when the count passes the threshold.
Avc::Node *Avc::alloc_node() {
    Node *n = kernel::knew<Node>(kernel::Gfp::Atomic);
    ++n_.allocations;
    if (++active_nodes_ > threshold_) reclaim_node();
    return n;
}

void Avc::insert(uint32_t ssid, uint32_t tsid, uint32_t tclass, const ss::AvDecision &avd) {
    static const Label kInsert("avc_insert");
    if (latest_notif_update(avd.seqno, true)) {
        ++n_.stale_inserts;
        return;
    }
    Node *node = alloc_node();
    node->ssid = ssid;
    node->tsid = tsid;
    node->tclass = static_cast<uint16_t>(tclass);
    node->avd = avd;
    const uint32_t h = hash(ssid, tsid, tclass);
    unsigned long flags = update_lock(h);
    Node *replaced = kernel::compute(kInsert, [&]() -> Node * {
        for (Slot *link = &slots_[h];;) {
            Node *pos = kernel::rcu_dereference_protected(*link);
            if (!pos) break;
            count_work(Work::HashProbe);
            if (pos->ssid == ssid && pos->tsid == tsid && pos->tclass == tclass) {
                node->next.raw().store(kernel::rcu_dereference_protected(pos->next));
                publish_node(*link, node);  // avc_node_replace
                platform_.rcu_published(pos, nullptr);
                return pos;
            }
            link = &pos->next;
        }
        node->next.raw().store(kernel::rcu_dereference_protected(slots_[h]));
        publish_node(slots_[h], node);
        return nullptr;
    });
    if (replaced) node_delete(replaced);
    update_unlock(h, flags);
}

// avc_update_node(AVC_CALLBACK_GRANT): a permissive domain's denial is granted in the cache by
// replacing the node with a copy that allows it.
void Avc::update_node_grant(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t perms,
                            uint32_t seqno) {
    static const Label kUpdate("avc_update_node");
    Node *node = alloc_node();
    const uint32_t h = hash(ssid, tsid, tclass);
    unsigned long flags = update_lock(h);
    Node *old = kernel::compute(kUpdate, [&]() -> Node * {
        for (Slot *link = &slots_[h];;) {
            Node *pos = kernel::rcu_dereference_protected(*link);
            if (!pos) return nullptr;
            count_work(Work::HashProbe);
            if (pos->ssid == ssid && pos->tsid == tsid && pos->tclass == tclass &&
                pos->avd.seqno == seqno) {
                node->ssid = ssid;
                node->tsid = tsid;
                node->tclass = pos->tclass;
                node->avd = pos->avd;
                node->avd.allowed |= perms;
                node->next.raw().store(kernel::rcu_dereference_protected(pos->next));
                publish_node(*link, node);
                platform_.rcu_published(pos, nullptr);
                return pos;
            }
            link = &pos->next;
        }
    });
    update_unlock(h, flags);
    if (old) {
        node_delete(old);
    } else {
        --active_nodes_;
        node_free(node);  // never published
    }
}

void Avc::compute_and_insert(uint32_t ssid, uint32_t tsid, uint32_t tclass, ss::AvDecision *avd) {
    static const Label kRefill(kernel::op::kAvcRefill);
    static const Label kMiss(kernel::op::kAvcMiss);
    bool refill = false;
    for (int64_t left = refill_left_.load(); left > 0;)
        if (refill_left_.compare_exchange_weak(left, left - 1)) {
            refill = true;
            break;
        }
    kernel::OpScope op(refill ? kRefill : kMiss);
    if (server_.compute_av(ssid, tsid, tclass, avd)) *avd = ss::AvDecision{};  // deny all
    insert(ssid, tsid, tclass, *avd);
}

int Avc::has_perm_noaudit(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested,
                          unsigned flags, ss::AvDecision *avd) {
    static const Label kDenied("avc_denied");
    const uint32_t h = hash(ssid, tsid, tclass);
    // The chain is walked under RCU, or under the global lock of the older designs (then the
    // links are read as the update side reads them).
    const bool rcu = lock_mode_ == AvcLock::Rcu;
    unsigned long irq = 0;
    if (rcu)
        kernel::rcu_read_lock();
    else if (lock_mode_ == AvcLock::Spinlock)
        irq = kernel::spin_lock_irqsave(*global_spin_);
    else
        irq = kernel::read_lock_irqsave(*global_rw_);
    auto deref = [rcu](const Slot &link) {
        return rcu ? kernel::rcu_dereference(link) : kernel::rcu_dereference_protected(link);
    };
    Node *head = deref(slots_[h]);
    bool hit = kernel::compute(label_lookup(), [&] {
        // avc_has_perm -> avc_has_perm_noaudit -> avc_lookup when nothing is inlined.
        if (cfg_.path == ss::AvcPath::OutOfLine) count_work(Work::Call, 2);
        for (Node *n = head; n; n = deref(n->next)) {
            count_work(Work::HashProbe);
            if (n->ssid == ssid && n->tsid == tsid && n->tclass == tclass) {
                *avd = n->avd;
                return true;
            }
        }
        return false;
    });
    if (rcu)
        kernel::rcu_read_unlock();
    else if (lock_mode_ == AvcLock::Spinlock)
        kernel::spin_unlock_irqrestore(*global_spin_, irq);
    else
        kernel::read_unlock_irqrestore(*global_rw_, irq);
    if (hit) {  // a lookup: counted as a hit or a miss
        ++n_.hits;
    } else {
        ++n_.misses;
        compute_and_insert(ssid, tsid, tclass, avd);  // avc_compute_av, out of line
    }
    uint32_t denied = requested & ~avd->allowed;
    if (!denied) return 0;
    // avc_denied (out of line)
    kernel::stand_in(kDenied, [] { count_work(Work::Call); });
    if (flags & ss::AVC_STRICT) return -EACCES;
    if (cfg_.enforcing && !(avd->flags & ss::AVD_FLAGS_PERMISSIVE)) return -EACCES;
    update_node_grant(ssid, tsid, tclass, requested, avd->seqno);
    return 0;
}

int Avc::has_perm(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested,
                  ss::AvDecision *avd) {
    static const Label kAudit("avc_audit");
    int rc = has_perm_noaudit(ssid, tsid, tclass, requested, 0, avd);
    uint32_t denied;
    const bool due = ss::avc_audit_required(requested, *avd, rc, &denied) != 0;
    if (due || cfg_.audit == ss::AvcAudit::Always) {
        // Before 2007 avc_audit was always called and decided inside (2.6.22: a few tests on
        // the decision, then an early return when nothing is to be logged); since, only when
        // a record is due. The audit work is the record's.
        kernel::stand_in(kAudit, [&] {
            count_work(Work::Call);
            if (due) count_work(Work::AuditCall);
        });
        if (due) ++n_.audits;
    }
    return rc;
}

void Avc::ss_reset(uint32_t seqno, FunctionRef<void()> reset_callbacks) {
    static const Label kFlush("avc_flush");
    int64_t flushed = 0;
    for (uint32_t i = 0; i < slots_.size(); ++i) {
        unsigned long flags = update_lock(i);
        kernel::rcu_read_lock();
        std::vector<Node *> gone;
        kernel::compute(kFlush, [&] {
            count_work(Work::HashProbe);  // the slot head
            while (Node *n = kernel::rcu_dereference_protected(slots_[i])) {
                count_work(Work::HashProbe);
                unlink_node(slots_[i], n);
                gone.push_back(n);
            }
        });
        for (Node *n : gone)
            node_delete(n);
        flushed += static_cast<int64_t>(gone.size());
        kernel::rcu_read_unlock();
        update_unlock(i, flags);
    }
    refill_left_ = flushed;  // the misses from now on refill what the flush removed
    reset_callbacks();
    latest_notif_update(seqno, false);
}

}  // namespace locksim::strategies
