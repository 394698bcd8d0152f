#include "scenario/to_json.h"

#include "scenario/design_kernel.h"

namespace locksim {

using nlohmann::json;

namespace {

json param_json(const ParamValue &v) {
    return std::visit([](const auto &x) { return json(x); }, v);
}

json params_json(const Params &p) {
    json out = json::object();
    for (const auto &[name, value] : p.values())
        out[name] = param_json(value);
    return out;
}

}  // namespace

json scenario_json(const Scenario &s) {
    // "strategies" and "workloads" list the labels (what tables show); the settings of each
    // are in "strategy_settings" and "workload_settings", in the same order.
    json strategies = json::array(), strategy_settings = json::array();
    for (const auto &st : s.strategies) {
        strategies.push_back(st.label);
        strategy_settings.push_back(
            {{"label", st.label},
             {"name", st.name},
             {"kernel", kernel_release_name(design_kernel(s, st).behaviour.release)},
             {"options", params_json(st.options)}});
    }
    json workloads = json::array(), workload_settings = json::array();
    for (const auto &w : s.workloads) {
        workloads.push_back(w.label);
        workload_settings.push_back({{"label", w.label},
                                     {"kind", w.kind},
                                     {"tasks", w.tasks},
                                     {"params", params_json(w.params)}});
    }
    json sweep = json::object();
    for (const auto &a : s.sweep)
        sweep[a.field] = a.values;
    json machine = {{"cpus", s.machine.cpus},
                    {"profile", s.machine.profile},
                    {"preemption", preemption_names().name(s.machine.preemption)},
                    {"preempt_rcu", s.machine.preempt_rcu},
                    {"rt_mutex_pi", s.machine.rt_mutex_pi},
                    {"rcu_nocbs", s.machine.rcu_nocbs},
                    {"hz", s.machine.hz},
                    {"ima", s.machine.ima},
                    {"kernel", s.machine.kernel},
                    {"spinlock", spinlock_names().name(s.machine.spinlock)},
                    {"irq", json::array()}};
    for (const sim::IrqSource &irq : s.machine.irqs)
        machine["irq"].push_back({{"kind", irq.kind},
                                  {"cpus", irq.cpus},
                                  {"rate", irq.rate},
                                  {"handler_ns", irq.handler},
                                  {"softirq_ns", irq.softirq},
                                  {"jitter_ns", irq.jitter},
                                  {"priority", irq.thread_priority}});
    const SyntheticPolicySpec &syn = s.policy.synthetic;
    json policy = {{"source", policy_source_names().name(s.policy.source)}};
    if (s.policy.source == PolicySpec::Source::File) policy["path"] = s.policy.path;
    if (s.policy.source == PolicySpec::Source::Synthetic)
        policy["synthetic"] = {{"preset", syn.preset},     {"types", syn.types},
                               {"booleans", syn.booleans}, {"attributes", syn.attributes},
                               {"rules", syn.rules},       {"users", syn.users},
                               {"roles", syn.roles},       {"categories", syn.categories},
                               {"mls", syn.mls},           {"seed", syn.seed}};
    json prices = json::object();
    for (size_t i = 0; i < sim::kPriceFamilies; ++i)
        prices[std::string(sim::kPriceFamilyNames[i])] = s.prices[i];
    json core = json::object();
    for (const auto &[key, value] : core_settings(s.core))
        core[key] = param_json(value);
    return {{"name", s.name},
            {"description", s.description},
            {"file", s.file},
            {"duration_ns", s.duration_ns},
            {"warmup_ns", s.warmup_ns},
            {"drain_ns", s.drain_ns},
            {"seeds", s.seeds},
            {"cost_model", cost_model_names().name(s.cost_model)},
            {"measured_scale", s.measured_scale},
            {"machine", machine},
            {"prices", prices},
            {"policy", policy},
            {"core", core},
            {"strategies", strategies},
            {"strategy_settings", strategy_settings},
            {"workloads", workloads},
            {"workload_settings", workload_settings},
            {"output",
             {{"dir", s.output.dir.empty() ? "results/" + s.name : s.output.dir},
              {"formats", s.output.formats}}},
            {"sweep", sweep}};
}

}  // namespace locksim
