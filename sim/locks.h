// Locks of the simulated platform: queued spinlock and queued rwlock (spinning with preemption
// off; readers queue behind a waiting writer; FIFO hand-off with a cache-line transfer), rwsem
// (sleeping; a waiting writer blocks new readers) and mutex (sleeping, FIFO hand-off). No
// optimistic spinning on rwsem/mutex owners. Lock classes (by name) carry the statistics and
// lockdep's dependency graph.
//
// The table talks to the scheduler only through SchedOps (sched_ops.h).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernel/kernel.h"
#include "kernel/results.h"
#include "sim/config.h"
#include "sim/sched_ops.h"
#include "sim/task.h"

namespace locksim::sim {

struct Waiter {
    Task *task;
    LockMode mode;
};

struct Lock : kernel::LockObject {
    Lock(kernel::LockKind k, std::string_view n, int cls) : LockObject(k, n), cls(cls) {}
    int cls;  // lock class: index into the table's classes (by name)
    int readers = 0;
    Task *writer = nullptr;
    std::vector<Waiter> waiters;  // FIFO (front = index head)
    size_t head = 0;
    int last_cpu = -1;      // the CPU whose cache holds the lock word
    Time line_free_at = 0;  // until then the line is in flight to another CPU
    bool spins() const {
        return kind == kernel::LockKind::Spinlock || kind == kernel::LockKind::Rwlock;
    }
    bool has_waiters() const { return head < waiters.size(); }
};

struct LockClass {
    std::string name;
    kernel::LockStats stats;
    std::vector<int> after;  // lockdep: classes taken while holding this one
};

class LockTable {
  public:
    LockTable(SchedOps &ops, const PrimitiveCosts &costs, PreemptModel preempt)
        : ops_(ops), pc_(costs), preempt_(preempt) {}

    kernel::LockObject *create(kernel::LockKind kind, std::string_view name);
    void acquire(kernel::LockObject *lock, LockMode mode, const Site &site);
    bool try_acquire(kernel::LockObject *lock, LockMode mode, const Site &site);
    void release(kernel::LockObject *lock, LockMode mode, const Site &site);

    // The lock `t` waits for, or nullptr.
    const Lock *waiting_for(const Task *t) const;
    // Waits still going at `now` (the end of the drain) are counted as censored.
    void censor_open_waits(Time now);
    void reset_stats();
    void collect(std::map<std::string, kernel::LockStats> &into) const;

  private:
    bool can_take(const Lock &l, LockMode mode) const;
    void take(Lock &l, Task *t, LockMode mode, const Site &site, bool trylock);
    void grant_waiters(Lock &l);
    // Moves the lock word's cache line to `cpu`: free when it is there already, else a
    // transfer, queued behind transfers to other CPUs still in flight (one owner at a time,
    // so CPUs hammering one lock word serialise). Returns the time `cpu` spends on it.
    Time pull_line(Lock &l, int cpu);
    void lockdep_check(Task *t, Lock &l, const Site &site);
    kernel::LockStats &stats(const Lock &l) { return classes_[static_cast<size_t>(l.cls)].stats; }

    SchedOps &ops_;
    const PrimitiveCosts &pc_;
    PreemptModel preempt_;
    std::vector<std::unique_ptr<Lock>> locks_;
    std::vector<LockClass> classes_;
    std::unordered_map<std::string, int> class_ids_;
    std::set<std::pair<int, int>> lock_edges_;
    std::map<std::pair<int, int>, std::string> edge_sites_;
};

}  // namespace locksim::sim
