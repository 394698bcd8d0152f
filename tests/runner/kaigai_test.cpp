// KaiGai's 2004 AVC table (scenarios/repro/kaigai-avc-scaling.toml, docs/reproductions.md, 6),
// from a real run of the shipped sweep on a shorter window: the shape the lock-line model gives.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "runner/runner.h"
#include "tests/runner/run_all.h"

using namespace locksim;

namespace {

// SELinux off's write throughput over each AVC design's, by CPUs and design.
std::map<std::pair<int, std::string>, double> kaigai_ratios() {
    const std::string path = std::string(LOCKSIM_SCENARIO_DIR) + "/repro/kaigai-avc-scaling.toml";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string src = text.str();
    const std::string duration = "duration = \"50ms\"";
    const auto at = src.find(duration);
    EXPECT_NE(at, std::string::npos) << "the scenario's duration moved";
    if (at != std::string::npos) src.replace(at, duration.size(), "duration = \"25ms\"");
    Scenario s = parse_scenario(src, path);
    std::map<std::tuple<int, bool, std::string>, double> ops;
    const nlohmann::json results = locksim::testing::run_all(s).to_json();
    for (const auto &run : results["runs"]) {
        const auto &p = run["point"];
        ops[{std::stoi(p["machine.cpus"].get<std::string>()),
             p["workload.syscalls.checks"] == "true", p["core.avc_lock"].get<std::string>()}] =
            run["throughput"]["ops_per_sec"].get<double>();
    }
    std::map<std::pair<int, std::string>, double> ratio;
    for (int cpus : {4, 8, 16, 32})
        for (const char *lock : {"spinlock", "rwlock", "rcu"})
            ratio[{cpus, lock}] = ops[{cpus, false, "rcu"}] / ops[{cpus, true, lock}];
    return ratio;
}

}  // namespace

// The global spinlock of 2.6.9 collapses faster than the CPUs grow once its spinners bounce
// the lock word's line; the rwlock (an atomic per lock and unlock, no spinning) stays near
// SELinux off, below the contended spinlock; RCU stays flat.
TEST(Repro, KaiGaiSpinlockCollapsesFasterThanTheCpusGrow) {
    auto r = kaigai_ratios();
    auto at = [&](int cpus, const char *lock) { return r[{cpus, lock}]; };
    ::testing::Message table;
    for (int cpus : {4, 8, 16, 32})
        table << cpus << " CPUs: spinlock " << at(cpus, "spinlock") << " rwlock "
              << at(cpus, "rwlock") << " rcu " << at(cpus, "rcu") << "\n";
    SCOPED_TRACE(table);
    // Super-linear: what the spinlock adds grows more than 4x from 4 to 16 CPUs, and the time
    // itself more than doubles from 8 to 16 and again to 32.
    EXPECT_GT(at(16, "spinlock") - 1, 4 * (at(4, "spinlock") - 1));
    EXPECT_GT(at(16, "spinlock"), 2 * at(8, "spinlock"));
    EXPECT_GT(at(32, "spinlock"), 2 * at(16, "spinlock"));
    // The rwlock below the spinlock where the spinlock is contended.
    EXPECT_LT(at(16, "rwlock"), at(16, "spinlock"));
    EXPECT_LT(at(32, "rwlock"), at(32, "spinlock"));
    for (int cpus : {4, 8, 16, 32}) {
        EXPECT_LT(at(cpus, "rwlock"), 1.1) << cpus;
        EXPECT_NEAR(at(cpus, "rcu"), 1.0, 0.01) << cpus;
    }
}
