// Decision-for-decision agreement with libsepol: access vectors, new-object contexts, context
// validity and get_user_sids, before and after toggling booleans, on the Debian policies and the
// compiled fixtures.
#include <fmt/core.h>
#include <cerrno>
#include <cstdlib>
#include <set>

#include "sepol_oracle.h"
#include "ss/avtab.h"
#include "svc_test_util.h"

namespace locksim::ss::test {
namespace {

// Every build runs the full query sets (over 200,000 av queries in all), the sanitizer build
// that CI runs included; kScale > 1 shortens a local run.
constexpr uint32_t kScale = 1;

struct Counts {
    uint64_t av = 0, av_allowed = 0, create = 0, create_ok = 0, valid = 0, valid_ok = 0,
             skipped_quirk = 0;
};

class OracleRun {
  public:
    explicit OracleRun(const std::string &path)
        : st_(policy_state_create(policydb_read_file(path))), gen_(st_.p(), 12345) {
        if (so_load(path.c_str()) != 0) throw std::runtime_error("libsepol cannot read " + path);
        st_.p().te_avtab.for_each([&](const AvtabNode &n) { add_rule(n); });
        st_.db.cond->te_cond_avtab.for_each([&](const AvtabNode &n) { add_rule(n); });
        for (int i = 0; i < 600; ++i)
            pool_.push_back(gen_.random_context());
    }
    ~OracleRun() { so_unload(); }

    const PolicyBase &p() const { return st_.p(); }

    // Both SIDs of a context that both sides must accept.
    // libsepol finds a context by scanning its whole SID table: keep the table short (called
    // before a query, never between looking up its SIDs).
    void maybe_reset() {
        if (sepol_sids_ > 800) {
            so_reset_sids();
            sids_.clear();
            sepol_sids_ = 0;
        }
    }

    std::pair<uint32_t, unsigned> sids(const Context &c) {
        std::string s = gen_.str(c);
        auto it = sids_.find(s);
        if (it != sids_.end()) return it->second;
        uint32_t ours = 0;
        int rc = context_to_sid(st_, s, &ours);
        unsigned theirs = so_sid(s.c_str());
        EXPECT_EQ(rc == 0, theirs != 0) << s;
        if (rc != 0 || theirs == 0) ours = theirs = 0;
        ++sepol_sids_;
        return sids_[s] = {ours, theirs};
    }

    void check_av(const Context &s, const Context &t, uint32_t tclass, Counts &n) {
        maybe_reset();
        auto [os, ss] = sids(s);
        auto [ot, tt] = sids(t);
        if (!os || !ot) return;
        AvDecision avd;
        ASSERT_EQ(compute_av(st_, os, ot, tclass, &avd), 0);
        unsigned a = 0, aa = 0, ad = 0;
        ASSERT_EQ(so_compute_av_sid(ss, tt, tclass, &a, &aa, &ad), 0);
        ++n.av;
        n.av_allowed += a != 0;
        ASSERT_EQ(avd.allowed, a) << gen_.str(s) << " " << gen_.str(t) << " "
                                  << p().classes.name_of(tclass);
        ASSERT_EQ(avd.auditallow, aa) << gen_.str(s) << " " << gen_.str(t);
        ASSERT_EQ(avd.auditdeny, ad) << gen_.str(s) << " " << gen_.str(t);
    }

    void check_create(const Context &s, const Context &t, uint32_t tclass, Counts &n) {
        maybe_reset();
        auto [os, ss] = sids(s);
        auto [ot, tt] = sids(t);
        if (!os || !ot) return;
        uint32_t nsid = 0;
        int rc = transition_sid(st_, os, ot, tclass, &nsid);
        char *theirs = nullptr;
        int trc = so_create_sid(ss, tt, tclass, &theirs);
        ++sepol_sids_;
        ++n.create;
        ASSERT_EQ(rc, trc) << gen_.str(s) << " " << gen_.str(t) << " "
                           << p().classes.name_of(tclass);
        if (rc == 0) {
            ++n.create_ok;
            const Context *c = st_.sidtab->search(nsid);
            std::string ours;
            ASSERT_EQ(sid_to_context(st_, nsid, &ours), 0);
            if (sepol_render_quirk(*c))
                ++n.skipped_quirk;
            else
                EXPECT_EQ(ours, theirs) << gen_.str(s) << " " << gen_.str(t);
        }
        free(theirs);
    }

    void check_valid(const std::string &con, Counts &n) {
        uint32_t sid;
        bool ours = context_to_sid(st_, con, &sid) == 0;
        bool theirs = so_valid(con.c_str()) != 0;
        ++n.valid;
        n.valid_ok += ours;
        EXPECT_EQ(ours, theirs) << "'" << con << "'";
    }

    void run_av(uint32_t random, uint32_t directed, Counts &n) {
        for (uint32_t i = 0; i < random && !::testing::Test::HasFatalFailure(); ++i)
            check_av(pick(), pick(), 1 + gen_.uniform(p().classes.nprim), n);
        if (av_rules_.empty()) return;
        for (uint32_t i = 0; i < directed && !::testing::Test::HasFatalFailure(); ++i) {
            const AvtabKey &k = av_rules_[gen_.uniform(static_cast<uint32_t>(av_rules_.size()))];
            uint32_t s = gen_.concrete(k.source_type), t = gen_.concrete(k.target_type);
            if (!s || !t) continue;
            Context tc = gen_.uniform(2) ? gen_.object(t, false) : gen_.subject(t, false);
            check_av(gen_.subject(s, false), tc, k.target_class, n);
        }
    }

    void run_create(uint32_t random, uint32_t directed, Counts &n) {
        for (uint32_t i = 0; i < random && !::testing::Test::HasFatalFailure(); ++i)
            check_create(pick(), pick(), 1 + gen_.uniform(p().classes.nprim), n);
        if (type_rules_.empty()) return;
        for (uint32_t i = 0; i < directed && !::testing::Test::HasFatalFailure(); ++i) {
            const AvtabKey &k =
                type_rules_[gen_.uniform(static_cast<uint32_t>(type_rules_.size()))];
            uint32_t s = gen_.concrete(k.source_type), t = gen_.concrete(k.target_type);
            if (!s || !t) continue;
            check_create(gen_.subject(s, gen_.uniform(2)), gen_.object(t, gen_.uniform(2)),
                         k.target_class, n);
        }
    }

    void run_valid(uint32_t rounds, Counts &n) {
        for (uint32_t i = 0; i < rounds; ++i) {
            check_valid(gen_.str(pick()), n);
            for (const std::string &bad : gen_.invalid_variants())
                check_valid(bad, n);
        }
    }

    // Flips up to `count` booleans spread over the table, on both sides.
    uint32_t toggle_bools(uint32_t count) {
        std::vector<int> values = get_bools(st_);
        uint32_t nb = static_cast<uint32_t>(values.size());
        uint32_t flipped = 0;
        for (uint32_t i = 0; i < std::min(count, nb); ++i) {
            uint32_t idx = i * nb / std::min(count, nb);
            values[idx] = !values[idx];
            std::string name(st_.db.cond->bools.name_of(idx + 1));
            EXPECT_EQ(so_set_bool(name.c_str(), values[idx]), 0) << name;
            ++flipped;
        }
        EXPECT_EQ(set_bools_inplace(st_, values), 0);
        return flipped;
    }

    PolicyState &state() { return st_; }
    ContextGen &gen() { return gen_; }

  private:
    void add_rule(const AvtabNode &n) {
        uint16_t kind = n.key.specified & ~AVTAB_ENABLED;
        if (kind == AVTAB_ALLOWED) av_rules_.push_back(n.key);
        if (kind == AVTAB_TRANSITION) type_rules_.push_back(n.key);
    }
    const Context &pick() { return pool_[gen_.uniform(static_cast<uint32_t>(pool_.size()))]; }

    PolicyState st_;
    ContextGen gen_;
    std::vector<Context> pool_;
    std::vector<AvtabKey> av_rules_, type_rules_;
    std::map<std::string, std::pair<uint32_t, unsigned>> sids_;
    uint32_t sepol_sids_ = 0;
};

uint64_t g_total_av = 0;

void run_policy(const std::string &path, uint32_t av_random, uint32_t av_directed,
                uint32_t create_n, uint32_t valid_rounds, uint32_t bools) {
    SCOPED_TRACE(path);
    OracleRun run(path);
    Counts before, after;
    run.run_av(av_random / kScale, av_directed / kScale, before);
    run.run_create(create_n / kScale, create_n / kScale, before);
    run.run_valid(valid_rounds / kScale, before);
    if (::testing::Test::HasFatalFailure()) return;
    uint32_t flipped = run.toggle_bools(bools);
    run.run_av(av_random / kScale, av_directed / kScale, after);
    run.run_create(create_n / kScale, create_n / kScale, after);
    run.run_valid(valid_rounds / kScale, after);
    g_total_av += before.av + after.av;
    fmt::print(
        "{}: av {}+{} ({} with permissions), create {}+{} ({} ok, {} not compared: "
        "libsepol print quirk), valid {}+{} ({} valid), {} booleans flipped\n",
        path, before.av, after.av, before.av_allowed + after.av_allowed, before.create,
        after.create, before.create_ok + after.create_ok,
        before.skipped_quirk + after.skipped_quirk, before.valid, after.valid,
        before.valid_ok + after.valid_ok, flipped);
    // Rule-directed queries must mostly hit allowed rules, not only misses.
    EXPECT_GT(before.av_allowed * 2, before.av / 2);
    EXPECT_GT(before.create_ok, 0u);
    EXPECT_GT(before.valid_ok, 0u);
}

TEST(Oracle, DebianDefault) {
    run_policy(debian_policy("default"), 16000, 40000, 6000, 60, 25);
}

TEST(Oracle, DebianMls) {
    run_policy(debian_policy("mls"), 16000, 40000, 6000, 60, 25);
}

TEST(Oracle, Fixtures) {
    for (const std::string &path : oracle_policies()) {
        if (path.find(LOCKSIM_POLICY_DIR) == 0) continue;
        run_policy(path, 4000, 6000, 2000, 40, 25);
    }
    std::cout << "av queries in this test: " << g_total_av << "\n";
}

// get_user_sids: the same contexts as libsepol's, which skips the caller's own type.
TEST(Oracle, GetUserSids) {
    for (const std::string &path : oracle_policies()) {
        SCOPED_TRACE(path);
        OracleRun run(path);
        const PolicyBase &p = run.p();
        std::vector<Context> froms;
        for (int i = 0; i < 3; ++i)
            froms.push_back(run.gen().subject(run.gen().random_type(), i == 0));
        if (const TypeDatum *t = p.types.find("unconfined_t"))
            froms.push_back(run.gen().subject(t->value, false));
        for (const Context &from : froms) {
            run.maybe_reset();
            std::string fromstr = run.gen().str(from);
            auto [ofrom, sfrom] = run.sids(from);
            if (!ofrom) continue;
            for (uint32_t u = 1; u <= p.users.nprim; ++u) {
                std::string user(p.users.name_of(u));
                std::vector<uint32_t> ours;
                ASSERT_EQ(get_user_sids(run.state(), ofrom, user, &ours), 0);
                std::set<std::string> ours_s, theirs_s;
                bool quirk = false;
                for (uint32_t sid : ours) {
                    const Context *c = run.state().sidtab->search(sid);
                    if (c->type == from.type) continue;  // libsepol leaves these out
                    quirk |= sepol_render_quirk(*c);
                    std::string s;
                    ASSERT_EQ(sid_to_context(run.state(), sid, &s), 0);
                    ours_s.insert(s);
                }
                char **strs = nullptr;
                unsigned n = 0;
                ASSERT_EQ(so_get_user_sids(fromstr.c_str(), user.c_str(), &strs, &n), 0);
                for (unsigned i = 0; i < n; ++i)
                    theirs_s.insert(strs[i]);
                so_free_strings(strs, n);
                if (!quirk) {
                    EXPECT_EQ(ours_s, theirs_s) << fromstr << " " << user;
                }
                EXPECT_EQ(ours_s.size(), theirs_s.size()) << fromstr << " " << user;
            }
        }
    }
}

}  // namespace
}  // namespace locksim::ss::test
