// The SID table's spinlocks on kernel/: every section the kernel runs under s->lock or
// s->cache_lock with spin_lock_irqsave (security/selinux/ss/sidtab.c, v6.x; the earlier eras'
// sections as ss/sidtab.h lists them) becomes an IRQs-off section on the platform, with the
// core's work inside it charged there, labelled as an operation of its own ("sidtab_insert",
// "sidtab_convert_hashtable", "sidtab_freeze", "sidtab_cache", ...) so that the preempt-off and
// IRQs-off reports name it. The reschedule point between two leaves of a live conversion is a
// cond_resched.
//
// The core calls these from inside kernel::compute(); each call leaves the compute span
// (compute_break), makes its platform calls and goes on counting under the section's label.
// Outside compute() (setup code, before tasks run: no task, no platform time) a host mutex
// stands in.
#pragma once

#include <mutex>

#include "kernel/primitives.h"
#include "ss/sidtab.h"

namespace locksim::strategies {

class KernelSidtabLocking final : public ss::SidtabLocking {
  public:
    explicit KernelSidtabLocking(kernel::Platform &p);
    void lock(Section s) override;
    void unlock(Section s) override;
    void resched() override;

  private:
    struct Lock {
        kernel::Spinlock spinlock;
        std::mutex host;          // outside compute()
        unsigned long flags = 0;  // of the holder
        kernel::Label outer;      // the holder's compute label before the section
        explicit Lock(std::string_view name, kernel::Platform &p) : spinlock(name, p) {}
    };
    Lock &lock_of(Section s) { return s == Section::Cache ? cache_lock_ : lock_; }

    Lock lock_, cache_lock_;
};

}  // namespace locksim::strategies
