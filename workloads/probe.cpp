// probe: a cyclictest-like real-time task (by default one pinned SCHED_FIFO 99 task per CPU):
// it sleeps to the next multiple of `period` and the platform records how late each wake-up
// was. The lateness is the preempt-off and IRQs-off time a real-time task sees.
#include "workloads/workload.h"

namespace locksim {

void spawn_probe(const WorkloadSpec &spec, WorkloadEnv &env) {
    const kernel::Time period = spec.params.get_duration_ns("period");
    spawn_tasks(spec, env, true, [period](int) {
        kernel::Time next = kernel::now();
        while (!kernel::kthread_should_stop()) {
            next += period;
            kernel::sleep_until(next);
        }
    });
}

}  // namespace locksim
