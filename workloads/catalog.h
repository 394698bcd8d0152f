// The workloads a scenario can name, with their documented parameters. Every workload also takes
// the common parameters (tasks, sched, prio, cpus, start). The bodies live in
// workloads/<name>.cpp.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/params.h"

namespace locksim {

struct WorkloadInfo {
    std::string name;
    std::string summary;
    std::vector<ParamSpec> params;  // without the common ones
    // This workload's own defaults for common parameters (a probe runs one FIFO task per CPU).
    std::vector<std::pair<std::string, ParamValue>> common_defaults = {};
};

const std::vector<WorkloadInfo> &workload_catalog();
const WorkloadInfo *find_workload_info(std::string_view name);
// Parameters every workload accepts.
const std::vector<ParamSpec> &common_workload_params();
// The keys of a scenario's [core] table (the core's runtime variants), as the loader checks
// them and `locksim list core` prints them.
const std::vector<ParamSpec> &core_params();
const ParamSpec &core_param(std::string_view name);

}  // namespace locksim
