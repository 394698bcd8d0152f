// The real platform's RCU: liburcu, and the publication table of the checks.
#include "real/platform_state.h"

namespace locksim::real {

// ---------------------------------------------------------------- RCU

void RealPlatform::rcu_read_lock(Site) {
    TaskState &t = s_->me();
    urcu_memb_read_lock();
    if (t.rcu_nesting++ == 0 && cfg_.checks) {
        // Ordered after the liburcu read lock: a grace period that did not wait for this reader
        // began before this increment, so every object it unpublished has a smaller cutoff.
        t.rcu_start_seq.store(s_->rcu_seq.fetch_add(1) + 1);
        t.rcu_active.store(1);
    }
}

void RealPlatform::rcu_read_unlock(Site site) {
    TaskState &t = s_->me();
    if (t.rcu_nesting == 0) {
        s_->violation(&t, "rcu_unlock_unbalanced",
                      fmt::format("{} in {} outside a read section", site.str(), t.name));
        return;
    }
    if (--t.rcu_nesting == 0 && cfg_.checks) t.rcu_active.store(0);
    urcu_memb_read_unlock();
    tsan_rcu_reader_exit();
}

void RealPlatform::synchronize_rcu(bool expedited, Site site) {
    TaskState &t = s_->me();
    if (t.rcu_nesting > 0) {
        s_->violation(&t, "synchronize_rcu_in_reader",
                      fmt::format("{} in {} inside an RCU read section (would never return)",
                                  site.str(), t.name));
        return;
    }
    if (t.atomic()) {
        // An atomic section is a reader here too: waiting would never return.
        s_->check_sleep(t, site);
        return;
    }
    const Time t0 = s_->now();
    urcu_memb_synchronize_rcu();
    tsan_rcu_gp_end();
    const Time len = s_->now() - t0;
    if (!s_->recording()) return;
    kernel::RcuStats &r = t.stats->rcu;
    if (expedited) {
        ++r.expedited_grace_periods;
        r.expedited_grace_period_ns.record(len);
    } else {
        ++r.grace_periods;
        r.grace_period_ns.record(len);
    }
    if (!t.ops.empty()) {
        kernel::OpStats &o = t.stats->op(t.label());
        o.gp_wait_ns += len;
        ++o.grace_periods;
    }
}

namespace {
struct CallRcuPayload {
    RealPlatform *platform;
    RealPlatform::State *state;
    std::function<void()> fn;
};
struct CallRcu {  // standard layout, for caa_container_of
    rcu_head head;
    CallRcuPayload *c;
};
}  // namespace

void RealPlatform::call_rcu(std::function<void()> callback) {
    s_->me();  // registers the thread with liburcu
    auto *cr = new CallRcu{{}, new CallRcuPayload{this, s_.get(), std::move(callback)}};
    tsan_release(cr);
    urcu_memb_call_rcu(&cr->head, [](rcu_head *h) {
        auto *cr = caa_container_of(h, CallRcu, head);
        tsan_acquire(cr);
        std::unique_ptr<CallRcuPayload> c(cr->c);
        delete cr;
        tsan_rcu_gp_end();
        tl_in_callback_thread = true;
        {
            kernel::PlatformScope scope(*c->platform);
            State &s = *c->state;
            TaskState &t = s.me();
            static const Site batch{"rcu_do_batch", {}};
            if (s.recording()) ++t.stats->rcu.callbacks_invoked;
            s.preempt_inc(t, batch, s.now());  // softirq-like: must not sleep
            c->fn();
            s.preempt_dec(t, batch, s.now());
        }
    });
}

void RealPlatform::rcu_dereferenced(const void *, Site site) {
    TaskState &t = s_->me();
    if (t.rcu_nesting == 0 && !t.atomic())
        s_->violation(&t, "suspicious_rcu_usage",
                      fmt::format("{} in {} outside an RCU read section (use "
                                  "rcu_dereference_protected on the update side)",
                                  site.str(), t.name));
}

namespace {

// The publication record of `key`, added when absent (inside a liburcu read section).
PubNode *pub_get(cds_lfht *ht, const void *key, uint64_t cutoff_if_new) {
    const unsigned long h = pub_hash(key);
    cds_lfht_iter it;
    cds_lfht_lookup(ht, h, pub_match, key, &it);
    if (cds_lfht_node *n = cds_lfht_iter_get_node(&it)) return caa_container_of(n, PubNode, node);
    auto *node = new PubNode;
    cds_lfht_node_init(&node->node);
    node->key = key;
    node->cutoff.store(cutoff_if_new);
    tsan_release(node);
    cds_lfht_node *got = cds_lfht_add_unique(ht, h, pub_match, key, &node->node);
    if (got != &node->node) {
        delete node;
        return caa_container_of(got, PubNode, node);
    }
    return node;
}

}  // namespace

void RealPlatform::rcu_published(const void *old_p, const void *new_p) {
    if (!s_->pub) return;
    s_->me();
    PubReader reader;
    if (new_p) pub_get(s_->pub, new_p, kStillPublished)->cutoff.store(kStillPublished);
    if (old_p && old_p != new_p) {
        const uint64_t cutoff = s_->rcu_seq.fetch_add(1) + 1;
        pub_get(s_->pub, old_p, cutoff)->cutoff.store(cutoff);
    }
}

}  // namespace locksim::real
