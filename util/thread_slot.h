// A per-thread pointer to a T that a scope installs and restores: the work meter the core counts
// into (work_meter.h) and the simulator's memo of TE-rule searches (ss/te_rules_memo.h) are off
// unless a platform installs one for its thread.
#pragma once

namespace locksim {

template <class T>
struct ThreadSlot {
    static inline thread_local T *current = nullptr;
};

// Installs `p` as this thread's T for the scope's lifetime (nesting restores the outer one).
template <class T>
class ThreadSlotScope {
  public:
    explicit ThreadSlotScope(T *p) : prev_(ThreadSlot<T>::current) { ThreadSlot<T>::current = p; }
    ~ThreadSlotScope() { ThreadSlot<T>::current = prev_; }
    ThreadSlotScope(const ThreadSlotScope &) = delete;
    ThreadSlotScope &operator=(const ThreadSlotScope &) = delete;

  private:
    T *prev_;
};

}  // namespace locksim
