// The AVC in front of every strategy, on the simulator: a flush followed by a simulated miss
// storm, reclaim under a small threshold, the core variants (audit, call path, enforcing), and
// each catalog option changing what the strategy does.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernel/spinlock.h"
#include "ss/services.h"
#include "strategy_test_util.h"

namespace locksim::strategies::test {
namespace {

using kernel::kMsec;
using kernel::kUsec;

struct Key {
    uint32_t ssid, tsid, tclass;
};

// Every (domain, type, class) of the fixture: 4 x 10 x 3 = 120 keys.
std::vector<Key> fixture_keys(const ss::PolicyState &st) {
    std::vector<uint32_t> sids;
    for (const char *c : {"system_u:system_r:kernel_t", "system_u:system_r:init_t",
                          "system_u:system_r:mail_t", "system_u:system_r:ftp_t"}) {
        uint32_t sid;
        EXPECT_EQ(ss::context_to_sid(st, c, &sid), 0);
        sids.push_back(sid);
    }
    const size_t domains = sids.size();
    for (const char *t :
         {"nfs_t", "samba_share_t", "public_t", "mail_spool_t", "ftp_home_t", "unlabeled_t"}) {
        uint32_t sid;
        EXPECT_EQ(ss::context_to_sid(st, std::string("system_u:object_r:") + t, &sid), 0);
        sids.push_back(sid);
    }
    std::vector<Key> keys;
    for (size_t s = 0; s < domains; ++s)
        for (uint32_t t : sids)
            for (const char *c : {"file", "dir", "process"})
                keys.push_back({sids[s], t, st.p().classes.find(c)->value});
    return keys;
}

struct AvcRun {
    kernel::RunResults r;
    ss::AvcStats stats;
    uint64_t checks = 0;
    uint64_t audit_due = 0;  // checks whose decision calls for an audit record
    uint64_t toggles = 0;
};

// `readers` tasks check the first `nkeys` keys round-robin (each from its own offset); a
// writer toggles every `toggle_every` (0: once at 3 ms).
AvcRun run_checks(const StrategyCase &sc, const CoreConfig &core, size_t nkeys,
                  kernel::Time toggle_every, int readers = 3) {
    AvcRun out;
    // 12 ms: a commit at 3 ms flushes after its grace periods and the refill follows.
    sim::SimConfig cfg = sim_config(4, 12 * kMsec, 5);
    cfg.hz = 1000;
    sim::SimPlatform sim(cfg);
    kernel::PlatformScope scope(sim);
    ss::PolicyState st = make_policy_state(ss::policydb_read(read_bytes(fixture("cond.33"))), core);
    std::vector<Key> keys = fixture_keys(st);
    keys.resize(std::min(nkeys, keys.size()));
    auto server = make_security_server(sc.name, sc.options, std::move(st), core);
    const uint32_t nbools = server->setup_state().db.cond->bools.nprim;
    for (int i = 0; i < readers; ++i)
        sim.create_task({"checker" + std::to_string(i)}, [&, i] {
            for (size_t n = static_cast<size_t>(i) * 7; !kernel::kthread_should_stop(); ++n) {
                const Key &k = keys[n % keys.size()];
                ss::AvDecision avd;
                int rc = server->avc_has_perm(k.ssid, k.tsid, k.tclass, 0x1, &avd);
                uint32_t denied;
                out.audit_due += ss::avc_audit_required(0x1, avd, rc, &denied) != 0;
                ++out.checks;
                kernel::ndelay(500);
            }
        });
    sim.create_task({"setsebool"}, [&] {
        kernel::sleep_for(3 * kMsec);
        for (int n = 1; !kernel::kthread_should_stop(); ++n) {
            std::vector<int> values(nbools, n & 1);
            EXPECT_EQ(server->set_bools(values), 0);
            ++out.toggles;
            if (!toggle_every) return;
            kernel::sleep_for(toggle_every);
        }
    });
    out.r = sim.run();
    out.stats = server->avc_stats();
    return out;
}

TEST(Avc, FlushIsFollowedByASimulatedMissStorm) {
    CoreConfig core;
    const size_t nkeys = 60;
    AvcRun a = run_checks(with("rcu-cond-dup"), core, nkeys, 0);
    EXPECT_TRUE(a.r.violations.empty()) << violations_text(a.r);
    ASSERT_EQ(a.toggles, 1u);
    // Every key missed once to fill the cache and once more after the flush; those second
    // misses, and only they, ran as the refill, each through compute_av and an insert.
    EXPECT_GE(a.stats.misses, 2 * nkeys);
    EXPECT_EQ(a.r.ops.at("avc_refill").completed, nkeys);
    EXPECT_GT(a.r.ops.at("avc_refill").compute_ns, 0);
    EXPECT_GT(a.r.ops.at("avc_miss").completed, 0u);
    EXPECT_GT(a.stats.hits, 10 * a.stats.misses);
    // The flush took every slot lock with interrupts off, inside the toggle.
    EXPECT_GE(a.r.locks.at("avc_slot").acquisitions[0], 512u + 2 * nkeys);
    EXPECT_GT(a.r.ops.at("set_bools").irqs_off_ns, 0);
    // Flushed nodes are freed by call_rcu, after a grace period.
    EXPECT_GE(a.r.rcu.callbacks_invoked, nkeys);
}

TEST(Avc, ReclaimKeepsTheCacheNearItsThreshold) {
    CoreConfig core;
    core.avc_threshold = 32;
    AvcRun a = run_checks(with("rwlock"), core, 120, 0);
    EXPECT_TRUE(a.r.violations.empty()) << violations_text(a.r);
    EXPECT_GT(a.stats.reclaims, 0u);
    // A pass frees up to 16; two CPUs reclaiming at once can share the nodes out.
    EXPECT_GE(a.stats.reclaims, ss::kAvcCacheReclaim);
    EXPECT_LE(a.stats.allocations - a.stats.frees, core.avc_threshold + ss::kAvcCacheReclaim);
}

TEST(Avc, SlotCountIsHonoured) {
    CoreConfig core;
    core.avc_slots = 16;
    AvcRun a = run_checks(with("rcu-cond-dup"), core, 60, 0);
    EXPECT_TRUE(a.r.violations.empty()) << violations_text(a.r);
    // The flush takes each of the 16 slot locks once.
    AvcRun b = run_checks(with("rcu-cond-dup"), CoreConfig{}, 60, 0);
    EXPECT_LT(a.r.locks.at("avc_slot").acquisitions[0] + 400,
              b.r.locks.at("avc_slot").acquisitions[0]);
}

TEST(Avc, AuditAndCallPathVariants) {
    CoreConfig needed, always, outofline;
    always.avc.audit = ss::AvcAudit::Always;
    outofline.avc.path = ss::AvcPath::OutOfLine;
    AvcRun n = run_checks(with("rwlock"), needed, 60, 0);
    AvcRun a = run_checks(with("rwlock"), always, 60, 0);
    AvcRun o = run_checks(with("rwlock"), outofline, 60, 0);
    // Records only where one is due, whether the audit path is called always or not.
    EXPECT_EQ(a.stats.audits, a.audit_due);
    EXPECT_EQ(n.stats.audits, n.audit_due);
    EXPECT_LT(n.audit_due, n.checks);
    auto per_lookup = [](const AvcRun &x) {
        return static_cast<double>(x.r.compute_ns.at("avc_lookup")) /
               static_cast<double>(x.stats.lookups);
    };
    EXPECT_GT(per_lookup(o), per_lookup(n));
}

// The older AVC designs: every lookup takes the global lock (the spinlock exclusively, the
// rwlock shared), every insert takes it exclusively, and the per-slot locks are gone; with RCU,
// lookups take no lock and inserts take the slot's.
TEST(Avc, LockVariantsTakeTheirLock) {
    CoreConfig spin, rw, rcu;
    spin.avc_lock = AvcLock::Spinlock;
    rw.avc_lock = AvcLock::Rwlock;
    for (const char *strategy : {"rcu-cond-dup", "rwlock"}) {
        SCOPED_TRACE(strategy);
        AvcRun s = run_checks(with(strategy), spin, 60, 0);
        AvcRun w = run_checks(with(strategy), rw, 60, 0);
        AvcRun r = run_checks(with(strategy), rcu, 60, 0);
        for (const AvcRun *x : {&s, &w, &r})
            EXPECT_TRUE(x->r.violations.empty()) << violations_text(x->r);

        ASSERT_TRUE(s.r.locks.count("avc_lock"));
        EXPECT_EQ(s.r.locks.at("avc_lock").kind, "spinlock");
        // Lookups, inserts after misses, the flush's 512 slots.
        EXPECT_GE(s.r.locks.at("avc_lock").acquisitions[0],
                  s.stats.lookups + s.stats.misses - s.stats.stale_inserts + 512);
        EXPECT_EQ(s.r.locks.at("avc_lock").acquisitions[1], 0u);
        EXPECT_FALSE(s.r.locks.count("avc_slot"));
        EXPECT_FALSE(s.r.locks.count("avc_rwlock"));
        // Taken with interrupts off: every lookup is an IRQs-off section.
        EXPECT_GE(s.r.irqs_off.length.count(), s.stats.lookups);

        ASSERT_TRUE(w.r.locks.count("avc_rwlock"));
        EXPECT_EQ(w.r.locks.at("avc_rwlock").kind, "rwlock");
        EXPECT_EQ(w.r.locks.at("avc_rwlock").acquisitions[1], w.stats.lookups);
        EXPECT_GE(w.r.locks.at("avc_rwlock").acquisitions[0],
                  w.stats.misses - w.stats.stale_inserts + 512);
        EXPECT_FALSE(w.r.locks.count("avc_slot"));
        EXPECT_FALSE(w.r.locks.count("avc_lock"));

        ASSERT_TRUE(r.r.locks.count("avc_slot"));
        EXPECT_FALSE(r.r.locks.count("avc_lock"));
        EXPECT_FALSE(r.r.locks.count("avc_rwlock"));
        // Inserts and the flush only: lookups take no lock.
        EXPECT_LT(r.r.locks.at("avc_slot").acquisitions[0], r.stats.lookups);
        EXPECT_GE(r.r.locks.at("avc_slot").acquisitions[0],
                  r.stats.misses - r.stats.stale_inserts + 512);
        // The same decisions whatever the lock.
        EXPECT_GT(s.stats.hits, 10 * s.stats.misses);
        EXPECT_GT(w.stats.hits, 10 * w.stats.misses);
    }
}

TEST(Avc, PermissiveModeGrantsAndCachesTheGrant) {
    CoreConfig core;
    core.avc.enforcing = false;
    sim::SimPlatform sim(sim_config(2, kMsec));
    kernel::PlatformScope scope(sim);
    ss::PolicyState st = make_policy_state(ss::policydb_read(read_bytes(fixture("cond.33"))), core);
    std::vector<Key> keys = fixture_keys(st);
    auto server = make_security_server("rcu-cond-dup", {}, std::move(st), core);
    sim.create_task({"checker"}, [&] {
        for (const Key &k : keys) {
            ss::AvDecision first, second;
            EXPECT_EQ(server->avc_has_perm(k.ssid, k.tsid, k.tclass, 0x7, &first), 0);
            EXPECT_EQ(server->avc_has_perm(k.ssid, k.tsid, k.tclass, 0x7, &second), 0);
            EXPECT_EQ(second.allowed & 0x7, 0x7u) << "the grant is cached";
        }
    });
    kernel::RunResults r = sim.run();
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
}

// --- catalog options ------------------------------------------------------------------------

TEST(Options, GracePeriodExpeditedIsUsed) {
    for (const char *name : {"rcu-cond-dup", "rcu-full-copy"}) {
        AvcRun normal = run_checks(with(name), CoreConfig{}, 20, 500 * kUsec);
        AvcRun exp = run_checks(with(name, "grace_period", std::string("expedited")), CoreConfig{},
                                20, 500 * kUsec);
        EXPECT_EQ(normal.r.rcu.expedited_grace_periods, 0u) << name;
        EXPECT_GT(exp.r.rcu.expedited_grace_periods, 0u) << name;
        EXPECT_GT(exp.toggles, 1u);
    }
}

// Whether some preempt-off interval began in the given source file.
bool preempt_off_began_in(const kernel::RunResults &r, const std::string &file) {
    return std::any_of(
        r.preempt_off.longest.begin(), r.preempt_off.longest.end(),
        [&](const auto &iv) { return iv.start_site.find(file) != std::string::npos; });
}

TEST(Options, FullCopyAtomicRunsTheCopyWithPreemptionOff) {
    AvcRun atomic = run_checks(with("rcu-full-copy", "copy", std::string("atomic")), CoreConfig{},
                               20, 500 * kUsec);
    AvcRun sleepable = run_checks(with("rcu-full-copy", "copy", std::string("sleepable")),
                                  CoreConfig{}, 20, 500 * kUsec);
    EXPECT_TRUE(atomic.r.violations.empty()) << violations_text(atomic.r);
    EXPECT_TRUE(sleepable.r.violations.empty()) << violations_text(sleepable.r);
    EXPECT_TRUE(preempt_off_began_in(atomic.r, "rcu_full_copy.cpp"));
    EXPECT_FALSE(preempt_off_began_in(sleepable.r, "rcu_full_copy.cpp"));
}

// Readers staying 40 us in their section, toggles every 30 us (each then waits the grace period
// of its notification, ~1-2 ms at HZ=1000): a seqlock reader keeps being overlapped; with
// max_retries 1 it falls back to the lock at once, with 1000 it keeps retrying.
uint64_t seqlock_lock_takers(int64_t max_retries, uint64_t *toggles) {
    sim::SimConfig cfg = sim_config(4, 60 * kMsec, 9);
    cfg.hz = 1000;
    sim::SimPlatform sim(cfg);
    kernel::PlatformScope scope(sim);
    CoreConfig core;
    ss::PolicyState st = make_policy_state(ss::policydb_read(read_bytes(fixture("cond.33"))), core);
    Params opts;
    opts.set("max_retries", max_retries);
    auto server = make_security_server("seqlock", opts, std::move(st), core);
    const uint32_t nbools = server->setup_state().db.cond->bools.nprim;
    for (int i = 0; i < 2; ++i)
        sim.create_task({"reader" + std::to_string(i)}, [&] {
            while (!kernel::kthread_should_stop())
                server->read_policy([](const ss::PolicyState &) {
                    kernel::ndelay(40 * kUsec);
                    return 0;
                });
        });
    *toggles = 0;
    sim.create_task({"setsebool"}, [&] {
        for (int n = 0; !kernel::kthread_should_stop(); ++n) {
            std::vector<int> values(nbools, n & 1);
            server->set_bools(values);
            ++*toggles;
            kernel::sleep_for(30 * kUsec);
        }
    });
    kernel::RunResults r = sim.run();
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
    return r.locks.at("policy_seqlock").acquisitions[0] - *toggles;
}

TEST(Options, SeqlockMaxRetriesDecidesTheFallback) {
    uint64_t t1 = 0, t1000 = 0;
    uint64_t fallback1 = seqlock_lock_takers(1, &t1);
    uint64_t fallback1000 = seqlock_lock_takers(1000, &t1000);
    EXPECT_GT(t1, 20u);
    EXPECT_GT(fallback1, 10u);
    EXPECT_LT(fallback1000, fallback1 / 4);
}

}  // namespace
}  // namespace locksim::strategies::test
