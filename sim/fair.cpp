// CFS for SCHED_OTHER, SCHED_RR's time slice and periodic load balancing, as Linux v6.5 has them
// (kernel/sched/fair.c, rt.c; the last release before EEVDF). Simplified: no task groups,
// slices checked at ticks only, load counted in tasks.
#include <fmt/format.h>

#include <algorithm>

#include "sim/sim_platform.h"

namespace locksim::sim {

namespace {

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

// Delta of run time in the task's virtual time (calc_delta_fair, by division rather than the
// kernel's fixed-point inverse weight).
int64_t to_virtual(Time delta, int64_t weight) {
    return weight == kNice0Load ? delta : delta * kNice0Load / weight;
}
}  // namespace

int64_t SimPlatform::nice_weight(int nice) {
    return kPrioToWeight[nice + 20];
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
bool SimPlatform::load_balance(Cpu &c) {
    if (queued_ == 0) return false;
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
    if (!pick) return false;
    trace_event("cpu{} pulls {} from cpu{}", c.id, pick->params.name, busiest->id);
    move_task(pick, *busiest, c);
    if (!c.curr)
        switch_in(c, pick, 0);
    else if (wakeup_preempts(c, pick))
        request_resched(c, c.id);
    return true;
}

}  // namespace locksim::sim
