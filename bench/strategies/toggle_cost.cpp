// strategies_toggle_cost [simulated ms] [policy file]: runs the login scenario (8 CPUs, four
// get_user_sids logins, three permission-check tasks, a toggle of secure_mode_insmod every
// 5 ms) under every strategy and prints the toggle cost, decomposed, per strategy.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analysis/toggle_cost.h"
#include "tests/strategies/login_scenario.h"

using namespace locksim;

int main(int argc, char **argv) {
    strategies::scenario::LoginScenario sc;
    if (argc > 1) sc.duration = std::atoll(argv[1]) * kernel::kMsec;
    const std::string policy =
        argc > 2 ? argv[2] : std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33";
    const ss::Policydb db = ss::policydb_read_file(policy);
    struct Row {
        const char *label, *name, *key, *value;
    };
    const Row rows[] = {
        {"rwlock", "rwlock", nullptr, nullptr},
        {"rwsem", "rwsem", nullptr, nullptr},
        {"rcu-full-copy copy=atomic", "rcu-full-copy", "copy", "atomic"},
        {"rcu-full-copy copy=sleepable", "rcu-full-copy", "copy", "sleepable"},
        {"rcu-cond-dup", "rcu-cond-dup", nullptr, nullptr},
        {"rcu-cond-dup grace=expedited", "rcu-cond-dup", "grace_period", "expedited"},
        {"rcu-cond-dup-async", "rcu-cond-dup-async", nullptr, nullptr},
        {"percpu-rwsem", "percpu-rwsem", nullptr, nullptr},
        {"seqlock", "seqlock", nullptr, nullptr},
    };
    std::vector<std::pair<std::string, analysis::ToggleCost>> table;
    for (const Row &row : rows) {
        Params opts;
        if (row.key) opts.set(row.key, std::string(row.value));
        auto run = strategies::scenario::run_login(db, row.name, opts, sc);
        if (!run.r.violations.empty() || run.errors)
            std::fprintf(stderr, "%s: %zu violations, %llu errors\n", row.label,
                         run.r.violations.size(), static_cast<unsigned long long>(run.errors));
        table.emplace_back(row.label, analysis::toggle_cost(run.r));
    }
    std::printf("%s", analysis::toggle_cost_table(table).c_str());
    return 0;
}
