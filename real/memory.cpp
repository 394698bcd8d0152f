// The real platform's accounted memory and the quarantine of unsafe frees (checks).
#include "real/platform_state.h"

namespace locksim::real {

// ---------------------------------------------------------------- memory

void *RealPlatform::mem_alloc(size_t bytes, AllocKind kind, Site site) {
    TaskState &t = s_->me();
    const bool sleeps = kind != AllocKind::KmallocAtomic;
    if (sleeps && (t.atomic() || t.rcu_nesting > 0))
        s_->violation(&t, "sleep_in_atomic",
                      fmt::format("sleeping function called from invalid context: {} in {} "
                                  "(preempt count {}, irqs {}, rcu nesting {}); use Gfp::Atomic",
                                  site.str(), t.name, t.preempt_count, t.irqs_off ? "off" : "on",
                                  t.rcu_nesting));
    auto *h = static_cast<AllocHeader *>(::operator new(sizeof(AllocHeader) + (bytes ? bytes : 1)));
    const auto n = static_cast<int64_t>(bytes);
    h->magic = kAllocMagic;
    h->kind = static_cast<uint8_t>(kind);
    new (&h->bytes) std::atomic<int64_t>(n);
    const int64_t live = s_->account_bytes(t, n);
    ThreadStats &st = *t.stats;
    (sleeps ? st.memory.allocs_sleeping : st.memory.allocs_atomic) += 1;
    (sleeps ? st.memory.bytes_sleeping : st.memory.bytes_atomic) += n;
    for (OpFrame &f : t.ops)
        f.peak_live = std::max(f.peak_live, live);
    if (!t.ops.empty() && s_->recording()) st.op(t.label()).bytes_allocated += n;
    return h + 1;
}

void RealPlatform::mem_charge(const void *p, int64_t bytes) {
    TaskState &t = s_->me();
    auto *h = static_cast<AllocHeader *>(const_cast<void *>(p)) - 1;
    if (h->magic != kAllocMagic) {
        s_->violation(&t, "bad_free", "kmem_charge on memory that is not an accounted allocation");
        return;
    }
    h->bytes.fetch_add(bytes);
    const int64_t live = s_->account_bytes(t, bytes);
    for (OpFrame &f : t.ops)
        f.peak_live = std::max(f.peak_live, live);
    if (!t.ops.empty() && s_->recording()) t.stats->op(t.label()).bytes_allocated += bytes;
}

// The RCU check (torture runs): an object freed while readers that began before it was
// unpublished may still use it, or while it is still published, is reported, and kept intact
// (never freed) so that those readers do not crash before the run reports it.
bool RealPlatform::mem_quarantine(const void *p, Site site) {
    if (!s_->pub) return false;
    TaskState &t = s_->me();
    cds_lfht_iter it;
    cds_lfht_lookup(s_->pub, pub_hash(p), pub_match, p, &it);
    cds_lfht_node *n = cds_lfht_iter_get_node(&it);
    if (!n) return false;
    PubNode *node = caa_container_of(n, PubNode, node);
    const uint64_t cutoff = node->cutoff.load();
    bool unsafe = cutoff == kStillPublished;
    if (unsafe)
        s_->violation(
            &t, "rcu_free_published",
            fmt::format("{} frees an object that is still published under RCU", site.str()));
    std::vector<std::string> readers;
    {
        std::lock_guard g(s_->mu);
        for (auto &r : s_->tasks)
            if (r.get() != &t && r->rcu_active.load() && r->rcu_start_seq.load() < cutoff)
                readers.push_back(r->name);
    }
    for (const std::string &r : readers)
        s_->violation(&t, "rcu_free_in_use",
                      fmt::format("{} frees an object published under RCU while {} may "
                                  "still hold it; wait for a grace period first",
                                  site.str(), r));
    if (!cds_lfht_del(s_->pub, n)) urcu_memb_call_rcu(&node->rh, pub_free);
    if (!unsafe && readers.empty()) return false;
    std::lock_guard g(s_->quarantine.mu);
    s_->quarantine.held.push_back(static_cast<AllocHeader *>(const_cast<void *>(p)) - 1);
    return true;
}

void RealPlatform::mem_free(const void *p, Site site) {
    TaskState &t = s_->me();
    auto *h = static_cast<AllocHeader *>(const_cast<void *>(p)) - 1;
    if (h->magic != kAllocMagic) {
        s_->violation(&t, "bad_free",
                      fmt::format("{} of memory that is not allocated (double free?)", site.str()));
        return;
    }
    s_->account_bytes(t, -h->bytes.load());
    ++t.stats->memory.frees;
    h->magic = kFreedMagic;
    h->bytes.~atomic();
    ::operator delete(h);
}

}  // namespace locksim::real
