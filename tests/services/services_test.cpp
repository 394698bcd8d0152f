// Contexts, SID table, boolean changes three ways, policy duplication and policy load.
#include <algorithm>
#include <cerrno>

#include "ss/avtab.h"
#include "ss/policy_dup.h"
#include "ss/te_rules_memo.h"
#include "svc_test_util.h"
#include "util/work_meter.h"

namespace locksim::ss::test {
namespace {

const PolicyState &default_state() {
    static PolicyState st = policy_state_create(policydb_read_file(debian_policy("default")));
    return st;
}

TEST(Context, PrintsCategoryRunsAsTheKernel) {
    PolicyState st = policy_state_create(policydb_read_file(debian_policy("mls")));
    struct Case {
        const char *in, *out;
    } cases[] = {
        {"system_u:object_r:etc_t:s0", "system_u:object_r:etc_t:s0"},
        {"system_u:object_r:etc_t:s0-s0", "system_u:object_r:etc_t:s0"},
        {"system_u:object_r:etc_t:s0:c0,c1", "system_u:object_r:etc_t:s0:c0,c1"},
        {"system_u:object_r:etc_t:s0:c0,c1,c2", "system_u:object_r:etc_t:s0:c0.c2"},
        {"system_u:object_r:etc_t:s1:c5,c0.c2,c7,c8.c12",
         "system_u:object_r:etc_t:s1:c0.c2,c5,c7.c12"},
        {"system_u:object_r:etc_t:s0-s15:c0.c1023", "system_u:object_r:etc_t:s0-s15:c0.c1023"},
        {"system_u:object_r:etc_t:s2:c63,c64-s3:c63.c65",
         "system_u:object_r:etc_t:s2:c63,c64-s3:c63.c65"},
    };
    for (const Case &c : cases) {
        uint32_t sid;
        ASSERT_EQ(context_to_sid(st, c.in, &sid), 0) << c.in;
        std::string out;
        ASSERT_EQ(sid_to_context(st, sid, &out), 0);
        EXPECT_EQ(out, c.out);
        uint32_t again;
        ASSERT_EQ(context_to_sid(st, out, &again), 0);
        EXPECT_EQ(again, sid) << "the printed form must name the same SID";
    }
    uint32_t sid;
    EXPECT_EQ(context_to_sid(st, std::string_view("system_u:object_r:etc_t:s0\0junk", 31), &sid),
              0);
    EXPECT_EQ(context_to_sid(st, "system_u:object_r:etc_t:s0:c2.c1", &sid), -EINVAL);
    EXPECT_EQ(context_to_sid(st, "system_u:object_r:etc_t:s3-s1", &sid), -EINVAL);
}

TEST(Context, PrintingVisitsEveryCategoryBitTwice) {
    // context_struct_to_string (v4.15.1 - v6.6.0): mls_compute_context_len sizes the text and
    // mls_sid_to_context writes it, each visiting every set bit. No string cache: each call
    // prints.
    PolicyState st = policy_state_create(policydb_read_file(debian_policy("mls")), 0);
    struct Case {
        const char *context;
        uint64_t bits;
    } cases[] = {
        {"system_u:object_r:etc_t:s0", 0},
        {"system_u:object_r:etc_t:s0:c0,c1", 2},
        {"system_u:object_r:etc_t:s0-s15:c0.c1023", 1024},
        {"system_u:object_r:etc_t:s2:c63,c64-s3:c63.c65", 5},
    };
    for (const Case &c : cases) {
        uint32_t sid;
        ASSERT_EQ(context_to_sid(st, c.context, &sid), 0) << c.context;
        WorkCounts w;
        std::string out;
        {
            WorkMeterScope scope(&w);
            ASSERT_EQ(sid_to_context(st, sid, &out), 0);
        }
        EXPECT_EQ(out, c.context);
        EXPECT_EQ(w[Work::BitIteration], 2 * c.bits) << c.context;
        EXPECT_EQ(w[Work::StringByte], out.size()) << c.context;
    }
}

TEST(Context, LevelCheckVariantsAgree) {
    const PolicyState &st = default_state();
    ContextGen gen(st.p(), 7);
    for (int i = 0; i < 2000; ++i) {
        Context c = gen.random_context();
        if (i % 3 == 0) c.range = gen.full_range();
        EXPECT_EQ(policydb_context_isvalid(st.p(), c, LevelCheck::Contains),
                  policydb_context_isvalid(st.p(), c, LevelCheck::BitByBit));
    }
}

TEST(Sidtab, InitialSidsLookupAndFallback) {
    PolicyState st = policy_state_create(policydb_read_file(debian_policy("default")));
    std::string kernel;
    ASSERT_EQ(sid_to_context(st, SECINITSID_KERNEL, &kernel), 0);
    EXPECT_EQ(kernel, "system_u:system_r:kernel_t:s0");
    uint32_t sid;
    ASSERT_EQ(context_to_sid(st, kernel, &sid), 0);
    EXPECT_EQ(sid, SECINITSID_KERNEL) << "initial SIDs are in the reverse table";
    uint32_t a, b;
    ASSERT_EQ(context_to_sid(st, "staff_u:staff_r:staff_t:s0", &a), 0);
    ASSERT_EQ(context_to_sid(st, "staff_u:staff_r:staff_t:s0-s0", &b), 0);
    EXPECT_EQ(a, b);
    EXPECT_GT(a, kSecInitSidNum);
    std::string unl, unknown;
    ASSERT_EQ(sid_to_context(st, SECINITSID_UNLABELED, &unl), 0);
    ASSERT_EQ(sid_to_context(st, 999999, &unknown), 0);
    EXPECT_EQ(unknown, unl) << "an unknown SID reads as unlabeled";
}

TEST(Sidtab, StringCacheIsLruAndCanBeOff) {
    for (uint32_t size : {0u, 2u, 256u}) {
        PolicyState st = policy_state_create(policydb_read_file(debian_policy("default")), size);
        std::vector<uint32_t> sids;
        for (const char *c : {"staff_u:staff_r:staff_t:s0", "user_u:user_r:user_t:s0",
                              "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023"}) {
            uint32_t sid;
            ASSERT_EQ(context_to_sid(st, c, &sid), 0);
            sids.push_back(sid);
            std::string out;
            ASSERT_EQ(sid_to_context(st, sid, &out), 0);
            EXPECT_EQ(out, c);
        }
        EXPECT_EQ(st.sidtab->cache_used(), std::min<uint32_t>(size, 3));
        std::string s;
        EXPECT_EQ(st.sidtab->sid2str_get(sids[0], s), size >= 3) << "size " << size;
        EXPECT_EQ(st.sidtab->sid2str_get(sids[2], s), size >= 1) << "size " << size;
        // A hit counts a copy, no string building.
        WorkCounts w;
        {
            WorkMeterScope scope(&w);
            ASSERT_EQ(sid_to_context(st, sids[2], &s), 0);
        }
        if (size) {
            EXPECT_EQ(w[Work::StringByte], 0u);
            EXPECT_EQ(w[Work::BytesCopied], s.size());
        } else {
            EXPECT_EQ(w[Work::StringByte], s.size());
        }
    }
}

bool same(const std::vector<AvDecision> &a, const std::vector<AvDecision> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].allowed != b[i].allowed || a[i].auditallow != b[i].auditallow ||
            a[i].auditdeny != b[i].auditdeny || a[i].flags != b[i].flags)
            return false;
    return true;
}

// Decisions of queries aimed at conditional rules (they change with the booleans).
std::vector<AvDecision> cond_decisions(const PolicyState &st) {
    ContextGen gen(st.p(), 99);
    std::vector<AvDecision> out;
    int n = 0;
    st.db.cond->te_cond_avtab.for_each([&](const AvtabNode &node) {
        if (n++ % 40) return;
        uint32_t s0 = gen.concrete(node.key.source_type), t0 = gen.concrete(node.key.target_type);
        if (!s0 || !t0) return;
        uint32_t s, t;
        EXPECT_EQ(context_to_sid(st, gen.str(gen.subject(s0, false)), &s), 0);
        EXPECT_EQ(context_to_sid(st, gen.str(gen.object(t0, false)), &t), 0);
        AvDecision avd;
        EXPECT_EQ(compute_av(st, s, t, node.key.target_class, &avd), 0);
        avd.seqno = 0;
        out.push_back(avd);
    });
    return out;
}

TEST(SetBools, ThreeWaysAgreeAndCopiesLeaveTheOriginal) {
    PolicyState inplace = policy_state_create(policydb_read_file(debian_policy("default")));
    PolicyState base = policy_state_create(policydb_read_file(debian_policy("default")));
    const std::vector<AvDecision> before = cond_decisions(base);
    const std::vector<int> old_values = get_bools(base);

    for (int round = 0; round < 2; ++round) {
        std::vector<int> values = get_bools(base);
        for (size_t i = round; i < values.size(); i += 7)
            values[i] = !values[i];
        PolicyState dup, full;
        ASSERT_EQ(set_bools_cond_dup(base, values, &dup), 0);
        ASSERT_EQ(set_bools_full_copy(base, values, &full), 0);
        ASSERT_EQ(set_bools_inplace(inplace, values), 0);
        EXPECT_EQ(dup.seqno, base.seqno + 1);
        EXPECT_EQ(full.seqno, base.seqno + 1);
        EXPECT_EQ(dup.db.base, base.db.base) << "cond_policydb_dup shares the base";
        EXPECT_NE(dup.db.cond, base.db.cond);
        EXPECT_NE(full.db.base, base.db.base) << "the full copy shares nothing";

        std::vector<AvDecision> a = cond_decisions(dup), b = cond_decisions(full),
                                c = cond_decisions(inplace);
        EXPECT_TRUE(same(a, b));
        EXPECT_TRUE(same(a, c));
        EXPECT_FALSE(same(a, before)) << "flipping booleans changes some conditional decision";
        EXPECT_EQ(get_bools(dup), values);
        EXPECT_EQ(get_bools(full), values);
        // The original did not move.
        EXPECT_EQ(get_bools(base), old_values);
        EXPECT_TRUE(same(cond_decisions(base), before));
    }
}

// The simulator's memo of the TE-rule searches gives the decisions of the full search and
// counts the same work, when it fills and when it replays, after booleans flip in place (the
// ENABLED bits it reads again), on a duplicated conditional table and on a policy written and
// read back (new tables of the same layout: the entries made before serve them, and the
// conditional nodes are those of the copy, with the copy's states).
TEST(TeRulesMemo, SameDecisionsAndWorkAsTheSearches) {
    PolicyState st = policy_state_create(policydb_read_file(debian_policy("default")));
    TeRulesMemo memo;
    uint64_t filled_by_first = 0;
    auto check = [&](const PolicyState &state) {
        cond_decisions(state);  // the SIDs exist from here on: every pass below counts alike
        WorkCounts plain_work, fill_work, replay_work;
        std::vector<AvDecision> plain, fill, replay;
        {
            WorkMeterScope meter(&plain_work);
            plain = cond_decisions(state);
        }
        {
            TeRulesMemoScope scope(&memo);
            {
                WorkMeterScope meter(&fill_work);
                fill = cond_decisions(state);
            }
            WorkMeterScope meter(&replay_work);
            replay = cond_decisions(state);
        }
        EXPECT_FALSE(plain.empty());
        EXPECT_TRUE(same(plain, fill));
        EXPECT_TRUE(same(plain, replay));
        EXPECT_EQ(plain_work.n, fill_work.n);
        EXPECT_EQ(plain_work.n, replay_work.n);
        return plain;
    };
    const std::vector<AvDecision> before = check(st);
    filled_by_first = memo.filled();
    EXPECT_GT(filled_by_first, 0u);
    std::vector<int> values = get_bools(st);
    for (size_t i = 0; i < values.size(); i += 5)
        values[i] = !values[i];
    ASSERT_EQ(set_bools_inplace(st, values), 0);
    const std::vector<AvDecision> flipped = check(st);
    EXPECT_FALSE(same(flipped, before)) << "the flipped booleans change some decision";
    EXPECT_EQ(memo.filled(), filled_by_first) << "a change in place keeps the entries";

    // Copies made where a memo is installed (as in a simulation) share the original's layout.
    for (size_t i = 0; i < values.size(); i += 3)
        values[i] = !values[i];
    PolicyState dup, full;
    {
        TeRulesMemoScope scope(&memo);
        ASSERT_EQ(set_bools_cond_dup(st, values, &dup), 0);
        ASSERT_EQ(set_bools_full_copy(st, values, &full), 0);
    }
    EXPECT_EQ(dup.db.cond->te_cond_avtab.layout(), st.db.cond->te_cond_avtab.layout());
    EXPECT_NE(dup.db.cond->te_cond_avtab.generation(), st.db.cond->te_cond_avtab.generation());
    EXPECT_EQ(full.p().te_avtab.layout(), st.p().te_avtab.layout());
    EXPECT_EQ(full.db.cond->te_cond_avtab.layout(), st.db.cond->te_cond_avtab.layout());
    const std::vector<AvDecision> on_dup = check(dup);
    EXPECT_FALSE(same(on_dup, flipped)) << "the copy's own states decide";
    EXPECT_TRUE(same(check(full), on_dup));
    EXPECT_EQ(memo.filled(), filled_by_first) << "the copies are served by the same entries";
}

// A table takes another's layout only when it repeats it node for node.
TEST(TeRulesMemo, ALayoutIsSharedOnlyByATableThatRepeatsIt) {
    auto table = [](uint32_t data, bool extra) {
        auto t = std::make_unique<Avtab>();
        t->alloc(64);
        for (uint16_t i = 1; i <= 40; ++i) {
            AvtabDatum d;
            d.u.data = i == 7 ? data : i;
            t->insert(AvtabKey{i, static_cast<uint16_t>(i % 5 + 1), 3, AVTAB_ALLOWED}, d);
        }
        if (extra) t->insert(AvtabKey{50, 1, 3, AVTAB_ALLOWED}, AvtabDatum{});
        return t;
    };
    auto orig = table(7, false);
    EXPECT_TRUE(table(7, false)->adopt_layout(*orig));
    auto other_data = table(8, false), more = table(7, false);
    EXPECT_FALSE(other_data->adopt_layout(*orig));
    EXPECT_NE(other_data->layout(), orig->layout());
    more->insert(AvtabKey{50, 1, 3, AVTAB_ALLOWED}, AvtabDatum{});
    EXPECT_FALSE(more->adopt_layout(*orig));
    auto copy = table(7, false);
    ASSERT_TRUE(copy->adopt_layout(*orig));
    EXPECT_EQ(copy->layout(), orig->layout());
    copy->insert(AvtabKey{60, 1, 3, AVTAB_ALLOWED}, AvtabDatum{});
    EXPECT_NE(copy->layout(), orig->layout()) << "a change gives the table a layout of its own";
    // Positions name the same rule in both tables.
    auto again = table(7, false);
    ASSERT_TRUE(again->adopt_layout(*orig));
    orig->for_each([&](const AvtabNode &n) {
        const AvtabNode *m = again->node_at(orig->position_of(n));
        ASSERT_NE(m, nullptr);
        EXPECT_EQ(m->key.source_type, n.key.source_type);
        EXPECT_NE(m, &n);
    });
}

// A new memo entry keeps the count of the distinct lines its searches read and, of those, the
// ones the caller's sampling models: the call records the same distinct lines as without the
// memo, its searches' repeats counted once.
TEST(TeRulesMemo, EntryCountsDistinctLinesAndKeepsTheSampledOnes) {
    const PolicyState &st = default_state();
    ContextGen gen(st.p(), 5);
    int n = 0, checked = 0, repeats = 0;
    st.db.cond->te_cond_avtab.for_each([&](const AvtabNode &node) {
        if (n++ % 97) return;
        const uint32_t s0 = gen.concrete(node.key.source_type),
                       t0 = gen.concrete(node.key.target_type);
        if (!s0 || !t0) return;
        uint32_t s, t;
        ASSERT_EQ(context_to_sid(st, gen.str(gen.subject(s0, false)), &s), 0);
        ASSERT_EQ(context_to_sid(st, gen.str(gen.object(t0, false)), &t), 0);
        AvDecision avd;
        // The same sampling with and without the memo: the same distinct lines (the SID table's,
        // the constraints' and the searches'), the memo's searches each counted once.
        const int shift = 3;
        WorkCounts plain, fill;
        plain.line_shift = fill.line_shift = shift;
        {
            WorkMeterScope meter(&plain);
            ASSERT_EQ(compute_av(st, s, t, node.key.target_class, &avd), 0);
        }
        TeRulesMemo memo;
        {
            TeRulesMemoScope scope(&memo);
            WorkMeterScope meter(&fill);
            ASSERT_EQ(compute_av(st, s, t, node.key.target_class, &avd), 0);
        }
        // Whether a line comes just after another (kStreamedLine) depends on the order of the
        // reads, which the memo does not keep: the lines and their kinds are compared.
        auto distinct = [](std::vector<uint64_t> v) {
            for (uint64_t &l : v)
                l &= ~kStreamedLine;
            std::sort(v.begin(), v.end());
            v.erase(std::unique(v.begin(), v.end()), v.end());
            return v;
        };
        EXPECT_EQ(distinct(fill.lines), distinct(plain.lines));
        EXPECT_LE(fill.line_touches, plain.line_touches);
        for (uint64_t l : fill.lines)
            EXPECT_TRUE(line_sampled(line_tag(l), shift));
        // A second call served by the entry records the same.
        WorkCounts again;
        again.line_shift = shift;
        {
            TeRulesMemoScope scope(&memo);
            WorkMeterScope meter(&again);
            ASSERT_EQ(compute_av(st, s, t, node.key.target_class, &avd), 0);
        }
        EXPECT_EQ(again.lines, fill.lines);
        EXPECT_EQ(again.line_touches, fill.line_touches);
        repeats += fill.line_touches < plain.line_touches;
        ++checked;
    });
    EXPECT_GT(checked, 20);
    EXPECT_GT(repeats, 0) << "some call reads a line twice";
}

TEST(SetBools, WrongCountIsRejected) {
    PolicyState st = policy_state_create(policydb_read_file(debian_policy("default")));
    std::vector<int> values(3, 1);
    PolicyState out;
    EXPECT_EQ(set_bools_inplace(st, values), -EINVAL);
    EXPECT_EQ(set_bools_cond_dup(st, values, &out), -EINVAL);
    EXPECT_EQ(st.seqno, 0u);
}

TEST(PolicyDup, CondDupHasTheSameShape) {
    const PolicyState &st = default_state();
    auto copy = cond_policy_dup(*st.db.cond);
    const CondPolicy &o = *st.db.cond;
    EXPECT_EQ(copy->te_cond_avtab.nel(), o.te_cond_avtab.nel());
    EXPECT_EQ(copy->te_cond_avtab.nslot(), o.te_cond_avtab.nslot());
    ASSERT_EQ(copy->cond_list.size(), o.cond_list.size());
    for (size_t i = 0; i < o.cond_list.size(); ++i) {
        ASSERT_EQ(copy->cond_list[i].true_list.size(), o.cond_list[i].true_list.size());
        for (size_t j = 0; j < o.cond_list[i].true_list.size(); ++j) {
            const AvtabNode *a = copy->cond_list[i].true_list[j], *b = o.cond_list[i].true_list[j];
            EXPECT_NE(a, b);
            EXPECT_EQ(a->key.specified, b->key.specified);
            EXPECT_EQ(a->key.source_type, b->key.source_type);
            EXPECT_EQ(a->datum.u.data, b->datum.u.data);
        }
    }
    for (uint32_t i = 0; i < o.te_cond_avtab.nslot(); ++i) {
        uint32_t la = 0, lb = 0;
        for (AvtabNode *n = copy->te_cond_avtab.slot(i); n; n = n->next)
            ++la;
        for (AvtabNode *n = o.te_cond_avtab.slot(i); n; n = n->next)
            ++lb;
        ASSERT_EQ(la, lb) << "slot " << i;
    }
}

TEST(LoadPolicy, SidsKeepTheirContextsWhereStillValid) {
    PolicyState old = policy_state_create(policydb_read_file(debian_policy("default")));
    ContextGen gen(old.p(), 5);
    std::vector<std::pair<uint32_t, std::string>> sids;
    for (int i = 0; i < 300; ++i) {
        std::string s = gen.str(gen.random_context());
        uint32_t sid;
        ASSERT_EQ(context_to_sid(old, s, &sid), 0);
        sids.emplace_back(sid, s);
    }
    // The same policy flavour with MLS sensitivities s1..s15 and other user ranges.
    PolicyState next;
    ASSERT_EQ(load_policy(&old, policydb_read_file(debian_policy("mls")), &next), 0);
    EXPECT_EQ(next.seqno, old.seqno + 1);
    int kept = 0, invalid = 0;
    for (const auto &[sid, s] : sids) {
        uint32_t again;
        std::string out;
        ASSERT_EQ(sid_to_context(next, sid, &out, true), 0);
        EXPECT_EQ(out, s) << "converted by name, or kept by its string";
        if (context_to_sid(next, s, &again) == 0) {
            EXPECT_EQ(again, sid) << s;
            ++kept;
        } else {
            ++invalid;
            std::string unl, plain;
            ASSERT_EQ(sid_to_context(next, SECINITSID_UNLABELED, &unl), 0);
            ASSERT_EQ(sid_to_context(next, sid, &plain), 0);
            EXPECT_EQ(plain, unl) << "an invalid context reads as unlabeled unless forced";
        }
    }
    EXPECT_GT(kept, 0);
    // Booleans kept by name.
    EXPECT_EQ(get_bools(next), get_bools(old));
    // Before the commit a new SID in the old table appears in the new one too; after, -ESTALE.
    uint32_t mirrored;
    ASSERT_EQ(context_to_sid(old, "staff_u:staff_r:staff_t:s0", &mirrored), 0);
    std::string seen;
    ASSERT_EQ(sid_to_context(next, mirrored, &seen, true), 0);
    EXPECT_EQ(seen, "staff_u:staff_r:staff_t:s0");
    commit_load_policy(old);
    uint32_t sid;
    EXPECT_EQ(context_to_sid(old, "sysadm_u:sysadm_r:sysadm_t:s0", &sid), -ESTALE);
    EXPECT_EQ(context_to_sid(next, "sysadm_u:sysadm_r:sysadm_t:s0", &sid), 0);
}

TEST(WorkMeter, ComputeAvCountsItsWork) {
    const PolicyState &st = default_state();
    uint32_t s, t;
    ASSERT_EQ(context_to_sid(st, "unconfined_u:unconfined_r:unconfined_t:s0", &s), 0);
    ASSERT_EQ(context_to_sid(st, "system_u:object_r:etc_t:s0", &t), 0);
    WorkCounts w;
    {
        WorkMeterScope scope(&w);
        AvDecision avd;
        ASSERT_EQ(compute_av(st, s, t, st.p().classes.find("file")->value, &avd), 0);
        EXPECT_NE(avd.allowed, 0u);
    }
#ifndef LOCKSIM_NO_WORK_METER
    EXPECT_GT(w[Work::AvtabNode], 0u);
    EXPECT_GT(w[Work::EbitmapWord], 0u);
    // context_struct_compute_av's loops over the two types' attribute maps
    // (ebitmap_for_each_positive_bit): a step per source attribute, and for each a step per
    // target attribute.
    const Context *sc = st.sidtab->search(s), *tc = st.sidtab->search(t);
    ASSERT_TRUE(sc && tc);
    const uint64_t ns = st.p().type_attr_map[sc->type - 1].cardinality(),
                   nt = st.p().type_attr_map[tc->type - 1].cardinality();
    ASSERT_GT(ns * nt, 1u);
    EXPECT_EQ(w[Work::BitIteration], ns + ns * nt);
#endif
}

}  // namespace
}  // namespace locksim::ss::test
