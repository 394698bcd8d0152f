#include "scenario/platform_config.h"

#include <fmt/core.h>

#include "util/error.h"

namespace locksim {

sim::CpuProfile point_profile(const Scenario &point) {
    return at_place(point.machine.profile_at,
                    [&] { return sim::find_profile(point.machine.profile); });
}

void check_machine_profile(const Scenario &point, const sim::CpuProfile &profile) {
    // A profile with clusters describes whole clusters: a machine that ends inside one would
    // model a SoC that does not exist (and pin a cluster's tasks round part of it).
    if (!profile.clusters.empty()) {
        std::string layout, whole;
        int end = 0;
        bool fits = false;
        for (const sim::CpuCluster &c : profile.clusters) {
            layout += fmt::format("{}{} {}", layout.empty() ? "" : " + ", c.cpus, c.name);
            end += c.cpus;
            whole += fmt::format("{}{}", whole.empty() ? "" : " or ", end);
            fits = fits || point.machine.cpus == end;
        }
        if (!fits)
            throw UserError(fmt::format(
                "{}: machine.cpus = {} on profile '{}', whose CPUs are {}: the machine must end "
                "where a cluster ends (cpus = {})",
                point.machine.cpus_at.empty() ? point.file : point.machine.cpus_at,
                point.machine.cpus, profile.name, layout, whole));
    }
    if (point.machine.spinlock == sim::SpinlockImpl::Byte && profile.memory.private_kib <= 0)
        throw UserError(fmt::format(
            "{}: 'machine.spinlock = \"byte\"' needs a profile that models caches ([memory]); "
            "'{}' has none",
            point.machine.spinlock_at.empty() ? point.file : point.machine.spinlock_at,
            profile.name));
}

sim::SimConfig sim_config(const Scenario &s, int64_t seed) {
    sim::SimConfig c;
    c.cpus = s.machine.cpus;
    c.duration = s.duration_ns;
    c.warmup = s.warmup_ns;
    c.drain_limit = s.drain_ns;
    c.seed = static_cast<uint64_t>(seed);
    c.profile = point_profile(s);
    c.cost_model = s.cost_model;
    if (s.cost_model == sim::CostModel::Measured) c.profile.measured_scale = s.measured_scale;
    c.profile = sim::with_prices(std::move(c.profile), s.prices);
    c.preempt = s.machine.preemption;
    c.preempt_rcu = s.machine.preempt_rcu;
    c.rt_mutex_pi = s.machine.rt_mutex_pi;
    c.rcu_nocbs = s.machine.rcu_nocbs;
    c.hz = s.machine.hz;
    check_machine_profile(s, c.profile);
    c.spinlock = s.machine.spinlock;
    c.irqs = s.machine.irqs;
    return c;
}

real::RealConfig real_config(const Scenario &point, int64_t seed) {
    real::RealConfig c;
    c.cpus = point.machine.cpus;
    c.duration = point.duration_ns;
    c.drain_limit = point.drain_ns;
    c.seed = static_cast<uint64_t>(seed);
    return c;
}

ss::GenOptions synthetic_options(const SyntheticPolicySpec &s) {
    ss::GenOptions o = s.base;
    o.types = static_cast<uint32_t>(s.types);
    o.booleans = static_cast<uint32_t>(s.booleans);
    o.attributes = s.attributes < 0 ? 0 : static_cast<uint32_t>(s.attributes);
    o.rules = s.rules < 0 ? 0 : static_cast<uint32_t>(s.rules);
    o.users = static_cast<uint32_t>(s.users);
    o.roles = static_cast<uint32_t>(s.roles);
    o.categories = static_cast<uint32_t>(s.categories);
    o.mls = s.mls;
    o.seed = static_cast<uint64_t>(s.seed);
    return o;
}

void set_workload_machine(const Scenario &point, int64_t seed, WorkloadEnv &env) {
    env.cpus = point.machine.cpus;
    env.seed = static_cast<uint64_t>(seed);
    for (const sim::CpuCluster &c : point_profile(point).clusters)
        for (int i = c.first_cpu; i < c.first_cpu + c.cpus && i < point.machine.cpus; ++i)
            env.clusters[c.name].push_back(i);
}

}  // namespace locksim
