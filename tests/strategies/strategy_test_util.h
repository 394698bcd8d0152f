// Shared pieces of the strategy tests: policies, simulator configurations and servers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "record/run_results.h"
#include "sim/sim_platform.h"
#include "ss/policydb.h"
#include "strategies/catalog.h"
#include "strategies/security_server.h"

namespace locksim::strategies::test {

inline std::vector<uint8_t> read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string fixture(const std::string &name) {
    return std::string(LOCKSIM_FIXTURE_DIR) + "/" + name;
}

inline std::string debian_default() {
    return std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33";
}

inline sim::SimConfig sim_config(int cpus, kernel::Time duration, uint64_t seed = 1) {
    sim::SimConfig c;
    c.cpus = cpus;
    c.duration = duration;
    c.seed = seed;
    c.profile = sim::find_profile("x86-modern");
    c.keep_longest = 400;
    return c;
}

// A strategy with options given as "key=value" pairs of strings or integers.
struct StrategyCase {
    std::string name;
    Params options;
    std::string label() const {
        std::string s = name;
        for (const auto &[k, v] : options.values()) {
            s += "_" + k + "_";
            if (const auto *str = std::get_if<std::string>(&v))
                s += *str;
            else if (const auto *i = std::get_if<int64_t>(&v))
                s += std::to_string(*i);
        }
        for (char &c : s)
            if (c == '-') c = '_';
        return s;
    }
};

inline void PrintTo(const StrategyCase &c, std::ostream *os) {
    *os << c.label();
}

inline StrategyCase with(std::string name, const std::string &key = {}, ParamValue value = {}) {
    StrategyCase c{std::move(name), {}};
    if (!key.empty()) c.options.set(key, std::move(value));
    return c;
}

// Every strategy of the catalog with its defaults, and each other option value once: every
// other choice of a string option, the smallest value of an integer one.
inline std::vector<StrategyCase> all_strategy_cases() {
    std::vector<StrategyCase> cases;
    for (const StrategyInfo &info : strategy_catalog()) {
        cases.push_back(with(info.name));
        for (const ParamSpec &spec : info.options) {
            for (const std::string &choice : spec.choices)
                if (ParamValue(choice) != spec.default_value)
                    cases.push_back(with(info.name, spec.name, choice));
            if (spec.type == ParamType::Int && spec.min &&
                ParamValue(*spec.min) != spec.default_value)
                cases.push_back(with(info.name, spec.name, *spec.min));
        }
    }
    return cases;
}

// The longest preempt-off interval whose operation label is not `except`; when every kept
// interval has that label, the shortest kept one (an upper bound).
inline kernel::Time longest_preempt_off_except(const kernel::RunResults &r,
                                               const std::string &except) {
    for (const auto &iv : r.preempt_off.longest)
        if (iv.label != except) return iv.length;
    return r.preempt_off.longest.empty() ? 0 : r.preempt_off.longest.back().length;
}

// The same among the sections of the tasks themselves: not those of softirq context (the RCU
// callbacks run there, on top of whatever task the CPU ran). An empty `except` excepts no
// operation.
inline kernel::Time longest_task_preempt_off_except(const kernel::RunResults &r,
                                                    const std::string &except) {
    for (const auto &iv : r.preempt_off.longest)
        if ((except.empty() || iv.label != except) && iv.task.rfind("softirq/", 0) != 0)
            return iv.length;
    return r.preempt_off.longest.empty() ? 0 : r.preempt_off.longest.back().length;
}

// A design's run under stress, for a test of a strategy (a new one, or one written broken on
// purpose): three readers that stay 40 us in their read section and a writer toggling every
// boolean every 300 us, on 4 simulated CPUs at HZ=1000 for 30 ms; `make` builds the server on
// the simulator. The results carry the self-checks' violations (violations_text) and the
// operations (`ops["set_bools"]`).
inline kernel::RunResults run_toggles(
    const std::function<std::unique_ptr<SecurityServer>()> &make) {
    // 30 ms: every commit waits one to three grace periods (~1-2 ms each at HZ=1000).
    sim::SimConfig cfg = sim_config(4, 30 * kernel::kMsec, 3);
    cfg.hz = 1000;
    sim::SimPlatform sim(cfg);
    kernel::PlatformScope scope(sim);
    std::unique_ptr<SecurityServer> server = make();
    const uint32_t nbools = server->setup_state().db.cond->bools.nprim;
    for (int i = 0; i < 3; ++i)
        sim.create_task({"reader" + std::to_string(i)}, [&] {
            while (!kernel::kthread_should_stop()) {
                server->read_policy([](const ss::PolicyState &) {
                    kernel::ndelay(40 * kernel::kUsec);
                    return 0;
                });
                kernel::ndelay(5 * kernel::kUsec);
            }
        });
    sim.create_task({"setsebool"}, [&] {
        for (int n = 0; !kernel::kthread_should_stop(); ++n) {
            std::vector<int> values(nbools, n & 1);
            EXPECT_EQ(server->set_bools(values), 0);
            kernel::sleep_for(300 * kernel::kUsec);
        }
    });
    return sim.run();
}

inline  // The conditional-policy fixture as a server's starting state.
    ss::PolicyState
    fixture_state(const CoreConfig &core) {
    return make_policy_state(ss::policydb_read(read_bytes(fixture("cond.33"))), core);
}

inline std::string violations_text(const kernel::RunResults &r) {
    std::string s;
    for (const auto &v : r.violations)
        s += v.kind + ": " + v.message + "\n";
    return s;
}

}  // namespace locksim::strategies::test
