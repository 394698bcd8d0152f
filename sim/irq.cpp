// The preemption and interrupt state of the running task (preempt_count, local_irq_*), where a
// deferred reschedule and interrupt happen, and the interrupt load ([[machine.irq]]).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "sim/sim_platform.h"
#include "util/seed_stream.h"

namespace locksim::sim {

// ---------------------------------------------------------------- preemption and interrupts

void SimPlatform::preempt_inc(Task *t, const Site &site) {
    if (t->preempt_count++ == 0) {
        t->poff.start = engine_.now();
        if (cfg_.record_priced) t->poff_priced_at = t->priced;
        t->poff.site = site;
        t->poff.label = current_label(t);
    }
}

void SimPlatform::preempt_dec(Task *t, const Site &site) {
    if (t->preempt_count <= 0) {
        violation("preempt_count_underflow",
                  fmt::format("{} in {} with preempt count 0", site.str(), t->params.name));
        return;
    }
    if (--t->preempt_count == 0) {
        close_section(t, t->poff, false, site);
        rcu_.deferred_qs(t);
        maybe_preempt();
    }
}

void SimPlatform::irq_off(Task *t, const Site &site) {
    if (t->irqs_off) return;
    t->irqs_off = true;
    t->ioff.start = engine_.now();
    if (cfg_.record_priced) t->ioff_priced_at = t->priced;
    t->ioff.site = site;
    t->ioff.label = current_label(t);
}

// local_irq_enable / restore: interrupts that waited run at once, and the task's next
// instruction comes after them (inside whatever preempt-off section is still open).
void SimPlatform::irq_on(Task *t, const Site &site) {
    if (!t->irqs_off) return;
    t->irqs_off = false;
    close_section(t, t->ioff, true, site);
    Cpu &c = cpu_of(t);
    irqs_on_work(c);
    if (t == cur_ && c.curr == t && c.act == Act::Executing && c.irq_until > engine_.now()) {
        start_act(c, Act::Span, 0);
        suspend_current();
    }
    rcu_.deferred_qs(t);
    maybe_preempt();
}

// Interrupts that arrived while they were off are delivered now, in arrival order.
void SimPlatform::irqs_on_work(Cpu &c) {
    if (!c.pending_irqs.empty()) {
        std::vector<size_t> pending;
        pending.swap(c.pending_irqs);
        for (size_t s : pending)
            deliver_irq(c, s);
    }
    if (!c.pending_timers.empty()) {
        std::vector<Task *> pending;
        pending.swap(c.pending_timers);
        for (Task *t : pending)
            timer_fire(t, c);
    }
    if (c.tick_pending) {
        c.tick_pending = false;
        tick(c);
    }
    rcu_.irqs_on(c.id);
}

void SimPlatform::preempt_disable(Site site) {
    if (Task *t = cur_) {
        preempt_inc(t, site);
        advance(cfg_.profile.primitive.preempt_toggle);
    }
}

void SimPlatform::preempt_enable(Site site) {
    if (Task *t = cur_) {
        advance(cfg_.profile.primitive.preempt_toggle);
        preempt_dec(t, site);
    }
}

void SimPlatform::local_irq_disable(Site site) {
    if (Task *t = cur_) {
        irq_off(t, site);
        advance(cfg_.profile.primitive.irq_toggle);
    }
}

// Each toggle costs irq_toggle, the enable as the disable (calibrate times the pair and halves
// it); the enable's is paid inside the section it ends, as preempt_enable's is.
void SimPlatform::local_irq_enable(Site site) {
    if (Task *t = cur_) {
        advance(cfg_.profile.primitive.irq_toggle);
        irq_on(t, site);
    }
}

bool SimPlatform::irqs_disabled() {
    return cur_ && cur_->irqs_off;
}

// ---------------------------------------------------------------- interrupt load

namespace {

// Where a source's softirq work runs (the comment on deliver_irq): inline as CPU time taken
// from whatever runs, in the interrupt's thread with its handler, in ksoftirqd, or in the CPU's
// softirq task.
enum class SoftirqWhere : uint8_t { Inline, IrqThread, Ksoftirqd, SoftirqTask };

SoftirqWhere softirq_where(const IrqSource &src, PreemptModel m) {
    if (src.threaded(m)) return SoftirqWhere::IrqThread;
    if (m == PreemptModel::Rt)
        return src.softirq > 0 || src.work ? SoftirqWhere::Ksoftirqd : SoftirqWhere::Inline;
    return src.work ? SoftirqWhere::SoftirqTask : SoftirqWhere::Inline;
}

size_t take_first(std::vector<size_t> &raised) {
    const size_t source = raised.front();
    raised.erase(raised.begin());
    return source;
}

}  // namespace

// Each source's first interrupt on each CPU it hits: at its period, or with drawn_phase at a
// phase drawn from a stream of its own, named by the source's kind and its place among the
// sources of that kind, and the CPU (another source added does not move it).
void SimPlatform::start_irq_timers() {
    std::map<std::string, int> of_kind;
    for (size_t i = 0; i < cfg_.irqs.size(); ++i) {
        const IrqSource &src = cfg_.irqs[i];
        const std::string name = fmt::format("irq/{}/{}", src.kind, of_kind[src.kind]++);
        for (Cpu &c : cpus_) {
            c.irq_timers.resize(cfg_.irqs.size());
            if (!src.hits(c.id)) continue;
            Cpu::IrqTimer &timer = c.irq_timers[i];
            timer.rng = seed_stream(cfg_.seed, name, static_cast<uint64_t>(c.id));
            timer.due = src.drawn_phase ? draw_upto(timer.rng, src.period() - 1) : src.period();
            schedule_irq(c, i);
        }
    }
}

// The source's next interrupt on `c`: at its due time, late by its jitter.
void SimPlatform::schedule_irq(Cpu &c, size_t source) {
    Cpu::IrqTimer &timer = c.irq_timers[source];
    const Time at = timer.due + draw_upto(timer.rng, cfg_.irqs[source].jitter);
    engine_.schedule(at, on_irq, this, cpu_event_arg(source, c.id));
}

void SimPlatform::on_irq(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Cpu &c = p->cpus_[static_cast<size_t>(event_cpu(arg))];
    const size_t source = event_number(arg);
    c.irq_timers[source].due += p->cfg_.irqs[source].period();
    p->schedule_irq(c, source);
    if (c.curr && c.curr->irqs_off) {
        // Delivered at local_irq_enable; raised again meanwhile, it is still one pending
        // interrupt (the controller's pending bit).
        if (std::find(c.pending_irqs.begin(), c.pending_irqs.end(), source) == c.pending_irqs.end())
            c.pending_irqs.push_back(source);
        return;
    }
    p->deliver_irq(c, source);
}

// Where a source's work runs (v6.12, kernel/irq/manage.c, kernel/softirq.c). Without
// PREEMPT_RT: the hard handler in hard interrupt context, then its softirq at irq exit on the
// same CPU: as CPU time taken from whatever runs there (the running span ends that much later),
// or, when open_softirq gave it code, by the CPU's softirq task, which interrupts the running
// task in place. Under PREEMPT_RT every device interrupt but the timer is threaded: the hard
// part only wakes the interrupt's thread (priced as a wake-up), and the thread runs the handler
// and the softirq work it raises (at its local_bh_enable). The timer's handler stays in hard
// interrupt context and its softirq work goes to ksoftirqd (SCHED_OTHER; the dedicated ktimers
// thread came after v6.12). After the duration no new softirq work is raised (as no task starts
// new work): handler and softirq time go on in hard interrupt context.
void SimPlatform::deliver_irq(Cpu &c, size_t source) {
    const IrqSource &src = cfg_.irqs[source];
    const SoftirqWhere where = stop_ ? SoftirqWhere::Inline : softirq_where(src, cfg_.preempt);
    const Time hard =
        where == SoftirqWhere::IrqThread ? cfg_.profile.primitive.wakeup : src.handler;
    const Time soft = where == SoftirqWhere::Inline ? src.softirq : 0;
    trace_event("cpu{} irq {}", c.id, src.kind);
    take_irq_time(c, hard, soft);
    switch (where) {
        case SoftirqWhere::IrqThread:
            ++c.thread_raised[source];
            wake_irq_thread(c.irq_threads[source], c.id);
            break;
        case SoftirqWhere::Ksoftirqd:
            c.ksoftirqd_raised.push_back(source);
            wake_irq_thread(c.ksoftirqd, c.id);
            break;
        case SoftirqWhere::SoftirqTask:
            c.softirq_raised.push_back(source);  // run at irq exit (on_irq_end)
            break;
        case SoftirqWhere::Inline:
            break;
    }
}

void SimPlatform::take_irq_time(Cpu &c, Time hard, Time soft, bool end_event) {
    const Time now = engine_.now();
    const Time cost = hard + soft;
    const Time from = std::max(now, c.irq_until);
    c.irq_until = from + cost;
    note_held(c, from, c.irq_until);
    if (recording()) {
        c.stats.irq_ns += hard;
        c.stats.softirq_ns += soft;
    }
    if (c.act == Act::Switching && c.curr->params.probe && c.curr->probe_due >= 0)
        note_irq_delay(c.curr, c, now, cost);
    if (c.act == Act::Span || c.act == Act::Switching) {
        ++c.gen;
        c.act_end += cost;
        engine_.schedule(c.act_end, on_cpu_event, this, cpu_event_arg(c.gen, c.id));
    }
    if (end_event || softirq_pending(c) || c.need_resched) irq_exit_needed(c);
}

void SimPlatform::irq_exit_needed(Cpu &c) {
    if (c.irq_exit_at == c.irq_until) return;
    c.irq_exit_at = c.irq_until;
    engine_.schedule(c.irq_until, on_irq_end, this, static_cast<uint64_t>(c.id));
}

void SimPlatform::on_irq_end(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Cpu &c = p->cpus_[arg];
    if (p->engine_.now() < c.irq_until) return;  // more interrupt work follows; its end comes
    p->enter_softirq(c);
    if (c.need_resched) p->try_preempt(c);
}

// ---------------------------------------------------------------- softirq and interrupt threads

bool SimPlatform::open_softirq(std::string_view irq_kind, std::function<void()> action) {
    if (started_) throw std::logic_error("open_softirq after the run started");
    bool any = false;
    for (IrqSource &src : cfg_.irqs)
        if (src.kind == irq_kind) {
            src.work = action;
            any = true;
        }
    return any;
}

// The kernel threads a CPU's interrupt sources need, made at the start of the run. They live
// as long as the machine: the end of the run does not wait for them.
Task *SimPlatform::make_daemon(std::string name, kernel::Sched policy, int prio, int cpu,
                               std::function<void()> body, bool start) {
    Task *t = make_task({std::move(name), policy, prio, cpu, false}, std::move(body));
    t->daemon = true;
    --live_;
    t->state = TaskState::Blocked;
    if (start) wake(t, -1, 0);
    return t;
}

void SimPlatform::start_irq_threads() {
    auto daemon = [this](std::string name, kernel::Sched policy, int prio, int cpu,
                         std::function<void()> body, bool start = true) {
        return make_daemon(std::move(name), policy, prio, cpu, std::move(body), start);
    };
    auto softirq_task = [&](Cpu &c, bool start) {
        if (c.softirq_task) return;
        Task *s = daemon(
            fmt::format("softirq/{}", c.id), kernel::Sched::Fifo, 99, c.id,
            [this, &c] { softirq_task_body(c); }, start);
        s->rank = s->normal_rank = kIrqContextRank;  // above every task
        s->irq_context = true;
        s->irq_idle = !start;
        c.softirq_task = s;
    };
    for (Cpu &c : cpus_) {
        c.thread_raised.assign(cfg_.irqs.size(), 0);
        c.irq_threads.assign(cfg_.irqs.size(), nullptr);
        for (size_t i = 0; i < cfg_.irqs.size(); ++i) {
            const IrqSource &src = cfg_.irqs[i];
            if (!src.hits(c.id)) continue;
            switch (softirq_where(src, cfg_.preempt)) {
                case SoftirqWhere::IrqThread:
                    c.irq_threads[i] =
                        daemon(fmt::format("irq/{}-{}/{}", i, src.kind, c.id), kernel::Sched::Fifo,
                               src.thread_priority, c.id, [this, &c, i] { irq_thread_body(c, i); });
                    break;
                case SoftirqWhere::Ksoftirqd:
                    start_ksoftirqd(c);
                    break;
                case SoftirqWhere::SoftirqTask:
                    softirq_task(c, true);
                    break;
                case SoftirqWhere::Inline:
                    break;
            }
        }
        // RCU_SOFTIRQ (rcu.h), where no interrupt source made the softirq task: it first
        // runs when the softirq is raised (enter_softirq).
        if (rcu_.callback_context() == RcuState::CallbackContext::Softirq) softirq_task(c, false);
    }
}

void SimPlatform::wake_irq_thread(Task *t, int cpu) {
    if (!t || !t->irq_idle) return;
    t->irq_idle = false;
    wake(t, cpu, 0);
}

// The current interrupt thread sleeps until an interrupt has work for it.
void SimPlatform::irq_thread_wait() {
    cur_->irq_idle = true;
    block_current();
}

// One interrupt's softirq work: its time, then its code.
void SimPlatform::softirq_work(Cpu &c, const IrqSource &src) {
    if (recording()) c.stats.softirq_ns += src.softirq;
    advance(src.softirq, kUnpriced);
    if (src.work) src.work();
}

// irq_thread_fn under PREEMPT_RT: the handler with softirqs disabled, so that the softirq work it
// raises runs at its local_bh_enable, in the thread.
void SimPlatform::irq_thread_body(Cpu &c, size_t source) {
    static const Site bh{"irq_forced_thread_fn", {}};
    const IrqSource &src = cfg_.irqs[source];
    while (true) {
        while (c.thread_raised[source] == 0)
            irq_thread_wait();
        --c.thread_raised[source];
        local_bh_disable(bh);
        if (recording()) c.stats.irq_ns += src.handler;
        advance(src.handler, kUnpriced);
        softirq_work(c, src);
        local_bh_enable(bh);
    }
}

void SimPlatform::start_ksoftirqd(Cpu &c) {
    if (!c.ksoftirqd)
        c.ksoftirqd = make_daemon(
            fmt::format("ksoftirqd/{}", c.id), kernel::Sched::Other, 0, c.id,
            [this, &c] { ksoftirqd_body(c); }, true);
}

void SimPlatform::ksoftirqd_body(Cpu &c) {
    static const Site bh{"run_ksoftirqd", {}};
    while (true) {
        while (c.ksoftirqd_raised.empty() && !c.ksoftirqd_rcu)
            irq_thread_wait();
        local_bh_disable(bh);
        if (!c.ksoftirqd_raised.empty()) {
            softirq_work(c, cfg_.irqs[take_first(c.ksoftirqd_raised)]);
        } else {
            c.ksoftirqd_rcu = false;
            rcu_softirq(c, false);
        }
        local_bh_enable(bh);
    }
}

// Without PREEMPT_RT: the softirq task runs raised work at irq exit (or at the local_bh_enable
// that ends a softirq-disabled section) on top of the task it interrupts, which keeps its CPU,
// preempt count and sections, and goes on when the work is done: no context switch, no
// quiescent state, and the interrupted task cannot be moved meanwhile. The softirq count is
// held throughout (a preempt-off section of the softirq task); a reader of a queued rwlock in
// this context does not queue behind a waiting writer (lock_table.h). Simplified: a task spinning
// for a lock is interrupted like any other, and a softirq task that sleeps (reported as
// sleeping in atomic context) keeps the task it interrupted waiting until it is done.
void SimPlatform::softirq_task_body(Cpu &c) {
    static const Site site{"__do_softirq", {}};
    Task *s = cur_;
    while (true) {
        while (softirq_pending(c)) {
            if (!c.softirq_raised.empty()) {
                softirq_work(c, cfg_.irqs[take_first(c.softirq_raised)]);
                continue;
            }
            c.rcu_softirq = false;
            rcu_softirq(c, !c.interrupted);
        }
        if (s->preempt_count > 0) {
            --s->preempt_count;
            close_section(s, s->poff, false, site);
            rcu_.deferred_qs(s);
        }
        s->irq_idle = true;
        s->state = TaskState::Blocked;
        if (Task *back = std::exchange(c.interrupted, nullptr)) {
            resume_interrupted(c, back);
        } else {
            c.curr = nullptr;
            schedule(c);
        }
        suspend_current();
    }
}

// RCU_SOFTIRQ as __do_softirq runs it (kernel/softirq.c, v6.6): rcu_core, restarted while
// callbacks are still ready, up to MAX_SOFTIRQ_RESTART (10) passes, within MAX_SOFTIRQ_TIME
// (msecs_to_jiffies(2): until that many jiffy boundaries passed) and while nothing needs the
// CPU; what is left goes to ksoftirqd (wakeup_softirqd). `idle`: it interrupted the idle task.
// Its time counts as softirq time (the time that passed, less the interrupt work that
// interrupted it meanwhile).
void SimPlatform::rcu_softirq(Cpu &c, bool idle) {
    constexpr int kMaxRestart = 10;
    // Named as the kernel's function: the section it runs in, and an operation of its own.
    static const Label kRcuCore("rcu_core");
    if (cur_ && cur_->poff.label.empty()) cur_->poff.label = kRcuCore;
    kernel::OpScope op(kRcuCore);
    const Time start = engine_.now();
    const Time irq_before = c.stats.irq_ns + c.stats.softirq_ns;
    const Time end_jiffy =
        start / jiffy_ + std::max<Time>(1, (2 * kernel::kMsec + jiffy_ - 1) / jiffy_);
    bool more = false;
    for (int restart = kMaxRestart; restart > 0; --restart) {
        more = rcu_.softirq_callbacks(c.id, idle);
        if (!more || engine_.now() / jiffy_ >= end_jiffy || need_resched(c.id)) break;
    }
    if (recording()) {
        const Time other = c.stats.irq_ns + c.stats.softirq_ns - irq_before;
        c.stats.softirq_ns += std::max<Time>(0, engine_.now() - start - std::max<Time>(0, other));
    }
    if (more) {
        c.ksoftirqd_rcu = true;
        start_ksoftirqd(c);
        wake_irq_thread(c.ksoftirqd, c.id);
    }
    stop_if_done();
}

// need_resched() as softirq context sees it: set, or a task woken meanwhile would preempt the
// task the softirq interrupted (any task preempts the idle one; among SCHED_OTHER tasks the
// wake-up granularity is not weighed here).
bool SimPlatform::need_resched(int cpu) {
    Cpu &c = cpus_[static_cast<size_t>(cpu)];
    if (c.need_resched) return true;
    if (!c.curr || c.curr != c.softirq_task) return false;
    const Task *b = best_queued(c);
    return b && (!c.interrupted || b->rank > c.interrupted->rank);
}

// Starts the softirq task on `c` when work is raised and the running task allows it (interrupts
// on, softirqs not disabled). Returns true when it interrupted the current task (which must then
// suspend itself).
bool SimPlatform::enter_softirq(Cpu &c) {
    static const Site site{"__do_softirq", {}};
    Task *s = c.softirq_task;
    Task *t = c.curr;
    if (!s || !s->irq_idle || !softirq_pending(c) || t == s) return false;
    if (t && (t->irqs_off || t->bh_disabled > 0)) return false;
    s->irq_idle = false;
    preempt_inc(s, site);
    if (!t) {
        wake(s, c.id, 0);
        return false;
    }
    const Time now = engine_.now();
    if (probes_waiting_ > 0) note_probe_waits(c, s);
    const bool executing = c.act == Act::Executing;
    if (c.act == Act::Span || c.act == Act::Switching)
        t->remaining += std::max<Time>(0, c.act_end - now);
    c.interrupted_spinning = c.act == Act::Spinning;
    update_curr(c);
    c.interrupted = t;
    c.interrupted_at = now;
    c.curr = c.last = s;
    s->state = TaskState::Running;
    s->cpu = c.id;
    s->exec_start = now;
    trace_event("cpu{} softirq interrupts {}", c.id, t->params.name);
    if (recorder_) recorder_->cpu_switch(c.id, now, s->id, s->params.name);
    start_act(c, Act::Switching, 0);
    return executing;
}

void SimPlatform::resume_interrupted(Cpu &c, Task *t) {
    const Time now = engine_.now();
    if (probes_waiting_ > 0) note_probe_waits(c, t);
    if (t->params.probe && t->probe_due >= 0)  // softirq work held off its switch-in
        note_delay(t, c.curr, c, c.interrupted_at, now);
    c.curr = c.last = t;
    t->exec_start = now;
    trace_event("cpu{} back to {}", c.id, t->params.name);
    if (recorder_) recorder_->cpu_switch(c.id, now, t->id, t->params.name);
    if (std::exchange(c.interrupted_spinning, false)) {
        c.act = Act::Spinning;
        ++c.gen;
    } else {
        start_act(c, Act::Span, std::exchange(t->remaining, 0));
    }
    // The irq return is a preemption point for what woke meanwhile.
    if (Task *b = best_queued(c); b && wakeup_preempts(c, b)) request_resched(c, c.id);
}

}  // namespace locksim::sim
