#include "validate/torture.h"

#include <fmt/format.h>

#include <algorithm>

#include "record/op_names.h"
#include "ss/services.h"
#include "util/error.h"
#include "workloads/policy_facts.h"

namespace locksim {

namespace {

bool same_decision(const ss::AvDecision &a, const ss::AvDecision &b) {
    return a.allowed == b.allowed && a.auditallow == b.auditallow && a.auditdeny == b.auditdeny &&
           a.flags == b.flags;
}

}  // namespace

std::vector<TortureQuery> boolean_dependent_queries(const ss::PolicyState &st, size_t max,
                                                    ss::PolicyState *on, ss::PolicyState *off) {
    const ss::PolicyBase &p = st.p();
    const uint32_t nbools = st.db.cond ? st.db.cond->bools.nprim : 0;
    if (nbools == 0) throw UserError("torture: the policy has no booleans to toggle");
    std::vector<int> ones(nbools, 1), zeros(nbools, 0);
    if (ss::set_bools_cond_dup(st, ones, on) || ss::set_bools_cond_dup(*on, zeros, off))
        throw UserError("torture: cannot set the policy's booleans");

    // Queries from the conditional rules: a domain context for the source type and an object
    // context for the target, kept when both are valid and the decision depends on booleans.
    std::vector<TortureQuery> out;
    const char *level = st.db.mls() ? ":s0" : "";
    st.db.cond->te_cond_avtab.for_each([&](const ss::AvtabNode &n) {
        if (out.size() >= max) return;
        std::string s =
            fmt::format("system_u:system_r:{}{}", p.types.name_of(n.key.source_type), level);
        std::string t =
            fmt::format("system_u:object_r:{}{}", p.types.name_of(n.key.target_type), level);
        TortureQuery q{0, 0, n.key.target_class};
        if (ss::context_to_sid(st, s, &q.ssid) || ss::context_to_sid(st, t, &q.tsid)) return;
        ss::AvDecision a, b;
        ss::compute_av(*on, q.ssid, q.tsid, q.tclass, &a);
        ss::compute_av(*off, q.ssid, q.tsid, q.tclass, &b);
        if (same_decision(a, b)) return;
        if (std::any_of(out.begin(), out.end(), [&](const TortureQuery &o) {
                return o.ssid == q.ssid && o.tsid == q.tsid && o.tclass == q.tclass;
            }))
            return;
        out.push_back(q);
    });
    if (out.empty())
        throw UserError(
            "torture: no access decision of the policy depends on its booleans "
            "(with system_u:system_r / object_r contexts)");
    return out;
}

std::string TortureStats::pipe_text() const {
    std::string s = "pipe:";
    for (uint64_t n : pipe)
        s += fmt::format(" {}", n);
    return s;
}

Torture::Torture(SecurityServer &server, TortureConfig cfg) : server_(server), cfg_(cfg) {
    const ss::PolicyState &st = server.setup_state();
    ss::PolicyState on, off;
    // Refuses a policy without booleans.
    queries_ = boolean_dependent_queries(st, std::max(cfg_.queries, cfg_.pool), &on, &off);
    nbools_ = st.db.cond->bools.nprim;
    seq0_ = st.seqno;
    if (cfg_.read == ValidateRead::Contexts) {
        const PolicyFacts facts(st);
        const PolicyFacts::CategoryPairs pairs = facts.container_pairs();
        if (pairs.count() < cfg_.sids)
            throw UserError(
                fmt::format("validate: the policy offers {} category pairs, fewer than "
                            "the {} contexts asked for (an MLS policy with categories "
                            "is needed)",
                            pairs.count(), cfg_.sids));
        for (uint64_t i = 0; i < cfg_.sids; ++i) {
            std::string ctx = pairs.context(i);
            uint32_t sid = 0;
            if (ss::context_to_sid(st, ctx, &sid) != 0)
                throw UserError(fmt::format("validate: the policy has no valid context '{}'", ctx));
            contexts_.emplace_back(std::move(ctx), sid);
        }
    }
    latest_ = seq0_;
    for (const Query &q : queries_) {
        const ss::PolicyState *states[3] = {&st, &on, &off};
        for (size_t i = 0; i < 3; ++i) {
            ss::AvDecision d;
            ss::compute_av(*states[i], q.ssid, q.tsid, q.tclass, &d);
            expect_[i].push_back(d);
        }
    }
}

const ss::AvDecision &Torture::expected(uint32_t seqno, size_t q) const {
    if (seqno == seq0_) return expect_[0][q];
    return expect_[(seqno - seq0_) % 2 == 1 ? 1 : 2][q];
}

void Torture::create_tasks() {
    for (int i = 0; i < cfg_.readers; ++i)
        kernel::create_task({fmt::format("torture_reader{}", i)}, [this, i] {
            if (cfg_.read == ValidateRead::Contexts)
                context_reader();
            else
                reader(i);
        });
    kernel::create_task({"torture_writer"}, [this] { writer(); });
}

void Torture::reader(int) {
    static const kernel::Label kRead(kernel::op::kTortureRead);
    const bool draw = cfg_.pool > cfg_.queries;
    const size_t nq = draw ? cfg_.queries : queries_.size();
    std::vector<ss::AvDecision> got(nq);
    std::vector<size_t> pick(nq);
    for (size_t q = 0; q < nq; ++q)
        pick[q] = q;
    while (!kernel::kthread_should_stop()) {
        uint32_t seq_begin = 0, seq_end = 0, latest = 0;
        if (draw)
            for (size_t &p : pick)
                p = static_cast<size_t>(kernel::get_random_below(queries_.size()));
        {
            kernel::OpScope op(kRead);
            server_.read_policy([&](const ss::PolicyState &st) {
                seq_begin = st.seqno;
                kernel::compute(kRead, [&] {
                    for (size_t q = 0; q < nq; ++q) {
                        const Query &x = queries_[pick[q]];
                        ss::compute_av(st, x.ssid, x.tsid, x.tclass, &got[q]);
                    }
                });
                if (cfg_.reader_hold > 0) kernel::ndelay(cfg_.reader_hold);
                seq_end = st.seqno;
                latest = latest_.load();
                return 0;
            });
        }
        uint64_t bad = seq_begin != seq_end ? 1 : 0;
        for (size_t q = 0; q < nq && !bad; ++q)
            if (!same_decision(got[q], expected(seq_begin, pick[q]))) ++bad;
        ++reads_;
        decisions_ += nq;
        mixed_ += bad;
        const uint32_t age = latest > seq_begin ? latest - seq_begin : 0;
        ++pipe_[std::min<size_t>(age, TortureStats::kPipe - 1)];
    }
}

// Each section a context_to_sid of a context the table holds, drawn at random: the strategy's
// own path (its lock, the era's lookup: a scan, a hash chain), the string already at hand.
void Torture::context_reader() {
    static const kernel::Label kRead(kernel::op::kTortureRead);
    while (!kernel::kthread_should_stop()) {
        const auto &[ctx, want] =
            contexts_[static_cast<size_t>(kernel::get_random_below(contexts_.size()))];
        uint32_t sid = 0;
        int rc;
        {
            kernel::OpScope op(kRead);
            rc = server_.context_to_sid(ctx, &sid);
        }
        ++reads_;
        if (rc != 0 || sid != want) ++wrong_sids_;
    }
}

void Torture::writer() {
    std::vector<int> ones(nbools_, 1), zeros(nbools_, 0);
    for (uint64_t k = 1; !kernel::kthread_should_stop(); ++k) {
        uint32_t seqno = 0;
        if (server_.set_bools(k % 2 ? ones : zeros, &seqno) == 0) {
            latest_ = seqno;
            ++commits_;
        }
        kernel::sleep_for(cfg_.writer_period);
    }
}

TortureStats Torture::finish(const kernel::RunResults &r) const {
    TortureStats s;
    s.reads = reads_;
    s.decisions = decisions_;
    s.mixed = mixed_;
    s.wrong_sids = wrong_sids_;
    s.commits = commits_;
    for (size_t i = 0; i < s.pipe.size(); ++i)
        s.pipe[i] = pipe_[i];
    s.freed = r.count_violations("rcu_free_in_use") + r.count_violations("rcu_free_published");
    if (s.mixed) s.failures.push_back(fmt::format("{} mixed reads", s.mixed));
    if (s.wrong_sids)
        s.failures.push_back(
            fmt::format("{} context lookups gave no SID or another one", s.wrong_sids));
    for (const kernel::Violation &v : r.violations)
        s.failures.push_back(fmt::format("{}: {}", v.kind, v.message));
    if (s.reads == 0) s.failures.push_back("no read completed");
    return s;
}

}  // namespace locksim
