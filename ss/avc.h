// The access vector cache (the kernel's avc.c) as a plain single-threaded data structure:
// 512 hash slots of singly linked entries, a node count with a threshold past which an
// allocation first reclaims up to 16 nodes (walking the slots from a rotating hint), entries
// tagged with the policy seqno they were computed under, and inserts refused when that seqno is
// older than the latest policy change seen (avc_ss_reset).
//
// The pieces (hash, slot search, alloc/reclaim, insert, flush) are separate functions so the
// strategy layer can wrap each in the kernel's locking (RCU readers, per-slot spinlocks).
// avc_has_perm_noaudit / avc_has_perm put them together for the single-threaded case, with the
// runtime variants of the 2007 optimisation: the audit path called always or only when an
// audit is needed, and the lookup out of line or inlined (each out-of-line call level counts
// one Work::Call).
#pragma once

#include <array>
#include <cstdint>

#include "ss/services.h"
#include "util/work_meter.h"

namespace locksim::ss {

inline constexpr uint32_t kAvcCacheSlots = 512;
inline constexpr uint32_t kAvcDefCacheThreshold = 512;
inline constexpr uint32_t kAvcCacheReclaim = 16;

// avc_has_perm_noaudit flags
inline constexpr unsigned AVC_STRICT = 1;  // never grant a denial, even when permissive

struct AvcNode {
    uint32_t ssid = 0;
    uint32_t tsid = 0;
    uint16_t tclass = 0;
    AvDecision avd;
    uint32_t line = 0;  // the node's name for the cache model (AvcCache::nodes_made)
    AvcNode *next = nullptr;
};

struct AvcStats {
    uint64_t lookups = 0;
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t allocations = 0;
    uint64_t reclaims = 0;  // nodes freed by reclaim
    uint64_t frees = 0;
    uint64_t stale_inserts = 0;
    uint64_t audits = 0;  // audit records emitted
};

struct AvcCache {
    AvcCache() = default;
    ~AvcCache();
    AvcCache(const AvcCache &) = delete;
    AvcCache &operator=(const AvcCache &) = delete;

    std::array<AvcNode *, kAvcCacheSlots> slots{};
    uint32_t active_nodes = 0;
    uint32_t lru_hint = 0;
    uint32_t latest_notif = 0;
    uint32_t threshold = kAvcDefCacheThreshold;
    AvcStats stats;
    // For the cache model: the cache's name, and the nodes allocated so far (each a line of its
    // own: a node freed and reallocated is new memory to the model).
    uint32_t lines = next_line_object();
    uint32_t nodes_made = 0;

    // Records the read of slot `slot`'s head (8 to a line, at an address known ahead) and of a
    // node reached through a chain.
    void touch_slot(uint32_t slot) const {
        touch_line(mem_line(MemRegion::AvcSlots, lines, slot / 8), Access::Independent);
    }
    void touch_node(const AvcNode &n, Access access = Access::Dependent) const {
        touch_line(mem_line(MemRegion::AvcNode, lines, n.line), access);
    }
};

inline uint32_t avc_hash(uint32_t ssid, uint32_t tsid, uint32_t tclass) {
    return (ssid ^ (tsid << 2) ^ (tclass << 4)) & (kAvcCacheSlots - 1);
}

// The entry for the key in one slot's chain, nullptr if absent (counts a probe per node).
inline AvcNode *avc_search_slot(const AvcCache &avc, uint32_t slot, uint32_t ssid, uint32_t tsid,
                                uint32_t tclass) {
    avc.touch_slot(slot);
    for (AvcNode *n = avc.slots[slot]; n; n = n->next) {
        count_work(Work::HashProbe);
        avc.touch_node(*n);
        if (n->ssid == ssid && n->tsid == tsid && n->tclass == tclass) return n;
    }
    return nullptr;
}

// avc_lookup: the cached entry or nullptr; updates the lookup/hit/miss counters.
inline AvcNode *avc_lookup(AvcCache &avc, uint32_t ssid, uint32_t tsid, uint32_t tclass) {
    ++avc.stats.lookups;
    AvcNode *n = avc_search_slot(avc, avc_hash(ssid, tsid, tclass), ssid, tsid, tclass);
    if (n)
        ++avc.stats.hits;
    else
        ++avc.stats.misses;
    return n;
}

// avc_latest_notif_update: for an insert, true (refuse) when seqno is older than the latest
// notification; otherwise records a newer seqno and returns false.
bool avc_latest_notif_update(AvcCache &avc, uint32_t seqno, bool is_insert);

// Unlinks and frees up to kAvcCacheReclaim nodes, slot by slot from the rotating hint;
// returns how many.
uint32_t avc_reclaim_node(AvcCache &avc);
// A new node; reclaims first when the count passes the threshold.
AvcNode *avc_alloc_node(AvcCache &avc);
void avc_node_free(AvcCache &avc, AvcNode *node);

// Caches a decision (replacing an entry for the same key); nullptr when avd.seqno is stale.
AvcNode *avc_insert(AvcCache &avc, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                    const AvDecision &avd);
// Adds `perms` to the cached allowed set of the key's entry with that seqno (the permissive
// grant of avc_denied); false when no such entry.
bool avc_update_node_grant(AvcCache &avc, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                           uint32_t perms, uint32_t seqno);
// Drops every entry.
void avc_flush(AvcCache &avc);
// A policy change: flush and record the new seqno (older inserts are refused from now on).
void avc_ss_reset(AvcCache &avc, uint32_t seqno);
uint32_t avc_node_count(const AvcCache &avc);

// --- the permission check --------------------------------------------------------------------

enum class AvcAudit : uint8_t {
    Needed,  // decide inline, call the audit path only when a record is due (since 2007)
    Always,  // call the audit function on every check, which decides inside (before)
};
enum class AvcPath : uint8_t {
    Inline,     // lookup and decision inlined into the caller; only a miss calls out
    OutOfLine,  // avc_has_perm -> avc_has_perm_noaudit -> avc_lookup, each a call
};

struct AvcConfig {
    AvcAudit audit = AvcAudit::Needed;
    AvcPath path = AvcPath::Inline;
    bool enforcing = true;
};

// The permissions of `requested` that deserve an audit record (avc_audit_required).
inline uint32_t avc_audit_required(uint32_t requested, const AvDecision &avd, int result,
                                   uint32_t *denied) {
    uint32_t d = requested & ~avd.allowed;
    uint32_t audited;
    if (d)
        audited = d & avd.auditdeny;
    else if (result)
        audited = d = requested;
    else
        audited = requested & avd.auditallow;
    *denied = d;
    return audited;
}

// 0 when every requested permission is allowed (or granted because the domain is permissive
// and not AVC_STRICT, or enforcing is off), else -EACCES. `avd` receives the decision. A miss
// computes the decision from `st` and caches it.
int avc_has_perm_noaudit(AvcCache &avc, const PolicyState &st, uint32_t ssid, uint32_t tsid,
                         uint32_t tclass, uint32_t requested, unsigned flags, AvDecision *avd,
                         const AvcConfig &cfg = {});
// The same plus the audit decision: *audited (when given) receives the permissions an audit
// record was emitted for.
int avc_has_perm(AvcCache &avc, const PolicyState &st, uint32_t ssid, uint32_t tsid,
                 uint32_t tclass, uint32_t requested, const AvcConfig &cfg = {},
                 uint32_t *audited = nullptr);

}  // namespace locksim::ss
