// Decision-for-decision agreement with libsepol: access vectors; new-object contexts by
// type_transition, type_member and type_change (transition_sid, member_sid, change_sid), by
// named type transitions and for new sockets (the kernel's socket-class defaults that aim7's
// socket creation takes, derived from libsepol's answer); context validity and get_user_sids;
// before and after toggling booleans in place, by cond_dup and by a full copy, on the Debian
// policies and the compiled fixtures. New contexts are compared with their category sets as sets
// (libsepol's printer misrenders a set that crosses a 64-bit word with a gap, so both sides are
// written out bit by bit), and contexts are drawn from a pool of 2000.
//
// The query counts are a quarter of the full sets by default, to keep the test command within
// its time budget; LOCKSIM_FULL_TESTS=1 runs the full sets (over 200,000 av queries).
#include <fmt/core.h>
#include <cerrno>
#include <cstdlib>
#include <set>

#include "sepol_oracle.h"
#include "ss/avtab.h"
#include "ss/context_string.h"
#include "svc_test_util.h"

namespace locksim::ss::test {
namespace {

uint32_t scale() {
    const char *full = std::getenv("LOCKSIM_FULL_TESTS");
    return full && std::string(full) == "1" ? 1 : 4;
}

constexpr int kPoolSize = 2000;

enum class BoolPath { InPlace, CondDup, FullCopy };

struct Counts {
    uint64_t av = 0, av_allowed = 0, create = 0, create_ok = 0, named = 0, named_hit = 0,
             named_refused = 0, socket = 0, socket_ok = 0, valid = 0, valid_ok = 0;
};

class OracleRun {
  public:
    explicit OracleRun(const std::string &path, int pool_size = kPoolSize)
        : st_(policy_state_create(policydb_read_file(path))), gen_(st_.p(), 12345) {
        if (so_load(path.c_str()) != 0) throw std::runtime_error("libsepol cannot read " + path);
        gen_.avoid_print_quirk = false;
        st_.p().te_avtab.for_each([&](const AvtabNode &n) { add_rule(n); });
        st_.db.cond->te_cond_avtab.for_each([&](const AvtabNode &n) { add_rule(n); });
        for (int i = 0; i < pool_size; ++i)
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

    // A context written with every category listed, as so_render writes libsepol's.
    std::string render(const Context &c) const {
        std::string out = fmt::format("{}:{}:{}", p().users.name_of(c.user),
                                      p().roles.name_of(c.role), p().types.name_of(c.type));
        if (!p().mls) return out;
        auto level = [&](const MlsLevel &l) {
            std::string s(p().levels.by_value(l.sens) ? p().levels.by_value(l.sens)->name : "?");
            bool first = true;
            for (uint32_t bit : l.cat.bits()) {
                s += first ? ":" : ",";
                s += p().cats.name_of(bit + 1);
                first = false;
            }
            return s;
        };
        out += ":" + level(c.range.level[0]);
        if (!mls_level_eq(c.range.level[0], c.range.level[1])) out += "-" + level(c.range.level[1]);
        return out;
    }

    // kind: 0 type_transition, 1 type_member, 2 type_change.
    void check_compute(const Context &s, const Context &t, uint32_t tclass, int kind, Counts &n) {
        static constexpr uint32_t specified[] = {AVTAB_TRANSITION, AVTAB_MEMBER, AVTAB_CHANGE};
        maybe_reset();
        auto [os, ss] = sids(s);
        auto [ot, tt] = sids(t);
        if (!os || !ot) return;
        uint32_t nsid = 0;
        int rc = compute_sid(st_, os, ot, tclass, specified[kind], {}, &nsid);
        char *theirs = nullptr;
        int trc = so_compute_sid_kind(ss, tt, tclass, kind, &theirs);
        ++sepol_sids_;
        ++n.create;
        ASSERT_EQ(rc, trc) << kind << ": " << gen_.str(s) << " " << gen_.str(t) << " "
                           << p().classes.name_of(tclass);
        if (rc == 0) {
            ++n.create_ok;
            EXPECT_EQ(render(*st_.sidtab->search(nsid)), theirs)
                << kind << ": " << gen_.str(s) << " " << gen_.str(t);
        }
        free(theirs);
    }

    // A new socket: the kernel's socket-class defaults (the creator's role, type and full
    // range where no rule decides), which libsepol lacks and so_socket_sid adds to its answer.
    void check_socket(const Context &s, const Context &t, uint32_t tclass, Counts &n) {
        maybe_reset();
        auto [os, ss] = sids(s);
        auto [ot, tt] = sids(t);
        if (!os || !ot) return;
        char *theirs = nullptr;
        int trc = so_socket_sid(ss, tt, tclass, &theirs);
        sepol_sids_ += 2;
        uint32_t nsid = 0;
        int rc = compute_sid(st_, os, ot, tclass, AVTAB_TRANSITION, {}, &nsid, true);
        ++n.socket;
        ASSERT_EQ(rc, trc) << gen_.str(s) << " " << gen_.str(t) << " "
                           << p().classes.name_of(tclass);
        if (rc == 0) {
            ++n.socket_ok;
            EXPECT_EQ(render(*st_.sidtab->search(nsid)), theirs)
                << gen_.str(s) << " " << gen_.str(t) << " " << p().classes.name_of(tclass);
        }
        free(theirs);
    }

    // A named type transition: libsepol's services take no name, so the expected context is
    // libsepol's type_transition result with the type its filename_trans table gives.
    void check_named(const Context &s, const Context &t, uint32_t tclass, const std::string &name,
                     Counts &n) {
        maybe_reset();
        auto [os, ss] = sids(s);
        auto [ot, tt] = sids(t);
        if (!os || !ot) return;
        char *theirs = nullptr;
        int trc = so_compute_sid_kind(ss, tt, tclass, 0, &theirs);
        ++sepol_sids_;
        if (trc != 0) return;
        std::string expected = theirs;
        free(theirs);
        if (unsigned otype = so_filename_otype(s.type, t.type, tclass, name.c_str())) {
            size_t a = expected.find(':', expected.find(':') + 1) + 1;
            size_t b = expected.find(':', a);
            expected.replace(a, b == std::string::npos ? std::string::npos : b - a,
                             p().types.name_of(otype));
            ++n.named_hit;
        }
        uint32_t nsid = 0;
        int rc = compute_sid(st_, os, ot, tclass, AVTAB_TRANSITION, name, &nsid);
        ++n.named;
        // A named type may not be valid for the new context's role or user: libsepol's context
        // check decides, and ours must refuse exactly those contexts, as the kernel does.
        const bool valid = so_valid(expected.c_str()) != 0;
        ASSERT_EQ(rc == 0, valid) << "rc " << rc << ": " << gen_.str(s) << " " << gen_.str(t) << " "
                                  << p().classes.name_of(tclass) << " \"" << name << "\" -> "
                                  << expected;
        if (!valid) {
            EXPECT_TRUE(rc == -EACCES || rc == -EINVAL) << rc;
            ++n.named_refused;
            return;
        }
        EXPECT_EQ(render(*st_.sidtab->search(nsid)), expected)
            << gen_.str(s) << " " << gen_.str(t) << " " << p().classes.name_of(tclass) << " \""
            << name << "\"";
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
            check_compute(pick(), pick(), 1 + gen_.uniform(p().classes.nprim),
                          static_cast<int>(gen_.uniform(3)), n);
        for (int kind = 0; kind < 3; ++kind) {
            const std::vector<AvtabKey> &rules = type_rules_[kind];
            if (rules.empty()) continue;
            uint32_t count = kind == 0 ? directed : directed / 4 + 1;
            for (uint32_t i = 0; i < count && !::testing::Test::HasFatalFailure(); ++i) {
                const AvtabKey &k = rules[gen_.uniform(static_cast<uint32_t>(rules.size()))];
                uint32_t s = gen_.concrete(k.source_type), t = gen_.concrete(k.target_type);
                if (!s || !t) continue;
                check_compute(gen_.subject(s, gen_.uniform(2)), gen_.object(t, gen_.uniform(2)),
                              k.target_class, kind, n);
            }
        }
        // Socket classes: random pairs, and pairs a socket type rule names.
        std::vector<uint32_t> sockets;
        for (uint32_t c = 1; c <= p().classes.nprim; ++c)
            if (is_socket_class(p(), c)) sockets.push_back(c);
        for (uint32_t i = 0;
             i < directed / 4 && !sockets.empty() && !::testing::Test::HasFatalFailure(); ++i)
            check_socket(pick(), gen_.subject(gen_.random_type(), false),
                         sockets[gen_.uniform(static_cast<uint32_t>(sockets.size()))], n);
        for (const AvtabKey &k : type_rules_[0]) {
            if (::testing::Test::HasFatalFailure() || !is_socket_class(p(), k.target_class))
                continue;
            uint32_t s = gen_.concrete(k.source_type), t = gen_.concrete(k.target_type);
            if (s && t && gen_.uniform(8) == 0)
                check_socket(gen_.subject(s, false), gen_.subject(t, false), k.target_class, n);
        }
        // Named type transitions: a rule's name, one of its source types, its target.
        const auto &named = p().filename_trans;
        for (uint32_t i = 0; i < directed && !named.empty() && !::testing::Test::HasFatalFailure();
             ++i) {
            const FilenameTrans &ft = named[gen_.uniform(static_cast<uint32_t>(named.size()))];
            const FilenameTransDatum &d =
                ft.datums[gen_.uniform(static_cast<uint32_t>(ft.datums.size()))];
            std::vector<uint32_t> stypes;
            for (uint32_t b : d.stypes.bits())
                stypes.push_back(b);
            uint32_t s =
                gen_.concrete(stypes[gen_.uniform(static_cast<uint32_t>(stypes.size()))] + 1);
            uint32_t t = gen_.concrete(ft.ttype);
            if (!s || !t) continue;
            // Now and then a name that no rule has, which must fall back to the type rules.
            std::string name = gen_.uniform(8) ? ft.name : ft.name + "~";
            check_named(gen_.subject(s, false), gen_.object(t, false), ft.tclass, name, n);
        }
    }

    void run_valid(uint32_t rounds, Counts &n) {
        for (uint32_t i = 0; i < rounds; ++i) {
            check_valid(gen_.str(pick()), n);
            for (const std::string &bad : gen_.invalid_variants())
                check_valid(bad, n);
        }
    }

    // Flips up to `count` booleans spread over the table, on both sides; ours by `path`.
    uint32_t toggle_bools(uint32_t count, BoolPath path) {
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
        if (path == BoolPath::InPlace) {
            EXPECT_EQ(set_bools_inplace(st_, values), 0);
        } else {
            PolicyState next;
            EXPECT_EQ(path == BoolPath::CondDup ? set_bools_cond_dup(st_, values, &next)
                                                : set_bools_full_copy(st_, values, &next),
                      0);
            // The generator keeps reading the policy it was made with: keep that one alive.
            retired_.push_back(std::move(st_));
            st_ = std::move(next);
        }
        return flipped;
    }

    PolicyState &state() { return st_; }
    ContextGen &gen() { return gen_; }

  private:
    void add_rule(const AvtabNode &n) {
        uint16_t kind = n.key.specified & ~AVTAB_ENABLED;
        if (kind == AVTAB_ALLOWED) av_rules_.push_back(n.key);
        if (kind == AVTAB_TRANSITION) type_rules_[0].push_back(n.key);
        if (kind == AVTAB_MEMBER) type_rules_[1].push_back(n.key);
        if (kind == AVTAB_CHANGE) type_rules_[2].push_back(n.key);
    }
    const Context &pick() { return pool_[gen_.uniform(static_cast<uint32_t>(pool_.size()))]; }

    PolicyState st_;
    std::vector<PolicyState> retired_;
    ContextGen gen_;
    std::vector<Context> pool_;
    std::vector<AvtabKey> av_rules_;
    std::vector<AvtabKey> type_rules_[3];
    std::map<std::string, std::pair<uint32_t, unsigned>> sids_;
    uint32_t sepol_sids_ = 0;
};

uint64_t g_total_av = 0;

// Queries, then each boolean path in turn (in place, cond_dup, full copy) flips booleans on both
// sides and the queries run again.
void run_policy(const std::string &path, uint32_t av_random, uint32_t av_directed,
                uint32_t create_n, uint32_t valid_rounds, uint32_t bools) {
    SCOPED_TRACE(path);
    OracleRun run(path);
    const uint32_t k = scale();
    Counts before, after;
    run.run_av(av_random / k, av_directed / k, before);
    run.run_create(create_n / k, create_n / k, before);
    run.run_valid(valid_rounds / k, before);
    uint32_t flipped = 0;
    for (BoolPath bp : {BoolPath::InPlace, BoolPath::CondDup, BoolPath::FullCopy}) {
        if (::testing::Test::HasFatalFailure()) return;
        SCOPED_TRACE(bp == BoolPath::InPlace   ? "in place"
                     : bp == BoolPath::CondDup ? "cond_dup"
                                               : "full copy");
        flipped += run.toggle_bools(bools, bp);
        run.run_av(av_random / k / 3, av_directed / k / 3, after);
        run.run_create(create_n / k / 3, create_n / k / 3, after);
        run.run_valid(valid_rounds / k / 3 + 1, after);
    }
    g_total_av += before.av + after.av;
    fmt::print(
        "{}: av {}+{} ({} with permissions), new contexts {}+{} ({} ok), named {}+{} ({} by "
        "name, {} refused as invalid), sockets {}+{} ({} ok), valid {}+{} ({} valid), {} "
        "booleans flipped\n",
        path, before.av, after.av, before.av_allowed + after.av_allowed, before.create,
        after.create, before.create_ok + after.create_ok, before.named, after.named,
        before.named_hit + after.named_hit, before.named_refused + after.named_refused,
        before.socket, after.socket, before.socket_ok + after.socket_ok, before.valid, after.valid,
        before.valid_ok + after.valid_ok, flipped);
    // Rule-directed queries must mostly hit allowed rules, not only misses.
    EXPECT_GT(before.av_allowed * 2, before.av / 2);
    EXPECT_GT(before.create_ok, 0u);
    // A policy with named type transitions has them compared, and most by their name.
    if (!run.p().filename_trans.empty()) {
        EXPECT_GT(before.named, 0u);
        EXPECT_GT(before.named_hit * 2, before.named);
        EXPECT_LT(before.named_refused, before.named);
    }
    if (before.socket) {
        EXPECT_GT(before.socket_ok + after.socket_ok, 0u);
    }
    EXPECT_GT(before.valid_ok, 0u);
}

TEST(Oracle, DebianDefault) {
    run_policy(debian_policy("default"), 16000, 40000, 6000, 60, 25);
}

TEST(Oracle, DebianMls) {
    run_policy(debian_policy("mls"), 16000, 40000, 6000, 60, 25);
}

TEST(Oracle, Fixtures) {
    std::vector<std::string> paths = oracle_policies();
    for (bool mls : {false, true})
        for (const std::string &path : random_policies(mls))
            paths.push_back(path);
    size_t policies = 0;
    for (const std::string &path : paths) {
        if (path.find(LOCKSIM_POLICY_DIR) == 0) continue;
        run_policy(path, 4000, 6000, 2000, 40, 25);
        ++policies;
    }
    std::cout << "av queries in this test: " << g_total_av << "\n";
    // The six hand-written fixtures and the eight random ones (a missing one fails above).
    EXPECT_EQ(policies, 14u);
}

// get_user_sids: the same contexts as libsepol's, which skips the caller's own type.
TEST(Oracle, GetUserSids) {
    // Not the non-MLS random policies: libsepol 3.4 crashes there too (in its SID table insert).
    std::vector<std::string> paths = oracle_policies();
    for (const std::string &path : random_policies(true))
        paths.push_back(path);
    ASSERT_FALSE(paths.empty());
    for (const std::string &path : paths) {
        SCOPED_TRACE(path);
        size_t compared = 0;  // users compared, over every caller
        // The pool of 600 this test had, so that its callers are the same: libsepol 3.4 crashes
        // in sepol_get_user_sids (inserting into its SID table) for system_u called from
        // system_u:system_r:init_t on a non-MLS fixture, which a larger pool would draw.
        OracleRun run(path, 600);
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
                for (uint32_t sid : ours) {
                    const Context *c = run.state().sidtab->search(sid);
                    if (c->type == from.type) continue;  // libsepol leaves these out
                    ours_s.insert(run.render(*c));
                }
                char **strs = nullptr;
                unsigned n = 0;
                ASSERT_EQ(so_get_user_sids(fromstr.c_str(), user.c_str(), &strs, &n), 0);
                for (unsigned i = 0; i < n; ++i)
                    theirs_s.insert(strs[i]);
                so_free_strings(strs, n);
                EXPECT_EQ(ours_s, theirs_s) << fromstr << " " << user;
                ++compared;
            }
        }
        EXPECT_GT(compared, 0u) << "no caller's context was valid on both sides";
    }
}

}  // namespace
}  // namespace locksim::ss::test
