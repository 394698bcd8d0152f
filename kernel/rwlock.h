// rwlock_t (include/linux/rwlock.h): read_lock, write_lock, write_trylock and the _irq and
// _irqsave forms.
#pragma once

#include "kernel/lock_handle.h"

namespace locksim::kernel {

// Queued rwlock: spinning, preemption off; new readers spin while a writer waits.
using RwLock = LockHandle<LockKind::Rwlock>;

inline void read_lock(RwLock &l, Loc loc = Loc::current()) {
    detail::acquire(l, LockMode::Shared, "read_lock", loc);
}
inline void read_unlock(RwLock &l, Loc loc = Loc::current()) {
    detail::release(l, LockMode::Shared, "read_unlock", loc);
}
inline void write_lock(RwLock &l, Loc loc = Loc::current()) {
    detail::acquire(l, LockMode::Exclusive, "write_lock", loc);
}
inline void write_unlock(RwLock &l, Loc loc = Loc::current()) {
    detail::release(l, LockMode::Exclusive, "write_unlock", loc);
}
inline void read_lock_irq(RwLock &l, Loc loc = Loc::current()) {
    detail::acquire_irq(l, LockMode::Shared, "read_lock_irq", loc);
}
inline void read_unlock_irq(RwLock &l, Loc loc = Loc::current()) {
    detail::release_irq(l, LockMode::Shared, "read_unlock_irq", loc);
}
inline void write_lock_irq(RwLock &l, Loc loc = Loc::current()) {
    detail::acquire_irq(l, LockMode::Exclusive, "write_lock_irq", loc);
}
inline void write_unlock_irq(RwLock &l, Loc loc = Loc::current()) {
    detail::release_irq(l, LockMode::Exclusive, "write_unlock_irq", loc);
}
[[nodiscard]] inline unsigned long read_lock_irqsave(RwLock &l, Loc loc = Loc::current()) {
    return detail::acquire_irqsave(l, LockMode::Shared, "read_lock_irqsave", loc);
}
inline void read_unlock_irqrestore(RwLock &l, unsigned long flags, Loc loc = Loc::current()) {
    detail::release_irqrestore(l, LockMode::Shared, flags, "read_unlock_irqrestore", loc);
}
inline bool write_trylock(RwLock &l, Loc loc = Loc::current()) {
    return l.platform().lock_try(l.object(), LockMode::Exclusive, {"write_trylock", loc});
}
[[nodiscard]] inline unsigned long write_lock_irqsave(RwLock &l, Loc loc = Loc::current()) {
    return detail::acquire_irqsave(l, LockMode::Exclusive, "write_lock_irqsave", loc);
}
inline void write_unlock_irqrestore(RwLock &l, unsigned long flags, Loc loc = Loc::current()) {
    detail::release_irqrestore(l, LockMode::Exclusive, flags, "write_unlock_irqrestore", loc);
}

}  // namespace locksim::kernel
