// Preemption and interrupt state of the calling CPU (include/linux/preempt.h, irqflags.h,
// bottom_half.h): preempt-off and irqs-off sections, softirqs off, and the flags-saving forms.
// Every call takes the caller's location, so a report names the caller's line.
#pragma once

#include "kernel/platform.h"

namespace locksim::kernel {

inline void preempt_disable(Loc loc = Loc::current()) {
    current().preempt_disable({"preempt_disable", loc});
}
inline void preempt_enable(Loc loc = Loc::current()) {
    current().preempt_enable({"preempt_enable", loc});
}
inline void local_irq_disable(Loc loc = Loc::current()) {
    current().local_irq_disable({"local_irq_disable", loc});
}
inline void local_irq_enable(Loc loc = Loc::current()) {
    current().local_irq_enable({"local_irq_enable", loc});
}
inline bool irqs_disabled() {
    return current().irqs_disabled();
}
inline void local_bh_disable(Loc loc = Loc::current()) {
    current().local_bh_disable({"local_bh_disable", loc});
}
inline void local_bh_enable(Loc loc = Loc::current()) {
    current().local_bh_enable({"local_bh_enable", loc});
}
[[nodiscard]] inline unsigned long local_irq_save(Loc loc = Loc::current()) {
    Platform &p = current();
    unsigned long flags = p.irqs_disabled() ? 1 : 0;
    p.local_irq_disable({"local_irq_save", loc});
    return flags;
}
inline void local_irq_restore(unsigned long flags, Loc loc = Loc::current()) {
    if (!flags) current().local_irq_enable({"local_irq_restore", loc});
}

}  // namespace locksim::kernel
