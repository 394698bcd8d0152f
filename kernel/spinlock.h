// spinlock_t and raw_spinlock_t (include/linux/spinlock.h): spin_lock, spin_trylock and the
// _irq and _irqsave forms; raw_spin_lock.
#pragma once

#include "kernel/lock_handle.h"

namespace locksim::kernel {

// Spinning, preemption off while spinning and holding (a queued spinlock: FIFO hand-off).
using Spinlock = LockHandle<LockKind::Spinlock>;
// raw_spinlock_t: a Spinlock that keeps spinning with preemption off under PREEMPT_RT too, where
// the kernel's own low-level locks (the scheduler's run queues, RCU's nodes) are raw.
using RawSpinlock = LockHandle<LockKind::RawSpinlock>;

inline void spin_lock(Spinlock &l, Loc loc = Loc::current()) {
    detail::acquire(l, LockMode::Exclusive, "spin_lock", loc);
}
inline void spin_unlock(Spinlock &l, Loc loc = Loc::current()) {
    detail::release(l, LockMode::Exclusive, "spin_unlock", loc);
}
inline bool spin_trylock(Spinlock &l, Loc loc = Loc::current()) {
    return l.platform().lock_try(l.object(), LockMode::Exclusive, {"spin_trylock", loc});
}
inline void spin_lock_irq(Spinlock &l, Loc loc = Loc::current()) {
    detail::acquire_irq(l, LockMode::Exclusive, "spin_lock_irq", loc);
}
inline void spin_unlock_irq(Spinlock &l, Loc loc = Loc::current()) {
    detail::release_irq(l, LockMode::Exclusive, "spin_unlock_irq", loc);
}
[[nodiscard]] inline unsigned long spin_lock_irqsave(Spinlock &l, Loc loc = Loc::current()) {
    return detail::acquire_irqsave(l, LockMode::Exclusive, "spin_lock_irqsave", loc);
}
inline void spin_unlock_irqrestore(Spinlock &l, unsigned long flags, Loc loc = Loc::current()) {
    detail::release_irqrestore(l, LockMode::Exclusive, flags, "spin_unlock_irqrestore", loc);
}

inline void raw_spin_lock(RawSpinlock &l, Loc loc = Loc::current()) {
    detail::acquire(l, LockMode::Exclusive, "raw_spin_lock", loc);
}
inline void raw_spin_unlock(RawSpinlock &l, Loc loc = Loc::current()) {
    detail::release(l, LockMode::Exclusive, "raw_spin_unlock", loc);
}
inline void raw_spin_lock_irq(RawSpinlock &l, Loc loc = Loc::current()) {
    detail::acquire_irq(l, LockMode::Exclusive, "raw_spin_lock_irq", loc);
}
inline void raw_spin_unlock_irq(RawSpinlock &l, Loc loc = Loc::current()) {
    detail::release_irq(l, LockMode::Exclusive, "raw_spin_unlock_irq", loc);
}

}  // namespace locksim::kernel
