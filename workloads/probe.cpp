// probe: a cyclictest-like real-time task (by default one pinned SCHED_FIFO 99 task per CPU):
// it sleeps to the next multiple of `period` and the platform records how late each wake-up
// was. The lateness is the preempt-off and IRQs-off time a real-time task sees. Like
// cyclictest's threads, task i of n is phase-shifted by i/n of a period, so that the probes do
// not all fire at the same instant; the first task's phase is drawn from the seed (PeriodicTimer).
#include "workloads/workload.h"

namespace locksim {

static void spawn_probe(const WorkloadSpec &spec, WorkloadEnv &env) {
    const int64_t tasks = spec.tasks == 0 ? env.cpus : spec.tasks;
    const kernel::Time phase = PeriodicTimer(spec, env.seed, 0).phase();
    spawn_tasks(spec, env, true, [spec, seed = env.seed, tasks, phase](int index) {
        PeriodicTimer timer(spec, seed, index);
        timer.start_at((phase + timer.period() * index / tasks) % timer.period());
        while (!kernel::kthread_should_stop())
            timer.wait();
    });
}

namespace workloads {

WorkloadInfo probe_workload() {
    return {
        .name = "probe",
        .summary =
            "a cyclictest-like SCHED_FIFO task: sleeps to the next period and records how late it "
            "woke",
        .params = {dur("period", "wake-up period", 1 * ms, 10 * us), jitter()},
        .common_defaults = {{"tasks", int64_t{0}},
                            {"sched", std::string("fifo")},
                            {"prio", int64_t{99}},
                            {"pin", true}},
        .spawn = spawn_probe,
        .period = period_param};
}

}  // namespace workloads

}  // namespace locksim
