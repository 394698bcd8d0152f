// Locks of the simulated platform: queued spinlock and queued rwlock (spinning with preemption
// off; readers queue behind a waiting writer; FIFO hand-off with a cache-line transfer), rwsem
// (sleeping; a waiting writer blocks new readers) and mutex (sleeping, FIFO hand-off). No
// optimistic spinning on rwsem/mutex owners. Lock classes (by name) carry the statistics and
// lockdep's dependency graph.
//
// PREEMPT_RT (v6.12: kernel/locking/rtmutex.c, rwbase_rt.c, spinlock_rt.c): spinlock_t and
// rwlock_t are rt_mutex-based and sleep; raw_spinlock_t still spins. Waiters are served by
// priority (FIFO among equals), the lock handed to the top waiter (no lock stealing: a
// simplification). Priority inheritance: an owner runs at the highest priority of its own and
// of the top waiters of the rt_mutexes it holds, along the chain of owners blocked on further
// rt_mutexes (rt_mutex_adjust_prio_chain; a waiter's place in a queue is not re-sorted when it
// is boosted later: a simplification). The RT rwlock is reader-biased: readers enter unless a
// writer holds it fully; a writer takes the rt_mutex, then waits for the readers inside to leave,
// and readers are not boosted (rwbase_rt.c: no multi-reader inheritance). The caller takes
// rcu_read_lock() across an RT lock's section (SimPlatform, as rt_spin_lock does); migrate_disable
// is not modelled.
//
// The lock word's cache line. Every model moves it to the CPU that writes the word (an atomic
// acquire or a release on another CPU than the line's last owner costs the profile's
// `cacheline_transfer`), one transfer at a time, so CPUs hammering one word serialise on it.
// With a profile that models caches ([memory]) spinning waiters bounce it too (LineModel;
// SpinlockImpl in config.h names the kernels), as buses do:
// - a waiter that finds the lock taken has made one failed atomic on the word: a transfer;
// - a spinner reads the word in its own cache until the holder's release invalidates the
//   copies; the release's store then waits for the line, behind the transfers in flight;
// - the waiter served next re-reads the word and takes it with an atomic: two transfers;
// - Byte (2.6.9's test-and-test-and-set lock: ia64 cmpxchg4.acq then ld4 spinning in
//   ia64_spinlock_contention; i386 `lock decb` then `cmpb` spinning; rwlocks by fetchadd or
//   `lock subl`): every other spinner also re-reads the word and, once it was free, retries
//   the atomic and fails: two transfers each (one when the release freed nothing). The next
//   release waits behind them, so the hand-off slows as the spinners grow;
// - Queued (v6.x qspinlock: the pending waiter or the MCS queue's head spins on the word, the
//   others on their own node; qrwlock's waiters queue on its wait_lock, a qspinlock): only the
//   next spinner on the word re-reads it: one transfer, whatever the queue's length.
// Simplified: the waiter served next is still the queue's head (a byte lock has no order: the
// fastest CPU wins, and that is not modelled); one price for every transfer (no distance, no
// bus arbitration); the re-reads that each failed atomic causes in the other spinners' caches
// are not counted (up to spinners^2 transfers a hand-off on an invalidating bus, Anderson
// 1990), so Byte's slowdown is a lower bound; the MCS node hand-off (a write to the next
// waiter's node) is not priced.
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

#include "kernel/platform.h"
#include "record/run_results.h"
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
    Task *writer = nullptr;  // also the owner of an RT lock's rt_mutex
    bool rt = false;         // an rt_mutex-based lock (spinlock_t or rwlock_t under PREEMPT_RT)
    // RT rwlock: the writer holds the rt_mutex and waits for the readers inside to leave.
    bool draining = false;
    std::vector<Waiter> waiters;  // FIFO (front = index head)
    size_t head = 0;
    int last_cpu = -1;      // the CPU whose cache holds the lock word
    Time line_free_at = 0;  // until then the line is in flight to another CPU
    bool spins() const {
        return kind == kernel::LockKind::RawSpinlock ||
               (!rt && (kind == kernel::LockKind::Spinlock || kind == kernel::LockKind::Rwlock));
    }
    bool has_waiters() const { return head < waiters.size(); }
};

// How spinning waiters move the lock word's line (above). Flat: only acquires and releases move
// it (profiles without caches).
enum class LineModel : uint8_t { Flat, Queued, Byte };

// The model a configuration gets: the spinners' traffic only with a profile that models caches.
inline LineModel lock_line_model(const SimConfig &c) {
    if (c.profile.memory.private_kib <= 0) return LineModel::Flat;
    return c.spinlock == SpinlockImpl::Byte ? LineModel::Byte : LineModel::Queued;
}

struct LockClass {
    std::string name;
    kernel::LockStats stats;
    std::vector<int> after;  // lockdep: classes taken while holding this one
};

class LockTable {
  public:
    LockTable(SchedOps &ops, const PrimitiveCosts &costs, PreemptModel preempt, bool pi,
              LineModel line = LineModel::Flat)
        : ops_(ops), pc_(costs), preempt_(preempt), pi_(pi), line_(line) {}

    kernel::LockObject *create(kernel::LockKind kind, std::string_view name);
    void acquire(kernel::LockObject *lock, LockMode mode, const Site &site);
    bool try_acquire(kernel::LockObject *lock, LockMode mode, const Site &site);
    // With keep_preempt a spinning lock's release leaves its preempt count to the caller;
    // returns whether there is one to drop.
    bool release(kernel::LockObject *lock, LockMode mode, const Site &site,
                 bool keep_preempt = false);

    // An rt_mutex-based lock (PREEMPT_RT's spinlock_t and rwlock_t).
    static bool is_rt(const kernel::LockObject *lock) {
        return static_cast<const Lock *>(lock)->rt;
    }
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
    // Gives `w` the lock it waited for (statistics, held list) and lets it run.
    void grant(Lock &l, const Waiter &w, Time now, int waker_cpu);
    // The waiter served next: the queue's head, or on an RT lock the highest-priority one.
    size_t next_waiter(const Lock &l) const;
    // Recomputes the inherited priority of `owner` and of the owners it is blocked on.
    void adjust_prio_chain(Task *owner);
    // Moves the lock word's cache line to `cpu`: free when it is there already, else a
    // transfer, queued behind transfers to other CPUs still in flight (one owner at a time,
    // so CPUs hammering one lock word serialise). Returns the time `cpu` spends on it.
    Time pull_line(Lock &l, int cpu);
    // `n` transfers of the line to `cpu`, queued behind those in flight; the time `cpu` waits.
    Time transfer_line(Lock &l, int cpu, int n);
    // Spinning waiters bounce the line (LineModel other than Flat).
    bool bounces(const Lock &l) const { return line_ != LineModel::Flat && l.spins(); }
    // After a release: the spinners left re-read the word, and under Byte retry the atomic
    // when `freed` (the release let someone in).
    void spinners_reread(Lock &l, bool freed);
    void lockdep_check(Task *t, Lock &l, const Site &site);
    kernel::LockStats &stats(const Lock &l) { return classes_[static_cast<size_t>(l.cls)].stats; }

    SchedOps &ops_;
    const PrimitiveCosts &pc_;
    PreemptModel preempt_;
    bool pi_;
    LineModel line_;
    std::vector<std::unique_ptr<Lock>> locks_;
    std::vector<LockClass> classes_;
    std::unordered_map<std::string, int> class_ids_;
    std::set<std::pair<int, int>> lock_edges_;
    std::map<std::pair<int, int>, std::string> edge_sites_;
};

}  // namespace locksim::sim
