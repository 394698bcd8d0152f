// load_policy: `load_policy` writing the same binary policy to /sys/fs/selinux/load every
// `period`: read, booleans preserved, SID table converted, published. The security server
// records the write as its operation "load_policy" (kernel/op_names.h); the workload opens no
// operation of the same name around it, which would count every load twice.
#include "workloads/workload.h"

namespace locksim {

static void spawn_load_policy(const WorkloadSpec &spec, WorkloadEnv &env) {
    auto image = std::make_shared<std::vector<uint8_t>>(env.policy_image());
    const kernel::Time period = spec.params.get_duration_ns("period");
    spawn_tasks(spec, env, false, [image, period, &server = env.server](int) {
        kernel::Time next = kernel::now();
        while (!kernel::kthread_should_stop()) {
            next += period;
            kernel::sleep_until(next);
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            server.load_policy(*image);
        }
    });
}

namespace workloads {

WorkloadInfo load_policy_workload() {
    return {.name = "load_policy",
            .summary = "periodic policy reload (security_load_policy) of the same policy",
            .params = {dur("period", "time between reloads", 500 * ms, 1 * ms)},
            .spawn = spawn_load_policy};
}

}  // namespace workloads

}  // namespace locksim
