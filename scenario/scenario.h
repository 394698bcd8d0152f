// A scenario: the machine, the policy, the strategies to compare, the workloads, how long, which
// seeds, which core variants, and where the results go. Loaded from a TOML file and validated
// field by field, once: an unknown key, a wrong type or an impossible value is a UserError naming
// the file, line and column, and what is loaded is what the platforms and the core take
// (scenario/platform_config.h converts it, the platforms only assert).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scenario/core_settings.h"
#include "sim/config.h"
#include "sim/profile.h"
#include "ss/policy_gen.h"
#include "util/name_table.h"
#include "util/params.h"
#include "workloads/catalog.h"

namespace locksim {

// The names of the enumerated [machine] and top-level settings' values.
const NameTable<sim::PreemptModel> &preemption_names();  // none | voluntary | full | rt
const NameTable<sim::SpinlockImpl> &spinlock_names();    // queued | byte
const NameTable<sim::CostModel> &cost_model_names();     // counted | measured

struct MachineSpec {
    int cpus = 4;
    std::string profile = "x86-modern";
    sim::PreemptModel preemption = sim::PreemptModel::Full;
    bool preempt_rcu = true;
    bool rt_mutex_pi = true;  // with preemption = rt: rt_mutex priority inheritance
    // rcu_nocbs= on every CPU: call_rcu callbacks in rcuo kthreads, not RCU_SOFTIRQ (sim/rcu.h)
    bool rcu_nocbs = false;
    int hz = 250;
    // CONFIG_IMA: from 5.12 every policy change ends with the IMA measurement of the policy
    // (security/selinux/ima.c), which writes the whole policy out (KernelBehaviour::ima_step).
    // Off as Kconfig's default is (and as Android's GKI builds); distribution kernels set it.
    bool ima = false;
    // The kernel release every design runs ("5.10.30"); "default": each design on its own
    // (StrategyInfo::kernels, strategies/kernels.h). A [[strategy]]'s own `kernel` overrides it.
    std::string kernel = "default";
    std::string kernel_at;  // file:line:column of the key
    // queued (v4.2 on) | byte (2.6.9's test-and-test-and-set lock): how spinners move the lock
    // word's line, with a profile that models caches (sim/lock_table.h)
    sim::SpinlockImpl spinlock = sim::SpinlockImpl::Queued;
    std::string spinlock_at;  // file:line:column of the key, for errors found with the profile
    std::string profile_at;   // file:line:column of machine.profile (empty: the default's)
    std::string cpus_at;      // file:line:column of machine.cpus (empty: the default's)
    // [[machine.irq]]: `rate` interrupts per second on each of `cpus` (empty: all), each a hard
    // handler followed by softirq work; under preemption "rt" a network or block source is a
    // threaded interrupt at SCHED_FIFO `priority` (thread_priority). Each source's phase on
    // each CPU is drawn from the run's seed, and each interrupt arrives late by a draw in
    // [0, jitter] (shorter than its period).
    std::vector<sim::IrqSource> irqs;
};

struct SyntheticPolicySpec {
    std::string preset;  // a distribution policy's shape (ss::gen_presets); "" for none
    // The preset's generator options (the defaults without one), under the keys below; read
    // with the preset, once.
    ss::GenOptions base;
    int64_t types = 2000;
    int64_t booleans = 100;
    int64_t attributes = -1;  // -1: in proportion to types
    int64_t rules = -1;       // -1: in proportion to types
    int64_t users = 8;
    int64_t roles = 12;
    int64_t categories = 256;
    bool mls = true;
    int64_t seed = 1;
};

struct PolicySpec {
    enum class Source { DebianDefault, DebianMls, File, Synthetic };
    Source source = Source::DebianDefault;
    std::string path;     // Source::File (resolved relative to the scenario file)
    std::string path_at;  // file:line:column of policy.path, for errors found reading the file
    SyntheticPolicySpec synthetic;
};

struct StrategySpec {
    std::string name;   // registry name
    std::string label;  // how it is shown; defaults to the name plus its non-default options
    Params options;
    std::string kernel;     // the release it runs on; empty: machine.kernel's
    std::string kernel_at;  // file:line:column of its `kernel` key
};

// [validate]: the workload `locksim validate` runs on both platforms (the rest of the scenario
// gives the policy, the strategies and their kernels).
enum class ValidateRead : uint8_t {
    Decisions,  // each read section: 4 access decisions drawn from `pool` boolean-dependent ones
    Contexts,   // each read section: context_to_sid of one of `sids` contexts made before the run
};
const NameTable<ValidateRead> &validate_read_names();  // decisions | contexts
struct ValidateSpec {
    ValidateRead read = ValidateRead::Decisions;
    int64_t pool = 256;              // decisions to draw from
    int64_t sids = 4000;             // contexts: the SID table's size (MCS category pairs)
    int64_t toggle_ns = 20'000'000;  // between two commits of every boolean
};

struct OutputSpec {
    std::string dir;  // empty: results/<scenario name>
    std::vector<std::string> formats = {"table", "json", "csv", "hgrm"};
};

// A parameter grid: each axis names a scenario field ("machine.cpus", "policy.synthetic.types",
// "workload.setsebool.period", ...) and the values it takes; points are the cross product.
struct SweepAxis {
    std::string field;
    std::vector<std::string> values;         // each as TOML text, e.g. "8" or "\"expedited\""
    std::vector<std::pair<int, int>> where;  // line and column of each value in the file
    std::string at;                          // file:line:column of the axis' key
};

struct Scenario {
    std::string file;  // where it was loaded from
    std::string name;
    std::string description;
    int64_t duration_ns = 1'000'000'000;
    int64_t warmup_ns = 100'000'000;
    // After the duration, how long the work in flight may run on and still be measured in full;
    // what is open after it is censored.
    int64_t drain_ns = 1'000'000'000;
    std::vector<int64_t> seeds = {1};
    sim::CostModel cost_model = sim::CostModel::Counted;
    double measured_scale = 1.0;
    MachineSpec machine;
    // [prices]: factors on the profile's prices, per family (sim/profile.h); what `locksim
    // robust` varies, and a sweep or margin may name (prices.work ...).
    sim::PriceFactors prices = sim::kNominalPrices;
    PolicySpec policy;
    CoreVariants core;
    std::vector<StrategySpec> strategies;
    std::vector<WorkloadSpec> workloads;
    OutputSpec output;
    ValidateSpec validate;
    std::vector<SweepAxis> sweep;
    // For a point of a sweep: the field = value pairs that made it (empty otherwise).
    std::vector<std::pair<std::string, std::string>> point;
    std::string source_text;  // the file's text, to derive sweep points from
};

// Loads and validates; throws UserError("file:line:col: message") on any problem.
Scenario load_scenario(const std::string &path);
Scenario parse_scenario(std::string_view text, const std::string &source_name);

// Every point of the scenario's sweep grid (the scenario itself when it has none), in a fixed
// order: the first axis varies slowest. Each point is validated as a whole scenario.
std::vector<Scenario> expand_sweep(const Scenario &s);
// The scenario's base point (its [sweep] left out) with one field set to a TOML value, e.g.
// ("machine.cpus", "4"): the fields a sweep axis names, checked as a sweep point is, with the same
// messages; a mistake is reported at `at` (the option or place the value came from).
Scenario scenario_at(const Scenario &s, const std::string &field, const std::string &value_text,
                     const std::string &at);
// The same with several fields set at once (field, TOML value), a mistake reported at `at`.
Scenario scenario_at(const Scenario &s,
                     const std::vector<std::pair<std::string, std::string>> &fields,
                     const std::string &at);
// The point `run` and `compare` run for a scenario with a sweep: each axis at the value the
// file's own tables give it (its default where they give none), e.g. "core.sidtab=legacy".
std::string base_point_text(const Scenario &s);

const NameTable<PolicySpec::Source> &policy_source_names();

}  // namespace locksim
