// Every strategy gives exactly the decisions of a single-threaded replay: many CPUs read while
// two tasks toggle booleans and one reloads the policy; each read records the policy version
// (seqno) it saw and its result, and the replay recomputes it on the single-threaded core at
// that version, built from the same committed changes in seqno order.
#include <gtest/gtest.h>

#include <map>

#include "ss/services.h"
#include "strategy_test_util.h"

namespace locksim::strategies::test {
namespace {

using kernel::kMsec;
using kernel::kUsec;

enum class ReadKind { ComputeAv, AvcHasPerm, Transition };

struct Read {
    ReadKind kind;
    uint32_t ssid, tsid, tclass;
    uint32_t seqno = 0;
    int rc = 0;
    ss::AvDecision avd;
    std::string context;  // Transition: the new object's context
};

struct Commit {
    bool reload = false;
    std::vector<int> values;
};

const char *const kDomains[] = {"kernel_t", "init_t", "mail_t", "ftp_t"};
const char *const kFiles[] = {"nfs_t",        "samba_share_t", "public_t",
                              "mail_spool_t", "ftp_home_t",    "unlabeled_t"};

// (source, target, class) index triples (into kDomains + kFiles, and file/dir/process) whose
// decision or transition depends on booleans.
const size_t kSensitive[][3] = {{2, 4, 0}, {2, 4, 1}, {3, 8, 0}, {2, 5, 0},
                                {3, 6, 0}, {3, 5, 1}, {2, 6, 0}};

// The same SIDs, in the same order, in any state of the fixture policy.
std::vector<uint32_t> make_sids(const ss::PolicyState &st) {
    std::vector<uint32_t> sids;
    for (const char *d : kDomains) {
        uint32_t sid;
        EXPECT_EQ(ss::context_to_sid(st, std::string("system_u:system_r:") + d, &sid), 0);
        sids.push_back(sid);
    }
    for (const char *f : kFiles) {
        uint32_t sid;
        EXPECT_EQ(ss::context_to_sid(st, std::string("system_u:object_r:") + f, &sid), 0);
        sids.push_back(sid);
    }
    return sids;
}

class Replay : public ::testing::TestWithParam<StrategyCase> {};

TEST_P(Replay, EveryReadMatchesTheSingleThreadedCoreAtItsVersion) {
    const std::vector<uint8_t> image = read_bytes(fixture("cond.33"));
    const std::vector<uint8_t> reload_image = read_bytes(fixture("cond.32"));
    ASSERT_FALSE(image.empty());
    ASSERT_FALSE(reload_image.empty());
    CoreConfig core;
    core.avc_threshold = 24;  // small: reclaim runs too

    ss::PolicyState served = make_policy_state(ss::policydb_read(image), core);
    const std::vector<uint32_t> sids = make_sids(served);
    const uint32_t nbools = served.db.cond->bools.nprim;
    std::vector<uint32_t> classes;
    for (const char *c : {"file", "dir", "process"})
        classes.push_back(served.p().classes.find(c)->value);

    sim::SimConfig cfg = sim_config(8, 30 * kMsec, 7);
    cfg.hz = 1000;  // grace periods of about a millisecond: more versions in a short run
    sim::SimPlatform sim(cfg);
    kernel::PlatformScope scope(sim);
    auto server =
        make_security_server(GetParam().name, GetParam().options, std::move(served), core);

    std::vector<Read> reads;
    std::map<uint32_t, Commit> commits;
    for (int i = 0; i < 6; ++i)
        sim.create_task({"reader" + std::to_string(i)}, [&, i] {
            while (!kernel::kthread_should_stop()) {
                Read r{static_cast<ReadKind>(kernel::get_random_below(3)),
                       sids[kernel::get_random_below(sids.size())],
                       sids[kernel::get_random_below(sids.size())],
                       classes[kernel::get_random_below(classes.size())]};
                if (i == 0) {
                    // One slow reader, on the pairs the booleans change.
                    r.kind = ReadKind::Transition;
                    const auto &p = kSensitive[kernel::get_random_below(std::size(kSensitive))];
                    r.ssid = sids[p[0]];
                    r.tsid = sids[p[1]];
                    r.tclass = classes[p[2]];
                }
                switch (r.kind) {
                    case ReadKind::ComputeAv:
                        r.rc = server->compute_av(r.ssid, r.tsid, r.tclass, &r.avd);
                        r.seqno = r.avd.seqno;
                        break;
                    case ReadKind::AvcHasPerm:
                        r.rc = server->avc_has_perm(r.ssid, r.tsid, r.tclass, 0x3, &r.avd);
                        r.seqno = r.avd.seqno;
                        break;
                    case ReadKind::Transition:
                        r.rc = server->read_policy([&](const ss::PolicyState &st) {
                            r.seqno = st.seqno;
                            // A reader that stays in its section a while, so writers overlap it.
                            kernel::ndelay(30 * kUsec);
                            return kernel::compute("transition_sid", [&] {
                                uint32_t out;
                                ss::compute_av(st, r.ssid, r.tsid, r.tclass, &r.avd);
                                int rc = ss::transition_sid(st, r.ssid, r.tsid, r.tclass, &out);
                                if (rc == 0) rc = ss::sid_to_context(st, out, &r.context);
                                return rc;
                            });
                        });
                        break;
                }
                reads.push_back(r);
                kernel::ndelay(static_cast<kernel::Time>(kernel::get_random_below(3000)));
            }
        });
    for (int i = 0; i < 2; ++i)
        sim.create_task({"setsebool" + std::to_string(i)}, [&] {
            while (!kernel::kthread_should_stop()) {
                std::vector<int> values(nbools);
                for (int &v : values)
                    v = static_cast<int>(kernel::get_random_below(2));
                uint32_t seqno = 0;
                ASSERT_EQ(server->set_bools(values, &seqno), 0);
                ASSERT_FALSE(commits.count(seqno)) << "seqno " << seqno << " committed twice";
                commits[seqno] = Commit{false, values};
                kernel::sleep_for(static_cast<kernel::Time>(200 + kernel::get_random_below(600)) *
                                  kUsec);
            }
        });
    sim.create_task({"load_policy"}, [&] {
        kernel::sleep_for(9 * kMsec);
        uint32_t seqno = 0;
        ASSERT_EQ(server->load_policy(reload_image, &seqno), 0);
        commits[seqno] = Commit{true, {}};
    });
    kernel::RunResults res = sim.run();
    EXPECT_TRUE(res.violations.empty()) << violations_text(res);

    // The replay: version 0 from the image, then every commit in seqno order.
    ASSERT_GE(commits.size(), 6u);
    std::map<uint32_t, std::vector<const Read *>> by_version;
    for (const Read &r : reads)
        by_version[r.seqno].push_back(&r);
    ASSERT_GE(by_version.size(), 4u) << "reads saw too few versions to mean anything";
    size_t checked = 0;
    auto state =
        std::make_unique<ss::PolicyState>(make_policy_state(ss::policydb_read(image), core));
    ASSERT_EQ(make_sids(*state), sids);
    auto check_version = [&](uint32_t version) {
        for (const Read *r : by_version[version]) {
            ++checked;
            ss::AvDecision want;
            ASSERT_EQ(ss::compute_av(*state, r->ssid, r->tsid, r->tclass, &want), 0);
            EXPECT_EQ(r->avd.allowed, want.allowed) << "version " << version;
            EXPECT_EQ(r->avd.auditallow, want.auditallow) << "version " << version;
            EXPECT_EQ(r->avd.auditdeny, want.auditdeny) << "version " << version;
            EXPECT_EQ(r->avd.flags, want.flags) << "version " << version;
            if (r->kind == ReadKind::AvcHasPerm) {
                EXPECT_EQ(r->rc, (0x3 & ~want.allowed) ? -EACCES : 0);
            } else if (r->kind == ReadKind::Transition) {
                uint32_t out;
                std::string context;
                int rc = ss::transition_sid(*state, r->ssid, r->tsid, r->tclass, &out);
                if (rc == 0) rc = ss::sid_to_context(*state, out, &context);
                EXPECT_EQ(r->rc, rc) << "version " << version;
                EXPECT_EQ(r->context, context) << "version " << version;
            }
        }
    };
    check_version(0);
    uint32_t expect = 1;
    for (const auto &[seqno, c] : commits) {
        ASSERT_EQ(seqno, expect++) << "committed versions must be consecutive";
        auto next = std::make_unique<ss::PolicyState>();
        if (c.reload) {
            ASSERT_EQ(ss::load_policy(state.get(), reload_image, next.get()), 0);
            ss::commit_load_policy(*state);
        } else {
            ASSERT_EQ(ss::set_bools_cond_dup(*state, c.values, next.get()), 0);
        }
        ASSERT_EQ(next->seqno, seqno);
        state = std::move(next);
        check_version(seqno);
    }
    EXPECT_EQ(checked, reads.size()) << "a read saw a version that was never committed";
    EXPECT_GT(reads.size(), 500u);
    EXPECT_GT(res.ops.at("avc_refill").completed, 0u);
}

INSTANTIATE_TEST_SUITE_P(Strategies, Replay, ::testing::ValuesIn(all_strategy_cases()),
                         [](const auto &info) { return info.param.label(); });

}  // namespace
}  // namespace locksim::strategies::test
