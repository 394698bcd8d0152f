// Timeline hooks of the simulated platform. A TraceRecorder attached to a SimPlatform (before
// run()) is told of every boundary a timeline viewer needs: which task a CPU runs, each closed
// preempt-off and IRQs-off section, each lock wait, each grace period and each wait for one.
// With no recorder attached the platform pays one pointer test per boundary and nothing else.
//
// Every call reports a finished interval [start, end] in simulated nanoseconds, except
// cpu_switch, which reports the moment a CPU starts running a task (or goes idle); the recorder
// closes the previous slice itself, and finish() closes the last ones.
#pragma once

#include <cstdint>
#include <string_view>

#include "kernel/platform.h"
#include "record/run_results.h"

namespace locksim::sim {

class TraceRecorder {
  public:
    virtual ~TraceRecorder() = default;

    // From `at`, CPU `cpu` runs task `task_id` named `task` (the switch cost included), or
    // nothing when task_id < 0.
    virtual void cpu_switch(int cpu, kernel::Time at, int task_id, std::string_view task) = 0;

    // A closed atomic section of the task running on `cpu`: preemption off (irqs == false) or
    // interrupts off. `label` is the task's innermost operation when the section began.
    virtual void atomic_section(int cpu, bool irqs, kernel::Time start, kernel::Time end,
                                std::string_view task, std::string_view label,
                                std::string_view start_site, std::string_view end_site) = 0;

    // A task waited for `lock` from start to end: spinning on `cpu`, or asleep (cpu < 0).
    virtual void lock_wait(int cpu, int task_id, std::string_view task, std::string_view lock,
                           bool exclusive, kernel::Time start, kernel::Time end) = 0;

    // A grace period from its start to its completion.
    virtual void grace_period(uint64_t id, bool expedited, kernel::Time start,
                              kernel::Time end) = 0;

    // A task slept in synchronize_rcu from start to end.
    virtual void gp_wait(int task_id, std::string_view task, kernel::Time start,
                         kernel::Time end) = 0;

    // A probe's wake-up, counted in the results, with what delayed it; it ran at w.due + w.late.
    // No wake-up counted after this one was due before `horizon`.
    virtual void probe_wakeup(int task_id, const kernel::WakeupRecord &w, kernel::Time horizon) = 0;

    // The run ended at `at`: slices still open end there.
    virtual void finish(kernel::Time at) = 0;
};

}  // namespace locksim::sim
