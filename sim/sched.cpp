// Tasks, CPUs and the scheduler of the simulated platform: fibers, spans, preemption, sleep,
// ticks, timer interrupts, and the run loop.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "sim/sim_platform.h"
#include "ss/te_rules_memo.h"
#include "util/error.h"

namespace locksim::sim {

namespace {
constexpr int kCpuBits = 16;
constexpr int kTaskBits = 24;
}  // namespace

SimConfig SimPlatform::checked(SimConfig cfg) {
    if (cfg.cpus < 1 || cfg.cpus > 4096)
        throw UserError(fmt::format("cpus must be between 1 and 4096, not {}", cfg.cpus));
    if (cfg.hz < 10 || cfg.hz > 10000)
        throw UserError(fmt::format("hz must be between 10 and 10000, not {}", cfg.hz));
    if (cfg.duration <= 0) throw UserError("duration must be positive");
    return cfg;
}

SimPlatform::SimPlatform(SimConfig cfg) : cfg_(checked(std::move(cfg))) {
    cpus_.resize(static_cast<size_t>(cfg_.cpus));
    for (int i = 0; i < cfg_.cpus; ++i)
        cpus_[static_cast<size_t>(i)].id = i;
    preempt_off_.keep = irqs_off_.keep = cfg_.keep_longest;
    const CpuProfile &prof = cfg_.profile;
    if (!prof.clusters.empty() && cfg_.cpus > prof.cluster_cpus())
        throw UserError(fmt::format("profile '{}' has {} CPUs in its clusters, the machine {}",
                                    prof.name, prof.cluster_cpus(), cfg_.cpus));
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
    if (params.cpu >= cfg_.cpus)
        throw UserError(fmt::format("task '{}' pinned to CPU {} but the machine has {} CPUs",
                                    params.name, params.cpu, cfg_.cpus));
    if (params.policy == kernel::Sched::Fifo && (params.priority < 1 || params.priority > 99))
        throw UserError(fmt::format("task '{}': SCHED_FIFO priority must be 1..99", params.name));
    if (tasks_.size() >= (size_t{1} << kTaskBits)) throw UserError("too many tasks");
    auto t = std::make_unique<Task>();
    Task *tp = t.get();
    t->id = static_cast<int>(tasks_.size());
    t->rank = params.policy == kernel::Sched::Fifo ? params.priority : 0;
    t->params = std::move(params);
    std::seed_seq seq{static_cast<uint32_t>(cfg_.seed), static_cast<uint32_t>(cfg_.seed >> 32),
                      static_cast<uint32_t>(t->id)};
    t->rng.seed(seq);
    t->fiber = std::make_unique<Fiber>(
        [this, tp, body = std::move(body)] {
            body();
            task_exit(tp);
        },
        cfg_.stack_size);
    tasks_.push_back(std::move(t));
    ++live_;
    if (started_ && !teardown_) {
        tp->state = TaskState::Blocked;
        wake(tp, cur_ ? cur_->cpu : -1, 0);
        if (cur_) maybe_preempt();
    }
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
    if (live_ == 0 && stop_) engine_.stop();
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

// ---------------------------------------------------------------- engine glue

void SimPlatform::on_cpu_event(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    p->cpu_event(p->cpus_[arg & ((1u << kCpuBits) - 1)], arg >> kCpuBits);
}

void SimPlatform::start_act(Cpu &c, Act act, Time duration) {
    c.act = act;
    ++c.gen;
    c.act_end = engine_.now() + duration;
    engine_.schedule(c.act_end, on_cpu_event, this,
                     (c.gen << kCpuBits) | static_cast<uint64_t>(c.id));
}

void SimPlatform::cpu_event(Cpu &c, uint64_t gen) {
    if (gen != c.gen) return;  // superseded (preempted span, re-switched CPU)
    Task *t = c.curr;
    if (!t) return;
    switch (c.act) {
        case Act::Switching:
            if (c.need_resched && preemptible(t) && should_yield(c, t)) {
                c.need_resched = false;
                t->state = TaskState::Runnable;
                enqueue(c, t, !c.resched_tail);
                c.curr = nullptr;
                switch_in(c, best_queued(c), 0);
                return;
            }
            if (t->remaining > 0) {
                Time rest = t->remaining;
                t->remaining = 0;
                start_act(c, Act::Span, rest);
                return;
            }
            execute(c);
            return;
        case Act::Span:
            execute(c);
            return;
        default:
            return;
    }
}

void SimPlatform::execute(Cpu &c) {
    c.act = Act::Executing;
    Task *t = c.curr;
    cur_ = t;
    try {
        t->fiber->resume();
    } catch (...) {
        cur_ = nullptr;
        throw;
    }
    cur_ = nullptr;
}

void SimPlatform::spin_current() {
    Cpu &c = cpu_of(cur_);
    c.act = Act::Spinning;
    ++c.gen;
    suspend_current();
}

void SimPlatform::end_spin(Task *t, Time cost) {
    start_act(cpu_of(t), Act::Span, cost);
}

void SimPlatform::suspend_current() {
    if (teardown_) return;
    Task *t = cur_;
    t->fiber->suspend();
    cur_ = t;
}

// ---------------------------------------------------------------- scheduling

bool SimPlatform::preemptible(const Task *t) const {
    return t->preempt_count == 0 && !t->irqs_off &&
           (cfg_.preempt == PreemptModel::Full || t->ops.empty());
}

void SimPlatform::go_idle(Cpu &c) {
    if (c.act != Act::Idle) c.stats.busy_ns += engine_.now() - c.busy_since;
    c.curr = nullptr;
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
    for (Task *q : c.rq)
        if (!best || q->rank > best->rank || (q->rank == best->rank && q->rq_key < best->rq_key))
            best = q;
    return best;
}

bool SimPlatform::should_yield(const Cpu &c, const Task *t) const {
    const Task *best = best_queued(c);
    if (!best) return false;
    return best->rank > t->rank || (c.resched_tail && best->rank == t->rank);
}

void SimPlatform::switch_in(Cpu &c, Task *next, Time extra) {
    c.rq.erase(std::find(c.rq.begin(), c.rq.end(), next));
    --queued_;
    bool was_idle = c.act == Act::Idle;
    if (was_idle) c.busy_since = engine_.now();
    c.curr = next;
    next->state = TaskState::Running;
    next->cpu = c.id;
    next->slice_used = 0;
    Time wake_extra = std::exchange(next->wake_extra, 0);
    c.need_resched = false;
    c.resched_tail = false;
    ++c.stats.context_switches;
    rcu_.report_qs(c.id);  // a context switch is a quiescent state
    trace_event("cpu{} switch to {}", c.id, next->params.name);
    if (recorder_) recorder_->cpu_switch(c.id, engine_.now(), next->id, next->params.name);
    Time cost = cfg_.profile.primitive.context_switch + extra + wake_extra +
                (was_idle ? cfg_.profile.primitive.idle_exit : 0);
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
            if (q->params.cpu < 0 && (!pulled || q->rank > pulled->rank ||
                                      (q->rank == pulled->rank && q->rq_key < pulled->rq_key)))
                pulled = q;
    if (pulled) {
        Cpu &from = cpus_[static_cast<size_t>(pulled->cpu)];
        from.rq.erase(std::find(from.rq.begin(), from.rq.end(), pulled));
        c.rq.push_back(pulled);
        pulled->cpu = c.id;
        switch_in(c, pulled, 0);
        return;
    }
    go_idle(c);
    rcu_.report_qs(c.id);  // idle is an extended quiescent state
}

int SimPlatform::select_cpu(const Task *t) const {
    if (t->params.cpu >= 0) return t->params.cpu;
    if (t->cpu >= 0 && !cpus_[static_cast<size_t>(t->cpu)].curr) return t->cpu;
    for (const Cpu &c : cpus_)
        if (!c.curr) return c.id;
    if (t->rank > 0) {
        int best = -1;
        int best_rank = t->rank;
        for (const Cpu &c : cpus_) {
            int r = c.curr->rank;
            if (r < best_rank || (r == best_rank && best >= 0 && c.id == t->cpu)) {
                best = c.id;
                best_rank = r;
            }
        }
        if (best >= 0) return best;
    }
    if (t->cpu >= 0) return t->cpu;
    int best = 0;
    for (const Cpu &c : cpus_)
        if (c.rq.size() < cpus_[static_cast<size_t>(best)].rq.size()) best = c.id;
    return best;
}

void SimPlatform::wake(Task *t, int from_cpu, Time extra) {
    if (t->state != TaskState::Blocked && t->state != TaskState::New) return;
    int target = select_cpu(t);
    Cpu &c = cpus_[static_cast<size_t>(target)];
    t->state = TaskState::Runnable;
    enqueue(c, t, false);
    trace_event("wake {} on cpu{}", t->params.name, target);
    bool remote = from_cpu >= 0 && from_cpu != target;
    t->wake_extra = extra;
    if (!c.curr) {
        switch_in(c, t, remote ? cfg_.profile.primitive.ipi : 0);
        return;
    }
    if (t->rank > c.curr->rank) request_resched(c, from_cpu);
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
    if (!c.need_resched || !t || c.act != Act::Span || !preemptible(t) || !should_yield(c, t))
        return;
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

void SimPlatform::maybe_preempt() {
    Task *t = cur_;
    if (t && !teardown_ && cpu_of(t).need_resched && preemptible(t)) preempt_self();
}

void SimPlatform::block_current() {
    Task *t = cur_;
    Cpu &c = cpu_of(t);
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
}

void SimPlatform::advance(Time ns) {
    maybe_preempt();
    if (ns <= 0 || teardown_) return;
    Time end = engine_.now() + ns;
    if (engine_.next_time() > end) {
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
    if (t->params.probe) t->probe_due = expected;
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
    }
    t->probe_due = -1;
    // A wake-up due after the duration is new work: not counted.
    if (t->params.probe && recording() && expected <= cfg_.duration) {
        Time late = engine_.now() - expected;
        wakeup_[t->params.name].record(late);
        trace_event("{} woke {} ns late", t->params.name, late);
    }
}

void SimPlatform::on_timer(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Task *t = p->tasks_[arg & ((uint64_t{1} << kTaskBits) - 1)].get();
    if ((arg >> kTaskBits) != t->timer_gen || t->state != TaskState::Blocked) return;
    Cpu &c = p->cpus_[static_cast<size_t>(t->timer_cpu)];
    if (c.curr && c.curr->irqs_off) {
        c.pending_timers.push_back(t);  // the interrupt waits for local_irq_enable
        return;
    }
    p->timer_fire(t, c);
}

void SimPlatform::timer_fire(Task *t, Cpu &c) {
    if (t->state != TaskState::Blocked) return;
    wake(t, c.id, cfg_.profile.primitive.timer_irq);
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

void SimPlatform::tick(Cpu &c) {
    rcu_.interrupt(c.id);
    Task *t = c.curr;
    if (t && t->rank == 0) {
        t->slice_used += jiffy_;
        if (t->slice_used >= cfg_.sched_slice && best_queued(c)) {
            c.need_resched = true;
            c.resched_tail = true;
            try_preempt(c);
        }
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
    if (p->live_ == 0) p->engine_.stop();
}

// ---------------------------------------------------------------- preemption and interrupts

void SimPlatform::preempt_inc(Task *t, const Site &site) {
    if (t->preempt_count++ == 0) {
        t->poff.start = engine_.now();
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
    t->ioff.site = site;
    t->ioff.label = current_label(t);
}

void SimPlatform::irq_on(Task *t, const Site &site) {
    if (!t->irqs_off) return;
    t->irqs_off = false;
    close_section(t, t->ioff, true, site);
    irqs_on_work(cpu_of(t));
    rcu_.deferred_qs(t);
    maybe_preempt();
}

// Interrupts that arrived while they were off are delivered now, in arrival order.
void SimPlatform::irqs_on_work(Cpu &c) {
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

void SimPlatform::local_irq_enable(Site site) {
    if (Task *t = cur_) irq_on(t, site);
}

bool SimPlatform::irqs_disabled() {
    return cur_ && cur_->irqs_off;
}

// ---------------------------------------------------------------- cost of work

void SimPlatform::charge(Label label, const ss::WorkCounts &counts, Time host_ns) {
    if (cfg_.cost_model != CostModel::Counted) {
        ndelay(static_cast<Time>(static_cast<double>(host_ns) * cfg_.profile.measured_scale),
               label);
        return;
    }
    const int cpu = cur_ ? cur_->cpu : 0;
    int64_t ps = cfg_.profile.cost_ps(counts);
    if (const int64_t speed = speed_ppm_[static_cast<size_t>(cpu)]; speed != 1'000'000)
        ps = static_cast<int64_t>(static_cast<__int128>(ps) * 1'000'000 / speed);
    if (caches_ && !counts.lines.empty()) {
        MemoryTally t;
        const int64_t stall = caches_->price(cpu, counts.lines, t);
        ps += stall;
        if (recording()) {
            if (label.id() >= stall_.size()) stall_.resize(label.id() + 1);
            MemoryTally &s = stall_[label.id()];
            s.touches += t.touches;
            s.llc_hits += t.llc_hits;
            s.dram += t.dram;
            s.stall_ps += t.stall_ps;
        }
    }
    ndelay((ps + 500) / 1000, label);
}

void SimPlatform::ndelay(Time ns, Label label) {
    Task *t = cur_;
    if (!t || ns <= 0) return;
    if (recording()) {
        if (label.id() >= compute_ns_.size()) compute_ns_.resize(label.id() + 1, 0);
        compute_ns_[label.id()] += ns;
    }
    if (OpFrame *f = frame(t)) f->parts.compute_ns += ns;
    advance(ns);
}

// ---------------------------------------------------------------- run

kernel::RunResults SimPlatform::run() {
    if (started_) throw std::logic_error("SimPlatform::run called twice");
    started_ = true;
    kernel::PlatformScope scope(*this);
    // Under the counted cost model the TE rules' searches are charged by their counts, so the
    // host does each once per key and table generation (ss/te_rules_memo.h).
    ss::TeRulesMemo te_memo;
    ss::TeRulesMemoScope te_memo_scope(cfg_.cost_model == CostModel::Counted ? &te_memo : nullptr);
    for (Cpu &c : cpus_)
        engine_.schedule(jiffy_, on_tick, this, static_cast<uint64_t>(c.id));
    engine_.schedule(cfg_.duration, on_stop, this, 0);
    if (cfg_.warmup > 0 && cfg_.warmup < cfg_.duration)
        engine_.schedule(cfg_.warmup, on_warmup_end, this, 0);
    for (auto &t : tasks_)
        if (t->state == TaskState::New) wake(t.get(), -1, 0);
    try {
        engine_.run(cfg_.duration + cfg_.drain_limit);
    } catch (...) {
        teardown();
        throw;
    }
    // The drain is over: what is still open was cut off by its limit (tasks still alive) and is
    // censored there.
    close_open_at_end(live_ > 0 ? std::max(engine_.now(), cfg_.duration + cfg_.drain_limit)
                                : engine_.now());
    drained_ = true;
    if (recorder_) recorder_->finish(engine_.now());
    for (auto &t : tasks_) {
        // Censored, not stuck: a task inside an operation (its work in flight outlasted the
        // drain), one asleep until a time (it wakes by itself), the RCU callback task waiting
        // for a grace period.
        if (t->state == TaskState::Dead || !t->ops.empty() || t->timer_sleep ||
            t.get() == rcu_.callback_task())
            continue;
        std::string waiting;
        if (const Lock *l = locks_.waiting_for(t.get()))
            waiting = fmt::format(", waiting for {}", l->name);
        violation("task_stuck", fmt::format("task {} had not exited {} ns after the end{}",
                                            t->params.name, cfg_.drain_limit, waiting));
        for (const HeldLock &h : t->held)
            violation("lock_held_at_end", fmt::format("task {} still holds {} (taken at {})",
                                                      t->params.name, h.lock->name, h.site.str()));
    }
    auto results = collect();
    teardown();
    return results;
}

void SimPlatform::teardown() {
    if (teardown_) return;
    teardown_ = true;
    recorder_ = nullptr;  // the timeline ended with the run (the recorder may be gone already)
    engine_.clear();
    // Unwind the stacks of tasks that never finished; kernel calls made by destructors on the
    // way out return at once.
    kernel::PlatformScope scope(*this);
    for (auto &t : tasks_) {
        cur_ = t.get();
        t->fiber.reset();
    }
    cur_ = nullptr;
}

}  // namespace locksim::sim
