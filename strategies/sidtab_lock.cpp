#include "strategies/sidtab_lock.h"

#include <array>

namespace locksim::strategies {

namespace {

const kernel::Label &section_label(ss::SidtabLocking::Section s) {
    static const auto labels = [] {
        std::array<kernel::Label, static_cast<size_t>(ss::SidtabLocking::Section::Count)> l;
        for (size_t i = 0; i < l.size(); ++i)
            l[i] =
                kernel::Label(ss::sidtab_section_name(static_cast<ss::SidtabLocking::Section>(i)));
        return l;
    }();
    return labels[static_cast<size_t>(s)];
}

}  // namespace

KernelSidtabLocking::KernelSidtabLocking(kernel::Platform &p)
    : lock_("sidtab.lock", p), cache_lock_("sidtab.cache_lock", p) {}

void KernelSidtabLocking::lock(Section s) {
    Lock &l = lock_of(s);
    if (!kernel::in_compute()) {
        l.host.lock();
        return;
    }
    const kernel::Label label = section_label(s);
    kernel::Platform &p = l.spinlock.platform();
    unsigned long flags = 0;
    // The operation opens first, so that the IRQs-off section is reported under its label.
    const kernel::Label outer = kernel::compute_break(label, [&] {
        p.op_begin(label);
        flags = kernel::spin_lock_irqsave(l.spinlock);
    });
    l.flags = flags;
    l.outer = outer;
}

void KernelSidtabLocking::unlock(Section s) {
    Lock &l = lock_of(s);
    if (!kernel::in_compute()) {
        l.host.unlock();
        return;
    }
    const kernel::Label label = section_label(s);
    kernel::Platform &p = l.spinlock.platform();
    const unsigned long flags = l.flags;
    kernel::compute_break(l.outer, [&] {
        kernel::spin_unlock_irqrestore(l.spinlock, flags);
        p.op_end(label);
    });
}

void KernelSidtabLocking::resched() {
    if (kernel::in_compute())
        kernel::compute_break(kernel::compute_label(), [] { kernel::cond_resched(); });
}

}  // namespace locksim::strategies
