// The preemption and interrupt state of the running task (preempt_count, local_irq_*), where a
// deferred reschedule and interrupt happen, and the interrupt load ([[machine.irq]]).
#include <fmt/format.h>

#include <algorithm>

#include "sim/sim_platform.h"

namespace locksim::sim {

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

}  // namespace locksim::sim
