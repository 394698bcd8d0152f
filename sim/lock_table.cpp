// Lock semantics of the simulated platform.
//
// One waiter queue per lock, FIFO, with hand-off: a release grants the lock to the waiters at
// the head, so no later arrival can barge in. That is the behaviour of the queued spinlock and
// the queued rwlock (whose readers queue behind a waiting writer, except in interrupt context,
// where they wait only for a writer holding it), of an rwsem with writer
// fairness, and of a mutex in hand-off mode. Spinning waiters keep their CPU with preemption
// off (and interrupts off under the _irq variants, which disable them before spinning, as
// spin_lock_irq does); sleeping waiters block. A grant to a spinner costs a cache-line transfer
// (with caches, the traffic of the lock-line model too: lock_table.h).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/lock_table.h"

namespace locksim::sim {

namespace {
int side(LockMode m) {
    return m == LockMode::Exclusive ? 0 : 1;
}
}  // namespace

kernel::LockObject *LockTable::create(kernel::LockKind kind, std::string_view name) {
    std::string key(name);
    auto [it, fresh] = class_ids_.emplace(key, static_cast<int>(classes_.size()));
    if (fresh) {
        classes_.push_back(LockClass{key, {}, {}});
        classes_.back().stats.kind = std::string(kernel::lock_kind_name(kind));
    }
    locks_.push_back(std::make_unique<Lock>(kind, name, it->second));
    locks_.back()->rt = preempt_ == PreemptModel::Rt &&
                        (kind == kernel::LockKind::Spinlock || kind == kernel::LockKind::Rwlock);
    return locks_.back().get();
}

bool LockTable::can_take(const Lock &l, LockMode mode) const {
    // An RT rwlock's readers enter unless a writer holds it fully (rwbase_read_lock).
    if (l.rt && mode == LockMode::Shared) return !l.writer || l.draining;
    if (l.writer || l.has_waiters()) return false;
    return mode == LockMode::Shared || l.readers == 0;
}

void LockTable::take(Lock &l, Task *t, LockMode mode, const Site &site, bool trylock) {
    if (mode == LockMode::Exclusive)
        l.writer = t;
    else
        ++l.readers;
    if (!t) return;
    if (!trylock) lockdep_check(t, l, site);
    t->held.push_back(HeldLock{&l, mode, ops_.now(), site});
    if (ops_.recording()) ++stats(l).acquisitions[side(mode)];
}

void LockTable::acquire(kernel::LockObject *obj, LockMode mode, const Site &site) {
    auto &l = static_cast<Lock &>(*obj);
    Task *t = ops_.current();
    if (!t) {
        if (!can_take(l, mode))
            throw std::logic_error("contended lock taken outside a task: " + l.name);
        take(l, nullptr, mode, site, false);
        return;
    }
    if (l.spins())
        ops_.preempt_inc(t, site);
    else if (t->preempt_count > 0 || t->irqs_off || (!l.rt && t->rcu_nesting > 0))
        // An RT lock may be taken inside an RCU read section (RTLOCK_RESCHED_OFFSETS).
        ops_.violation(
            "sleep_in_atomic",
            fmt::format(
                "sleeping function called from invalid context: {}({}) in {} (preempt count {}, "
                "irqs {}, rcu nesting {})",
                site.what, l.name, t->params.name, t->preempt_count, t->irqs_off ? "off" : "on",
                t->rcu_nesting));
    else if (preempt_ == PreemptModel::Voluntary)
        ops_.cond_resched(site);  // mutex_lock / down_read / down_write begin with might_sleep
    // queued_read_lock_slowpath: a reader in interrupt context waits only for a writer holding
    // the lock, not for those queued (it may have interrupted a reader they wait for).
    const bool irq_reader =
        t->irq_context && !l.rt && l.kind == kernel::LockKind::Rwlock && mode == LockMode::Shared;
    if (can_take(l, mode) || (irq_reader && !l.writer)) {
        take(l, t, mode, site, false);
        Time transfer = pull_line(l, t->cpu);
        ops_.advance((l.spins() ? pc_.spin_acquire : pc_.sem_acquire) + transfer);
        return;
    }
    // Contended: queue, then spin or sleep until a release hands the lock over.
    if (ops_.recording()) ++stats(l).contended[side(mode)];
    lockdep_check(t, l, site);
    Task *holder = l.writer;
    if (!holder)
        for (size_t i = l.head; i < l.waiters.size() && !holder; ++i)
            if (l.waiters[i].mode == LockMode::Exclusive) holder = l.waiters[i].task;
    t->blame = holder ? current_label(holder) : Label{};
    t->wait_start = ops_.now();
    if (l.rt && mode == LockMode::Exclusive && !l.writer && !l.has_waiters()) {
        // rwbase_write_lock: the rt_mutex is free but readers are inside; take it and sleep
        // until the last of them leaves.
        l.writer = t;
        l.draining = true;
        ops_.trace_event("{} waits for the readers of {}", t->params.name, l.name);
        ops_.block_current();
        return;
    }
    if (irq_reader)  // first in line when the writer leaves
        l.waiters.insert(l.waiters.begin() + static_cast<std::ptrdiff_t>(l.head), Waiter{t, mode});
    else
        l.waiters.push_back(Waiter{t, mode});
    ops_.trace_event("{} waits for {}", t->params.name, l.name);
    // Its failed atomic on the word (the waiter spins meanwhile: the time is the line's).
    if (bounces(l)) pull_line(l, t->cpu);
    if (l.rt) {
        t->pi_blocked_on = &l;
        adjust_prio_chain(l.writer);
    }
    if (l.spins()) {
        ops_.spin_current();
    } else {
        ops_.block_current();
    }
}

bool LockTable::try_acquire(kernel::LockObject *obj, LockMode mode, const Site &site) {
    auto &l = static_cast<Lock &>(*obj);
    Task *t = ops_.current();
    if (!can_take(l, mode)) {
        // The failed trylock's atomic still takes the line.
        if (t && bounces(l)) ops_.advance(pull_line(l, t->cpu));
        return false;
    }
    if (t && l.spins()) ops_.preempt_inc(t, site);
    take(l, t, mode, site, true);
    if (t) ops_.advance(pull_line(l, t->cpu) + (l.spins() ? pc_.spin_acquire : pc_.sem_acquire));
    return true;
}

Time LockTable::pull_line(Lock &l, int cpu) {
    if (l.last_cpu < 0 || l.last_cpu == cpu) {
        l.last_cpu = cpu;
        return 0;
    }
    return transfer_line(l, cpu, 1);
}

Time LockTable::transfer_line(Lock &l, int cpu, int n) {
    const Time now = ops_.now();
    const Time start = std::max(now, l.line_free_at);
    l.line_free_at = start + n * pc_.cacheline_transfer;
    l.last_cpu = cpu;
    return l.line_free_at - now;
}

void LockTable::spinners_reread(Lock &l, bool freed) {
    if (!l.has_waiters()) return;
    if (line_ == LineModel::Queued) {
        // Only the next spinner on the word (the pending waiter or the queue's head).
        transfer_line(l, l.waiters[l.head].task->cpu, 1);
        return;
    }
    // Byte: every spinner re-reads; when the word was free each also fails its atomic.
    const int each = freed ? 2 : 1;
    for (size_t i = l.head; i < l.waiters.size(); ++i)
        transfer_line(l, l.waiters[i].task->cpu, each);
}

size_t LockTable::next_waiter(const Lock &l) const {
    size_t best = l.head;
    if (l.rt)
        for (size_t i = l.head + 1; i < l.waiters.size(); ++i)
            if (l.waiters[i].task->rank > l.waiters[best].task->rank) best = i;
    return best;
}

// Grants the lock to the head of the queue (on an RT lock, the highest-priority waiter): one
// writer, or every reader up to the next writer.
void LockTable::grant_waiters(Lock &l) {
    Time now = ops_.now();
    Task *waker = ops_.current();
    int waker_cpu = waker ? waker->cpu : -1;
    while (l.has_waiters()) {
        const size_t i = next_waiter(l);
        Waiter w = l.waiters[i];
        if (w.mode == LockMode::Exclusive ? (l.writer || (l.readers > 0 && !l.rt))
                                          : (l.writer && !l.draining))
            break;
        if (i == l.head)
            ++l.head;
        else
            l.waiters.erase(l.waiters.begin() + static_cast<std::ptrdiff_t>(i));
        if (l.rt && w.mode == LockMode::Exclusive && l.readers > 0) {
            // The writer gets the rt_mutex and sleeps on until the readers inside leave.
            w.task->pi_blocked_on = nullptr;
            l.writer = w.task;
            l.draining = true;
            break;
        }
        grant(l, w, now, waker_cpu);
        if (w.mode == LockMode::Exclusive) break;
    }
    if (l.head == l.waiters.size()) {
        l.waiters.clear();
        l.head = 0;
    }
}

void LockTable::grant(Lock &l, const Waiter &w, Time now, int waker_cpu) {
    Task *t = w.task;
    t->pi_blocked_on = nullptr;
    Time waited = now - t->wait_start;
    if (TraceRecorder *rec = ops_.recorder())
        rec->lock_wait(l.spins() ? t->cpu : -1, t->id, t->params.name, l.name,
                       w.mode == LockMode::Exclusive, t->wait_start, now);
    if (ops_.recording()) {
        stats(l).wait[side(w.mode)].record(waited);
        if (!t->blame.empty()) ops_.op_stats(t->blame).caused_wait_ns += waited;
    }
    if (OpFrame *f = frame(t)) f->parts.lock_wait_ns += waited;
    // lockdep already checked this acquisition when the waiter queued.
    if (w.mode == LockMode::Exclusive)
        l.writer = t;
    else
        ++l.readers;
    t->held.push_back(HeldLock{&l, w.mode, now, Site{"granted", {}}});
    if (ops_.recording()) ++stats(l).acquisitions[side(w.mode)];
    ops_.trace_event("{} gets {}", t->params.name, l.name);
    if (bounces(l)) {
        // It re-reads the word its copy of which the release invalidated, then takes it.
        ops_.end_spin(t, pc_.spin_acquire + transfer_line(l, t->cpu, 2));
    } else if (l.spins()) {
        ops_.end_spin(t, pc_.spin_acquire + pull_line(l, t->cpu));
    } else {
        ops_.wake(t, waker_cpu, 0);
        l.last_cpu = t->cpu;
    }
}

// rt_mutex_adjust_prio_chain, simplified: an owner's priority is the highest of its normal one
// and of the top waiters of the rt_mutexes it holds; a change goes on to the owner of the lock
// it is blocked on, up to max_lock_depth owners.
void LockTable::adjust_prio_chain(Task *owner) {
    constexpr int kMaxLockDepth = 1024;
    for (int depth = 0; owner && depth < kMaxLockDepth; ++depth) {
        int prio = owner->normal_rank;
        const Task *donor = nullptr;
        const Lock *donor_lock = nullptr;
        if (pi_)
            for (const HeldLock &h : owner->held)
                if (h.lock->rt && h.lock->writer == owner && h.lock->has_waiters()) {
                    const Task *top = h.lock->waiters[next_waiter(*h.lock)].task;
                    if (top->rank > prio) {
                        prio = top->rank;
                        donor = top;
                        donor_lock = h.lock;
                    }
                }
        const bool changed = prio != owner->rank;
        if (changed) ops_.set_prio(owner, prio);  // notes the probes' waits under the old lender
        owner->pi_donor = donor;                  // a new top waiter may lend the same priority
        owner->pi_donor_lock = donor_lock;
        if (!changed) return;
        const Lock *next = owner->pi_blocked_on;
        owner = next ? next->writer : nullptr;
    }
}

bool LockTable::release(kernel::LockObject *obj, LockMode mode, const Site &site,
                        bool keep_preempt) {
    auto &l = static_cast<Lock &>(*obj);
    Task *t = ops_.current();
    if (t) {
        auto it = std::find_if(t->held.rbegin(), t->held.rend(),
                               [&](const HeldLock &h) { return h.lock == &l && h.mode == mode; });
        if (it == t->held.rend()) {
            ops_.violation("unlock_not_held", fmt::format("{} of {} by {}, which does not hold it",
                                                          site.str(), l.name, t->params.name));
            return false;
        }
        if (ops_.recording()) stats(l).hold[side(mode)].record(ops_.now() - it->since);
        t->held.erase(std::next(it).base());
    }
    if (mode == LockMode::Exclusive) {
        if (l.writer != t && t)
            ops_.violation("unlock_not_held", fmt::format("{} of {} by {}, not the owner",
                                                          site.str(), l.name, t->params.name));
        l.writer = nullptr;
    } else if (l.readers > 0) {
        --l.readers;
    }
    if (l.rt && l.draining && l.readers == 0) {
        // The last reader lets the waiting writer in (__rwbase_read_unlock).
        Task *w = l.writer;
        l.writer = nullptr;
        l.draining = false;
        grant(l, Waiter{w, LockMode::Exclusive}, ops_.now(), t ? t->cpu : -1);
    }
    bool woke_sleeper = l.has_waiters() && !l.spins();
    // The release writes the lock word; spinners hold it shared, so it has to be fetched even
    // when this CPU wrote it last.
    const bool spinners = bounces(l) && l.has_waiters();
    Time transfer = 0;
    if (t) transfer = spinners ? transfer_line(l, t->cpu, 1) : pull_line(l, t->cpu);
    const size_t waiting = l.waiters.size() - l.head;
    grant_waiters(l);
    if (spinners) spinners_reread(l, l.waiters.size() - l.head < waiting);
    if (l.rt) {
        adjust_prio_chain(t);         // the releasing owner loses what it inherited
        adjust_prio_chain(l.writer);  // the new owner inherits from the waiters left
    }
    if (!t) return false;
    if (l.spins()) {
        ops_.advance(pc_.spin_release + transfer);
        if (keep_preempt) return true;
        ops_.preempt_dec(t, site);
    } else {
        ops_.advance(pc_.sem_release + transfer + (woke_sleeper ? pc_.wakeup : 0));
        ops_.maybe_preempt();
    }
    return false;
}

// lockdep-like: lock classes taken while holding others form a graph; an acquisition that
// closes a cycle is an inversion that can deadlock. Trylocks add no dependency (they cannot
// wait); nesting two locks of one class is allowed (the kernel needs a nesting annotation).
void LockTable::lockdep_check(Task *t, Lock &l, const Site &site) {
    for (const HeldLock &h : t->held) {
        int a = h.lock->cls;
        int b = l.cls;
        if (a == b || lock_edges_.count({a, b})) continue;
        // Does b already lead to a?
        std::vector<int> stack{b};
        std::vector<uint8_t> seen(classes_.size(), 0);
        bool cycle = false;
        while (!stack.empty() && !cycle) {
            int x = stack.back();
            stack.pop_back();
            if (x == a) {
                cycle = true;
                break;
            }
            if (seen[static_cast<size_t>(x)]) continue;
            seen[static_cast<size_t>(x)] = 1;
            for (int y : classes_[static_cast<size_t>(x)].after)
                stack.push_back(y);
        }
        const std::string &an = classes_[static_cast<size_t>(a)].name;
        const std::string &bn = classes_[static_cast<size_t>(b)].name;
        if (cycle) {
            auto rev = edge_sites_.find({b, a});
            ops_.violation(
                "lock_order",
                fmt::format(
                    "possible circular locking: {} takes {} at {} while holding {}; {} was taken "
                    "before {} elsewhere{}",
                    t->params.name, bn, site.str(), an, bn, an,
                    rev != edge_sites_.end() ? " (" + rev->second + ")" : std::string()));
            continue;  // do not record the inverted edge: report each inversion once
        }
        lock_edges_.insert({a, b});
        edge_sites_[{a, b}] = site.str();
        classes_[static_cast<size_t>(a)].after.push_back(b);
    }
}

const Lock *LockTable::waiting_for(const Task *t) const {
    const Lock *found = nullptr;
    for (const auto &l : locks_)
        for (size_t i = l->head; i < l->waiters.size(); ++i)
            if (l->waiters[i].task == t) found = l.get();
    return found;
}

void LockTable::censor_open_waits(Time now) {
    for (auto &l : locks_)
        for (size_t i = l->head; i < l->waiters.size(); ++i) {
            const Waiter &w = l->waiters[i];
            kernel::LockStats &ls = stats(*l);
            const int sd = side(w.mode);
            ls.wait[sd].record(now - w.task->wait_start);
            ls.wait_open_at_end[sd].push_back(now - w.task->wait_start);
        }
}

void LockTable::reset_stats() {
    for (LockClass &c : classes_)
        c.stats = kernel::LockStats{.kind = c.stats.kind};
}

void LockTable::collect(std::map<std::string, kernel::LockStats> &into) const {
    for (const LockClass &c : classes_)
        into[c.name] = c.stats;
}

}  // namespace locksim::sim
