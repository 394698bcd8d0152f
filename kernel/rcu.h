// RCU (include/linux/rcupdate.h): read-side sections, grace periods (normal and expedited),
// call_rcu, and pointers published under RCU with rcu_dereference and rcu_replace_pointer.
#pragma once

#include "kernel/platform.h"

namespace locksim::kernel {

inline void rcu_read_lock(Loc loc = Loc::current()) {
    current().rcu_read_lock({"rcu_read_lock", loc});
}
inline void rcu_read_unlock(Loc loc = Loc::current()) {
    current().rcu_read_unlock({"rcu_read_unlock", loc});
}
inline void synchronize_rcu(Loc loc = Loc::current()) {
    current().synchronize_rcu(false, {"synchronize_rcu", loc});
}
inline void synchronize_rcu_expedited(Loc loc = Loc::current()) {
    current().synchronize_rcu(true, {"synchronize_rcu_expedited", loc});
}
// Runs `callback` after a grace period, where the platform runs RCU callbacks (the simulator:
// RCU_SOFTIRQ on the calling CPU, or an rcuc or rcuo kernel thread): it must not sleep.
inline void call_rcu(std::function<void()> callback) {
    current().call_rcu(std::move(callback));
}

// A pointer published under RCU (the kernel's `T __rcu *`).
template <class T>
class RcuPointer {
  public:
    RcuPointer() = default;
    RcuPointer(const RcuPointer &) = delete;
    RcuPointer &operator=(const RcuPointer &) = delete;
    std::atomic<T *> &raw() { return p_; }
    const std::atomic<T *> &raw() const { return p_; }

  private:
    std::atomic<T *> p_{nullptr};
};

// Read side: only inside rcu_read_lock() (the platform checks, as CONFIG_PROVE_RCU does).
template <class T>
T *rcu_dereference(const RcuPointer<T> &rp, Loc loc = Loc::current()) {
    T *p = rp.raw().load(std::memory_order_acquire);
    current().rcu_dereferenced(p, {"rcu_dereference", loc});
    return p;
}
// Update side, with the update lock held: no check.
template <class T>
T *rcu_dereference_protected(const RcuPointer<T> &rp) {
    return rp.raw().load(std::memory_order_relaxed);
}
// Publishes `v`; returns the previous pointer (rcu_replace_pointer), which readers that began
// before this call may still hold until a grace period has passed.
template <class T>
T *rcu_replace_pointer(RcuPointer<T> &rp, T *v) {
    T *old = rp.raw().exchange(v, std::memory_order_acq_rel);
    current().rcu_published(old, v);
    return old;
}
template <class T>
void rcu_assign_pointer(RcuPointer<T> &rp, T *v) {
    (void)rcu_replace_pointer(rp, v);
}

}  // namespace locksim::kernel
