// Tasks, CPUs and the scheduler of the simulated platform: tasks, run queues, wake-up and
// preemption, sleep, ticks and timer interrupts. CFS is in fair.cpp, the preemption and
// interrupt state and the interrupt load in irq.cpp, the run loop and the engine's glue in
// run_loop.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "sim/sim_platform.h"
#include "ss/te_rules_memo.h"
#include "util/error.h"

namespace locksim::sim {

namespace {
constexpr int kTaskBits = 24;

// kernel/sched/topology.c (v6.5), sd_init: busy_factor.
constexpr int kBusyFactor = 16;

int ilog2(int v) {
    int r = 0;
    while (v >>= 1)
        ++r;
    return r;
}
}  // namespace

// The scenario's loader checks these settings for users (scenario/scenario.h); here only a
// configuration built in code can be wrong, which is the program's error.
SimConfig SimPlatform::checked(SimConfig cfg) {
    if (cfg.cpus < 1 || cfg.cpus > 4096 || cfg.hz < 10 || cfg.hz > 10000 || cfg.duration <= 0)
        throw std::invalid_argument(fmt::format(
            "SimConfig out of range: cpus {} (1-4096), hz {} (10-10000), duration {} (> 0)",
            cfg.cpus, cfg.hz, cfg.duration));
    if (!cfg.profile.clusters.empty() && cfg.cpus > cfg.profile.cluster_cpus())
        throw std::invalid_argument(
            fmt::format("SimConfig out of range: profile '{}' has {} CPUs in its clusters, the "
                        "machine {}",
                        cfg.profile.name, cfg.profile.cluster_cpus(), cfg.cpus));
    std::vector<double> irq_share(static_cast<size_t>(cfg.cpus), 0.0);
    for (const IrqSource &src : cfg.irqs) {
        bool ok = src.rate >= 1 && src.rate <= kernel::kSec && src.handler >= 0 &&
                  src.softirq >= 0 && src.jitter >= 0 && src.jitter < src.period();
        for (int c : src.cpus)
            ok = ok && c >= 0 && c < cfg.cpus;
        for (int c = 0; ok && c < cfg.cpus; ++c)
            if (src.hits(c)) {
                // The interrupt work must leave the CPU some time.
                double &share = irq_share[static_cast<size_t>(c)];
                share += static_cast<double>(src.handler + src.softirq) /
                         static_cast<double>(src.period());
                ok = share < 1.0 - 1e-12;
            }
        if (!ok)
            throw std::invalid_argument(fmt::format(
                "SimConfig irq '{}' out of range: rate {} (1-1e9 per second), costs not "
                "negative, jitter below the period, CPUs on the machine, the sources' work "
                "shorter than each CPU's time",
                src.kind, src.rate));
    }
    return cfg;
}

SimPlatform::SimPlatform(SimConfig cfg) : cfg_(checked(std::move(cfg))) {
    // get_update_sysctl_factor, SCHED_TUNABLESCALING_LOG.
    const Time factor = 1 + ilog2(std::min(cfg_.cpus, 8));
    latency_ = cfg_.sched_latency * factor;
    min_gran_ = cfg_.sched_min_granularity * factor;
    wakeup_gran_ = cfg_.sched_wakeup_granularity * factor;
    cpus_.resize(static_cast<size_t>(cfg_.cpus));
    for (int i = 0; i < cfg_.cpus; ++i) {
        cpus_[static_cast<size_t>(i)].id = i;
        cpus_[static_cast<size_t>(i)].balance_interval_ms = cfg_.cpus;  // sd_weight ms
    }
    preempt_off_.keep = irqs_off_.keep = cfg_.keep_longest;
    const CpuProfile &prof = cfg_.profile;
    for (int i = 0; i < cfg_.cpus; ++i) {
        const CpuCluster *c = prof.cluster_of(i);
        speed_ppm_.push_back(c ? std::max<int64_t>(1, std::llround(c->speed * 1e6)) : 1'000'000);
    }
    if (cfg_.cost_model == CostModel::Counted && prof.memory.private_kib > 0) {
        std::vector<int64_t> private_lines;
        for (int i = 0; i < cfg_.cpus; ++i) {
            const CpuCluster *c = prof.cluster_of(i);
            private_lines.push_back(c ? c->private_kib * 1024 / prof.memory.line_bytes : 0);
        }
        caches_.emplace(prof.memory.latency(), private_lines);
    }
}

SimPlatform::~SimPlatform() {
    teardown();
}

// ---------------------------------------------------------------- tasks

void SimPlatform::create_task(kernel::TaskParams params, std::function<void()> body) {
    Task *tp = make_task(std::move(params), std::move(body));
    if (started_ && !teardown_) {
        tp->state = TaskState::Blocked;
        wake(tp, cur_ ? cur_->cpu : -1, 0);
        if (cur_) maybe_preempt();
    }
}

Task *SimPlatform::make_task(kernel::TaskParams params, std::function<void()> body) {
    if (params.cpu >= cfg_.cpus)
        throw UserError(fmt::format("task '{}' pinned to CPU {} but the machine has {} CPUs",
                                    params.name, params.cpu, cfg_.cpus));
    const bool rt = params.policy != kernel::Sched::Other;
    if (rt && (params.priority < 1 || params.priority > 99))
        throw UserError(
            fmt::format("task '{}': SCHED_FIFO / SCHED_RR priority must be 1..99", params.name));
    if (params.nice < -20 || params.nice > 19)
        throw UserError(fmt::format("task '{}': nice must be -20..19", params.name));
    for (int c : params.cpus)
        if (c < 0 || c >= cfg_.cpus)
            throw UserError(fmt::format("task '{}' may run on CPU {} but the machine has {} CPUs",
                                        params.name, c, cfg_.cpus));
    if (tasks_.size() >= (size_t{1} << kTaskBits)) throw UserError("too many tasks");
    auto t = std::make_unique<Task>();
    Task *tp = t.get();
    t->id = static_cast<int>(tasks_.size());
    t->rank = rt ? params.priority : 0;
    t->normal_rank = t->rank;
    t->weight = nice_weight(params.nice);
    t->rr_ticks = rr_timeslice_ticks();
    t->params = std::move(params);
    std::seed_seq seq{static_cast<uint32_t>(cfg_.seed), static_cast<uint32_t>(cfg_.seed >> 32),
                      static_cast<uint32_t>(t->id)};
    t->rng.seed(seq);
    t->fiber = std::make_unique<Fiber>(
        [this, tp, body = std::move(body)] {
            body();
            task_exit(tp);
            cur_ = nullptr;
        },
        cfg_.stack_size);
    tasks_.push_back(std::move(t));
    ++live_;
    return tp;
}

Task *SimPlatform::create_kthread(kernel::TaskParams params, std::function<void()> body) {
    create_task(std::move(params), std::move(body));
    return tasks_.back().get();
}

void SimPlatform::task_exit(Task *t) {
    if (teardown_) return;
    for (const HeldLock &h : t->held)
        violation("lock_held_at_exit", fmt::format("task {} exited holding {} (taken at {})",
                                                   t->params.name, h.lock->name, h.site.str()));
    if (t->preempt_count > 0)
        violation("preempt_count_at_exit", fmt::format("task {} exited with preempt count {}",
                                                       t->params.name, t->preempt_count));
    if (t->irqs_off)
        violation("irqs_off_at_exit",
                  fmt::format("task {} exited with interrupts off", t->params.name));
    if (t->rcu_nesting > 0)
        violation("rcu_read_lock_at_exit",
                  fmt::format("task {} exited inside an RCU read section", t->params.name));
    Site exit_site{"task exit", {}};
    if (t->preempt_count > 0) close_section(t, t->poff, false, exit_site);
    if (t->irqs_off) close_section(t, t->ioff, true, exit_site);
    trace_event("exit {}", t->params.name);
    t->state = TaskState::Dead;
    Cpu &c = cpu_of(t);
    c.curr = nullptr;
    --live_;
    if (t->rcu_nesting > 0) rcu_.reader_exits(t);
    schedule(c);
    stop_if_done();
}

void SimPlatform::stop_if_done() {
    if (live_ == 0 && stop_ && !rcu_.callbacks_pending()) engine_.stop();
}

int SimPlatform::smp_processor_id() {
    return cur_ ? cur_->cpu : 0;
}

kernel::TaskInfo SimPlatform::current_task() {
    if (!cur_) return {};
    return {cur_->id, cur_->params.name};
}

uint64_t SimPlatform::get_random_u64() {
    if (!cur_) throw std::logic_error("get_random_u64 outside a task");
    return cur_->rng();
}

// ---------------------------------------------------------------- scheduling

bool SimPlatform::preemptible(const Task *t) const {
    return t->preempt_count == 0 && !t->irqs_off &&
           (fully_preemptible(cfg_.preempt) || t->ops.empty());
}

void SimPlatform::go_idle(Cpu &c) {
    if (c.act != Act::Idle) {
        c.stats.busy_ns += engine_.now() - c.busy_since;
        c.idle_since = engine_.now();
    }
    c.curr = nullptr;
    c.last = nullptr;
    c.act = Act::Idle;
    ++c.gen;
    if (recorder_) recorder_->cpu_switch(c.id, engine_.now(), -1, {});
}

void SimPlatform::enqueue(Cpu &c, Task *t, bool head) {
    t->rq_key = head ? --head_key_ : ++tail_key_;
    t->cpu = c.id;
    c.rq.push_back(t);
    ++queued_;
}

Task *SimPlatform::best_queued(const Cpu &c) const {
    Task *best = nullptr;
    for (Task *q : c.rq) {
        if (!best || q->rank > best->rank) {
            best = q;
        } else if (q->rank == best->rank) {
            // Real-time: queue order. CFS: the smallest virtual runtime (leftmost).
            bool first = q->rank > 0 || q->vruntime == best->vruntime
                             ? q->rq_key < best->rq_key
                             : q->vruntime < best->vruntime;
            if (first) best = q;
        }
    }
    return best;
}

bool SimPlatform::should_yield(Cpu &c, Task *t) {
    update_curr(c);  // its run time so far counts, whether it goes or stays
    const Task *best = best_queued(c);
    if (t->rank == 0 && (!best || best->rank == 0)) {
        // CFS: the current task goes back into the tree behind its equals and the leftmost runs.
        if (best && best->vruntime <= t->vruntime) return true;
        t->prev_sum_exec = t->sum_exec;  // picked again: a new turn
        return false;
    }
    if (!best) return false;
    return best->rank > t->rank || (c.resched_tail && best->rank == t->rank);
}

bool SimPlatform::allowed(const Task *t, int cpu) const {
    if (t->params.cpu >= 0) return cpu == t->params.cpu;
    const auto &list = t->params.cpus;
    return list.empty() || std::find(list.begin(), list.end(), cpu) != list.end();
}

// A queued task changes run queue; a SCHED_OTHER task keeps its lag to min_vruntime (the
// kernel's vruntime normalisation on migration).
void SimPlatform::move_task(Task *t, Cpu &from, Cpu &to) {
    if (t->wait_since >= 0) {  // a probe that waited there until now
        note_delay(t, from.curr, from, t->wait_since, engine_.now());
        t->wait_since = engine_.now();
    }
    from.rq.erase(std::find(from.rq.begin(), from.rq.end(), t));
    to.rq.push_back(t);
    t->cpu = to.id;
    if (t->rank == 0) t->vruntime += to.min_vruntime - from.min_vruntime;
}

void SimPlatform::switch_in(Cpu &c, Task *next, Time extra) {
    if (probes_waiting_ > 0) note_probe_waits(c, next);
    c.rq.erase(std::find(c.rq.begin(), c.rq.end(), next));
    --queued_;
    bool was_idle = c.act == Act::Idle;
    if (was_idle) {
        c.busy_since = engine_.now();
        c.idle_total += engine_.now() - c.idle_since;
    }
    c.curr = next;
    c.last = next;
    next->state = TaskState::Running;
    next->cpu = c.id;
    next->exec_start = engine_.now();
    next->prev_sum_exec = next->sum_exec;
    Time wake_extra = std::exchange(next->wake_extra, 0);
    c.need_resched = false;
    c.resched_tail = false;
    ++c.stats.context_switches;
    rcu_.report_qs(c.id);  // a context switch is a quiescent state
    trace_event("cpu{} switch to {}", c.id, next->params.name);
    if (recorder_) recorder_->cpu_switch(c.id, engine_.now(), next->id, next->params.name);
    Time cost = cfg_.profile.primitive.context_switch + extra + wake_extra +
                (was_idle ? cfg_.profile.primitive.idle_exit : 0);
    const Time own_irq = next->own_irq_cpu == c.id ? next->own_irq_ns : 0;
    next->own_irq_ns = 0;
    if (next->params.probe && next->probe_due >= 0 && c.irq_until > engine_.now())
        note_irq_delay(next, c, engine_.now(), c.irq_until - engine_.now() - own_irq);
    start_act(c, Act::Switching, cost);
}

void SimPlatform::schedule(Cpu &c) {
    if (Task *next = best_queued(c)) {
        switch_in(c, next, 0);
        return;
    }
    // Idle: pull the best queued task another CPU has waiting that may run here.
    Task *pulled = nullptr;
    for (size_t i = 0; queued_ > 0 && i < cpus_.size(); ++i)
        for (Task *q : cpus_[i].rq)
            if (allowed(q, c.id) && (!pulled || q->rank > pulled->rank ||
                                     (q->rank == pulled->rank && q->rq_key < pulled->rq_key)))
                pulled = q;
    if (pulled) {
        move_task(pulled, cpus_[static_cast<size_t>(pulled->cpu)], c);
        switch_in(c, pulled, 0);
        return;
    }
    go_idle(c);
    rcu_.report_qs(c.id);  // idle is an extended quiescent state
}

int SimPlatform::select_cpu(const Task *t) const {
    if (t->params.cpu >= 0) return t->params.cpu;
    const bool last_ok = t->cpu >= 0 && allowed(t, t->cpu);
    if (last_ok && !cpus_[static_cast<size_t>(t->cpu)].curr) return t->cpu;
    for (const Cpu &c : cpus_)
        if (!c.curr && allowed(t, c.id)) return c.id;
    if (t->rank > 0) {
        int best = -1;
        int best_rank = t->rank;
        for (const Cpu &c : cpus_) {
            if (!allowed(t, c.id)) continue;
            int r = c.curr->rank;
            if (r < best_rank || (r == best_rank && best >= 0 && c.id == t->cpu)) {
                best = c.id;
                best_rank = r;
            }
        }
        if (best >= 0) return best;
    }
    if (last_ok) return t->cpu;
    int best = -1;
    for (const Cpu &c : cpus_)
        if (allowed(t, c.id) &&
            (best < 0 || c.rq.size() < cpus_[static_cast<size_t>(best)].rq.size()))
            best = c.id;
    return best;
}

void SimPlatform::wake(Task *t, int from_cpu, Time extra) {
    if (t->state != TaskState::Blocked && t->state != TaskState::New) return;
    int target = select_cpu(t);
    Cpu &c = cpus_[static_cast<size_t>(target)];
    if (t->rank == 0) {
        if (t->cpu >= 0 && t->cpu != target)
            t->vruntime += c.min_vruntime - cpus_[static_cast<size_t>(t->cpu)].min_vruntime;
        place_entity(c, t);
    }
    t->state = TaskState::Runnable;
    enqueue(c, t, false);
    trace_event("wake {} on cpu{}", t->params.name, target);
    bool remote = from_cpu >= 0 && from_cpu != target;
    t->wake_extra = extra;
    if (c.curr && t->params.probe && t->probe_due >= 0 && t->wait_since < 0) {
        t->wait_since = engine_.now();  // until it is switched in (note_probe_waits)
        ++probes_waiting_;
    }
    if (!c.curr) {
        switch_in(c, t, remote ? cfg_.profile.primitive.ipi : 0);
        return;
    }
    if (wakeup_preempts(c, t)) request_resched(c, from_cpu);
}

void SimPlatform::request_resched(Cpu &c, int from_cpu) {
    c.need_resched = true;
    if (c.act == Act::Executing) return;  // the running task checks at its next preemption point
    if (from_cpu >= 0 && from_cpu != c.id) {
        engine_.schedule(engine_.now() + cfg_.profile.primitive.ipi, on_resched_ipi, this,
                         static_cast<uint64_t>(c.id));
        return;
    }
    try_preempt(c);
}

void SimPlatform::on_resched_ipi(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    p->try_preempt(p->cpus_[arg]);  // with interrupts off, re-checked when they come back on
}

void SimPlatform::try_preempt(Cpu &c) {
    Task *t = c.curr;
    if (!c.need_resched || !t) return;
    // During interrupt work the irq return is the preemption point (on_irq_end).
    if (engine_.now() < c.irq_until) {
        irq_exit_needed(c);
        return;
    }
    if (c.act != Act::Span || !preemptible(t) || !should_yield(c, t)) return;
    t->remaining = c.act_end - engine_.now();
    t->state = TaskState::Runnable;
    bool tail = c.resched_tail;
    c.curr = nullptr;
    enqueue(c, t, !tail);
    trace_event("cpu{} preempt {}", c.id, t->params.name);
    switch_in(c, best_queued(c), 0);
}

void SimPlatform::preempt_self() {
    Task *t = cur_;
    Cpu &c = cpu_of(t);
    if (!should_yield(c, t)) {
        c.need_resched = false;
        c.resched_tail = false;
        return;
    }
    bool tail = c.resched_tail;
    t->state = TaskState::Runnable;
    c.curr = nullptr;
    enqueue(c, t, !tail);
    trace_event("cpu{} preempt {}", c.id, t->params.name);
    switch_in(c, best_queued(c), 0);
    suspend_current();
}

// rt_mutex_setprio: a runnable task that now outranks the task running on its CPU preempts
// it; a running one that no longer outranks a queued task yields at its next preemption point.
void SimPlatform::set_prio(Task *t, int rank) {
    // The probes waiting behind a running task were held by it at its old priority until now.
    if (probes_waiting_ > 0 && t->state == TaskState::Running && cpu_of(t).curr == t)
        note_probe_waits(cpu_of(t), nullptr);
    t->rank = rank;
    const int from = cur_ ? cur_->cpu : -1;
    Cpu &c = cpu_of(t);
    if (t->state == TaskState::Runnable ? c.curr && rank > c.curr->rank
                                        : t->state == TaskState::Running && should_yield(c, t))
        request_resched(c, from);
}

void SimPlatform::maybe_preempt() {
    Task *t = cur_;
    if (t && !teardown_ && cpu_of(t).need_resched && preemptible(t)) preempt_self();
}

void SimPlatform::block_current() {
    Task *t = cur_;
    Cpu &c = cpu_of(t);
    update_curr(c);
    t->state = TaskState::Blocked;
    Site sw{"schedule", {}};
    // A task that sleeps in an atomic section (reported) leaves that section on this CPU.
    if (t->preempt_count > 0) close_section(t, t->poff, false, sw);
    if (t->irqs_off) close_section(t, t->ioff, true, sw);
    c.curr = nullptr;
    schedule(c);
    suspend_current();
    Time now = engine_.now();
    if (t->preempt_count > 0) t->poff.start = now;
    if (t->irqs_off) t->ioff.start = now;
    if (cfg_.record_priced) t->poff_priced_at = t->ioff_priced_at = t->priced;
}

void SimPlatform::advance(Time ns, PriceFamily family) {
    maybe_preempt();
    if (ns <= 0 || teardown_) return;
    if (family != kUnpriced) cur_->priced[static_cast<size_t>(family)] += ns;
    Time end = engine_.now() + ns;
    if (engine_.next_time() > end && cpu_of(cur_).irq_until <= engine_.now()) {
        engine_.advance_to(end);  // nothing can happen meanwhile: no event, no switch
        return;
    }
    start_act(cpu_of(cur_), Act::Span, ns);
    suspend_current();
}

void SimPlatform::might_sleep(Site site) {
    Task *t = cur_;
    if (t && (t->preempt_count > 0 || t->irqs_off || t->rcu_nesting > 0))
        violation("sleep_in_atomic",
                  fmt::format("sleeping function called from invalid context: {} in {} "
                              "(preempt count {}, irqs {}, rcu nesting {})",
                              site.str(), t->params.name, t->preempt_count,
                              t->irqs_off ? "off" : "on", t->rcu_nesting));
    else if (cfg_.preempt == PreemptModel::Voluntary)
        cond_resched(site);  // might_resched: a preemption point under PREEMPT_VOLUNTARY
}

void SimPlatform::sleep_until(Time t_abs, Site site) {
    Task *t = cur_;
    if (!t) throw std::logic_error("sleep outside a task");
    might_sleep(site);
    Time expected = t_abs;
    if (t->params.probe) {
        t->probe_due = expected;
        t->delays.clear();
    }
    if (t_abs > engine_.now()) {
        ++t->timer_gen;
        t->timer_cpu = t->cpu;
        engine_.schedule(t_abs, on_timer, this,
                         (t->timer_gen << kTaskBits) | static_cast<uint64_t>(t->id));
        trace_event("{} sleeps until {}", t->params.name, t_abs);
        t->timer_sleep = true;
        block_current();
        t->timer_sleep = false;
    } else {
        maybe_preempt();  // an overdue target returns at once (and counts, as in cyclictest)
        if (t->params.probe && engine_.now() > expected)  // the probe itself was still late
            t->delays.push_back(DelayNote{.kind = DelayKind::Overdue,
                                          .cpu = t->cpu,
                                          .holder = t,
                                          .start = expected,
                                          .length = engine_.now() - expected,
                                          .delayed_ns = engine_.now() - expected});
    }
    t->probe_due = -1;
    // A wake-up due after the duration is new work: not counted.
    if (t->params.probe && recording() && expected <= cfg_.duration) {
        Time late = engine_.now() - expected;
        wakeup_[t->params.name].record(late);
        trace_event("{} woke {} ns late", t->params.name, late);
        finish_wakeup(t, expected, late, false);
        stop_if_over("probe_wakeup.max_ns", late, cfg_.stop_over.wakeup);
    }
    t->delays.clear();
}

void SimPlatform::on_timer(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Task *t = p->tasks_[arg & ((uint64_t{1} << kTaskBits) - 1)].get();
    if ((arg >> kTaskBits) != t->timer_gen || t->state != TaskState::Blocked) return;
    Cpu &c = p->cpus_[static_cast<size_t>(t->timer_cpu)];
    if (c.curr && c.curr->irqs_off) {
        c.pending_timers.push_back(t);  // the interrupt waits for local_irq_enable
        if (t->params.probe) t->timer_held_by = c.curr;
        return;
    }
    p->timer_fire(t, c);
}

// The hrtimer interrupt takes its time from whatever it interrupts (a running task's span, and
// with it any section that task has open, as ftrace counts it), then wakes the sleeper, which
// runs once the interrupt has returned.
void SimPlatform::timer_fire(Task *t, Cpu &c) {
    if (t->state != TaskState::Blocked) return;
    if (t->timer_held_by) note_timer_held(t, t->probe_due);
    const Time irq = cfg_.profile.primitive.timer_irq;
    if (!c.curr) {
        // An idle CPU: the interrupt only holds back the switch-in it leads to.
        if (recording()) c.stats.irq_ns += irq;
        note_held(c, engine_.now(), engine_.now() + irq);
        wake(t, c.id, irq);
        return;
    }
    if (irq > 0) {
        take_irq_time(c, irq, 0, false);
        t->own_irq_ns = irq;  // its own interrupt is not a delay caused by another
        t->own_irq_cpu = c.id;
    }
    wake(t, c.id, 0);
}

void SimPlatform::cond_resched(Site) {
    Task *t = cur_;
    if (t && cpu_of(t).need_resched && t->preempt_count == 0 && !t->irqs_off) preempt_self();
}

void SimPlatform::on_tick(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Cpu &c = p->cpus_[arg];
    p->engine_.schedule(p->engine_.now() + p->jiffy_, on_tick, self, arg);
    if (c.curr && c.curr->irqs_off) {
        c.tick_pending = true;
        return;
    }
    p->tick(c);
}

// The tick (tick_sched_timer) on a busy CPU takes its interrupt's time from the running task,
// inside whatever section it has open. An idle CPU's tick is stopped (NO_HZ_IDLE) and costs
// nothing; the RCU and balancing work it stands for still happens.
void SimPlatform::tick(Cpu &c) {
    rcu_.interrupt(c.id);
    const bool callbacks = rcu_.tick_callbacks(c.id);
    if (callbacks) c.rcu_softirq = true;  // runs at this interrupt's exit
    const Time cost = c.curr ? cfg_.profile.primitive.tick_irq : 0;
    if (cost > 0 || callbacks) take_irq_time(c, cost, 0, false);
    Task *t = c.curr;
    if (t) {
        update_curr(c);
        if (t->rank == 0)
            check_preempt_tick(c);
        else if (t->params.policy == kernel::Sched::Rr)
            task_tick_rr(c);
    }
    // rebalance_domains with get_sd_balance_interval(sd, busy), v6.5: the domain's interval
    // (sd_weight ms, doubled while balanced up to twice that), busy_factor times that on a busy
    // CPU, in jiffies rounded up (msecs_to_jiffies), one less when busy, at least one and at
    // most HZ * CPUs / 10 (max_load_balance_interval). It is that of the CPU's state at each
    // check, so a CPU gone idle after a busy balancing balances at the idle interval.
    const int64_t min_ms = cfg_.cpus;
    const bool busy = c.curr != nullptr;
    const Time ms = c.balance_interval_ms * (busy ? kBusyFactor : 1);
    int64_t interval = (ms * kernel::kMsec + jiffy_ - 1) / jiffy_;
    if (busy) --interval;
    interval = std::clamp<int64_t>(interval, 1, std::max<int64_t>(1, cfg_.hz * cfg_.cpus / 10));
    const auto now_tick = static_cast<int64_t>(++c.ticks);
    if (now_tick - c.last_balance >= interval) {
        c.last_balance = now_tick;
        // A move resets the interval to the minimum; a balanced pass doubles it.
        if (load_balance(c))
            c.balance_interval_ms = min_ms;
        else if (c.balance_interval_ms < 2 * min_ms)
            c.balance_interval_ms *= 2;
    }
}

void SimPlatform::on_warmup_end(void *self, uint64_t) {
    auto *p = static_cast<SimPlatform *>(self);
    p->trace_event("warmup end");
    p->reset_stats();
}

void SimPlatform::on_stop(void *self, uint64_t) {
    auto *p = static_cast<SimPlatform *>(self);
    p->stop_ = true;
    p->trace_event("stop");
    p->rcu_.kick_callback_task();
    p->stop_if_done();
}

}  // namespace locksim::sim
