// RCU on the simulated platform: read sections, grace periods (normal and expedited), call_rcu,
// and the publication records the use-after-free check relies on.
//
// Ordering uses one counter, rcu_seq_, bumped when a read section begins, a grace period begins
// and a pointer is unpublished, so "began before" is exact even at equal simulated times.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/sim_platform.h"

namespace locksim::sim {

namespace {
constexpr uint64_t kStillPublished = std::numeric_limits<uint64_t>::max();
constexpr int kCpuBits = 16;
}  // namespace

// A CPU is in a quiescent state when it runs nothing, or a task outside any read section with
// preemption and interrupts on (since the RCU flavour consolidation a preempt-off region is a
// reader too, whatever PREEMPT_RCU says).
bool SimPlatform::cpu_in_qs(const Cpu &c) const {
    const Task *t = c.curr;
    return !t || (t->rcu_nesting == 0 && t->preempt_count == 0 && !t->irqs_off);
}

uint64_t SimPlatform::oldest_reader_seq() {
    auto open = [](const std::pair<uint64_t, Task *> &e) {
        const Task *t = e.second;
        return t->state != TaskState::Dead && t->rcu_nesting > 0 && t->rcu_start_seq == e.first;
    };
    while (!readers_.empty() && !open(readers_.front()))
        readers_.pop_front();
    if (readers_.size() > 4 * tasks_.size() + 64)  // a long reader holds many ended ones behind it
        readers_.erase(std::remove_if(readers_.begin(), readers_.end(),
                                      [&](const auto &e) { return !open(e); }),
                       readers_.end());
    return readers_.empty() ? std::numeric_limits<uint64_t>::max() : readers_.front().first;
}

void SimPlatform::report_qs(Cpu &c) {
    for (size_t i = 0; i < gps_.size(); ++i) {
        GracePeriod &g = *gps_[i];
        if (!g.started || !g.cpu_pending[static_cast<size_t>(c.id)]) continue;
        g.cpu_pending[static_cast<size_t>(c.id)] = 0;
        if (--g.pending == 0) check_gp(g);
    }
}

void SimPlatform::deferred_qs(Task *t) {
    if (!t->rcu_need_qs || t->state != TaskState::Running) return;
    Cpu &c = cpu_of(t);
    if (c.curr == t && cpu_in_qs(c)) {
        t->rcu_need_qs = false;
        report_qs(c);
    }
}

SimPlatform::GracePeriod *SimPlatform::request_gp(bool expedited) {
    auto make = [&](bool exp) {
        gps_.push_back(std::make_unique<GracePeriod>());
        GracePeriod *g = gps_.back().get();
        g->id = ++gp_ids_;
        g->expedited = exp;
        return g;
    };
    if (expedited && cfg_.userspace_rcu_gp < 0) {  // liburcu has no expedited grace period
        GracePeriod *g = make(true);
        start_gp(*g);
        return g;
    }
    if (!normal_gp_) {
        normal_gp_ = make(false);
        start_gp(*normal_gp_);
        return normal_gp_;
    }
    // One is running and may have begun before the caller's updates: wait for the next one.
    if (!next_gp_) next_gp_ = make(false);
    return next_gp_;
}

void SimPlatform::start_gp(GracePeriod &g) {
    g.started = true;
    g.start = engine_.now();
    g.start_seq = ++rcu_seq_;
    g.cpu_pending.assign(cpus_.size(), 0);
    g.pending = 0;
    if (cfg_.userspace_rcu_gp < 0)
        for (const Cpu &c : cpus_)
            if (c.curr) {
                g.cpu_pending[static_cast<size_t>(c.id)] = 1;
                ++g.pending;
            }
    trace_event("gp{} start{}", g.id, g.expedited ? " (expedited)" : "");
    if (g.expedited)
        for (const Cpu &c : cpus_)
            if (g.cpu_pending[static_cast<size_t>(c.id)])
                engine_.schedule(engine_.now() + cfg_.profile.primitive.ipi, on_exp_ipi, this,
                                 (g.id << kCpuBits) | static_cast<uint64_t>(c.id));
    check_gp(g);
}

void SimPlatform::check_gp(GracePeriod &g) {
    if (!g.started || g.completing || g.pending > 0) return;
    if (oldest_reader_seq() < g.start_seq)
        return;  // a reader that may predate the grace period is still inside
    g.completing = true;
    // The grace-period machinery notices at the next jiffy; expedited ones at once. Completion
    // always goes through an event so that callers never see it happen inside their own call.
    Time at = engine_.now();
    if (!g.expedited)
        at = cfg_.userspace_rcu_gp >= 0 ? at + cfg_.userspace_rcu_gp : (at / jiffy_ + 1) * jiffy_;
    engine_.schedule(at, on_gp_complete, this, g.id);
}

void SimPlatform::on_gp_complete(void *self, uint64_t id) {
    auto *p = static_cast<SimPlatform *>(self);
    for (auto &g : p->gps_)
        if (g->id == id) {
            p->complete_gp(*g);
            return;
        }
}

void SimPlatform::complete_gp(GracePeriod &g) {
    Time len = engine_.now() - g.start;
    if (recording()) {
        if (g.expedited) {
            ++rcu_stats_.expedited_grace_periods;
            rcu_stats_.expedited_grace_period_ns.record(len);
        } else {
            ++rcu_stats_.grace_periods;
            rcu_stats_.grace_period_ns.record(len);
        }
    }
    trace_event("gp{} end after {} ns", g.id, len);
    if (recorder_) recorder_->grace_period(g.id, g.expedited, g.start, engine_.now());
    for (Task *t : g.waiters)
        wake(t, -1, cfg_.profile.primitive.wakeup);
    if (!g.callbacks.empty()) {
        for (auto &cb : g.callbacks)
            callbacks_ready_.push_back(std::move(cb));
        if (cb_task_ && cb_task_waiting_) {
            cb_task_waiting_ = false;
            wake(cb_task_, -1, 0);
        }
    }
    bool was_normal = &g == normal_gp_;
    auto it = std::find_if(gps_.begin(), gps_.end(), [&](const auto &p) { return p.get() == &g; });
    gps_.erase(it);  // g is gone from here on
    if (was_normal) {
        normal_gp_ = next_gp_;
        next_gp_ = nullptr;
        if (normal_gp_) start_gp(*normal_gp_);
    }
}

void SimPlatform::on_exp_ipi(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Cpu &c = p->cpus_[arg & ((1u << kCpuBits) - 1)];
    if (c.curr && c.curr->irqs_off) {
        c.exp_ipi_pending = true;  // delivered at local_irq_enable
        return;
    }
    p->exp_ipi(c);
}

void SimPlatform::exp_ipi(Cpu &c) {
    if (cpu_in_qs(c))
        report_qs(c);
    else if (c.curr)
        c.curr->rcu_need_qs = true;  // reported when the section ends
}

void SimPlatform::rcu_read_lock(Site site) {
    Task *t = cur_;
    if (!t) return;
    if (t->rcu_nesting++ == 0) {
        t->rcu_start_seq = ++rcu_seq_;
        t->rcu_start = engine_.now();
        readers_.emplace_back(t->rcu_start_seq, t);
    }
    if (!cfg_.preempt_rcu)
        preempt_inc(t, site);  // without PREEMPT_RCU a reader is a preempt-off section
    advance(cfg_.profile.primitive.rcu_read_lock);
}

void SimPlatform::rcu_read_unlock(Site site) {
    Task *t = cur_;
    if (!t) return;
    if (t->rcu_nesting == 0) {
        violation("rcu_unlock_unbalanced",
                  fmt::format("{} in {} outside a read section", site.str(), t->params.name));
        return;
    }
    --t->rcu_nesting;
    if (!cfg_.preempt_rcu) preempt_dec(t, site);
    if (t->rcu_nesting == 0) {
        deferred_qs(t);
        for (size_t i = 0; i < gps_.size(); ++i)
            if (gps_[i]->started && gps_[i]->pending == 0) check_gp(*gps_[i]);
    }
}

void SimPlatform::synchronize_rcu(bool expedited, Site site) {
    Task *t = cur_;
    if (!t) throw std::logic_error("synchronize_rcu outside a task");
    if (t->preempt_count > 0 || t->irqs_off)
        violation("sleep_in_atomic", fmt::format("sleeping function called from invalid context: "
                                                 "{} in {} (preempt count {}, irqs {})",
                                                 site.str(), t->params.name, t->preempt_count,
                                                 t->irqs_off ? "off" : "on"));
    if (t->rcu_nesting > 0) {
        violation("synchronize_rcu_in_reader",
                  fmt::format("{} in {} inside an RCU read section (would never return)",
                              site.str(), t->params.name));
        return;
    }
    GracePeriod *g = request_gp(expedited);
    g->waiters.push_back(t);
    Time start = engine_.now();
    trace_event("{} waits for gp{}", t->params.name, g->id);
    block_current();
    if (recorder_) recorder_->gp_wait(t->id, t->params.name, start, engine_.now());
    if (OpFrame *f = frame(t)) {
        f->parts.gp_wait_ns += engine_.now() - start;
        ++f->parts.grace_periods;
    }
}

void SimPlatform::call_rcu(std::function<void()> callback) {
    if (!cb_task_) {
        create_task(kernel::TaskParams{"rcu_callbacks", kernel::Sched::Other, 0, -1, false},
                    [this] { rcu_callback_task(); });
        cb_task_ = tasks_.back().get();
    }
    request_gp(false)->callbacks.push_back(std::move(callback));
}

// Invokes ready callbacks one by one with preemption off (softirq-like context: a callback
// that sleeps is reported), and sleeps while none is ready.
void SimPlatform::rcu_callback_task() {
    Task *t = cur_;
    static const Site batch{"rcu_do_batch", {}};
    while (true) {
        if (callbacks_head_ < callbacks_ready_.size()) {
            std::function<void()> cb = std::move(callbacks_ready_[callbacks_head_++]);
            if (callbacks_head_ == callbacks_ready_.size()) {
                callbacks_ready_.clear();
                callbacks_head_ = 0;
            }
            preempt_inc(t, batch);
            advance(cfg_.profile.primitive.rcu_callback);
            cb();
            if (recording()) ++rcu_stats_.callbacks_invoked;
            preempt_dec(t, batch);
            continue;
        }
        bool pending = std::any_of(gps_.begin(), gps_.end(),
                                   [](const auto &g) { return !g->callbacks.empty(); });
        if (stop_ && !pending) return;
        cb_task_waiting_ = true;
        block_current();
    }
}

void SimPlatform::rcu_dereferenced(const void *, Site site) {
    Task *t = cur_;
    if (t && t->rcu_nesting == 0 && t->preempt_count == 0 && !t->irqs_off)
        violation("suspicious_rcu_usage",
                  fmt::format(
                      "{} in {} outside an RCU read section (use rcu_dereference_protected on the "
                      "update side)",
                      site.str(), t->params.name));
}

void SimPlatform::rcu_published(const void *old_p, const void *new_p) {
    if (new_p) publication(new_p) = kStillPublished;
    if (old_p && old_p != new_p) publication(old_p) = ++rcu_seq_;
}

}  // namespace locksim::sim
