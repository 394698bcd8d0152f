// The scenario behind the Debian sanity relations and the toggle-cost numbers: login tasks
// calling get_user_sids (unconfined_u from an unconfined_t SID), tasks doing mostly-hit
// permission checks, and a periodic boolean toggle, on the simulator. Header-only, free of
// the test framework, so bench/analysis/toggle_cost.cpp runs exactly the same thing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "record/run_results.h"
#include "sim/sim_platform.h"
#include "ss/policy_dup.h"
#include "ss/services.h"
#include "strategies/security_server.h"

namespace locksim::strategies::scenario {

struct LoginScenario {
    int cpus = 8;
    kernel::Time duration = 40 * kernel::kMsec;
    kernel::Time toggle_period = 5 * kernel::kMsec;
    kernel::Time quiet_tail = 25 * kernel::kMsec;  // no toggle starts this close to the end
    int logins = 4;
    int checkers = 3;
    uint64_t seed = 11;
    bool preempt_rcu = true;
    std::string profile = "x86-modern";
    std::string user = "unconfined_u";
    std::string from_context = "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023";
    std::string file_context = "system_u:object_r:etc_t:s0";
    std::string toggled_bool = "secure_mode_insmod";
};

struct LoginRun {
    kernel::RunResults r;
    uint64_t user_sids_calls = 0;
    size_t user_sids = 0;  // SIDs the last call returned
    uint64_t errors = 0;   // calls that returned an error
};

// A state of its own (conditional state and SID table; the policy base is shared read-only).
inline ss::PolicyState fresh_state(const ss::Policydb &db, const CoreConfig &core) {
    return make_policy_state(ss::Policydb{db.base, ss::cond_policy_dup(*db.cond)}, core);
}

inline LoginRun run_login(const ss::Policydb &db, const std::string &strategy,
                          const Params &options, const LoginScenario &sc = {}) {
    LoginRun out;
    sim::SimConfig cfg;
    cfg.cpus = sc.cpus;
    cfg.duration = sc.duration;
    cfg.seed = sc.seed;
    cfg.preempt_rcu = sc.preempt_rcu;
    cfg.profile = sim::find_profile(sc.profile);
    cfg.keep_longest = 400;
    sim::SimPlatform sim(cfg);
    kernel::PlatformScope scope(sim);
    CoreConfig core;
    ss::PolicyState st = fresh_state(db, core);
    uint32_t fromsid = 0, filesid = 0;
    if (ss::context_to_sid(st, sc.from_context, &fromsid) ||
        ss::context_to_sid(st, sc.file_context, &filesid))
        throw std::invalid_argument("scenario contexts are not valid in this policy");
    const uint32_t file_class = st.p().classes.find("file")->value;
    const uint32_t toggled = ss::bool_value(st, sc.toggled_bool);
    if (!toggled) throw std::invalid_argument("no boolean " + sc.toggled_bool);
    auto server = make_security_server(strategy, options, std::move(st), core);
    std::vector<int> values = ss::get_bools(server->setup_state());

    static const kernel::Label kLogin("login");
    for (int i = 0; i < sc.logins; ++i)
        sim.create_task({"login" + std::to_string(i)}, [&] {
            while (!kernel::kthread_should_stop()) {
                std::vector<uint32_t> sids;
                {
                    kernel::OpScope op(kLogin);
                    out.errors += server->get_user_sids(fromsid, sc.user, &sids) != 0;
                }
                ++out.user_sids_calls;
                out.user_sids = sids.size();
                kernel::msleep(1);
            }
        });
    for (int i = 0; i < sc.checkers; ++i)
        sim.create_task({"syscalls" + std::to_string(i)}, [&] {
            while (!kernel::kthread_should_stop()) {
                server->avc_has_perm(fromsid, filesid, file_class, 0x1);
                kernel::ndelay(2 * kernel::kUsec);
            }
        });
    sim.create_task({"setsebool"}, [&] {
        for (kernel::Time t = sc.toggle_period; !kernel::kthread_should_stop();
             t += sc.toggle_period) {
            kernel::sleep_until(t);
            if (kernel::now() > sc.duration - sc.quiet_tail) break;
            values[toggled - 1] ^= 1;
            out.errors += server->set_bools(values) != 0;
        }
    });
    out.r = sim.run();
    return out;
}

}  // namespace locksim::strategies::scenario
