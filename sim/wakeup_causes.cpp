// What delayed each probe wake-up, as an engineer reads cyclictest's worst wake-up beside
// ftrace's wakeup_rt trace: between the time the probe was due and the time it ran, which
// section held its timer interrupt or its CPU, or which task of higher priority ran there.
//
// A probe's wait has two parts, each noted where it ends:
//  - its timer interrupt held back by an IRQs-off section on the timer's CPU (note_timer_held,
//    when local_irq_enable delivers it);
//  - its time in a run queue after the wake-up, split at every switch on that CPU
//    (note_probe_waits): each stretch is charged to the task that ran in it, by what kept that
//    task from being preempted: its preempt-off or IRQs-off section still open or the one that
//    ended last inside the stretch, its non-preemptible kernel code (preemption none or
//    voluntary), or its priority (higher, or equal and ahead in FIFO order).
// What is left of the lateness is the wake-up path's own cost (timer interrupt, IPI, context
// switch, idle exit), which no stretch accounts for.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "sim/sim_platform.h"

namespace locksim::sim {

namespace {

const char *kind_name(DelayKind k) {
    switch (k) {
        case DelayKind::Task:
            return "task";
        case DelayKind::KernelCode:
            return "kernel_code";
        case DelayKind::PreemptOff:
            return "preempt_off";
        case DelayKind::IrqsOff:
            return "irqs_off";
        case DelayKind::Softirq:
            return "softirq";
        case DelayKind::Irq:
            return "irq";
        case DelayKind::PiChain:
            return "pi_chain";
        case DelayKind::Overdue:
            return "overdue";
    }
    return "";
}

bool same_site(const Site &a, const Site &b) {
    return std::string_view(a.what) == b.what && a.where.line() == b.where.line() &&
           std::string_view(a.where.file_name()) == b.where.file_name();
}

kernel::WakeupDelay describe(const DelayNote &n) {
    return {.kind = kind_name(n.kind),
            .cpu = n.cpu,
            .task = n.holder->params.name,
            .label = std::string(n.label.name()),
            .site = n.site.str(),
            .start = n.start,
            .length = n.length,
            .delayed_ns = n.delayed_ns,
            .via = n.booster
                       ? fmt::format("{} waiting for {}", n.booster->params.name, n.lock->name)
                       : std::string()};
}

}  // namespace

void SimPlatform::note_delay(Task *q, const Task *holder, const Cpu &c, Time from, Time to) {
    if (!holder || holder == q || to <= from) return;
    DelayNote d;
    d.cpu = c.id;
    d.holder = holder;
    const Label op = holder->ops.empty() ? holder->last_op : holder->ops.back().label;
    if (holder->rank >= q->rank) {
        // Softirq context, a task running at a priority it inherited through rt_mutex (it would
        // not outrank the probe on its own), or a task of higher or equal priority.
        d.kind = DelayKind::Task;
        if (holder->irq_context) {
            d.kind = DelayKind::Softirq;
        } else if (holder->normal_rank < q->rank && holder->pi_donor) {
            d.kind = DelayKind::PiChain;
            d.booster = holder->pi_donor;
            d.lock = holder->pi_donor_lock;
        }
        d.label = op;
        d.start = from;
        d.length = d.delayed_ns = to - from;
    } else {
        // The section that kept the holder running: one still open, else the one that ended last
        // in the stretch (at equal ends the outer one, which began first).
        const Section *sec = nullptr;
        bool irq = false;
        Time end = -1;
        auto consider = [&](const Section &s, bool is_irq, Time s_end) {
            if (s_end < from) return;
            if (!sec || s_end > end || (s_end == end && s.start < sec->start)) {
                sec = &s;
                irq = is_irq;
                end = s_end;
            }
        };
        if (holder->preempt_count > 0)
            consider(holder->poff, false, to);
        else
            consider(holder->last_poff, false, holder->last_poff_end);
        if (holder->irqs_off)
            consider(holder->ioff, true, to);
        else
            consider(holder->last_ioff, true, holder->last_ioff_end);
        const bool kernel_code = !fully_preemptible(cfg_.preempt) && !op.empty();
        // Non-preemptible kernel code (preemption none or voluntary) from `from` to `until`.
        auto kernel_code_until = [&](Time until) {
            DelayNote k = d;
            k.kind = DelayKind::KernelCode;
            k.label = op;
            k.start = from;
            k.length = k.delayed_ns = until - from;
            return k;
        };
        if (sec && (end >= to || !kernel_code)) {
            // Without full preemption, what ran before that section began was non-preemptible
            // kernel code: its own entry, so that a short section ending a long stretch of
            // kernel code is not charged with the whole wait (nor the kernel code forgotten).
            if (kernel_code && sec->start > from) add_delay(q, kernel_code_until(sec->start));
            d.kind = irq ? DelayKind::IrqsOff : DelayKind::PreemptOff;
            d.label = sec->label;
            d.site = sec->site;
            d.start = sec->start;
            d.length = end - sec->start;
            d.delayed_ns = std::min(end, to) - std::max(sec->start, from);
        } else if (kernel_code) {
            d = kernel_code_until(to);
        } else {
            return;  // a preemptible task of lower priority: the wake-up path's cost
        }
        if (d.delayed_ns <= 0) return;
    }
    add_delay(q, d);
}

// One section seen over several stretches (switches that did not run the probe, softirq work
// interrupting it) stays one entry; so does a task, kernel code or interrupt work over
// consecutive stretches.
void SimPlatform::add_delay(Task *q, const DelayNote &d) {
    const bool stretch = d.kind != DelayKind::PreemptOff && d.kind != DelayKind::IrqsOff;
    for (auto it = q->delays.rbegin(); it != q->delays.rend(); ++it) {
        DelayNote &e = *it;
        if (e.kind == d.kind && e.holder == d.holder && e.cpu == d.cpu &&
            same_site(e.site, d.site) && e.label == d.label && (stretch || e.start == d.start)) {
            e.delayed_ns += d.delayed_ns;
            e.length = stretch ? e.length + d.length : std::max(e.length, d.length);
            return;
        }
        if (stretch) break;  // only the latest entry continues a stretch
    }
    q->delays.push_back(d);
}

void SimPlatform::note_irq_delay(Task *q, const Cpu &c, Time from, Time length) {
    static const Label kHardirq("hardirq");
    if (length <= 0) return;
    add_delay(q, DelayNote{.kind = DelayKind::Irq,
                           .cpu = c.id,
                           .holder = q,
                           .label = kHardirq,
                           .site = {},
                           .start = from,
                           .length = length,
                           .delayed_ns = length});
}

void SimPlatform::note_timer_held(Task *q, Time due) {
    const Task *h = std::exchange(q->timer_held_by, nullptr);
    if (!h) return;
    const Time now = engine_.now();
    const bool open = h->irqs_off;
    const Section &s = open ? h->ioff : h->last_ioff;
    const Time end = open ? now : h->last_ioff_end;
    q->delays.push_back(DelayNote{.kind = DelayKind::IrqsOff,
                                  .cpu = q->timer_cpu,
                                  .holder = h,
                                  .label = s.label,
                                  .site = s.site,
                                  .start = s.start,
                                  .length = end - s.start,
                                  .delayed_ns = now - std::max(due, s.start)});
}

void SimPlatform::note_probe_waits(Cpu &c, const Task *next) {
    const Time now = engine_.now();
    for (Task *q : c.rq) {
        if (q->wait_since < 0) continue;
        note_delay(q, c.last, c, q->wait_since, now);
        if (q == next) {
            q->wait_since = -1;
            --probes_waiting_;
        } else {
            q->wait_since = now;
        }
    }
}

void SimPlatform::finish_wakeup(Task *t, Time due, Time late, bool open_at_end) {
    const bool traced = recorder_ && warm_;
    auto &worst = wakeup_worst_[t->params.name];
    const size_t keep = std::max<size_t>(cfg_.keep_longest, 1);
    const bool kept = worst.size() < keep || late > worst.back().late;
    if (!traced && !kept) return;
    kernel::WakeupRecord r{.probe = t->params.name,
                           .cpu = t->cpu,
                           .due = due,
                           .late = late,
                           .open_at_end = open_at_end};
    r.delays.reserve(t->delays.size());
    for (const DelayNote &n : t->delays)
        r.delays.push_back(describe(n));
    if (traced) {
        // Every later wake-up was due at or after the earliest one still waiting.
        Time horizon = engine_.now();
        for (const auto &o : tasks_)
            if (o.get() != t && o->params.probe && o->probe_due >= 0)
                horizon = std::min(horizon, o->probe_due);
        recorder_->probe_wakeup(t->id, r, horizon);
    }
    if (!kept) return;
    auto pos = std::upper_bound(worst.begin(), worst.end(), late,
                                [](Time l, const kernel::WakeupRecord &e) { return l > e.late; });
    worst.insert(pos, std::move(r));
    if (worst.size() > keep) worst.pop_back();
}

}  // namespace locksim::sim
