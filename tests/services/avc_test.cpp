// The AVC: hits and misses, threshold and reclaim, flush, stale inserts refused, the audit
// decision and the runtime variants.
#include <cerrno>

#include "ss/avc.h"
#include "svc_test_util.h"

namespace locksim::ss::test {
namespace {

AvDecision decision(uint32_t allowed, uint32_t seqno) {
    AvDecision d;
    d.allowed = allowed;
    d.seqno = seqno;
    return d;
}

TEST(Avc, InsertLookupReplace) {
    AvcCache avc;
    EXPECT_EQ(avc_lookup(avc, 1, 2, 3), nullptr);
    ASSERT_NE(avc_insert(avc, 1, 2, 3, decision(0x5, 0)), nullptr);
    AvcNode *n = avc_lookup(avc, 1, 2, 3);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->avd.allowed, 0x5u);
    EXPECT_EQ(avc_lookup(avc, 2, 1, 3), nullptr);
    ASSERT_NE(avc_insert(avc, 1, 2, 3, decision(0x7, 0)), nullptr);
    EXPECT_EQ(avc_lookup(avc, 1, 2, 3)->avd.allowed, 0x7u);
    EXPECT_EQ(avc.active_nodes, 1u) << "an insert for a cached key replaces it";
    EXPECT_EQ(avc.stats.lookups, 4u);
    EXPECT_EQ(avc.stats.hits, 2u);
    EXPECT_EQ(avc.stats.misses, 2u);
    EXPECT_EQ(avc_hash(1, 2, 3), (1u ^ (2u << 2) ^ (3u << 4)) & 511u);
}

TEST(Avc, ThresholdTriggersReclaim) {
    AvcCache avc;
    for (uint32_t i = 0; i < 2000; ++i)
        ASSERT_NE(avc_insert(avc, i, i + 7, 1, decision(1, 0)), nullptr);
    EXPECT_LE(avc.active_nodes, avc.threshold);
    EXPECT_EQ(avc.active_nodes, avc_node_count(avc));
    EXPECT_GT(avc.stats.reclaims, 0u);
    EXPECT_EQ(avc.stats.reclaims % kAvcCacheReclaim, 0u) << "reclaim frees 16 at a time";
    EXPECT_EQ(avc.stats.allocations - avc.stats.frees, avc.active_nodes);
    // A reclaim round frees exactly 16 when there are that many.
    uint32_t before = avc.active_nodes;
    EXPECT_EQ(avc_reclaim_node(avc), kAvcCacheReclaim);
    EXPECT_EQ(avc.active_nodes, before - kAvcCacheReclaim);
}

TEST(Avc, ResetFlushesAndRefusesStaleInserts) {
    AvcCache avc;
    for (uint32_t i = 0; i < 100; ++i)
        avc_insert(avc, i, 1, 1, decision(1, 3));
    avc_ss_reset(avc, 4);
    EXPECT_EQ(avc.active_nodes, 0u);
    EXPECT_EQ(avc_node_count(avc), 0u);
    EXPECT_EQ(avc_lookup(avc, 5, 1, 1), nullptr);
    // A decision computed under the old policy must not enter the cache.
    EXPECT_EQ(avc_insert(avc, 5, 1, 1, decision(1, 3)), nullptr);
    EXPECT_EQ(avc.stats.stale_inserts, 1u);
    EXPECT_NE(avc_insert(avc, 5, 1, 1, decision(1, 4)), nullptr);
    EXPECT_NE(avc_insert(avc, 6, 1, 1, decision(1, 5)), nullptr) << "newer is fine";
}

class AvcPolicy : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        st_ = new PolicyState(policy_state_create(policydb_read_file(debian_policy("default"))));
    }
    static void TearDownTestSuite() { delete st_; }
    static PolicyState *st_;
    uint32_t sid(const char *c) {
        uint32_t s;
        EXPECT_EQ(context_to_sid(*st_, c, &s), 0) << c;
        return s;
    }
    // unconfined_t reading etc_t files: the pair most tests use.
    void SetUp() override {
        s = sid("unconfined_u:unconfined_r:unconfined_t:s0");
        t = sid("system_u:object_r:etc_t:s0");
        file = cls("file");
    }
    uint32_t s = 0, t = 0, file = 0;
    uint32_t cls(const char *name) { return st_->p().classes.find(name)->value; }
    uint32_t perm(const char *c, const char *p) {
        const ClassDatum *cd = st_->p().classes.find(c);
        const PermDatum *pd = cd->permissions.find(p);
        if (!pd && cd->comdatum) pd = cd->comdatum->permissions.find(p);
        return 1u << (pd->value - 1);
    }
};
PolicyState *AvcPolicy::st_ = nullptr;

TEST_F(AvcPolicy, HasPermMissThenHitAndTheAuditDecision) {
    AvcCache avc;
    uint32_t read = perm("file", "read");
    AvDecision direct;
    ASSERT_EQ(compute_av(*st_, s, t, file, &direct), 0);
    ASSERT_TRUE(direct.allowed & read);
    uint32_t audited = 1;
    EXPECT_EQ(avc_has_perm(avc, *st_, s, t, file, read, {}, &audited), 0);
    EXPECT_EQ(audited, direct.auditallow & read);
    EXPECT_EQ(avc.stats.misses, 1u);
    EXPECT_EQ(avc_has_perm(avc, *st_, s, t, file, read), 0);
    EXPECT_EQ(avc.stats.hits, 1u);

    // A denial is audited unless dontaudit'ed.
    uint32_t denied_perm = ~direct.allowed & (perm("file", "entrypoint") | perm("file", "mounton"));
    ASSERT_NE(denied_perm, 0u);
    for (AvcAudit mode : {AvcAudit::Needed, AvcAudit::Always}) {
        AvcConfig cfg;
        cfg.audit = mode;
        EXPECT_EQ(avc_has_perm(avc, *st_, s, t, file, denied_perm, cfg, &audited), -EACCES);
        EXPECT_EQ(audited, denied_perm & direct.auditdeny);
    }
}

TEST_F(AvcPolicy, VariantsDecideAlikeAndCountDifferently) {
    uint32_t read = perm("file", "read");
    WorkCounts counts[2][2];
    for (int a = 0; a < 2; ++a)
        for (int p = 0; p < 2; ++p) {
            AvcCache avc;
            AvcConfig cfg;
            cfg.audit = a ? AvcAudit::Always : AvcAudit::Needed;
            cfg.path = p ? AvcPath::OutOfLine : AvcPath::Inline;
            ASSERT_EQ(avc_has_perm(avc, *st_, s, t, file, read, cfg), 0);  // warm
            WorkMeterScope scope(&counts[a][p]);
            for (int i = 0; i < 10; ++i)
                ASSERT_EQ(avc_has_perm(avc, *st_, s, t, file, read, cfg), 0);
        }
#ifndef LOCKSIM_NO_WORK_METER
    EXPECT_EQ(counts[0][0][Work::AuditCall], 0u) << "no audit needed, none called";
    EXPECT_EQ(counts[1][0][Work::AuditCall], 0u) << "called every time, but nothing to log";
    EXPECT_EQ(counts[1][0][Work::Call], 10u) << "the old path calls audit every time";
    EXPECT_EQ(counts[0][0][Work::Call], 0u) << "inlined hit path makes no call";
    EXPECT_EQ(counts[0][1][Work::Call], 20u) << "noaudit and lookup, out of line";
    EXPECT_EQ(counts[1][1][Work::Call], 30u);
#endif
}

TEST_F(AvcPolicy, PermissiveDomainIsGrantedAndCached) {
    AvcCache avc;
    uint32_t bit = perm("file", "entrypoint");
    AvDecision d;
    ASSERT_EQ(compute_av(*st_, s, t, file, &d), 0);
    ASSERT_FALSE(d.allowed & bit);
    d.flags |= AVD_FLAGS_PERMISSIVE;
    ASSERT_NE(avc_insert(avc, s, t, file, d), nullptr);
    AvDecision out;
    EXPECT_EQ(avc_has_perm_noaudit(avc, *st_, s, t, file, bit, AVC_STRICT, &out), -EACCES);
    EXPECT_EQ(avc_has_perm_noaudit(avc, *st_, s, t, file, bit, 0, &out), 0);
    EXPECT_TRUE(avc_lookup(avc, s, t, file)->avd.allowed & bit) << "the grant is cached";
    AvcConfig permissive_system;
    permissive_system.enforcing = false;
    uint32_t other = perm("file", "mounton");
    EXPECT_EQ(avc_has_perm_noaudit(avc, *st_, s, t, file, other, 0, &out, permissive_system), 0);
}

TEST_F(AvcPolicy, StaleDecisionAfterPolicyChangeIsNotCached) {
    AvcCache avc;
    avc_ss_reset(avc, st_->seqno + 1);  // a newer policy was announced
    AvDecision out;
    EXPECT_EQ(avc_has_perm_noaudit(avc, *st_, s, t, cls("file"), perm("file", "read"), 0, &out), 0);
    EXPECT_EQ(avc.stats.stale_inserts, 1u);
    EXPECT_EQ(avc_node_count(avc), 0u);
}

}  // namespace
}  // namespace locksim::ss::test
