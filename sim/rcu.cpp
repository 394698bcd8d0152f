// RCU on the simulated platform (rcu.h).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/rcu.h"

namespace locksim::sim {

namespace {
constexpr uint64_t kStillPublished = std::numeric_limits<uint64_t>::max();
}  // namespace

// A CPU is in a quiescent state when it runs nothing, or a task outside any read section with
// preemption and interrupts on (since the RCU flavour consolidation a preempt-off region is a
// reader too, whatever PREEMPT_RCU says).
bool RcuState::cpu_in_qs(int cpu) {
    const Task *t = ops_.running_on(cpu);
    return !t || (t->rcu_nesting == 0 && t->preempt_count == 0 && !t->irqs_off);
}

uint64_t RcuState::oldest_reader_seq() {
    auto open = [](const std::pair<uint64_t, Task *> &e) {
        const Task *t = e.second;
        return t->state != TaskState::Dead && t->rcu_nesting > 0 && t->rcu_start_seq == e.first;
    };
    while (!readers_.empty() && !open(readers_.front()))
        readers_.pop_front();
    if (readers_.size() >
        4 * ops_.tasks().size() + 64)  // a long reader holds many ended ones behind it
        readers_.erase(std::remove_if(readers_.begin(), readers_.end(),
                                      [&](const auto &e) { return !open(e); }),
                       readers_.end());
    return readers_.empty() ? std::numeric_limits<uint64_t>::max() : readers_.front().first;
}

void RcuState::report_qs(int cpu) {
    for (size_t i = 0; i < gps_.size(); ++i) {
        GracePeriod &g = *gps_[i];
        if (!g.started || !g.cpu_pending[static_cast<size_t>(cpu)]) continue;
        g.cpu_pending[static_cast<size_t>(cpu)] = 0;
        if (--g.pending == 0) check_gp(g);
    }
}

void RcuState::deferred_qs(Task *t) {
    if (!t->rcu_need_qs || t->state != TaskState::Running) return;
    if (ops_.running_on(t->cpu) == t && cpu_in_qs(t->cpu)) {
        t->rcu_need_qs = false;
        report_qs(t->cpu);
    }
}

RcuState::GracePeriod *RcuState::request_gp(bool expedited) {
    auto make = [&](bool exp) {
        gps_.push_back(std::make_unique<GracePeriod>());
        GracePeriod *g = gps_.back().get();
        g->id = ++gp_ids_;
        g->expedited = exp;
        g->callbacks = std::move(spare_callbacks_);
        return g;
    };
    const bool normal_after_boot = cfg_.preempt == PreemptModel::Rt && cfg_.rcu_normal_after_boot;
    // liburcu has no expedited grace period
    if (expedited && cfg_.userspace_rcu_gp < 0 && !normal_after_boot) {
        GracePeriod *g = make(true);
        g->start = engine_.now();
        engine_.schedule(g->start + cfg_.profile.primitive.rcu_exp_setup, on_exp_start, this,
                         g->id);
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

void RcuState::start_gp(GracePeriod &g) {
    g.started = true;
    if (!g.expedited) g.start = engine_.now();
    g.start_seq = ++seq_;
    const auto cpus = static_cast<size_t>(cfg_.cpus);
    g.cpu_pending.assign(cpus, 0);
    g.pending = 0;
    if (cfg_.userspace_rcu_gp < 0) {
        for (size_t c = 0; c < cpus; ++c)
            if (ops_.running_on(static_cast<int>(c))) {
                g.cpu_pending[c] = 1;
                ++g.pending;
            }
    } else {
        // liburcu waits for the threads inside a read section only, and on the real platform a
        // would-be-atomic section is one (real/accounting.cpp, open_section): a CPU running one
        // reports its quiescent state when that section ends.
        for (size_t c = 0; c < cpus; ++c)
            if (!cpu_in_qs(static_cast<int>(c))) {
                g.cpu_pending[c] = 1;
                ++g.pending;
                ops_.running_on(static_cast<int>(c))->rcu_need_qs = true;
            }
    }
    ops_.trace_event("gp{} start{}", g.id, g.expedited ? " (expedited)" : "");
    if (g.expedited)
        for (size_t c = 0; c < cpus; ++c)
            if (g.cpu_pending[c])
                engine_.schedule(engine_.now() + cfg_.profile.primitive.ipi, on_exp_ipi, this,
                                 cpu_event_arg(g.id, static_cast<int>(c)));
    check_gp(g);
}

void RcuState::check_gp(GracePeriod &g) {
    if (!g.started || g.completing || g.pending > 0) return;
    if (oldest_reader_seq() < g.start_seq)
        return;  // a reader that may predate the grace period is still inside
    g.completing = true;
    // The grace-period machinery notices at the next jiffy; expedited ones at once. Completion
    // always goes through an event so that callers never see it happen inside their own call.
    Time at = engine_.now();
    if (!g.expedited && cfg_.userspace_rcu_gp >= 0) {
        // A reader still inside after liburcu's polling window sent the updater to sleep.
        const bool slept = cfg_.userspace_rcu_sleep > 0 && at - g.start > cfg_.userspace_rcu_spin;
        at += slept ? cfg_.userspace_rcu_sleep : cfg_.userspace_rcu_gp;
    } else if (!g.expedited) {
        at = (at / jiffy_ + 1) * jiffy_;
    }
    engine_.schedule(at, on_gp_complete, this, g.id);
}

void RcuState::check_started() {
    for (size_t i = 0; i < gps_.size(); ++i)
        if (gps_[i]->started) check_gp(*gps_[i]);
}

void RcuState::reader_exits(Task *t) {
    t->rcu_nesting = 0;  // do not block grace periods forever
    check_started();
}

RcuState::GracePeriod *RcuState::find_gp(uint64_t id) {
    for (auto &g : gps_)
        if (g->id == id) return g.get();
    return nullptr;
}

void RcuState::on_gp_complete(void *self, uint64_t id) {
    auto *p = static_cast<RcuState *>(self);
    if (GracePeriod *g = p->find_gp(id)) p->complete_gp(*g);
}

void RcuState::complete_gp(GracePeriod &g) {
    Time len = engine_.now() - g.start;
    if (ops_.recording()) {
        if (g.expedited) {
            ++stats_.expedited_grace_periods;
            stats_.expedited_grace_period_ns.record(len);
        } else {
            ++stats_.grace_periods;
            stats_.grace_period_ns.record(len);
        }
    }
    ops_.trace_event("gp{} end after {} ns", g.id, len);
    if (TraceRecorder *rec = ops_.recorder())
        rec->grace_period(g.id, g.expedited, g.start, engine_.now());
    // liburcu's caller runs its grace period itself: the calibrated times are its whole wait,
    // the wake-up included.
    const Time wake_cost = cfg_.userspace_rcu_gp >= 0 ? 0 : cfg_.profile.primitive.wakeup;
    for (Task *t : g.waiters)
        ops_.wake(t, -1, wake_cost);
    if (!g.callbacks.empty()) {
        // rcuo: the grace-period kthread wakes it now; otherwise each CPU's next tick finds
        // its own callbacks ready (tick_callbacks).
        const bool rcuo = callback_context() == CallbackContext::Rcuo;
        for (QueuedCallback &cb : g.callbacks)
            (rcuo ? callbacks_ready_ : cpu_cbs_[static_cast<size_t>(cb.cpu)].ready)
                .push_back(std::move(cb.fn));
        if (rcuo || ops_.should_stop()) kick_callback_task();
    }
    g.callbacks.clear();
    spare_callbacks_ = std::move(g.callbacks);
    bool was_normal = &g == normal_gp_;
    auto it = std::find_if(gps_.begin(), gps_.end(), [&](const auto &p) { return p.get() == &g; });
    gps_.erase(it);  // g is gone from here on
    if (was_normal) {
        normal_gp_ = next_gp_;
        next_gp_ = nullptr;
        if (normal_gp_) start_gp(*normal_gp_);
    }
}

void RcuState::on_exp_start(void *self, uint64_t id) {
    auto *p = static_cast<RcuState *>(self);
    if (GracePeriod *g = p->find_gp(id)) p->start_gp(*g);
}

void RcuState::on_exp_ipi(void *self, uint64_t arg) {
    auto *p = static_cast<RcuState *>(self);
    const int cpu = event_cpu(arg);
    const Task *t = p->ops_.running_on(cpu);
    if (t && t->irqs_off) {
        p->exp_ipi_pending_[static_cast<size_t>(cpu)] = 1;  // delivered at local_irq_enable
        return;
    }
    p->exp_handler(cpu);
}

void RcuState::exp_handler(int cpu) {
    ops_.hard_irq(cpu, cfg_.profile.primitive.rcu_exp_handler);
    interrupt(cpu);
}

void RcuState::interrupt(int cpu) {
    if (cpu_in_qs(cpu))
        report_qs(cpu);
    else if (Task *t = ops_.running_on(cpu))
        t->rcu_need_qs = true;  // reported when the section ends
}

void RcuState::irqs_on(int cpu) {
    if (!exp_ipi_pending_[static_cast<size_t>(cpu)]) return;
    exp_ipi_pending_[static_cast<size_t>(cpu)] = 0;
    exp_handler(cpu);
}

void RcuState::read_lock(const Site &site) {
    Task *t = ops_.current();
    if (!t) return;
    if (t->rcu_nesting++ == 0) {
        t->rcu_start_seq = ++seq_;
        t->rcu_start = engine_.now();
        readers_.emplace_back(t->rcu_start_seq, t);
    }
    if (!cfg_.preempt_rcu)
        ops_.preempt_inc(t, site);  // without PREEMPT_RCU a reader is a preempt-off section
    ops_.advance(cfg_.profile.primitive.rcu_read_lock);
}

void RcuState::read_unlock(const Site &site) {
    Task *t = ops_.current();
    if (!t) return;
    if (t->rcu_nesting == 0) {
        ops_.violation("rcu_unlock_unbalanced",
                       fmt::format("{} in {} outside a read section", site.str(), t->params.name));
        return;
    }
    --t->rcu_nesting;
    if (!cfg_.preempt_rcu) ops_.preempt_dec(t, site);
    if (t->rcu_nesting == 0) {
        deferred_qs(t);
        check_started();
    }
}

void RcuState::synchronize(bool expedited, const Site &site) {
    Task *t = ops_.current();
    if (!t) throw std::logic_error("synchronize_rcu outside a task");
    if (t->preempt_count > 0 || t->irqs_off)
        ops_.violation(
            "sleep_in_atomic",
            fmt::format("sleeping function called from invalid context: "
                        "{} in {} (preempt count {}, irqs {})",
                        site.str(), t->params.name, t->preempt_count, t->irqs_off ? "off" : "on"));
    if (t->rcu_nesting > 0) {
        ops_.violation("synchronize_rcu_in_reader",
                       fmt::format("{} in {} inside an RCU read section (would never return)",
                                   site.str(), t->params.name));
        return;
    }
    GracePeriod *g = request_gp(expedited);
    g->waiters.push_back(t);
    const bool exp = g->expedited;
    Time start = engine_.now();
    ops_.trace_event("{} waits for gp{}", t->params.name, g->id);
    ops_.block_current();
    if (exp) {
        // The wait's priced steps, as far as it lasted: the setup, the IPI and one handler (the
        // rest is waiting for the CPUs to answer, which follows no price).
        const PrimitiveCosts &pc = cfg_.profile.primitive;
        Time left = ops_.now() - start;
        const Time gp = std::min(left, pc.rcu_exp_setup + pc.rcu_exp_handler);
        t->priced[static_cast<size_t>(PriceFamily::GracePeriod)] += gp;
        t->priced[static_cast<size_t>(PriceFamily::Primitive)] += std::min(left - gp, pc.ipi);
    }
    if (TraceRecorder *rec = ops_.recorder())
        rec->gp_wait(t->id, t->params.name, start, engine_.now());
    if (OpFrame *f = frame(t)) {
        f->parts.gp_wait_ns += ops_.now() - start;
        ++f->parts.grace_periods;
    }
}

RcuState::CallbackContext RcuState::callback_context() const {
    if (cfg_.rcu_nocbs || cfg_.userspace_rcu_gp >= 0) return CallbackContext::Rcuo;
    return cfg_.preempt == PreemptModel::Rt ? CallbackContext::Rcuc : CallbackContext::Softirq;
}

void RcuState::call(std::function<void()> callback) {
    const Task *cur = ops_.current();
    const int cpu = cur ? cur->cpu : 0;
    switch (callback_context()) {
        case CallbackContext::Rcuo:
            if (!cb_task_)
                cb_task_ = ops_.create_kthread(
                    kernel::TaskParams{cfg_.userspace_rcu_gp >= 0 ? "rcu_callbacks" : "rcuo",
                                       kernel::Sched::Other, 0, -1, false},
                    [this] { callback_task_body(); });
            break;
        case CallbackContext::Rcuc:
            // rcu_spawn_core_kthreads: one per CPU, SCHED_FIFO at kthread_prio.
            for (size_t c = 0; c < cpu_cbs_.size(); ++c)
                if (!cpu_cbs_[c].rcuc)
                    cpu_cbs_[c].rcuc = ops_.create_kthread(
                        kernel::TaskParams{fmt::format("rcuc/{}", c), kernel::Sched::Fifo, 1,
                                           static_cast<int>(c), false},
                        [this, c] { rcuc_body(static_cast<int>(c)); });
            break;
        case CallbackContext::Softirq:
            break;
    }
    request_gp(false)->callbacks.push_back({cpu, std::move(callback)});
    if (cur && cfg_.host_call_rcu > 0) ops_.advance(cfg_.host_call_rcu);
}

void RcuState::do_batch(std::vector<std::function<void()>> &list, size_t &head, bool bh_off,
                        size_t limit, const std::function<bool()> &stop) {
    static const Site batch{"rcu_do_batch", {}};
    Task *t = ops_.current();
    for (size_t n = 0; head < list.size(); ++n) {
        if (n >= limit && (!stop || stop())) break;
        std::function<void()> cb = std::move(list[head++]);
        if (head == list.size()) {
            list.clear();
            head = 0;
        }
        if (bh_off) ops_.preempt_inc(t, batch);
        ops_.advance(cfg_.profile.primitive.rcu_callback);
        cb();
        if (ops_.recording()) ++stats_.callbacks_invoked;
        if (bh_off) ops_.preempt_dec(t, batch);  // cond_resched between callbacks
    }
}

bool RcuState::callbacks_pending() const {
    if (callbacks_head_ < callbacks_ready_.size()) return true;
    for (const CpuCallbacks &c : cpu_cbs_)
        if (c.head < c.ready.size()) return true;
    return std::any_of(gps_.begin(), gps_.end(),
                       [](const auto &g) { return !g->callbacks.empty(); });
}

bool RcuState::tick_callbacks(int cpu) {
    CpuCallbacks &c = cpu_cbs_[static_cast<size_t>(cpu)];
    if (c.head >= c.ready.size()) return false;
    if (callback_context() == CallbackContext::Softirq) return true;
    if (c.rcuc && c.rcuc_waiting) {  // invoke_rcu_core_kthread
        c.rcuc_waiting = false;
        ops_.wake(c.rcuc, cpu, 0);
    }
    return false;
}

// In softirq context (the softirq task, which holds the softirq count: preemption is off).
bool RcuState::softirq_callbacks(int cpu, bool idle) {
    // DEFAULT_RCU_BLIMIT and rcu_divisor's default.
    constexpr size_t kBlimit = 10;
    constexpr int kDivisor = 7;
    CpuCallbacks &c = cpu_cbs_[static_cast<size_t>(cpu)];
    const size_t limit = std::max(kBlimit, (c.ready.size() - c.head) >> kDivisor);
    // Past the limit: stop if need_resched() || !is_idle_task(current).
    do_batch(c.ready, c.head, false, limit, [&] { return !idle || ops_.need_resched(cpu); });
    return c.head < c.ready.size();
}

// rcu_cpu_kthread: rcu_core with softirqs disabled, which under PREEMPT_RT stays preemptible.
void RcuState::rcuc_body(int cpu) {
    CpuCallbacks &c = cpu_cbs_[static_cast<size_t>(cpu)];
    while (true) {
        do_batch(c.ready, c.head, cfg_.preempt != PreemptModel::Rt);
        const bool mine = std::any_of(gps_.begin(), gps_.end(), [cpu](const auto &g) {
            return std::any_of(g->callbacks.begin(), g->callbacks.end(),
                               [cpu](const QueuedCallback &q) { return q.cpu == cpu; });
        });
        if (ops_.should_stop() && !mine && c.head >= c.ready.size()) return;
        if (c.head < c.ready.size()) continue;
        c.rcuc_waiting = true;
        ops_.block_current();
    }
}

// The rcuo kthread (nocb_cb_wait): invokes ready callbacks one by one with softirqs disabled
// (preemption off without PREEMPT_RT), and sleeps while none is ready.
void RcuState::callback_task_body() {
    while (true) {
        do_batch(callbacks_ready_, callbacks_head_, cfg_.preempt != PreemptModel::Rt);
        bool pending = std::any_of(gps_.begin(), gps_.end(),
                                   [](const auto &g) { return !g->callbacks.empty(); });
        if (ops_.should_stop() && !pending) return;
        if (callbacks_head_ < callbacks_ready_.size()) continue;
        cb_task_waiting_ = true;
        ops_.block_current();
    }
}

void RcuState::suspicious_dereference(const Task &t, const Site &site) {
    ops_.violation("suspicious_rcu_usage",
                   fmt::format("{} in {} outside an RCU read section (use "
                               "rcu_dereference_protected on the update side)",
                               site.str(), t.params.name));
}

void RcuState::set_publication(const void *p, uint64_t publication) {
    if (uint64_t *word = ops_.rcu_publication(p))
        *word = publication;
    else
        published_[p] = publication;
}

void RcuState::published(const void *old_p, const void *new_p) {
    if (new_p) set_publication(new_p, kStillPublished);
    if (old_p && old_p != new_p) set_publication(old_p, ++seq_);
}

void RcuState::freeing(uint64_t cutoff, const Site &site) {
    if (cutoff == 0) return;
    // Readers that began before the object was unpublished may still use it.
    const auto &tasks = ops_.tasks();
    for (size_t i = 0; oldest_reader_seq() < cutoff && i < tasks.size(); ++i) {
        const Task &r = *tasks[i];
        if (r.state == TaskState::Dead || r.rcu_nesting == 0 || r.rcu_start_seq >= cutoff) continue;
        ops_.violation(
            "rcu_free_in_use",
            fmt::format("{} frees an object published under RCU while {} (reading since {} ns) may "
                        "still hold it; wait for a grace period first",
                        site.str(), r.params.name, r.rcu_start));
    }
    if (cutoff == kStillPublished)
        ops_.violation(
            "rcu_free_published",
            fmt::format("{} frees an object that is still published under RCU", site.str()));
}

void RcuState::kick_callback_task() {
    if (cb_task_ && cb_task_waiting_) {
        cb_task_waiting_ = false;
        ops_.wake(cb_task_, -1, 0);
    }
    for (CpuCallbacks &c : cpu_cbs_)
        if (c.rcuc && c.rcuc_waiting) {
            c.rcuc_waiting = false;
            ops_.wake(c.rcuc, -1, 0);
        }
}

bool RcuState::is_callback_task(const Task *t) const {
    return t == cb_task_ || std::any_of(cpu_cbs_.begin(), cpu_cbs_.end(),
                                        [t](const CpuCallbacks &c) { return c.rcuc == t; });
}

}  // namespace locksim::sim
