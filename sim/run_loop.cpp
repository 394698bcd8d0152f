// The run loop and the engine's glue: the events that drive the CPUs, the tasks' fibers, the end
// of the warm-up, the stop and the drain, and the teardown.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "sim/sim_platform.h"
#include "ss/te_rules_memo.h"
#include "util/error.h"

namespace locksim::sim {

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

// The task's fiber runs once this event's handler has returned (Engine::run_fiber); until it
// suspends, it is the current task.
void SimPlatform::execute(Cpu &c) {
    c.act = Act::Executing;
    cur_ = c.curr;
    engine_.run_fiber(cur_->fiber.get());
}

void SimPlatform::spin_current() {
    Cpu &c = cpu_of(cur_);
    c.act = Act::Spinning;
    ++c.gen;
    suspend_current();
}

void SimPlatform::end_spin(Task *t, Time cost) {
    Cpu &c = cpu_of(t);
    t->priced[static_cast<size_t>(PriceFamily::Primitive)] += cost;
    if (c.interrupted == t) {  // granted while softirq work runs on top of it (irq.cpp)
        c.interrupted_spinning = false;
        t->remaining += cost;
        return;
    }
    start_act(c, Act::Span, cost);
}

void SimPlatform::suspend_current() {
    if (teardown_) return;
    Task *t = cur_;
    cur_ = nullptr;  // the events up to its resumption run with no current task
    engine_.suspend_fiber(t->fiber.get());
    cur_ = t;
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
    start_irq_threads();
    start_irq_timers();
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
    // Stopped early (stop_over): what was open was censored at the stop (stop_if_over).
    if (early_stop_.metric.empty())
        close_open_at_end(live_ > 0 ? std::max(engine_.now(), cfg_.duration + cfg_.drain_limit)
                                    : engine_.now());
    drained_ = true;
    if (recorder_) recorder_->finish(engine_.now());
    for (auto &t : tasks_) {
        // Censored, not stuck: a task inside an operation (its work in flight outlasted the
        // drain), one asleep until a time (it wakes by itself), the RCU callback task waiting
        // for a grace period, an interrupt's kernel thread (it lives as long as the machine).
        if (t->state == TaskState::Dead || !t->ops.empty() || t->timer_sleep || t->daemon ||
            rcu_.is_callback_task(t.get()))
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
