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
constexpr int kTaskBits = 24;

// kernel/sched/core.c (v6.5), sched_prio_to_weight: the load weight of nice -20 .. 19. Each
// level is about 1.25 times the next, so one nice level is about 10% of CPU time.
constexpr int64_t kPrioToWeight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906,  3121,  2501,  1991,  1586,  1277,  1024,  820,   655,   526,   423,  335,  272,  215,
    172,   137,   110,   87,    70,    56,    45,    36,    29,    23,    18,   15,
};
constexpr int64_t kNice0Load = 1024;
// sched_nr_latency: sysctl_sched_latency / sysctl_sched_min_granularity.
constexpr int kNrLatency = 8;
// kernel/sched/topology.c (v6.5), sd_init: busy_factor.
constexpr int kBusyFactor = 16;

int ilog2(int v) {
    int r = 0;
    while (v >>= 1)
        ++r;
    return r;
}

// Delta of run time in the task's virtual time (calc_delta_fair, by division rather than the
// kernel's fixed-point inverse weight).
int64_t to_virtual(Time delta, int64_t weight) {
    return weight == kNice0Load ? delta : delta * kNice0Load / weight;
}
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
    // get_update_sysctl_factor, SCHED_TUNABLESCALING_LOG.
    const Time factor = 1 + ilog2(std::min(cfg_.cpus, 8));
    latency_ = cfg_.sched_latency * factor;
    min_gran_ = cfg_.sched_min_granularity * factor;
    wakeup_gran_ = cfg_.sched_wakeup_granularity * factor;
    std::vector<double> irq_share(static_cast<size_t>(cfg_.cpus), 0.0);
    for (const IrqSource &src : cfg_.irqs) {
        if (src.period <= 0 || src.handler < 0 || src.softirq < 0)
            throw UserError(fmt::format(
                "interrupt '{}': period must be positive and costs not negative", src.kind));
        for (int c : src.cpus)
            if (c < 0 || c >= cfg_.cpus)
                throw UserError(fmt::format("interrupt '{}' on CPU {} but the machine has {} CPUs",
                                            src.kind, c, cfg_.cpus));
        for (int c = 0; c < cfg_.cpus; ++c) {
            if (!src.cpus.empty() && !std::count(src.cpus.begin(), src.cpus.end(), c)) continue;
            // The interrupt work must leave the CPU some time.
            double &share = irq_share[static_cast<size_t>(c)];
            share +=
                static_cast<double>(src.handler + src.softirq) / static_cast<double>(src.period);
            if (share >= 1.0 - 1e-12)
                throw UserError(fmt::format(
                    "interrupt load on CPU {} takes all of its time (with '{}')", c, src.kind));
        }
    }
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
    t->weight = kPrioToWeight[params.nice + 20];
    t->rr_ticks = rr_timeslice_ticks();
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
    p->cpu_event(p->cpus_[static_cast<size_t>(event_cpu(arg))], event_number(arg));
}

void SimPlatform::start_act(Cpu &c, Act act, Time duration) {
    // The CPU finishes the interrupt work it is doing first.
    if (c.irq_until > engine_.now()) duration += c.irq_until - engine_.now();
    c.act = act;
    ++c.gen;
    c.act_end = engine_.now() + duration;
    engine_.schedule(c.act_end, on_cpu_event, this, cpu_event_arg(c.gen, c.id));
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
           (fully_preemptible(cfg_.preempt) || t->ops.empty());
}

void SimPlatform::go_idle(Cpu &c) {
    if (c.act != Act::Idle) c.stats.busy_ns += engine_.now() - c.busy_since;
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

// ---------------------------------------------------------------- CFS

// update_curr: the current task's run time since the last update, and its virtual runtime.
void SimPlatform::update_curr(Cpu &c) {
    Task *t = c.curr;
    if (!t || t->state != TaskState::Running) return;
    const Time delta = engine_.now() - t->exec_start;
    if (delta <= 0) return;
    t->exec_start = engine_.now();
    t->sum_exec += delta;
    if (t->rank != 0) return;
    t->vruntime += to_virtual(delta, t->weight);
    update_min_vruntime(c);
}

void SimPlatform::update_min_vruntime(Cpu &c) {
    bool any = false;
    int64_t v = 0;
    auto consider = [&](const Task *q) {
        if (q->rank != 0) return;
        if (!any || q->vruntime < v) v = q->vruntime;
        any = true;
    };
    if (c.curr && c.curr->state == TaskState::Running) consider(c.curr);
    for (const Task *q : c.rq)
        consider(q);
    if (any) c.min_vruntime = std::max(c.min_vruntime, v);
}

// sched_slice: the task's share of the latency period by weight, among the SCHED_OTHER tasks
// on the CPU (itself counted once).
Time SimPlatform::sched_slice(const Cpu &c, const Task *t) const {
    int nr = 0;
    int64_t load = 0;
    bool counted = false;
    auto add = [&](const Task *q) {
        if (q->rank != 0) return;
        ++nr;
        load += q->weight;
        counted = counted || q == t;
    };
    if (c.curr && c.curr->state == TaskState::Running) add(c.curr);
    for (const Task *q : c.rq)
        add(q);
    if (!counted) {
        ++nr;
        load += t->weight;
    }
    const Time period = nr > kNrLatency ? nr * min_gran_ : latency_;
    return period * t->weight / load;
}

// place_entity: a new task starts one virtual slice after min_vruntime (START_DEBIT); a waking
// one no earlier than half a latency period before it (GENTLE_FAIR_SLEEPERS).
void SimPlatform::place_entity(Cpu &c, Task *t) {
    update_curr(c);
    if (!t->placed) {
        t->placed = true;
        t->vruntime = c.min_vruntime + to_virtual(sched_slice(c, t), t->weight);
        return;
    }
    t->vruntime = std::max(t->vruntime, c.min_vruntime - latency_ / 2);
}

// check_preempt_curr: a real-time task preempts a lower class or priority; a SCHED_OTHER task
// preempts another when its virtual runtime is smaller by more than the wake-up granularity,
// in its own virtual time (wakeup_preempt_entity).
bool SimPlatform::wakeup_preempts(Cpu &c, Task *t) {
    Task *curr = c.curr;
    if (t->rank != 0 || curr->rank != 0) return t->rank > curr->rank;
    update_curr(c);
    const int64_t vdiff = curr->vruntime - t->vruntime;
    return vdiff > to_virtual(wakeup_gran_, t->weight);
}

// check_preempt_tick: the current task's turn ends when it has run its slice, or when, after
// the minimum granularity, it is more than a slice ahead of the leftmost task.
void SimPlatform::check_preempt_tick(Cpu &c) {
    Task *t = c.curr;
    const Task *left = best_queued(c);
    if (!left || left->rank != 0) return;
    const Time ideal = sched_slice(c, t);
    const Time ran = t->sum_exec - t->prev_sum_exec;
    if (ran <= ideal && (ran < min_gran_ || t->vruntime - left->vruntime <= ideal)) return;
    c.need_resched = true;
    try_preempt(c);
}

// task_tick_rt: an RR task that used up its time slice goes behind the others of its priority.
void SimPlatform::task_tick_rr(Cpu &c) {
    Task *t = c.curr;
    if (--t->rr_ticks > 0) return;
    t->rr_ticks = rr_timeslice_ticks();
    for (const Task *q : c.rq)
        if (q->rank == t->rank) {
            c.need_resched = true;
            c.resched_tail = true;
            try_preempt(c);
            return;
        }
}

// Periodic load balancing, one sched domain over every CPU (rebalance_domains and
// load_balance, reduced): the CPU with the most runnable tasks gives this one a queued
// SCHED_OTHER task that may run here, the one queued last, when it has two more than this one.
void SimPlatform::load_balance(Cpu &c) {
    if (queued_ == 0) return;
    auto nr = [](const Cpu &x) { return x.rq.size() + (x.curr ? 1 : 0); };
    Cpu *busiest = nullptr;
    Task *pick = nullptr;
    for (Cpu &o : cpus_) {
        if (&o == &c || nr(o) < nr(c) + 2 || (busiest && nr(o) <= nr(*busiest))) continue;
        Task *movable = nullptr;
        for (Task *q : o.rq)
            if (q->rank == 0 && allowed(q, c.id) && (!movable || q->rq_key > movable->rq_key))
                movable = q;
        if (movable) {
            busiest = &o;
            pick = movable;
        }
    }
    if (!pick) return;
    trace_event("cpu{} pulls {} from cpu{}", c.id, pick->params.name, busiest->id);
    move_task(pick, *busiest, c);
    if (!c.curr) {
        switch_in(c, pick, 0);
        return;
    }
    if (wakeup_preempts(c, pick)) request_resched(c, c.id);
}

void SimPlatform::switch_in(Cpu &c, Task *next, Time extra) {
    if (probes_waiting_ > 0) note_probe_waits(c, next);
    c.rq.erase(std::find(c.rq.begin(), c.rq.end(), next));
    --queued_;
    bool was_idle = c.act == Act::Idle;
    if (was_idle) c.busy_since = engine_.now();
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
    // During interrupt work the irq return is the preemption point (on_irq_end).
    if (!c.need_resched || !t || c.act != Act::Span || engine_.now() < c.irq_until ||
        !preemptible(t) || !should_yield(c, t))
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

// rt_mutex_setprio: a runnable task that now outranks the task running on its CPU preempts
// it; a running one that no longer outranks a queued task yields at its next preemption point.
void SimPlatform::set_prio(Task *t, int rank) {
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
}

void SimPlatform::advance(Time ns) {
    maybe_preempt();
    if (ns <= 0 || teardown_) return;
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
            t->delays.push_back(kernel::WakeupDelay{.kind = "overdue",
                                                    .cpu = t->cpu,
                                                    .task = t->params.name,
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

void SimPlatform::timer_fire(Task *t, Cpu &c) {
    if (t->state != TaskState::Blocked) return;
    if (t->timer_held_by) note_timer_held(t, t->probe_due);
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
    if (t) {
        update_curr(c);
        if (t->rank == 0)
            check_preempt_tick(c);
        else if (t->params.policy == kernel::Sched::Rr)
            task_tick_rr(c);
    }
    // rebalance_domains: every sd_weight ms, busy_factor times that on a busy CPU.
    if (++c.ticks >= c.next_balance) {
        const Time interval =
            static_cast<Time>(cfg_.cpus) * kernel::kMsec * (c.curr ? kBusyFactor : 1);
        c.next_balance = c.ticks + static_cast<uint64_t>(std::max<Time>(1, interval / jiffy_));
        load_balance(c);
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

void SimPlatform::local_irq_enable(Site site) {
    if (Task *t = cur_) irq_on(t, site);
}

bool SimPlatform::irqs_disabled() {
    return cur_ && cur_->irqs_off;
}

// ---------------------------------------------------------------- interrupt load

void SimPlatform::on_irq(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Cpu &c = p->cpus_[static_cast<size_t>(event_cpu(arg))];
    const size_t source = event_number(arg);
    p->engine_.schedule(p->engine_.now() + p->cfg_.irqs[source].period, on_irq, self, arg);
    if (c.curr && c.curr->irqs_off) {
        // Delivered at local_irq_enable; raised again meanwhile, it is still one pending
        // interrupt (the controller's pending bit).
        if (std::find(c.pending_irqs.begin(), c.pending_irqs.end(), source) == c.pending_irqs.end())
            c.pending_irqs.push_back(source);
        return;
    }
    p->deliver_irq(c, source);
}

// The hard handler, then the softirq work it raised (irq_exit -> invoke_softirq), after any
// interrupt work already in progress on the CPU. Whatever the CPU was doing ends that much
// later; an act started meanwhile starts after it (start_act).
void SimPlatform::deliver_irq(Cpu &c, size_t source) {
    const IrqSource &src = cfg_.irqs[source];
    const Time now = engine_.now();
    const Time cost = src.handler + src.softirq;
    c.irq_until = std::max(now, c.irq_until) + cost;
    if (recording()) {
        c.stats.irq_ns += src.handler;
        c.stats.softirq_ns += src.softirq;
    }
    trace_event("cpu{} irq {}", c.id, src.kind);
    if (c.act == Act::Span || c.act == Act::Switching) {
        ++c.gen;
        c.act_end += cost;
        engine_.schedule(c.act_end, on_cpu_event, this, cpu_event_arg(c.gen, c.id));
    }
    engine_.schedule(c.irq_until, on_irq_end, this, static_cast<uint64_t>(c.id));
}

void SimPlatform::on_irq_end(void *self, uint64_t arg) {
    auto *p = static_cast<SimPlatform *>(self);
    Cpu &c = p->cpus_[arg];
    if (c.need_resched) p->try_preempt(c);
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
    for (size_t i = 0; i < cfg_.irqs.size(); ++i)
        for (const Cpu &c : cpus_)
            if (cfg_.irqs[i].cpus.empty() ||
                std::count(cfg_.irqs[i].cpus.begin(), cfg_.irqs[i].cpus.end(), c.id))
                engine_.schedule(cfg_.irqs[i].period, on_irq, this, cpu_event_arg(i, c.id));
    engine_.schedule(cfg_.duration, on_stop, this, 0);
    warm_ = !(cfg_.warmup > 0 && cfg_.warmup < cfg_.duration);
    if (!warm_) engine_.schedule(cfg_.warmup, on_warmup_end, this, 0);
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
