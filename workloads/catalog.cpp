#include "workloads/catalog.h"

#include <stdexcept>

// Every workload, in the order `locksim list workloads` shows them: one line each, naming the
// function in workloads/<name>.cpp that returns its entry.
#define LOCKSIM_WORKLOADS(X) \
    X(syscalls_workload)     \
    X(aim7_workload)         \
    X(journald_workload)     \
    X(setsebool_workload)    \
    X(load_policy_workload)  \
    X(login_workload)        \
    X(avc_pressure_workload) \
    X(new_contexts_workload) \
    X(netrx_workload)        \
    X(probe_workload)

namespace locksim {

namespace workloads {

ParamSpec dur(std::string name, std::string doc, int64_t ns, int64_t min) {
    return {.name = std::move(name),
            .type = ParamType::Duration,
            .doc = std::move(doc),
            .default_value = ns,
            .min = min,
            .max = int64_t{3600} * 1'000'000'000};
}

ParamSpec count(std::string name, std::string doc, int64_t v, int64_t min, int64_t max) {
    return {.name = std::move(name),
            .type = ParamType::Int,
            .doc = std::move(doc),
            .default_value = v,
            .min = min,
            .max = max};
}

ParamSpec text(std::string name, std::string doc, std::string v, std::vector<std::string> choices) {
    return {.name = std::move(name),
            .type = ParamType::String,
            .doc = std::move(doc),
            .default_value = std::move(v),
            .choices = std::move(choices)};
}

ParamSpec names(std::string name, std::string doc) {
    return {.name = std::move(name),
            .type = ParamType::StringList,
            .doc = std::move(doc),
            .default_value = std::vector<std::string>{}};
}

ParamSpec jitter() {
    return dur("jitter",
               "how late after its period each wake-up comes: a draw in [0, jitter] (the timer's "
               "slack); default 50us with sched = \"other\" (timer_slack_ns), 0 with \"fifo\" "
               "or \"rr\" (real-time tasks get no slack)",
               kDefaultJitter);
}

int64_t period_param(const Params &params) {
    return params.get_duration_ns("period");
}

int64_t rate_param(const Params &params) {
    return 1'000'000'000 / params.get_int("rate");
}

}  // namespace workloads

using workloads::count;
using workloads::dur;
using workloads::text;

const std::vector<ParamSpec> &common_workload_params() {
    static const std::vector<ParamSpec> common = {
        count("tasks", "how many tasks run this body; 0 = one per CPU", 1, 0, 100000),
        text("sched", "scheduling policy: SCHED_OTHER (CFS), SCHED_FIFO or SCHED_RR", "other",
             {"other", "fifo", "rr"}),
        count("prio", "real-time priority (1..99) with sched = fifo or rr", 50, 1, 99),
        count("nice", "nice level with sched = other: its CFS weight (1024 at 0, ~1.25x per level)",
              0, -20, 19),
        {.name = "cpus",
         .type = ParamType::IntList,
         .doc = "CPUs the tasks may run on, their affinity (empty: any); task i is pinned to "
                "cpus[i % n] when pin = true",
         .default_value = std::vector<int64_t>{},
         .min = 0,
         .max = 4095},
        {.name = "pin",
         .type = ParamType::Bool,
         .doc = "pin each task to one CPU of `cpus` (or to CPU i % ncpus when cpus is empty)",
         .default_value = false},
        dur("start", "when the tasks start (simulated time)", 0),
        text("cluster",
             "run on this cluster of the CPU profile (its [[cluster]] name): task i is pinned to "
             "the cluster's CPU i % n; empty: any CPU",
             "", {}),
    };
    return common;
}

namespace workloads {
#define LOCKSIM_DECLARE_WORKLOAD(entry) WorkloadInfo entry();
LOCKSIM_WORKLOADS(LOCKSIM_DECLARE_WORKLOAD)
#undef LOCKSIM_DECLARE_WORKLOAD
}  // namespace workloads

const std::vector<WorkloadInfo> &workload_catalog() {
#define LOCKSIM_LIST_WORKLOAD(entry) workloads::entry(),
    static const std::vector<WorkloadInfo> catalog = {LOCKSIM_WORKLOADS(LOCKSIM_LIST_WORKLOAD)};
#undef LOCKSIM_LIST_WORKLOAD
    return catalog;
}

int64_t timer_jitter(const WorkloadSpec &spec) {
    return spec.params.get_duration_ns("jitter");
}

const WorkloadInfo *find_workload_info(std::string_view name) {
    for (const auto &w : workload_catalog())
        if (w.name == name) return &w;
    return nullptr;
}

}  // namespace locksim
