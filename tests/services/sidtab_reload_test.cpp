// A policy reload under readers that keep making new contexts, on the simulator: the live
// conversion and the freeze race with their inserts, some of them get -ESTALE and retry on the
// new policy, and afterwards every context still has its SID and libsepol's decisions.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "record/run_results.h"
#include "sepol_oracle.h"
#include "sim/sim_platform.h"
#include "strategies/security_server.h"
#include "svc_test_util.h"

namespace locksim::ss::test {
namespace {

std::vector<uint8_t> read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The i-th new context: an MCS pair of categories on an unconfined process (low = high, so
// that a conversion maps two categories, not 1024).
std::string new_context(int i) {
    return fmt::format("unconfined_u:unconfined_r:unconfined_t:s0:c{},c{}", i % 512, 512 + i / 512);
}

struct Made {
    int rc = 1;
    uint32_t sid = 0;
};

void reload_under_new_contexts(const std::string &strategy, SidtabEra era) {
    const std::string path = debian_policy("default");
    const std::vector<uint8_t> image = read_bytes(path);
    sim::SimConfig cfg;
    cfg.cpus = 8;
    cfg.duration = 100 * kernel::kMsec;
    cfg.seed = 3;
    cfg.profile = sim::find_profile("x86-modern");
    sim::SimPlatform sim(cfg);
    kernel::PlatformScope scope(sim);
    CoreConfig core;
    core.sidtab = era;
    auto server =
        make_security_server(strategy, {}, make_policy_state(policydb_read(image), core), core);
    constexpr int kMax = 512 * 512;
    auto made = std::make_shared<std::vector<Made>>(kMax);
    auto next = std::make_shared<int>(0);
    // Six processes, each making a context every few microseconds, so that now and then one
    // is between taking the policy and inserting when a reload freezes the old table.
    for (int t = 0; t < 6; ++t)
        sim.create_task({fmt::format("maker/{}", t)}, [&server, made, next] {
            while (!kernel::kthread_should_stop() && *next < kMax) {
                const int i = (*next)++;
                Made &m = (*made)[static_cast<size_t>(i)];
                m.rc = server->context_to_sid(new_context(i), &m.sid);
                kernel::sleep_for(2 * kernel::kUsec);
            }
        });
    int loads = 0;
    sim.create_task({"reload"}, [&] {
        while (!kernel::kthread_should_stop()) {
            kernel::msleep(2);
            EXPECT_EQ(server->load_policy(image), 0);
            ++loads;
        }
    });
    const kernel::RunResults r = sim.run();
    ASSERT_GE(loads, 3);

    ASSERT_TRUE(r.ops.contains("sidtab_estale_retry"));
    EXPECT_GT(r.ops.at("sidtab_estale_retry").completed, 0u);
    EXPECT_EQ(r.ops.contains("sidtab_convert_hashtable"), era == SidtabEra::Hash);

    // Every context made kept its SID through the reloads, and decides as libsepol does.
    const PolicyState &st = server->setup_state();
    ASSERT_EQ(so_load(path.c_str()), 0);
    const unsigned file = so_class_value("file");
    const std::string target = "system_u:object_r:etc_t:s0";
    uint32_t tsid = 0;
    ASSERT_EQ(context_to_sid(st, target, &tsid), 0);
    const uint32_t before = st.sidtab->count();
    ASSERT_GT(*next, 100);
    for (int i = 0; i < *next; ++i) {
        const Made &m = (*made)[static_cast<size_t>(i)];
        ASSERT_EQ(m.rc, 0) << i;
        std::string text;
        ASSERT_EQ(sid_to_context(st, m.sid, &text), 0);
        ASSERT_EQ(text, new_context(i)) << "SID " << m.sid;
        uint32_t again = 0;
        ASSERT_EQ(context_to_sid(st, text, &again), 0);
        ASSERT_EQ(again, m.sid);
        if (i % 499) continue;
        AvDecision avd;
        ASSERT_EQ(compute_av(st, m.sid, tsid, file, &avd), 0);
        unsigned allowed = 0, auditallow = 0, auditdeny = 0;
        so_reset_sids();
        ASSERT_EQ(
            so_compute_av(text.c_str(), target.c_str(), file, &allowed, &auditallow, &auditdeny),
            0);
        EXPECT_EQ(avd.allowed, allowed) << text;
    }
    EXPECT_EQ(st.sidtab->count(), before) << "no context was added twice";
    so_unload();
}

TEST(SidtabReload, ContextMakersRetryOnEstaleAndKeepLibsepolsDecisions) {
    reload_under_new_contexts("rcu-cond-dup", SidtabEra::Hash);
}

TEST(SidtabReload, TheLinearEraConvertsLiveToo) {
    reload_under_new_contexts("rcu-full-copy", SidtabEra::Linear);
}

}  // namespace
}  // namespace locksim::ss::test
