#include "scenario/scenario.h"

#include "ss/policy_gen.h"

#include <fmt/core.h>

#include <toml++/toml.h>
#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "strategies/catalog.h"
#include "strategies/kernels.h"
#include "util/error.h"
#include "util/read_file.h"
#include "workloads/catalog.h"

namespace locksim {

const NameTable<sim::PreemptModel> &preemption_names() {
    static const NameTable<sim::PreemptModel> names = {{sim::PreemptModel::None, "none"},
                                                       {sim::PreemptModel::Voluntary, "voluntary"},
                                                       {sim::PreemptModel::Full, "full"},
                                                       {sim::PreemptModel::Rt, "rt"}};
    return names;
}

const NameTable<ValidateRead> &validate_read_names() {
    static const NameTable<ValidateRead> names = {{ValidateRead::Decisions, "decisions"},
                                                  {ValidateRead::Contexts, "contexts"}};
    return names;
}

const NameTable<sim::SpinlockImpl> &spinlock_names() {
    static const NameTable<sim::SpinlockImpl> names = {{sim::SpinlockImpl::Queued, "queued"},
                                                       {sim::SpinlockImpl::Byte, "byte"}};
    return names;
}

const NameTable<sim::CostModel> &cost_model_names() {
    static const NameTable<sim::CostModel> names = {{sim::CostModel::Counted, "counted"},
                                                    {sim::CostModel::Measured, "measured"}};
    return names;
}

const NameTable<PolicySpec::Source> &policy_source_names() {
    static const NameTable<PolicySpec::Source> names = {
        {PolicySpec::Source::DebianDefault, "debian-default"},
        {PolicySpec::Source::DebianMls, "debian-mls"},
        {PolicySpec::Source::File, "file"},
        {PolicySpec::Source::Synthetic, "synthetic"},
    };
    return names;
}

namespace {

// Reads one TOML table, remembering which keys were used so that the rest can be reported as
// unknown (with a "did you mean" hint).
class TableReader {
  public:
    TableReader(const std::string &file, const toml::table &table, std::string path)
        : file_(file), table_(table), path_(std::move(path)) {}

    [[noreturn]] void fail_at(const toml::source_region &where, const std::string &msg) const {
        throw UserError(
            fmt::format("{}:{}:{}: {}", file_, where.begin.line, where.begin.column, msg));
    }
    [[noreturn]] void fail(const std::string &msg) const { fail_at(table_.source(), msg); }
    // Where the table begins, or the value of `key`, as file:line:column.
    std::string place() const { return place_at(table_.source()); }
    std::string place_of(std::string_view key) { return place_at(node(key)->source()); }
    std::string place_at(const toml::source_region &where) const {
        return fmt::format("{}:{}:{}", file_, where.begin.line, where.begin.column);
    }

    const toml::node *node(std::string_view key) {
        known_.insert(std::string(key));
        return table_.get(key);
    }
    std::string where(std::string_view key) const {
        return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
    }

    template <class T>
    std::optional<T> get(std::string_view key) {
        const toml::node *n = node(key);
        if (!n) return std::nullopt;
        if constexpr (std::is_same_v<T, double>) {
            if (auto i = n->value<int64_t>(); i && n->is_integer()) return static_cast<double>(*i);
        }
        auto v = n->value_exact<T>();
        if (!v) fail_at(n->source(), fmt::format("'{}' must be {}", where(key), type_word<T>()));
        return v;
    }
    std::optional<int64_t> get_int(std::string_view key, int64_t min, int64_t max) {
        auto v = get<int64_t>(key);
        if (v && (*v < min || *v > max))
            fail_at(node(key)->source(), fmt::format("'{}' must be between {} and {}, not {}",
                                                     where(key), min, max, *v));
        return v;
    }
    std::optional<int64_t> get_duration(std::string_view key, int64_t min_ns) {
        const toml::node *n = node(key);
        if (!n) return std::nullopt;
        auto text = n->value_exact<std::string>();
        std::string why = n->is_number() ? "a number without a unit" : "not a string";
        std::optional<int64_t> ns = text ? parse_duration_ns(*text, &why) : std::nullopt;
        if (!ns)
            fail_at(n->source(), fmt::format("'{}' is {} (a duration with a unit, like \"250ms\", "
                                             "\"40us\" or \"2s\")",
                                             where(key), why));
        if (*ns < min_ns)
            fail_at(n->source(), fmt::format("'{}' must be at least {}", where(key),
                                             format_duration_ns(min_ns)));
        return ns;
    }
    std::optional<std::string> get_choice(std::string_view key,
                                          const std::vector<std::string> &choices) {
        auto v = get<std::string>(key);
        if (v && !std::count(choices.begin(), choices.end(), *v))
            fail_at(node(key)->source(), choice_error(where(key), choices, *v));
        return v;
    }
    // A value named in its setting's table.
    template <class E>
    std::optional<E> get_named(std::string_view key, const NameTable<E> &names) {
        auto v = get_choice(key, names.names());
        if (!v) return std::nullopt;
        return names.find(*v);
    }
    const toml::table *get_table(std::string_view key) {
        const toml::node *n = node(key);
        if (!n) return nullptr;
        if (!n->is_table()) fail_at(n->source(), fmt::format("'{}' must be a table", where(key)));
        return n->as_table();
    }

    // Every key not read is an error.
    void finish() const {
        std::vector<std::string> names(known_.begin(), known_.end());
        for (const auto &[k, v] : table_) {
            if (known_.count(std::string(k.str()))) continue;
            fail_at(k.source(), fmt::format("unknown key '{}'{}{}", where(k.str()),
                                            path_.empty() ? "" : fmt::format(" in [{}]", path_),
                                            did_you_mean(k.str(), names)));
        }
    }

    const std::string &file() const { return file_; }
    const std::string &path() const { return path_; }

  private:
    template <class T>
    static const char *type_word() {
        if constexpr (std::is_same_v<T, int64_t>)
            return "an integer";
        else if constexpr (std::is_same_v<T, double>)
            return "a number";
        else if constexpr (std::is_same_v<T, bool>)
            return "true or false";
        else
            return "a string";
    }

    const std::string &file_;
    const toml::table &table_;
    std::string path_;
    std::set<std::string> known_;
};

// Reads parameters declared by specs from the reader's table into params.
void read_params(TableReader &r, const std::vector<ParamSpec> &specs, Params &params) {
    for (const auto &spec : specs) {
        const toml::node *n = r.node(spec.name);
        if (!n) continue;
        ParamValue value;
        auto bad_type = [&] {
            r.fail_at(n->source(), fmt::format("'{}' must be {}", r.where(spec.name),
                                               param_type_name(spec.type)));
        };
        switch (spec.type) {
            case ParamType::Int:
                if (!n->is_integer()) bad_type();
                value = *n->value<int64_t>();
                break;
            case ParamType::Float:
                if (!n->is_number()) bad_type();
                value = *n->value<double>();
                break;
            case ParamType::Bool:
                if (!n->is_boolean()) bad_type();
                value = *n->value<bool>();
                break;
            case ParamType::String:
                if (!n->is_string()) bad_type();
                value = *n->value<std::string>();
                break;
            case ParamType::Duration:
                value = *r.get_duration(spec.name, 0);
                break;
            case ParamType::IntList:
            case ParamType::StringList: {
                const toml::array *a = n->as_array();
                if (!a) bad_type();
                std::vector<int64_t> ints;
                std::vector<std::string> strs;
                for (const auto &e : *a) {
                    if (spec.type == ParamType::IntList && e.is_integer())
                        ints.push_back(*e.value<int64_t>());
                    else if (spec.type == ParamType::StringList && e.is_string())
                        strs.push_back(*e.value<std::string>());
                    else
                        r.fail_at(e.source(), fmt::format("'{}' must be {}", r.where(spec.name),
                                                          param_type_name(spec.type)));
                }
                if (spec.type == ParamType::IntList)
                    value = std::move(ints);
                else
                    value = std::move(strs);
                break;
            }
        }
        if (auto err = check_param(spec, value)) r.fail_at(n->source(), *err);
        params.set(spec.name, std::move(value));
    }
}

// A file a scenario names (the policy, a profile) is found relative to the scenario's folder,
// whatever the working directory; an absolute path is kept.
std::string resolve_from_scenario(const std::string &scenario_file, const std::string &path) {
    std::string dir = scenario_file.substr(0, scenario_file.find_last_of('/') + 1);
    return (path.empty() || path.front() == '/' || dir.empty()) ? path : dir + path;
}

// [[machine.irq]]: each source's share of a CPU (rate x cost) is checked, and so is the sum on
// each CPU, which must leave the tasks some time.
void read_irqs(TableReader &machine, const toml::node &n, MachineSpec &m) {
    const toml::array *a = n.as_array();
    if (!a || !a->is_array_of_tables())
        machine.fail_at(n.source(), "'machine.irq' must be an array of tables: [[machine.irq]]");
    std::vector<double> share(static_cast<size_t>(m.cpus), 0.0);
    for (const auto &e : *a) {
        TableReader r(machine.file(), *e.as_table(), "machine.irq");
        sim::IrqSource irq{.drawn_phase = true};
        auto kind = r.get_choice("kind", {"timer", "network", "block"});
        if (!kind) r.fail("[[machine.irq]] needs a 'kind' (timer, network or block)");
        irq.kind = *kind;
        auto rate = r.get_int("rate", 1, 10'000'000);
        if (!rate) r.fail("[[machine.irq]] needs a 'rate' (interrupts per second per CPU)");
        irq.rate = *rate;
        auto handler = r.get_duration("handler", 1);
        if (!handler) r.fail("[[machine.irq]] needs a 'handler' (the hard handler's cost)");
        irq.handler = *handler;
        irq.softirq = r.get_duration("softirq", 0).value_or(0);
        if (auto jitter = r.get_duration("jitter", 0)) {
            if (*jitter >= irq.period())
                r.fail_at(r.node("jitter")->source(),
                          fmt::format("'machine.irq.jitter' ({}) must be shorter than the "
                                      "interrupts' period ({} at rate {})",
                                      format_duration_ns(*jitter), format_duration_ns(irq.period()),
                                      irq.rate));
            irq.jitter = *jitter;
        }
        if (auto prio = r.get_int("priority", 1, 99)) {
            if (m.preemption != sim::PreemptModel::Rt)
                r.fail_at(r.node("priority")->source(),
                          "'machine.irq.priority' needs 'preemption = \"rt\"' (only PREEMPT_RT "
                          "runs an interrupt's handler in a thread of its own)");
            irq.thread_priority = static_cast<int>(*prio);
        }
        Params p;
        read_params(r,
                    {{.name = "cpus",
                      .type = ParamType::IntList,
                      .default_value = std::vector<int64_t>{},
                      .min = 0,
                      .max = m.cpus - 1}},
                    p);
        if (p.has("cpus"))
            for (int64_t cpu : p.get_int_list("cpus"))
                irq.cpus.push_back(static_cast<int>(cpu));
        r.finish();
        // As the simulator counts it: the work of one interrupt per period.
        const double each =
            static_cast<double>(irq.handler + irq.softirq) / static_cast<double>(irq.period());
        for (int cpu = 0; cpu < m.cpus; ++cpu) {
            if (!irq.hits(cpu)) continue;
            share[static_cast<size_t>(cpu)] += each;
            if (share[static_cast<size_t>(cpu)] >= 1.0 - 1e-12)
                r.fail(
                    fmt::format("interrupt load on CPU {} takes {:.0f}% of its time (it must "
                                "leave the tasks some)",
                                cpu, 100 * share[static_cast<size_t>(cpu)]));
        }
        m.irqs.push_back(std::move(irq));
    }
}

// A kernel release a design can run on: "5.10" or "5.10.30", from the first modelled one.
void check_kernel(TableReader &r, const char *key, const std::string &text) {
    const toml::node *n = r.node(key);
    const auto release = parse_kernel_release(text);
    if (!release)
        r.fail_at(n->source(),
                  fmt::format("'{}.{}' must be a kernel release such as \"5.10\" or \"5.10.30\" "
                              "(or \"default\" in [machine]), not '{}'",
                              r.path(), key, text));
    try {
        kernel_behaviour(*release);
    } catch (const UserError &e) {
        r.fail_at(n->source(), e.what());
    }
}

void read_machine(TableReader &r, MachineSpec &m, const std::string &scenario_file) {
    if (auto v = r.get_int("cpus", 1, 4096)) {
        m.cpus = static_cast<int>(*v);
        m.cpus_at = r.place_of("cpus");
    }
    // A shipped profile's name stays a name; a path (with '/' or ending in .toml) is a file.
    if (auto v = r.get<std::string>("profile")) {
        m.profile = names_a_file(*v, ".toml") ? resolve_from_scenario(scenario_file, *v) : *v;
        m.profile_at = r.place_of("profile");
    }
    if (auto v = r.get_named("preemption", preemption_names())) m.preemption = *v;
    // Unset, preemptible RCU follows the preemption model as Kconfig's default does
    // (PREEMPT_RCU is on exactly with PREEMPTION); set, it is checked against it below.
    if (auto v = r.get<bool>("preempt_rcu"))
        m.preempt_rcu = *v;
    else
        m.preempt_rcu =
            m.preemption == sim::PreemptModel::Full || m.preemption == sim::PreemptModel::Rt;
    const auto pi = r.get<bool>("rt_mutex_pi");
    if (pi) m.rt_mutex_pi = *pi;
    if (auto v = r.get<bool>("rcu_nocbs")) m.rcu_nocbs = *v;
    if (auto v = r.get<bool>("ima")) m.ima = *v;
    if (auto v = r.get_int("hz", 10, 10000)) m.hz = static_cast<int>(*v);
    if (auto v = r.get<std::string>("kernel")) {
        m.kernel = *v;
        m.kernel_at = r.place_of("kernel");
        if (m.kernel != "default") check_kernel(r, "kernel", m.kernel);
    }
    if (auto v = r.get_named("spinlock", spinlock_names())) {
        m.spinlock = *v;
        m.spinlock_at = r.place_of("spinlock");
    }
    if (const toml::node *n = r.node("irq")) read_irqs(r, *n, m);
    r.finish();
    const bool rt = m.preemption == sim::PreemptModel::Rt;
    if (m.preempt_rcu && m.preemption != sim::PreemptModel::Full && !rt)
        r.fail(
            "'machine.preempt_rcu = true' needs 'preemption = \"full\"' or \"rt\" "
            "(CONFIG_PREEMPT_RCU depends on CONFIG_PREEMPT)");
    if (rt && !m.preempt_rcu)
        r.fail(
            "'preemption = \"rt\"' needs 'machine.preempt_rcu = true' (CONFIG_PREEMPT_RT selects "
            "CONFIG_PREEMPT_RCU)");
    if (pi && !rt) r.fail("'machine.rt_mutex_pi' needs 'preemption = \"rt\"'");
}

void read_synthetic(TableReader &r, SyntheticPolicySpec &s) {
    std::vector<std::string> presets;
    for (const ss::GenPreset &p : ss::gen_presets())
        presets.emplace_back(p.name);
    if (auto v = r.get_choice("preset", presets)) {
        // The preset's sizes unless the keys below say otherwise.
        const ss::GenOptions &o = ss::find_gen_preset(*v).options;
        s.preset = *v;
        s.base = o;
        s.types = o.types;
        s.booleans = o.booleans;
        s.attributes = o.attributes;
        s.rules = o.rules;
        s.users = o.users;
        s.roles = o.roles;
        s.categories = o.categories;
    }
    if (auto v = r.get_int("types", 4, 65000)) s.types = *v;
    if (auto v = r.get_int("booleans", 0, 65000)) s.booleans = *v;
    if (auto v = r.get_int("attributes", 0, 65000)) s.attributes = *v;
    if (auto v = r.get_int("rules", 0, 100'000'000)) s.rules = *v;
    if (auto v = r.get_int("users", 1, 65000)) s.users = *v;
    if (auto v = r.get_int("roles", 1, 65000)) s.roles = *v;
    if (auto v = r.get_int("categories", 0, 1024)) s.categories = *v;
    if (auto v = r.get<bool>("mls")) s.mls = *v;
    if (auto v = r.get<int64_t>("seed")) s.seed = *v;
    if (!s.mls && r.node("categories"))
        r.fail_at(
            r.node("categories")->source(),
            "'policy.synthetic.categories' needs 'mls = true' (a policy without MLS has none)");
    r.finish();
}

void read_policy(TableReader &r, PolicySpec &p, const std::string &scenario_file) {
    auto source = r.get_choice("source", policy_source_names().names());
    auto path = r.get<std::string>("path");
    const toml::table *synth = r.get_table("synthetic");
    r.finish();
    p.source = *policy_source_names().find(source.value_or(path    ? "file"
                                                           : synth ? "synthetic"
                                                                   : "debian-default"));
    if (p.source == PolicySpec::Source::File) {
        if (!path) r.fail("'policy.source = \"file\"' needs 'policy.path'");
        p.path = resolve_from_scenario(scenario_file, *path);
        p.path_at = r.place_of("path");
    } else if (path) {
        r.fail("'policy.path' is only used with 'policy.source = \"file\"'");
    }
    if (synth) {
        if (p.source != PolicySpec::Source::Synthetic)
            r.fail("[policy.synthetic] is only used with 'policy.source = \"synthetic\"'");
        TableReader sr(r.file(), *synth, "policy.synthetic");
        read_synthetic(sr, p.synthetic);
    }
}

void read_core(TableReader &r, CoreVariants &c) {
    // Choices and bounds from the [core] keys' table (scenario/core_settings.h), which `list
    // core` prints.
    for (const ParamSpec &spec : core_params()) {
        std::optional<ParamValue> value;
        if (spec.type == ParamType::String) {
            if (auto v = r.get_choice(spec.name, spec.choices)) value = *v;
        } else if (auto v = r.get_int(spec.name, *spec.min, *spec.max)) {
            if (spec.name == "avc_slots" && (*v & (*v - 1)))
                r.fail_at(r.node(spec.name)->source(), "'core.avc_slots' must be a power of two");
            value = *v;
        }
        if (value) set_core_setting(c, spec.name, *value);
    }
    r.finish();
}

}  // namespace

namespace {

std::string label_with_options(const std::string &name, const std::vector<ParamSpec> &specs,
                               const Params &p) {
    std::string label = name;
    for (const auto &spec : specs) {
        const ParamValue &v = p.values().at(spec.name);
        if (v == spec.default_value) continue;
        std::string shown;
        if (auto *s = std::get_if<std::string>(&v))
            shown = *s;
        else if (auto *i = std::get_if<int64_t>(&v))
            shown = std::to_string(*i);
        else if (auto *b = std::get_if<bool>(&v))
            shown = *b ? "on" : "off";
        else
            shown = "custom";
        label += "/" + shown;
    }
    return label;
}

StrategySpec strategy_by_name(TableReader &r, const toml::node &where, const std::string &name) {
    const StrategyInfo *info = find_strategy_info(name);
    if (!info) {
        std::vector<std::string> names;
        for (const auto &s : strategy_catalog())
            names.push_back(s.name);
        r.fail_at(where.source(),
                  fmt::format("unknown strategy '{}'{} (see 'locksim list strategies')", name,
                              did_you_mean(name, names)));
    }
    return {name, name, Params::with_defaults(info->options)};
}

// A [[strategy]] or [[workload]] label: what a sweep axis names between two dots.
std::optional<std::string> get_label(TableReader &r) {
    auto label = r.get<std::string>("label");
    if (label && (label->empty() || label->find('.') != std::string::npos))
        r.fail_at(r.node("label")->source(),
                  fmt::format("'label' must be a non-empty name without '.' (a sweep axis names "
                              "it as {}.<label>.<key>), not '{}'",
                              r.path(), *label));
    return label;
}

void read_strategies(TableReader &top, Scenario &s) {
    std::vector<std::string> places;  // of each strategy, for the duplicate check
    auto place_new = [&](const std::string &place) { places.resize(s.strategies.size(), place); };
    if (const toml::node *list = top.node("strategies")) {
        auto add = [&](const toml::node &n) {
            auto name = n.value_exact<std::string>();
            if (!name) top.fail_at(n.source(), "'strategies' must be \"all\" or a list of names");
            if (*name == "all") {
                for (const StrategyInfo *info : all_strategies())
                    s.strategies.push_back(strategy_by_name(top, n, info->name));
            } else {
                s.strategies.push_back(strategy_by_name(top, n, *name));
            }
            place_new(top.place_at(n.source()));
        };
        if (const toml::array *a = list->as_array()) {
            for (const auto &n : *a)
                add(n);
        } else {
            add(*list);
        }
    }
    if (const toml::node *n = top.node("strategy")) {
        const toml::array *a = n->as_array();
        if (!a || !a->is_array_of_tables())
            top.fail_at(n->source(), "'strategy' must be an array of tables: [[strategy]]");
        for (const auto &e : *a) {
            TableReader r(top.file(), *e.as_table(), "strategy");
            auto name = r.get<std::string>("name");
            if (!name) r.fail("[[strategy]] needs a 'name'");
            StrategySpec spec = strategy_by_name(r, *r.node("name"), *name);
            if (auto v = r.get<std::string>("kernel")) {
                check_kernel(r, "kernel", *v);
                spec.kernel = *v;
                spec.kernel_at = r.place_of("kernel");
            }
            read_params(r, find_strategy_info(*name)->options, spec.options);
            auto label = get_label(r);
            r.finish();
            spec.label =
                label ? *label
                      : label_with_options(*name, find_strategy_info(*name)->options, spec.options);
            if (!label && !spec.kernel.empty()) spec.label += "@" + spec.kernel;
            s.strategies.push_back(std::move(spec));
            place_new(r.place());
        }
    }
    std::set<std::string> labels;
    for (size_t i = 0; i < s.strategies.size(); ++i) {
        if (!labels.insert(s.strategies[i].label).second)
            throw UserError(
                fmt::format("{}: strategy '{}' is listed twice (give one a different 'label')",
                            places[i], s.strategies[i].label));
    }
}

void read_workloads(TableReader &top, Scenario &s) {
    const toml::node *n = top.node("workload");
    if (!n) return;
    const toml::array *a = n->as_array();
    if (!a || !a->is_array_of_tables())
        top.fail_at(n->source(), "'workload' must be an array of tables: [[workload]]");
    std::set<std::string> labels;
    for (const auto &e : *a) {
        TableReader r(top.file(), *e.as_table(), "workload");
        auto kind = r.get<std::string>("kind");
        if (!kind) r.fail("[[workload]] needs a 'kind'");
        const WorkloadInfo *info = find_workload_info(*kind);
        if (!info) {
            std::vector<std::string> names;
            for (const auto &w : workload_catalog())
                names.push_back(w.name);
            r.fail_at(r.node("kind")->source(),
                      fmt::format("unknown workload '{}'{} (see 'locksim list workloads')", *kind,
                                  did_you_mean(*kind, names)));
        }
        if (!info->irq_kind.empty()) {
            for (const ParamSpec &c : common_workload_params())
                if (const toml::node *n = r.node(c.name))
                    r.fail_at(n->source(),
                              fmt::format("workload '{}' runs in the {} interrupts' softirq work: "
                                          "it has no tasks, so '{}' does not apply",
                                          *kind, info->irq_kind, c.name));
            if (std::none_of(s.machine.irqs.begin(), s.machine.irqs.end(),
                             [&](const sim::IrqSource &i) { return i.kind == info->irq_kind; }))
                r.fail(
                    fmt::format("workload '{}' needs a [[machine.irq]] of kind \"{}\" (its "
                                "work arrives with those interrupts)",
                                *kind, info->irq_kind));
        }
        WorkloadSpec w;
        w.kind = *kind;
        w.at = r.place();
        w.params = Params::with_defaults(common_workload_params());
        for (const auto &[k, v] : info->common_defaults)
            w.params.set(k, v);
        for (const auto &spec : info->params)
            w.params.set(spec.name, spec.default_value);
        read_params(r, common_workload_params(), w.params);
        read_params(r, info->params, w.params);
        for (const auto &[name, value] : w.params.values())
            if (r.node(name)) w.given.insert(name);
        // A real-time task's timers get no slack: its jitter defaults to 0 (workloads::jitter).
        if (w.params.has("jitter") && !w.given.count("jitter") &&
            w.params.get_string("sched") != "other")
            w.params.set("jitter", int64_t{0});
        auto label = get_label(r);
        if (w.params.get_string("sched") != "other" && w.params.get_int("nice") != 0)
            r.fail_at(r.node("nice")->source(),
                      "'workload.nice' applies to sched = \"other\" (real-time tasks have no "
                      "nice level)");
        if (w.params.get_string("sched") == "other" && r.node("prio"))
            r.fail_at(r.node("prio")->source(),
                      "'workload.prio' applies to sched = \"fifo\" or \"rr\" (a SCHED_OTHER "
                      "task's weight is its 'nice')");
        if (const toml::node *start = r.node("start");
            start && w.params.get_duration_ns("start") >= s.duration_ns)
            r.fail_at(start->source(),
                      fmt::format("'workload.start' ({}) is not before the end of the run "
                                  "('duration' {}): its tasks would never run",
                                  format_duration_ns(w.params.get_duration_ns("start")),
                                  format_duration_ns(s.duration_ns)));
        r.finish();
        w.label = label.value_or(*kind);
        w.tasks = w.params.get_int("tasks");
        if (!labels.insert(w.label).second)
            r.fail(fmt::format("two workloads are labelled '{}' (give one a different 'label')",
                               w.label));
        s.workloads.push_back(std::move(w));
    }
}

void read_output(TableReader &r, OutputSpec &o) {
    if (auto v = r.get<std::string>("dir")) o.dir = *v;
    if (const toml::node *n = r.node("formats")) {
        ParamSpec spec{.name = "formats",
                       .type = ParamType::StringList,
                       .default_value = std::vector<std::string>{},
                       .choices = {"table", "json", "csv", "hgrm"}};
        Params p;
        read_params(r, {spec}, p);
        o.formats = p.get_string_list("formats");
        (void)n;
    }
    r.finish();
}

void read_validate(TableReader &r, ValidateSpec &v) {
    if (auto x = r.get_named("read", validate_read_names())) v.read = *x;
    if (auto x = r.get_int("pool", 4, 100000)) v.pool = *x;
    if (auto x = r.get_int("sids", 1, 1000000)) v.sids = *x;
    if (auto x = r.get_duration("toggle", 100'000)) {
        if (*x > 10'000'000'000)
            r.fail_at(r.node("toggle")->source(), "'validate.toggle' must be at most 10s");
        v.toggle_ns = *x;
    }
    r.finish();
}

void read_sweep(TableReader &r, const toml::table &t, Scenario &s) {
    for (const auto &[k, v] : t) {
        r.node(k.str());
        const toml::array *a = v.as_array();
        if (!a || a->empty())
            r.fail_at(v.source(), fmt::format("sweep axis '{}' must be a non-empty list", k.str()));
        SweepAxis axis{std::string(k.str()), {}, {}, r.place_at(k.source())};
        for (const auto &e : *a) {
            std::ostringstream os;
            os << toml::toml_formatter(e);
            axis.values.push_back(os.str());
            axis.where.emplace_back(e.source().begin.line, e.source().begin.column);
        }
        s.sweep.push_back(std::move(axis));
    }
}

// [prices]: a factor per price family (sim::kPriceFamilyNames) on the profile's prices.
void read_prices(TableReader &r, sim::PriceFactors &prices) {
    for (size_t i = 0; i < sim::kPriceFamilies; ++i) {
        const std::string_view key = sim::kPriceFamilyNames[i];
        auto v = r.get<double>(key);
        if (!v) continue;
        if (!(*v >= sim::kMinPriceFactor && *v <= sim::kMaxPriceFactor))
            r.fail_at(
                r.node(key)->source(),
                fmt::format("'{}' must be a factor from {} to {} on the profile's {} prices, "
                            "not {}",
                            r.where(key), sim::kMinPriceFactor, sim::kMaxPriceFactor, key, *v));
        prices[i] = *v;
    }
    r.finish();
}

Scenario scenario_from_table(const toml::table &t, const std::string &file) {
    Scenario s;
    s.file = file;
    TableReader r(file, t, "");
    std::string stem = file.substr(file.find_last_of('/') + 1);
    s.name = r.get<std::string>("name").value_or(stem.substr(0, stem.rfind('.')));
    // The name is a folder of results/ (results/<name>) and a label in the tables.
    if (s.name.empty() || s.name.find('/') != std::string::npos || s.name == "." || s.name == "..")
        r.fail_at(r.node("name") ? r.node("name")->source() : t.source(),
                  "'name' must be a non-empty name without '/' (the results go to results/<name>)");
    s.description = r.get<std::string>("description").value_or("");
    if (auto v = r.get_duration("duration", 1000)) s.duration_ns = *v;
    if (auto v = r.get_duration("warmup", 0)) s.warmup_ns = *v;
    if (auto v = r.get_duration("drain", 1000)) s.drain_ns = *v;
    if (const toml::node *n = r.node("seeds"); n && n->is_integer()) {
        // A count: seeds 1..N.
        const int64_t count = *n->value<int64_t>();
        if (count < 1 || count > 10000)
            r.fail_at(n->source(), fmt::format("'seeds' must be a count from 1 to 10000 or a "
                                               "list of seeds, not {}",
                                               count));
        s.seeds.clear();
        for (int64_t i = 1; i <= count; ++i)
            s.seeds.push_back(i);
    } else if (n) {
        Params p;
        read_params(r,
                    {{.name = "seeds",
                      .type = ParamType::IntList,
                      .default_value = std::vector<int64_t>{},
                      .min = 0}},
                    p);
        s.seeds = p.get_int_list("seeds");
        if (s.seeds.empty()) r.fail_at(n->source(), "'seeds' must list at least one seed");
        // A seed twice is the same run twice: it would count as two seeds' worth of samples.
        std::set<int64_t> seen;
        for (const auto &e : *n->as_array())
            if (!seen.insert(*e.value<int64_t>()).second)
                r.fail_at(e.source(), fmt::format("'seeds' lists {} twice (a seed repeats the "
                                                  "same run)",
                                                  *e.value<int64_t>()));
    }
    if (auto v = r.get_named("cost_model", cost_model_names())) s.cost_model = *v;
    if (auto v = r.get<double>("measured_scale")) {
        if (!(*v > 0) || *v > 1e6)
            r.fail_at(r.node("measured_scale")->source(),
                      "'measured_scale' must be > 0 and at most 1000000");
        s.measured_scale = *v;
    }
    if (const toml::table *pr = r.get_table("prices")) {
        TableReader prr(file, *pr, "prices");
        read_prices(prr, s.prices);
    }
    if (const toml::table *m = r.get_table("machine")) {
        TableReader mr(file, *m, "machine");
        read_machine(mr, s.machine, file);
    }
    if (const toml::table *p = r.get_table("policy")) {
        TableReader pr(file, *p, "policy");
        read_policy(pr, s.policy, file);
    }
    if (const toml::table *c = r.get_table("core")) {
        TableReader cr(file, *c, "core");
        read_core(cr, s.core);
    }
    read_strategies(r, s);
    read_workloads(r, s);
    if (const toml::table *o = r.get_table("output")) {
        TableReader orr(file, *o, "output");
        read_output(orr, s.output);
    }
    if (const toml::table *v = r.get_table("validate")) {
        TableReader vr(file, *v, "validate");
        read_validate(vr, s.validate);
    }
    if (const toml::table *sw = r.get_table("sweep")) {
        TableReader sr(file, *sw, "sweep");
        read_sweep(sr, *sw, s);
    }
    r.finish();
    if (s.strategies.empty()) r.fail("the scenario names no strategy (add 'strategies = \"all\"')");
    if (s.workloads.empty()) r.fail("the scenario has no [[workload]]");
    if (s.warmup_ns >= s.duration_ns) {
        // The key written, warmup first (the duration alone may leave too little for the default).
        const bool written = r.node("warmup") != nullptr;
        const toml::node *at = written ? r.node("warmup") : r.node("duration");
        r.fail_at(at ? at->source() : t.source(),
                  fmt::format("'warmup' ({}{}) must be shorter than 'duration' ({}){}",
                              format_duration_ns(s.warmup_ns), written ? "" : ", the default",
                              format_duration_ns(s.duration_ns),
                              written ? ""
                                      : ": set a shorter 'warmup' (the statistics start after it) "
                                        "or a longer 'duration'"));
    }
    return s;
}

toml::table parse_toml(std::string_view text, const std::string &file) {
    try {
        return toml::parse(text, file);
    } catch (const toml::parse_error &e) {
        throw UserError(fmt::format("{}:{}:{}: {}", file, e.source().begin.line,
                                    e.source().begin.column, e.description()));
    }
}

// A dotted field's parts; for "workload.<label>.<param>" (or strategy), the [[workload]] table
// with that label (or kind) and the rest of the parts, else `t` and all of them. Nullptr as the
// table when no such entry exists.
std::pair<toml::table *, std::vector<std::string>> field_parts(toml::table &t,
                                                               const std::string &field) {
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
        size_t dot = field.find('.', start);
        parts.push_back(field.substr(start, dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    if (parts.size() != 3 || (parts[0] != "workload" && parts[0] != "strategy")) return {&t, parts};
    toml::table *match = nullptr;
    if (toml::array *arr = t.get_as<toml::array>(parts[0]))
        for (auto &e : *arr) {
            toml::table *et = e.as_table();
            if (!et) continue;
            auto label = et->get_as<std::string>("label");
            auto key = et->get_as<std::string>(parts[0] == "workload" ? "kind" : "name");
            if ((label && label->get() == parts[1]) || (!label && key && key->get() == parts[1]))
                match = et;
        }
    return {match, {parts[2]}};
}

// Sets a dotted field in a TOML table; "workload.<label>.<param>" addresses the [[workload]]
// with that label (or kind). `at` is the axis' place in the file, for errors.
void set_field(toml::table &t, const std::string &at, const std::string &field,
               const std::string &value_text) {
    toml::table parsed = parse_toml("v = " + value_text, at + " (sweep value)");
    toml::node *value = parsed.get("v");
    auto [cur, parts] = field_parts(t, field);
    if (!cur) {
        const size_t dot = field.find('.');
        throw UserError(fmt::format("{}: sweep axis '{}': no [[{}]] labelled '{}'", at, field,
                                    field.substr(0, dot),
                                    field.substr(dot + 1, field.rfind('.') - dot - 1)));
    }
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        toml::node *n = cur->get(parts[i]);
        if (!n) {
            cur->insert(parts[i], toml::table{});
            n = cur->get(parts[i]);
        }
        if (!n->is_table())
            throw UserError(
                fmt::format("{}: sweep axis '{}': '{}' is not a table", at, field, parts[i]));
        cur = n->as_table();
    }
    cur->insert_or_assign(parts.back(), *value);
}

// A sweep point is read from a rewritten copy of the file's table, which has no source positions:
// the places its errors name later are the file's, or `place(field)` for a set key (empty: the
// file's).
void restore_places(const Scenario &s, const std::function<std::string(std::string_view)> &place,
                    Scenario &p) {
    auto at = [&](std::string_view field, const std::string &in_file) {
        std::string set = place(field);
        return set.empty() ? in_file : set;
    };
    p.machine.profile_at = at("machine.profile", s.machine.profile_at);
    p.machine.spinlock_at = at("machine.spinlock", s.machine.spinlock_at);
    p.machine.cpus_at = at("machine.cpus", s.machine.cpus_at);
    p.policy.path_at = at("policy.path", s.policy.path_at);
    for (size_t i = 0; i < p.workloads.size() && i < s.workloads.size(); ++i)
        p.workloads[i].at = s.workloads[i].at;
}

// The file's table without its [sweep]: what each point is derived from.
toml::table base_table(const Scenario &s) {
    toml::table base = parse_toml(s.source_text, s.file);
    base.erase("sweep");
    return base;
}

// `t` with each (field, TOML value text) of `set` applied, read as a scenario. A mistake in it is
// reported at `blame` (the place of the value that made the point), with the point's values.
Scenario read_point(const Scenario &s, toml::table t,
                    const std::vector<std::pair<std::string, std::string>> &set,
                    const std::vector<std::string> &set_at, const std::string &blame,
                    const char *what) {
    std::vector<std::pair<std::string, std::string>> point;
    for (size_t a = 0; a < set.size(); ++a) {
        const auto &[field, value] = set[a];
        set_field(t, set_at[a], field, value);
        // Shown without the TOML quotes: machine.profile=sh4, not 'sh4'.
        std::string shown = value;
        if (shown.size() >= 2 && (shown.front() == '\'' || shown.front() == '"') &&
            shown.back() == shown.front())
            shown = shown.substr(1, shown.size() - 2);
        point.emplace_back(field, shown);
    }
    Scenario p;
    try {
        p = scenario_from_table(t, s.file);
    } catch (const UserError &e) {
        // The message's place is in the rewritten table (which has no positions).
        std::string desc;
        for (const auto &[f, v] : point)
            desc += fmt::format(" {}={}", f, v);
        std::string msg = e.what();
        size_t colon = msg.find(": ");
        if (colon != std::string::npos) msg = msg.substr(colon + 2);
        throw UserError(fmt::format("{}: {} (at {}{})", blame, msg, what, desc));
    }
    p.point = std::move(point);
    p.source_text = s.source_text;
    return p;
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string &source_name) {
    toml::table t = parse_toml(text, source_name);
    Scenario s = scenario_from_table(t, source_name);
    s.source_text = std::string(text);
    if (!s.sweep.empty()) expand_sweep(s);  // every point must be valid too
    return s;
}

Scenario load_scenario(const std::string &path) {
    return parse_scenario(read_whole_file(path, "scenario file"), path);
}

std::string base_point_text(const Scenario &s) {
    toml::table t = parse_toml(s.source_text, s.file);
    t.erase("sweep");
    std::string out;
    for (const SweepAxis &axis : s.sweep) {
        auto [cur, parts] = field_parts(t, axis.field);
        const toml::node *n = cur;
        for (const std::string &part : parts)
            n = n && n->is_table() ? n->as_table()->get(part) : nullptr;
        std::string value;
        if (n && n->is_string())
            value = n->as_string()->get();
        else if (n && n->is_integer())
            value = std::to_string(n->as_integer()->get());
        else if (n && n->is_boolean())
            value = n->as_boolean()->get() ? "true" : "false";
        else if (n && n->is_floating_point())
            value = fmt::format("{}", n->as_floating_point()->get());
        else if (n)
            value = "(as the file sets it)";
        else if (axis.field.rfind("core.", 0) == 0) {
            // Unset in [core]: its default (scenario/core_settings.h).
            value = std::visit(
                [](const auto &d) -> std::string {
                    using T = std::decay_t<decltype(d)>;
                    if constexpr (std::is_same_v<T, std::string>)
                        return d;
                    else if constexpr (std::is_same_v<T, int64_t>)
                        return std::to_string(d);
                    else
                        return "(default)";
                },
                core_param(axis.field.substr(5)).default_value);
        } else {
            value = "(default)";
        }
        out += (out.empty() ? "" : " ") + axis.field + "=" + value;
    }
    return out;
}

std::vector<Scenario> expand_sweep(const Scenario &s) {
    if (s.sweep.empty()) return {s};
    std::vector<Scenario> points;
    std::vector<size_t> index(s.sweep.size(), 0);
    const toml::table base = base_table(s);
    for (;;) {
        std::vector<std::pair<std::string, std::string>> set;
        std::vector<std::string> set_at;
        for (size_t a = 0; a < s.sweep.size(); ++a) {
            set.emplace_back(s.sweep[a].field, s.sweep[a].values[index[a]]);
            set_at.push_back(s.sweep[a].at);
        }
        // A mistake is blamed on the first axis not at its first value, else the first.
        size_t blame = 0;
        for (size_t a = 0; a < s.sweep.size(); ++a) {
            if (index[a] != 0) {
                blame = a;
                break;
            }
        }
        auto [line, col] = s.sweep[blame].where[index[blame]];
        Scenario p = read_point(s, base, set, set_at, fmt::format("{}:{}:{}", s.file, line, col),
                                "sweep point");
        restore_places(
            s,
            [&](std::string_view field) -> std::string {
                for (size_t a = 0; a < s.sweep.size(); ++a)
                    if (s.sweep[a].field == field) {
                        auto [l, c] = s.sweep[a].where[index[a]];
                        return fmt::format("{}:{}:{}", s.file, l, c);
                    }
                return "";
            },
            p);
        points.push_back(std::move(p));
        size_t a = s.sweep.size();
        while (a > 0) {
            --a;
            if (++index[a] < s.sweep[a].values.size()) break;
            index[a] = 0;
            if (a == 0) return points;
        }
    }
}

Scenario scenario_at(const Scenario &s, const std::string &field, const std::string &value_text,
                     const std::string &at) {
    Scenario p = read_point(s, base_table(s), {{field, value_text}}, {at}, at, "point");
    restore_places(
        s, [&](std::string_view f) { return f == field ? at : std::string(); }, p);
    return p;
}

Scenario scenario_at(const Scenario &s,
                     const std::vector<std::pair<std::string, std::string>> &fields,
                     const std::string &at) {
    Scenario p = read_point(s, base_table(s), fields, std::vector<std::string>(fields.size(), at),
                            at, "point");
    restore_places(
        s,
        [&](std::string_view f) {
            for (const auto &[field, value] : fields)
                if (f == field) return at;
            return std::string();
        },
        p);
    return p;
}

}  // namespace locksim
