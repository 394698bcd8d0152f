// setsebool: boolean commits, as `setsebool` writes /sys/fs/selinux/booleans/* then
// commit_pending_bools: each commit flips `booleans` booleans and hands the whole vector to
// security_set_bools. Commits come every `period` (periodic), at exponentially distributed
// intervals of mean `period` (random), or `burst` back to back every `period` (burst).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

// Periodic except with mode = random (exponential gaps of mean `period`, no phase to draw).
static int64_t setsebool_period(const Params &p) {
    return p.get_string("mode") == "random" ? 0 : p.get_duration_ns("period");
}

static void spawn_setsebool(const WorkloadSpec &spec, WorkloadEnv &env) {
    const Params &p = spec.params;
    std::vector<uint32_t> chosen;  // boolean values (1-based) this workload may flip
    for (const auto &name : p.get_string_list("names")) {
        uint32_t v = env.facts.boolean_value(name);
        if (!v)
            throw UserError(
                fmt::format("workload '{}': the policy has no boolean '{}'", spec.label, name));
        if (std::count(chosen.begin(), chosen.end(), v))
            throw UserError(
                fmt::format("workload '{}': 'names' lists '{}' twice", spec.label, name));
        chosen.push_back(v);
    }
    if (chosen.empty())
        for (uint32_t v = 1; v <= env.facts.boolean_values().size(); ++v)
            chosen.push_back(v);
    if (chosen.empty())
        throw UserError(
            fmt::format("workload '{}': the policy has no booleans to toggle", spec.label));
    if (!env.bools) env.bools = std::make_shared<std::vector<int>>(env.facts.boolean_values());
    auto choice = std::make_shared<std::vector<uint32_t>>(std::move(chosen));
    const std::string mode = p.get_string("mode");
    const kernel::Time period = p.get_duration_ns("period");
    const int64_t burst = mode == "burst" ? p.get_int("burst") : 1;
    const auto per_commit = static_cast<size_t>(p.get_int("booleans"));
    // Each commit changes `booleans` distinct booleans (one flipped twice would not change).
    if (per_commit > choice->size())
        throw UserError(fmt::format(
            "workload '{}': 'booleans' = {} per commit, but there are only {} to choose from",
            spec.label, per_commit, choice->size()));
    spawn_tasks(
        spec, env, false, [=, seed = env.seed, bools = env.bools, &server = env.server](int index) {
            static const kernel::Label kOp(kernel::op::kSetsebool);
            PeriodicTimer timer(spec, seed, index);
            timer.start();
            kernel::Time next = kernel::now();
            while (!kernel::kthread_should_stop()) {
                if (mode == "random") {
                    // Exponential gap from a uniform draw in (0, 1].
                    double u = (static_cast<double>(kernel::get_random_u64() >> 11) + 1) * 0x1p-53;
                    next += static_cast<kernel::Time>(-std::log(u) * static_cast<double>(period));
                    timer.wait_until(next);
                } else {
                    timer.wait();
                }
                for (int64_t b = 0; b < burst && !kernel::kthread_should_stop(); ++b) {
                    std::vector<int> values = *bools;
                    std::vector<uint32_t> pool = *choice;  // the first k are drawn (Fisher-Yates)
                    for (size_t k = 0; k < per_commit; ++k) {
                        std::swap(pool[k], pool[k + draw(pool.size() - k)]);
                        values[pool[k] - 1] = !values[pool[k] - 1];
                    }
                    kernel::OpScope op(kOp);
                    if (server.set_bools(values) == 0) *bools = std::move(values);
                }
            }
        });
}

namespace workloads {

WorkloadInfo setsebool_workload() {
    return {
        .name = "setsebool",
        .summary = "boolean commits (security_set_bools): periodic, random or in bursts",
        .params = {text("mode", "when commits happen", "periodic", {"periodic", "random", "burst"}),
                   dur("period",
                       "time between commits (mean time with mode = random, between bursts "
                       "with mode = burst)",
                       100 * ms, 1 * us),
                   count("burst", "commits per burst with mode = burst", 10, 1, 100000),
                   count("booleans", "booleans changed per commit", 1, 1, 10000),
                   names("names", "booleans to toggle (default: drawn from the policy's booleans)"),
                   jitter()},
        .spawn = spawn_setsebool,
        .period = setsebool_period};
}

}  // namespace workloads

}  // namespace locksim
