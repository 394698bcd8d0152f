// What the lock primitives (spinlock.h, rwlock.h, rwsem.h, mutex.h) share: a named lock
// created on a platform, one class template for every kind, and the acquire and release paths
// of the plain, _irq and _irqsave forms.
#pragma once

#include "kernel/platform.h"

namespace locksim::kernel {

// A named lock created on a platform. The name is the lock class for lockdep-like order checks
// and for the lock metrics (locks of one name, e.g. 512 AVC slot locks, share statistics).
class LockBase {
  public:
    LockBase(const LockBase &) = delete;
    LockBase &operator=(const LockBase &) = delete;
    Platform &platform() const { return *platform_; }
    LockObject *object() const { return object_; }

  protected:
    LockBase(LockKind kind, std::string_view name, Platform &p)
        : platform_(&p), object_(p.lock_create(kind, name)) {}
    ~LockBase() = default;

  private:
    Platform *platform_;
    LockObject *object_;
};

// The five lock kinds share one shape: a lock of kind K, named, created on a platform.
template <LockKind K>
class LockHandle : public LockBase {
  public:
    explicit LockHandle(std::string_view name, Platform &p = current()) : LockBase(K, name, p) {}
};

namespace detail {
inline void acquire(const LockBase &l, LockMode m, const char *what, Loc loc) {
    l.platform().lock_acquire(l.object(), m, {what, loc});
}
inline void release(const LockBase &l, LockMode m, const char *what, Loc loc) {
    l.platform().lock_release(l.object(), m, {what, loc});
}
// The _irq variants disable interrupts before taking the lock (so a waiter spins with them
// off, as spin_lock_irq does) and enable them after releasing it; under PREEMPT_RT those of
// spinlock_t and rwlock_t touch no interrupt state (include/linux/spinlock_rt.h).
inline bool irq_form_disables_irqs(const LockBase &l) {
    const LockKind k = l.object()->kind;
    return !l.platform().preempt_rt() || (k != LockKind::Spinlock && k != LockKind::Rwlock);
}
inline void acquire_irq(const LockBase &l, LockMode m, const char *what, Loc loc) {
    if (irq_form_disables_irqs(l)) l.platform().local_irq_disable({what, loc});
    acquire(l, m, what, loc);
}
// Unlocking enables interrupts before preemption (spin_unlock_irq / _irqrestore: unlock,
// local_irq_enable / restore, preempt_enable), so an interrupt that arrived in the section
// runs inside its preempt-off part.
inline void release_irq(const LockBase &l, LockMode m, const char *what, Loc loc) {
    if (irq_form_disables_irqs(l))
        l.platform().lock_release_irq(l.object(), m, {what, loc});
    else
        release(l, m, what, loc);
}
inline unsigned long acquire_irqsave(const LockBase &l, LockMode m, const char *what, Loc loc) {
    unsigned long flags = l.platform().irqs_disabled() ? 1 : 0;
    acquire_irq(l, m, what, loc);
    return flags;
}
inline void release_irqrestore(const LockBase &l, LockMode m, unsigned long flags, const char *what,
                               Loc loc) {
    if (flags)
        release(l, m, what, loc);
    else
        release_irq(l, m, what, loc);
}
}  // namespace detail

}  // namespace locksim::kernel
