// The real platform's locks (real/locks.h), with wait and hold times per lock class.
#include "real/platform_state.h"

namespace locksim::real {

// ---------------------------------------------------------------- locks

kernel::LockObject *RealPlatform::lock_create(LockKind kind, std::string_view name) {
    std::lock_guard g(s_->mu);
    std::string n(name);
    auto [it, added] = s_->class_ids.emplace(n, static_cast<int>(s_->classes.size()));
    if (added) s_->classes.emplace_back(n, kind);
    auto l = std::make_unique<RealLock>(kind, name, it->second);
    if (kind == LockKind::Rwsem) l->sem = std::make_unique<SleepingRwSem>();
    if (kind == LockKind::Mutex) l->mutex = std::make_unique<SleepingMutex>();
    s_->locks.push_back(std::move(l));
    return s_->locks.back().get();
}

namespace {
bool spins(LockKind k) {
    return k == LockKind::Spinlock || k == LockKind::Rwlock || k == LockKind::RawSpinlock;
}
size_t mode_index(LockMode m) {
    return m == LockMode::Shared ? 1 : 0;
}
}  // namespace

void RealPlatform::lock_acquire(kernel::LockObject *lo, LockMode mode, Site site) {
    TaskState &t = s_->me();
    auto *l = static_cast<RealLock *>(lo);
    const Time t0 = s_->now();
    if (spins(l->kind))
        s_->preempt_inc(t, site, t0);  // spinning and holding with preemption "off"
    else
        s_->check_sleep(t, site);
    bool waited = false;
    switch (l->kind) {
        case LockKind::Spinlock:
        case LockKind::RawSpinlock:
            waited = l->spin.lock();
            break;
        case LockKind::Rwlock:
            waited = mode == LockMode::Shared ? l->rw.read_lock() : l->rw.write_lock();
            break;
        case LockKind::Rwsem:
            waited = mode == LockMode::Shared ? l->sem->down_read() : l->sem->down_write();
            break;
        case LockKind::Mutex:
            waited = l->mutex->lock();
            break;
    }
    const Time t1 = waited ? s_->now() : t0;
    t.held.push_back(Held{lo, mode, t1});
    const size_t m = mode_index(mode);
    if (!s_->recording()) {
        if (auto open = s_->open_part(t0); open && waited) {
            kernel::LockStats &ls = t.stats->lock(l->cls);
            ls.wait[m].record(*open);
            ls.wait_open_at_end[m].push_back(*open);
        }
        return;
    }
    kernel::LockStats &ls = t.stats->lock(l->cls);
    ++ls.acquisitions[m];
    if (waited) {
        ++ls.contended[m];
        ls.wait[m].record(t1 - t0);
        if (!t.ops.empty()) t.stats->op(t.label()).lock_wait_ns += t1 - t0;
    }
}

bool RealPlatform::lock_try(kernel::LockObject *lo, LockMode mode, Site site) {
    TaskState &t = s_->me();
    auto *l = static_cast<RealLock *>(lo);
    const Time t0 = s_->now();
    if (spins(l->kind)) s_->preempt_inc(t, site, t0);
    bool ok = false;
    switch (l->kind) {
        case LockKind::Spinlock:
        case LockKind::RawSpinlock:
            ok = l->spin.try_lock();
            break;
        case LockKind::Rwlock:
            ok = mode == LockMode::Shared ? l->rw.try_read_lock() : l->rw.try_write_lock();
            break;
        case LockKind::Rwsem:
            ok = mode == LockMode::Shared ? l->sem->try_down_read() : l->sem->try_down_write();
            break;
        case LockKind::Mutex:
            ok = l->mutex->try_lock();
            break;
    }
    if (!ok) {
        if (spins(l->kind)) s_->preempt_dec(t, site, s_->now());
        return false;
    }
    t.held.push_back(Held{lo, mode, t0});
    if (s_->recording()) ++t.stats->lock(l->cls).acquisitions[mode_index(mode)];
    return true;
}

void RealPlatform::lock_release(kernel::LockObject *lo, LockMode mode, Site site) {
    TaskState &t = s_->me();
    auto *l = static_cast<RealLock *>(lo);
    auto it = std::find_if(t.held.rbegin(), t.held.rend(),
                           [&](const Held &h) { return h.lock == lo && h.mode == mode; });
    if (it == t.held.rend()) {
        s_->violation(&t, "lock_unbalanced",
                      fmt::format("{} of {} '{}' not held by {}", site.str(),
                                  kernel::lock_kind_name(l->kind), l->name, t.name));
        return;
    }
    const Time since = it->since;
    t.held.erase(std::next(it).base());
    switch (l->kind) {
        case LockKind::Spinlock:
        case LockKind::RawSpinlock:
            l->spin.unlock();
            break;
        case LockKind::Rwlock:
            if (mode == LockMode::Shared)
                l->rw.read_unlock();
            else
                l->rw.write_unlock();
            break;
        case LockKind::Rwsem:
            if (mode == LockMode::Shared)
                l->sem->up_read();
            else
                l->sem->up_write();
            break;
        case LockKind::Mutex:
            l->mutex->unlock();
            break;
    }
    const Time t2 = s_->now();
    if (s_->recording()) t.stats->lock(l->cls).hold[mode_index(mode)].record(t2 - since);
    if (spins(l->kind)) s_->preempt_dec(t, site, t2);
}

}  // namespace locksim::real
