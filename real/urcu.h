// liburcu (memb flavour) for the real platform: the inlined read side (_LGPL_SOURCE), call_rcu,
// the barrier and the lock-free hash table of liburcu-cds, plus per-thread registration and the
// ThreadSanitizer annotations that tell it what a grace period orders (liburcu itself is not
// instrumented). Only real/ includes this header: without URCU_API_MAP the flavour's short names
// (rcu_read_lock, call_rcu ...) are not defined, so they do not clash with kernel/platform.h.
#pragma once

#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>
// The above must come first.
#include <urcu/rculfhash.h>
#include "util/sanitizers.h"

namespace locksim::real {

#if LOCKSIM_TSAN
extern "C" void __tsan_acquire(void *addr);
extern "C" void __tsan_release(void *addr);
inline char g_tsan_rcu_sync;
// A read section's end happens before the end of any grace period that waited for it.
inline void tsan_rcu_reader_exit() {
    __tsan_release(&g_tsan_rcu_sync);
}
inline void tsan_rcu_gp_end() {
    __tsan_acquire(&g_tsan_rcu_sync);
}
inline void tsan_release(void *p) {
    __tsan_release(p);
}
inline void tsan_acquire(void *p) {
    __tsan_acquire(p);
}
#else
inline void tsan_rcu_reader_exit() {}
inline void tsan_rcu_gp_end() {}
inline void tsan_release(void *) {}
inline void tsan_acquire(void *) {}
#endif

// Registers the calling thread as an RCU reader (once; undone when the thread exits). liburcu's
// own callback threads are registered already and are left alone.
inline void urcu_thread_register() {
    struct Registration {
        bool mine = false;
        ~Registration() {
            if (mine) urcu_memb_unregister_thread();
        }
    };
    thread_local Registration reg;
    if (!URCU_TLS(urcu_memb_reader).registered) {
        urcu_memb_register_thread();
        reg.mine = true;
    }
}

}  // namespace locksim::real
