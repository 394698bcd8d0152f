// The per-CPU reader-writer semaphore (include/linux/percpu-rwsem.h, kernel/locking/
// percpu-rwsem.c and kernel/rcu/sync.c, Linux v6.6), as cgroups and the freezer use it.
//
// percpu_down_read: might_sleep; with preemption off, while no writer is about (rcu_sync
//   idle), an increment of this CPU's counter and nothing else — no shared cache line, no
//   atomic; otherwise the slow path (__percpu_down_read): count, and if a writer has blocked
//   readers, uncount and sleep until the writer is done, then try again.
// percpu_up_read: with preemption off, a decrement of the counter of the CPU it runs on (so
//   one counter may go negative; only the sum means anything).
// percpu_down_write: rcu_sync_enter (a grace period the first time, so that every reader takes
//   the slow path from then on); the writer side (readers arriving now sleep); block readers;
//   wait until the per-CPU counts sum to zero (rcuwait_wait_event on readers_active_check).
// percpu_up_write: unblock, wake the sleepers; rcu_sync_exit lets readers back onto the fast
//   path a grace period later (by call_rcu).
// Simplified: the readers' and writers' wait queue is an rwsem (the sleepers wait on its read
// side for the writer's write side); the writer's rcuwait is a poll every kPercpuRwsemDrainPoll
// of platform time (a sleep, not CPU), so it sees the drain up to one poll late; rcu_sync's
// states are Idle, Entering and Passed, without the kernel's Replay and Exit states (a pending
// exit is a call_rcu callback that goes idle when no writer came meanwhile).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "kernel/platform.h"
#include "kernel/rwsem.h"

namespace locksim::kernel {

inline constexpr Time kPercpuRwsemDrainPoll = 5 * kUsec;

class PercpuRwSemaphore {
  public:
    // `name` names its rwsem (the wait queue) in the lock statistics.
    explicit PercpuRwSemaphore(std::string_view name, Platform &p = current());

    // `loc`: the caller, which the sections and checks inside name (as a kernel splat names
    // the caller of percpu_down_read).
    void down_read(Loc loc);
    void up_read(Loc loc);
    void down_write(Loc loc);
    void up_write(Loc loc);

  private:
    bool readers_active() const;

    // Atomics because on host threads a "preempt-off" section does not keep other tasks off
    // the counter (this_cpu_inc is one instruction in the kernel), and the fields are shared
    // between readers, the writer and the call_rcu callback.
    struct Sync {
        enum State { Idle, Entering, Passed };
        std::atomic<State> state{Idle};
        std::atomic<int> writers{0};
    };
    std::vector<std::atomic<int64_t>> read_count_;  // this_cpu counters (one may go negative)
    std::atomic<bool> block_{false};
    std::shared_ptr<Sync> sync_ = std::make_shared<Sync>();
    RwSem rw_sem_;
};

inline void percpu_down_read(PercpuRwSemaphore &sem, Loc loc = Loc::current()) {
    sem.down_read(loc);
}
inline void percpu_up_read(PercpuRwSemaphore &sem, Loc loc = Loc::current()) {
    sem.up_read(loc);
}
inline void percpu_down_write(PercpuRwSemaphore &sem, Loc loc = Loc::current()) {
    sem.down_write(loc);
}
inline void percpu_up_write(PercpuRwSemaphore &sem, Loc loc = Loc::current()) {
    sem.up_write(loc);
}

}  // namespace locksim::kernel
