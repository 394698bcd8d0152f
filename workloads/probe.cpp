// probe: a cyclictest-like real-time task (by default one pinned SCHED_FIFO 99 task per CPU):
// it sleeps to the next multiple of `period` and the platform records how late each wake-up
// was. The lateness is the preempt-off and IRQs-off time a real-time task sees. Like
// cyclictest's threads, task i of n is phase-shifted by i/n of a period, so that the probes do
// not all fire at the same instant.
#include "workloads/workload.h"

namespace locksim {

static void spawn_probe(const WorkloadSpec &spec, WorkloadEnv &env) {
    const kernel::Time period = spec.params.get_duration_ns("period");
    const int64_t tasks = spec.tasks == 0 ? env.cpus : spec.tasks;
    spawn_tasks(spec, env, true, [period, tasks](int index) {
        kernel::Time next = kernel::now() + period * index / tasks;
        while (!kernel::kthread_should_stop()) {
            next += period;
            kernel::sleep_until(next);
        }
    });
}

namespace workloads {

WorkloadInfo probe_workload() {
    return {
        .name = "probe",
        .summary =
            "a cyclictest-like SCHED_FIFO task: sleeps to the next period and records how late it "
            "woke",
        .params = {dur("period", "wake-up period", 1 * ms, 10 * us)},
        .common_defaults = {{"tasks", int64_t{0}},
                            {"sched", std::string("fifo")},
                            {"prio", int64_t{99}},
                            {"pin", true}},
        .spawn = spawn_probe};
}

}  // namespace workloads

}  // namespace locksim
