// struct rw_semaphore (include/linux/rwsem.h): down_read, down_write, up_read, up_write.
#pragma once

#include "kernel/lock_handle.h"

namespace locksim::kernel {

// Sleeping reader-writer semaphore; a waiting writer blocks new readers (writers do not starve).
using RwSem = LockHandle<LockKind::Rwsem>;

inline void down_read(RwSem &s, Loc loc = Loc::current()) {
    detail::acquire(s, LockMode::Shared, "down_read", loc);
}
inline void up_read(RwSem &s, Loc loc = Loc::current()) {
    detail::release(s, LockMode::Shared, "up_read", loc);
}
inline void down_write(RwSem &s, Loc loc = Loc::current()) {
    detail::acquire(s, LockMode::Exclusive, "down_write", loc);
}
inline void up_write(RwSem &s, Loc loc = Loc::current()) {
    detail::release(s, LockMode::Exclusive, "up_write", loc);
}

}  // namespace locksim::kernel
