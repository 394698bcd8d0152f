// load_policy: `load_policy` writing the same binary policy to /sys/fs/selinux/load every
// `period`: read, booleans preserved, SID table converted, published. The security server
// records the write as its operation "load_policy" (record/op_names.h); the workload opens no
// operation of the same name around it, which would count every load twice.
#include "workloads/workload.h"

namespace locksim {

static void spawn_load_policy(const WorkloadSpec &spec, WorkloadEnv &env) {
    auto image = std::make_shared<std::vector<uint8_t>>(env.policy_image());
    spawn_tasks(spec, env, false, [image, spec, seed = env.seed, &server = env.server](int i) {
        PeriodicTimer timer(spec, seed, i);
        timer.start();
        while (!kernel::kthread_should_stop()) {
            timer.wait();
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            server.load_policy(*image);
        }
    });
}

namespace workloads {

WorkloadInfo load_policy_workload() {
    return {.name = "load_policy",
            .summary = "periodic policy reload (security_load_policy) of the same policy",
            .params = {dur("period", "time between reloads", 500 * ms, 1 * ms), jitter()},
            .spawn = spawn_load_policy,
            .period = period_param};
}

}  // namespace workloads

}  // namespace locksim
