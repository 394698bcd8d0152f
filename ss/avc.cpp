#include "ss/avc.h"

#include <cerrno>

namespace locksim::ss {

AvcCache::~AvcCache() {
    for (AvcNode *&head : slots) {
        while (head) {
            AvcNode *next = head->next;
            delete head;
            head = next;
        }
    }
}

bool avc_latest_notif_update(AvcCache &avc, uint32_t seqno, bool is_insert) {
    if (is_insert) return seqno < avc.latest_notif;
    if (seqno > avc.latest_notif) avc.latest_notif = seqno;
    return false;
}

void avc_node_free(AvcCache &avc, AvcNode *node) {
    count_work(Work::Free);
    delete node;
    --avc.active_nodes;
    ++avc.stats.frees;
}

uint32_t avc_reclaim_node(AvcCache &avc) {
    uint32_t freed = 0;
    for (uint32_t tries = 0; tries < kAvcCacheSlots; ++tries) {
        uint32_t slot = ++avc.lru_hint & (kAvcCacheSlots - 1);
        AvcNode *&head = avc.slots[slot];
        avc.touch_slot(slot);
        while (head) {
            count_work(Work::HashProbe);
            AvcNode *victim = head;
            avc.touch_node(*victim);
            head = victim->next;
            avc_node_free(avc, victim);
            ++avc.stats.reclaims;
            if (++freed >= kAvcCacheReclaim) return freed;
        }
    }
    return freed;
}

AvcNode *avc_alloc_node(AvcCache &avc) {
    count_work(Work::Alloc);
    auto *node = new AvcNode;
    node->line = ++avc.nodes_made;
    avc.touch_node(*node, Access::Written);
    ++avc.stats.allocations;
    if (++avc.active_nodes > avc.threshold) avc_reclaim_node(avc);
    return node;
}

AvcNode *avc_insert(AvcCache &avc, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                    const AvDecision &avd) {
    if (avc_latest_notif_update(avc, avd.seqno, true)) {
        ++avc.stats.stale_inserts;
        return nullptr;
    }
    AvcNode *node = avc_alloc_node(avc);
    node->ssid = ssid;
    node->tsid = tsid;
    node->tclass = static_cast<uint16_t>(tclass);
    node->avd = avd;
    const uint32_t slot = avc_hash(ssid, tsid, tclass);
    AvcNode **link = &avc.slots[slot];
    avc.touch_slot(slot);
    for (AvcNode **p = link; *p; p = &(*p)->next) {
        count_work(Work::HashProbe);
        AvcNode *pos = *p;
        avc.touch_node(*pos);
        if (pos->ssid == ssid && pos->tsid == tsid && pos->tclass == tclass) {
            node->next = pos->next;  // replace in place
            *p = node;
            avc_node_free(avc, pos);
            return node;
        }
    }
    node->next = *link;
    *link = node;
    return node;
}

bool avc_update_node_grant(AvcCache &avc, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                           uint32_t perms, uint32_t seqno) {
    AvcNode *n = avc_search_slot(avc, avc_hash(ssid, tsid, tclass), ssid, tsid, tclass);
    if (!n || n->avd.seqno != seqno) return false;
    n->avd.allowed |= perms;
    return true;
}

void avc_flush(AvcCache &avc) {
    for (uint32_t slot = 0; slot < kAvcCacheSlots; ++slot) {
        AvcNode *&head = avc.slots[slot];
        avc.touch_slot(slot);
        while (head) {
            avc.touch_node(*head);
            AvcNode *next = head->next;
            avc_node_free(avc, head);
            head = next;
        }
    }
}

void avc_ss_reset(AvcCache &avc, uint32_t seqno) {
    avc_flush(avc);
    avc_latest_notif_update(avc, seqno, false);
}

uint32_t avc_node_count(const AvcCache &avc) {
    uint32_t n = 0;
    for (const AvcNode *head : avc.slots)
        for (const AvcNode *p = head; p; p = p->next)
            ++n;
    return n;
}

namespace {

[[gnu::noinline]] AvcNode *avc_lookup_call(AvcCache &avc, uint32_t ssid, uint32_t tsid,
                                           uint32_t tclass) {
    count_work(Work::Call);
    return avc_lookup(avc, ssid, tsid, tclass);
}

// The miss path, out of line in both variants (the kernel's noinline avc_compute_av).
[[gnu::noinline]] void avc_compute_av(AvcCache &avc, const PolicyState &st, uint32_t ssid,
                                      uint32_t tsid, uint32_t tclass, AvDecision *avd) {
    count_work(Work::Call);
    compute_av(st, ssid, tsid, tclass, avd);
    avc_insert(avc, ssid, tsid, tclass, *avd);
}

[[gnu::noinline]] int avc_denied(AvcCache &avc, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                                 uint32_t requested, unsigned flags, const AvDecision &avd,
                                 const AvcConfig &cfg) {
    count_work(Work::Call);
    if (flags & AVC_STRICT) return -EACCES;
    if (cfg.enforcing && !(avd.flags & AVD_FLAGS_PERMISSIVE)) return -EACCES;
    avc_update_node_grant(avc, ssid, tsid, tclass, requested, avd.seqno);
    return 0;
}

[[gnu::noinline]] void slow_avc_audit(AvcCache &avc) {
    count_work(Work::Call);
    count_work(Work::AuditCall);
    ++avc.stats.audits;
}

// The pre-2007 avc_audit: always called, decides inside; the audit work only for a record.
[[gnu::noinline]] uint32_t avc_audit_call(AvcCache &avc, uint32_t requested, const AvDecision &avd,
                                          int result) {
    count_work(Work::Call);
    uint32_t denied;
    uint32_t audited = avc_audit_required(requested, avd, result, &denied);
    if (audited) {
        count_work(Work::AuditCall);
        ++avc.stats.audits;
    }
    return audited;
}

template <bool Inline>
inline int has_perm_noaudit_impl(AvcCache &avc, const PolicyState &st, uint32_t ssid, uint32_t tsid,
                                 uint32_t tclass, uint32_t requested, unsigned flags,
                                 AvDecision *avd, const AvcConfig &cfg) {
    AvcNode *node =
        Inline ? avc_lookup(avc, ssid, tsid, tclass) : avc_lookup_call(avc, ssid, tsid, tclass);
    if (node) [[likely]]
        *avd = node->avd;
    else
        avc_compute_av(avc, st, ssid, tsid, tclass, avd);
    if (requested & ~avd->allowed) [[unlikely]]
        return avc_denied(avc, ssid, tsid, tclass, requested, flags, *avd, cfg);
    return 0;
}

[[gnu::noinline]] int has_perm_noaudit_call(AvcCache &avc, const PolicyState &st, uint32_t ssid,
                                            uint32_t tsid, uint32_t tclass, uint32_t requested,
                                            unsigned flags, AvDecision *avd, const AvcConfig &cfg) {
    count_work(Work::Call);
    return has_perm_noaudit_impl<false>(avc, st, ssid, tsid, tclass, requested, flags, avd, cfg);
}

}  // namespace

int avc_has_perm_noaudit(AvcCache &avc, const PolicyState &st, uint32_t ssid, uint32_t tsid,
                         uint32_t tclass, uint32_t requested, unsigned flags, AvDecision *avd,
                         const AvcConfig &cfg) {
    if (cfg.path == AvcPath::OutOfLine)
        return has_perm_noaudit_call(avc, st, ssid, tsid, tclass, requested, flags, avd, cfg);
    return has_perm_noaudit_impl<true>(avc, st, ssid, tsid, tclass, requested, flags, avd, cfg);
}

int avc_has_perm(AvcCache &avc, const PolicyState &st, uint32_t ssid, uint32_t tsid,
                 uint32_t tclass, uint32_t requested, const AvcConfig &cfg, uint32_t *audited) {
    AvDecision avd;
    int rc =
        cfg.path == AvcPath::OutOfLine
            ? has_perm_noaudit_call(avc, st, ssid, tsid, tclass, requested, 0, &avd, cfg)
            : has_perm_noaudit_impl<true>(avc, st, ssid, tsid, tclass, requested, 0, &avd, cfg);
    uint32_t aud;
    if (cfg.audit == AvcAudit::Always) {
        aud = avc_audit_call(avc, requested, avd, rc);
    } else {
        uint32_t denied;
        aud = avc_audit_required(requested, avd, rc, &denied);
        if (aud) [[unlikely]]
            slow_avc_audit(avc);
    }
    if (audited) *audited = aud;
    return rc;
}

}  // namespace locksim::ss
