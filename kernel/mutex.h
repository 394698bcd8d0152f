// struct mutex (include/linux/mutex.h): mutex_lock, mutex_unlock, mutex_trylock.
#pragma once

#include "kernel/lock_handle.h"

namespace locksim::kernel {

// Sleeping mutex, FIFO hand-off.
using Mutex = LockHandle<LockKind::Mutex>;

inline void mutex_lock(Mutex &m, Loc loc = Loc::current()) {
    detail::acquire(m, LockMode::Exclusive, "mutex_lock", loc);
}
inline void mutex_unlock(Mutex &m, Loc loc = Loc::current()) {
    detail::release(m, LockMode::Exclusive, "mutex_unlock", loc);
}
inline bool mutex_trylock(Mutex &m, Loc loc = Loc::current()) {
    return m.platform().lock_try(m.object(), LockMode::Exclusive, {"mutex_trylock", loc});
}

}  // namespace locksim::kernel
