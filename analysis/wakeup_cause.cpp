#include "analysis/wakeup_cause.h"

#include <fmt/format.h>

#include "util/params.h"

namespace locksim::analysis {

const kernel::WakeupRecord *worst_wakeup(const kernel::RunResults &r) {
    return r.wakeup_worst.empty() ? nullptr : &r.wakeup_worst.front();
}

std::string describe_cause(const kernel::WakeupRecord &w) {
    const kernel::WakeupDelay *d = w.cause();
    if (!d) return "on time: nothing held the CPU (the wake-up path's own cost)";
    const std::string held = format_duration_ns(d->delayed_ns);
    const std::string op = d->label.empty() ? std::string("no operation") : d->label;
    if (d->kind == "task")
        return fmt::format("task {} of higher or equal priority ({}) ran on CPU {} for {}", d->task,
                           op, d->cpu, held);
    if (d->kind == "irq")
        return fmt::format("interrupt handlers on CPU {} held off its switch-in for {}", d->cpu,
                           held);
    if (d->kind == "softirq")
        return fmt::format("softirq work ({}) ran on CPU {} for {}, ahead of every task", op,
                           d->cpu, held);
    if (d->kind == "pi_chain")
        return fmt::format(
            "task {} ({}) ran on CPU {} for {} at a priority inherited from {} (rt_mutex priority "
            "inheritance)",
            d->task, op, d->cpu, held, d->via);
    if (d->kind == "overdue")
        return fmt::format(
            "overdue: due {} before the probe went to sleep for it (the probe was "
            "still late from its previous wake-up or its start)",
            held);
    if (d->kind == "kernel_code")
        return fmt::format("non-preemptible kernel code of {} in task {} on CPU {} held it {}", op,
                           d->task, d->cpu, held);
    return fmt::format("{} section of {}, {} (task {}, CPU {}, {} long) held it {}",
                       d->kind == "irqs_off" ? "IRQs-off" : "preempt-off", op, d->site, d->task,
                       d->cpu, format_duration_ns(d->length), held);
}

std::string describe_wakeup(const kernel::WakeupRecord &w) {
    return fmt::format("{} woke {}{} late, due at {}, on CPU {}: {}", w.probe,
                       w.open_at_end ? "at least " : "", format_duration_ns(w.late),
                       format_duration_ns(w.due), w.cpu, describe_cause(w));
}

}  // namespace locksim::analysis
