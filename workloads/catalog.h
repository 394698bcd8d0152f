// The workloads a scenario can name, one entry each, as the strategies (strategies/catalog.h): a
// workload's file (workloads/<name>.cpp) defines its entry — name, one-line summary, parameters
// with their defaults and checks, and the function that spawns its tasks — and catalog.cpp lists
// the entries in one line each. Every workload also takes the common parameters (tasks, sched,
// prio, cpus, pin, start).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/params.h"

namespace locksim {

struct WorkloadEnv;  // workloads/workload.h

// A workload as a scenario's [[workload]] gives it (scenario/scenario.h reads and checks it).
struct WorkloadSpec {
    std::string kind;
    std::string label;
    std::string at;  // "file:line:column" of its [[workload]] table: errors found later name it
    int64_t tasks = 1;
    Params params;
    std::set<std::string> given;  // the parameters the file sets (the others are defaults)
};

struct WorkloadInfo {
    // Creates the workload's tasks on the current platform (workloads/workload.h).
    using Spawner = void (*)(const WorkloadSpec &spec, WorkloadEnv &env);
    // A periodic workload's time between two wake-ups of each task (its `period` or 1 s /
    // `rate`), 0 when its parameters make it not periodic. Such a workload also takes
    // `jitter` (workloads::jitter); its tasks' timers start at a phase drawn from the seed.
    using PeriodOf = int64_t (*)(const Params &params);
    std::string name;
    std::string summary;
    std::vector<ParamSpec> params;  // without the common ones
    // This workload's own defaults for common parameters (a probe runs one FIFO task per CPU).
    std::vector<std::pair<std::string, ParamValue>> common_defaults = {};
    Spawner spawn = nullptr;
    PeriodOf period = nullptr;  // nullptr: not periodic
    // Non-empty: the workload runs in the softirq work of the machine's interrupts of this kind
    // (kernel::open_softirq). It has no tasks of its own, so the common parameters do not apply,
    // and the scenario must have a [[machine.irq]] of that kind.
    std::string irq_kind = {};
};

const std::vector<WorkloadInfo> &workload_catalog();
const WorkloadInfo *find_workload_info(std::string_view name);
// Parameters every workload accepts.
const std::vector<ParamSpec> &common_workload_params();
// A periodic workload's jitter as its timers use it: the `jitter` given, else the default of
// its scheduling policy (workloads::jitter), which the loader sets.
int64_t timer_jitter(const WorkloadSpec &spec);

// What the entries' parameters are made of.
namespace workloads {
inline constexpr int64_t us = 1000, ms = 1000 * us;
ParamSpec dur(std::string name, std::string doc, int64_t ns, int64_t min = 0);
ParamSpec count(std::string name, std::string doc, int64_t v, int64_t min, int64_t max);
ParamSpec text(std::string name, std::string doc, std::string v, std::vector<std::string> choices);
// A list of names, empty by default.
ParamSpec names(std::string name, std::string doc);
// `jitter`, of a periodic workload: how late after its timer's expiry each wake-up comes, a
// draw in [0, jitter]. Default kDefaultJitter with sched = "other" (the timer slack the kernel
// gives a task, timer_slack_ns = 50 us: its hrtimer may expire anywhere in that range, with
// the next interrupt that finds it due), 0 with "fifo" or "rr" (real-time tasks' sleeps get
// no slack, hrtimer_nanosleep); a value given applies to any policy.
inline constexpr int64_t kDefaultJitter = 50 * us;
ParamSpec jitter();
// The period of `period` and of `rate` (1 s / rate), for WorkloadInfo::period.
int64_t period_param(const Params &params);
int64_t rate_param(const Params &params);
}  // namespace workloads

}  // namespace locksim
