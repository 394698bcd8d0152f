// Metrics, memory accounting, self-check reports and the results of a simulated run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <new>

#include "record/op_names.h"
#include "sim/sim_platform.h"
#include "util/work_meter.h"

namespace locksim::sim {

uint64_t *SimPlatform::rcu_publication(const void *p) {
    Allocation *a = allocs_.find(p);
    return a ? &a->rcu_publication : nullptr;
}

kernel::OpStats &SimPlatform::op_stats(Label l) {
    size_t i = l.id();
    if (i >= op_stats_.size()) {
        op_stats_.resize(i + 1);
        op_used_.resize(i + 1, 0);
    }
    op_used_[i] = 1;
    return op_stats_[i];
}

namespace {

static_assert(std::tuple_size_v<PricedNs> == kPriceFamilies);
static_assert([] {
    for (size_t k = 0; k < kPriceFamilies; ++k)
        if (std::string_view(kernel::kPricedFamilies[k]) != kPriceFamilyNames[k]) return false;
    return true;
}());
const Label kCommitOp(kernel::op::kSetBools);

// An item of `len` over which the task's priced time went from `at` to `now`. A span is charged
// when it starts: an item cut short (open at the end) may hold more than its length, and is then
// scaled down to it.
kernel::PricedItem priced_item(Time len, const PricedNs &now, const PricedNs &at) {
    kernel::PricedItem item{len, {}};
    Time sum = 0;
    for (size_t k = 0; k < kPriceFamilies; ++k)
        sum += item.family[k] = now[k] - at[k];
    if (sum > len && sum > 0)
        for (Time &f : item.family)
            f = static_cast<Time>(static_cast<__int128>(f) * len / sum);
    return item;
}

}  // namespace

void SimPlatform::op_begin(Label label) {
    if (Task *t = cur_) {
        t->ops.push_back(OpFrame{label, engine_.now(), mem_.live_bytes, live_seq_});
        if (cfg_.record_priced && label == kCommitOp) t->commit_priced_at = t->priced;
    }
}

void SimPlatform::op_end(Label label) {
    Task *t = cur_;
    if (!t || teardown_) return;
    if (t->ops.empty() || t->ops.back().label != label) {
        violation("op_scope_mismatch",
                  fmt::format("operation '{}' ended in {} while another was innermost",
                              label.name(), t->params.name));
        return;
    }
    OpFrame f = t->ops.back();
    t->ops.pop_back();
    t->last_op = label;
    if (recording()) {
        kernel::OpStats &s = op_stats(label);
        ++s.completed;
        s.latency.record(engine_.now() - f.start);
        if (label == kCommitOp) {
            if (cfg_.record_priced)
                priced_.toggle.add(
                    priced_item(engine_.now() - f.start, t->priced, t->commit_priced_at));
            stop_if_over("toggle.max_ns", engine_.now() - f.start, cfg_.stop_over.commit);
        }
        s.peak_live_bytes = std::max(s.peak_live_bytes, peak_live_since(f));
        s += f.parts;
    }
    if (!fully_preemptible(cfg_.preempt) && t->ops.empty())
        maybe_preempt();  // return to user space
}

void SimPlatform::close_section(Task *t, Section &s, bool irq, const Site &end) {
    Time len = engine_.now() - s.start;
    Cpu &c = cpu_of(t);
    (irq ? t->last_ioff : t->last_poff) = s;
    (irq ? t->last_ioff_end : t->last_poff_end) = engine_.now();
    note_held(c, s.start, engine_.now());
    if (recorder_)
        recorder_->atomic_section(c.id, irq, s.start, engine_.now(), t->params.name, s.label.name(),
                                  s.site.str(), end.str());
    const bool on_frame = charge_section_to_frame(t, s, irq, len);
    if (!recording()) return;
    record_section(t, s, irq, len, &end, on_frame);
    if (irq)
        stop_if_over("irqs_off.max_ns", len, cfg_.stop_over.irqs_off);
    else
        stop_if_over("preempt_off.max_ns", len, cfg_.stop_over.preempt_off);
}

// What holds a CPU against a woken task of the highest priority, as one stretch: sections and
// interrupt time that overlap or touch are one wait for a task woken inside them. Each piece
// reaches here when it ends (a section) or begins with its end known (interrupt time), so a
// piece never lies wholly before the stretch held so far: it extends it, or the stretch is
// over.
void SimPlatform::note_held(Cpu &c, Time from, Time to) {
    if (to <= from) return;
    if (c.held_start >= 0 && from <= c.held_end) {
        c.held_start = std::min(c.held_start, from);
        c.held_end = std::max(c.held_end, to);
        return;
    }
    record_held(c);
    c.held_start = from;
    c.held_end = to;
}

// A stretch counts when it lies in the measured window: one still open at the window's end
// (drain work runs after it) is a lower bound, listed apart.
void SimPlatform::record_held(Cpu &c) {
    const Time from = std::exchange(c.held_start, -1), to = c.held_end;
    const Time end = window_end();
    if (from < 0 || !warm_ || to <= stats_since_ || from >= end) return;
    if (to > end) {
        cpu_held_.record(end - from);
        cpu_held_open_.push_back(end - from);
    } else {
        cpu_held_.record(to - from);
    }
}

Time SimPlatform::window_end() const {
    return early_stop_.metric.empty() ? cfg_.duration : std::min(cfg_.duration, early_stop_.at_ns);
}

void SimPlatform::stop_if_over(const char *path, Time value, Time limit) {
    if (limit <= 0 || value <= limit || !warm_ || !early_stop_.metric.empty()) return;
    early_stop_ = {path, value, limit, engine_.now()};
    trace_event("stop: {} {} ns over its limit {} ns", path, value, limit);
    // What is open now is censored here and nothing after is recorded; then the run ends as at
    // its duration: no new work starts, and the work in flight drains, unrecorded, so that what
    // it holds is released as in any run.
    close_open_at_end(engine_.now());
    drained_ = true;
    stop_ = true;
    rcu_.kick_callback_task();
    stop_if_done();
}

// The operation's part: on its frame while it is open (it counts if the operation ends in the
// recorded window, or is still open at the end), else, for a section that outlived its
// operation, directly on the operation's statistics (record_section).
bool SimPlatform::charge_section_to_frame(Task *t, const Section &s, bool irq, Time len) {
    OpFrame *f = frame(t);
    const bool on_frame = f && !s.label.empty() && f->label == s.label;
    if (on_frame) (irq ? f->parts.irqs_off_ns : f->parts.preempt_off_ns) += len;
    return on_frame;
}

void SimPlatform::record_section(Task *t, const Section &s, bool irq, Time len, const Site *end,
                                 bool on_frame) {
    Cpu &c = cpu_of(t);
    kernel::IntervalStats &stats = irq ? irqs_off_ : preempt_off_;
    (irq ? c.stats.irqs_off_ns : c.stats.preempt_off_ns) += len;
    if (cfg_.record_priced)
        (irq ? priced_.irqs_off : priced_.preempt_off)
            .add(priced_item(len, t->priced, irq ? t->ioff_priced_at : t->poff_priced_at));
    if (!s.label.empty() && !on_frame) {
        kernel::OpStats &o = op_stats(s.label);
        (irq ? o.irqs_off_ns : o.preempt_off_ns) += len;
    }
    // The description (strings) is made only for a section the longest list keeps; the closure
    // holds one pointer, so that std::function keeps it without allocating.
    struct Parts {
        const Cpu &c;
        const Task *t;
        const Section &s;
        Time len;
        const Site *end;
    } parts{c, t, s, len, end};
    auto describe = [p = &parts] {
        return kernel::AtomicInterval{p->c.id,
                                      p->s.start,
                                      p->len,
                                      p->t->params.name,
                                      std::string(p->s.label.name()),
                                      p->s.site.str(),
                                      p->end ? p->end->str() : std::string("(open at the end)")};
    };
    if (end)
        stats.record(len, describe);
    else
        stats.record_open(len, describe);
}

void SimPlatform::close_open_at_end(Time now) {
    for (auto &tp : tasks_) {
        Task *t = tp.get();
        if (t->state == TaskState::Dead || t->state == TaskState::New) continue;
        if (t->preempt_count > 0 || t->irqs_off)
            note_held(cpu_of(t),
                      std::min(t->preempt_count > 0 ? t->poff.start : now,
                               t->irqs_off ? t->ioff.start : now),
                      now);
        if (t->preempt_count > 0) {
            const Time len = now - t->poff.start;
            const bool on_frame = charge_section_to_frame(t, t->poff, false, len);
            record_section(t, t->poff, false, len, nullptr, on_frame);
        }
        if (t->irqs_off) {
            const Time len = now - t->ioff.start;
            const bool on_frame = charge_section_to_frame(t, t->ioff, true, len);
            record_section(t, t->ioff, true, len, nullptr, on_frame);
        }
        // An operation open at the end: its elapsed part, a lower bound of its latency. Its
        // parts stay out of the totals, which hold the operations that completed.
        for (const OpFrame &f : t->ops) {
            kernel::OpStats &s = op_stats(f.label);
            s.latency.record(now - f.start);
            s.open_at_end.push_back(now - f.start);
            if (cfg_.record_priced && f.label == kCommitOp)
                priced_.toggle.add(priced_item(now - f.start, t->priced, t->commit_priced_at));
        }
        if (t->params.probe && t->probe_due >= 0 && t->probe_due <= cfg_.duration) {
            wakeup_[t->params.name].record(now - t->probe_due);
            wakeup_open_[t->params.name] = now - t->probe_due;
            note_timer_held(t, t->probe_due);
            if (t->wait_since >= 0) {
                const Cpu &c = cpu_of(t);
                note_delay(t, c.curr, c, t->wait_since, now);
            }
            finish_wakeup(t, t->probe_due, now - t->probe_due, true);
        }
    }
    locks_.censor_open_waits(now);
}

void SimPlatform::violation(std::string_view kind, std::string message) {
    std::string key = fmt::format("{}\n{}", kind, message);
    if (!violation_keys_.insert(key).second) return;  // each distinct report once
    Task *t = cur_;
    kernel::Violation v{std::string(kind), engine_.now(), t ? t->cpu : -1,
                        t ? t->params.name : std::string(), std::move(message)};
    trace_event("violation {}: {}", v.kind, v.message);
    violations_.push_back(std::move(v));
}

// ---------------------------------------------------------------- memory

void SimPlatform::note_live_bytes() {
    const int64_t live = mem_.live_bytes;
    mem_.peak_bytes = std::max(mem_.peak_bytes, live);
    while (!live_peaks_.empty() && live_peaks_.back().second <= live)
        live_peaks_.pop_back();
    live_peaks_.emplace_back(++live_seq_, live);
    if (live_peaks_.size() < 4096) return;
    // Drop the entries no open operation can ask for.
    uint64_t oldest = live_seq_;
    for (const auto &t : tasks_)
        for (const OpFrame &f : t->ops)
            oldest = std::min(oldest, f.live_seq);
    auto keep = std::upper_bound(live_peaks_.begin(), live_peaks_.end(), oldest,
                                 [](uint64_t s, const auto &e) { return s < e.first; });
    live_peaks_.erase(live_peaks_.begin(), keep);
}

int64_t SimPlatform::peak_live_since(const OpFrame &f) const {
    auto it = std::upper_bound(live_peaks_.begin(), live_peaks_.end(), f.live_seq,
                               [](uint64_t s, const auto &e) { return s < e.first; });
    return it == live_peaks_.end() ? f.peak_live : std::max(f.peak_live, it->second);
}

void *SimPlatform::mem_alloc(size_t bytes, kernel::AllocKind kind, Site site) {
    Task *t = cur_;
    const PrimitiveCosts &pc = cfg_.profile.primitive;
    bool sleeps = kind != kernel::AllocKind::KmallocAtomic;
    if (t && sleeps && (t->preempt_count > 0 || t->irqs_off || t->rcu_nesting > 0))
        violation(
            "sleep_in_atomic",
            fmt::format(
                "sleeping function called from invalid context: {} in {} (preempt count {}, irqs "
                "{}, rcu nesting {}); use Gfp::Atomic",
                site.str(), t->params.name, t->preempt_count, t->irqs_off ? "off" : "on",
                t->rcu_nesting));
    else if (t && sleeps && cfg_.preempt == PreemptModel::Voluntary)
        cond_resched(site);  // a blocking allocation's might_sleep (slab_pre_alloc_hook)
    auto n = static_cast<int64_t>(bytes);
    Allocation &a = allocs_.allocate(bytes);
    a.bytes = n;
    a.kind = kind;
    void *p = a.object();
    mem_.live_bytes += n;
    if (sleeps) {
        ++mem_.allocs_sleeping;
        mem_.bytes_sleeping += n;
    } else {
        ++mem_.allocs_atomic;
        mem_.bytes_atomic += n;
    }
    note_live_bytes();
    if (OpFrame *f = frame(t)) f->parts.bytes_allocated += n;
    if (t) {
        Time cost = kind == kernel::AllocKind::Vmalloc
                        ? pc.vmalloc + pc.vmalloc_page * static_cast<Time>((bytes + 4095) / 4096)
                        : pc.kmalloc;
        advance(cost);
    }
    return p;
}

void SimPlatform::mem_charge(const void *p, int64_t bytes) {
    Allocation *a = allocs_.find(p);
    if (!a) {
        violation("bad_free", "kmem_charge on memory that is not an accounted allocation");
        return;
    }
    a->bytes += bytes;
    mem_.live_bytes += bytes;
    note_live_bytes();
    if (OpFrame *f = frame(cur_)) f->parts.bytes_allocated += bytes;
}

void SimPlatform::mem_free(const void *p, Site site) {
    Task *t = cur_;
    Allocation *a = allocs_.find(p);
    if (!a) {
        violation("bad_free",
                  fmt::format("{} of memory that is not allocated (double free?)", site.str()));
        return;
    }
    rcu_.freeing(a->rcu_publication, site);
    mem_.live_bytes -= a->bytes;
    ++mem_.frees;
    bool vm = a->kind == kernel::AllocKind::Vmalloc;
    allocs_.free(*a);
    if (t && !teardown_) {
        const PrimitiveCosts &pc = cfg_.profile.primitive;
        advance(vm ? pc.vmalloc / 2 : pc.kfree);
    }
}

// ---------------------------------------------------------------- trace and results

void SimPlatform::trace_line(std::string line) {
    trace_.push_back(fmt::format("{:>12} {}", engine_.now(), line));
}

void SimPlatform::reset_stats() {
    const Time now = engine_.now();
    for (auto &op : op_stats_)
        op = kernel::OpStats{};
    wakeup_.clear();
    wakeup_open_.clear();
    wakeup_worst_.clear();
    preempt_off_ = kernel::IntervalStats{.keep = cfg_.keep_longest};
    irqs_off_ = kernel::IntervalStats{.keep = cfg_.keep_longest};
    cpu_held_ = {};
    cpu_held_open_.clear();
    priced_ = {};
    locks_.reset_stats();
    rcu_.reset_stats();
    const int64_t live = mem_.live_bytes;
    mem_ = kernel::MemStats{.live_bytes = live, .peak_bytes = live};
    for (Cpu &c : cpus_) {
        c.stats = kernel::CpuStats{};
        c.busy_since = now;
    }
    std::fill(compute_ns_.begin(), compute_ns_.end(), 0);
    std::fill(stall_.begin(), stall_.end(), MemoryTally{});
    stats_since_ = now;
    warm_ = true;
}

kernel::RunResults SimPlatform::collect() {
    kernel::RunResults r;
    r.platform = "sim";
    // Stopped early: what was measured is the time until the stop.
    r.duration_ns = window_end() - stats_since_;
    r.seed = cfg_.seed;
    r.events = engine_.events_processed();
    r.config = {{"cpus", std::to_string(cfg_.cpus)},
                {"profile", cfg_.profile.name},
                {"cost_model", cfg_.cost_model == CostModel::Counted ? "counted" : "measured"},
                {"preempt", cfg_.preempt == PreemptModel::Full        ? "full"
                            : cfg_.preempt == PreemptModel::None      ? "none"
                            : cfg_.preempt == PreemptModel::Voluntary ? "voluntary"
                                                                      : "rt"},
                {"preempt_rcu", cfg_.preempt_rcu ? "true" : "false"},
                {"hz", std::to_string(cfg_.hz)},
                {"sched_latency_ns", std::to_string(latency_)},
                {"sched_min_granularity_ns", std::to_string(min_gran_)},
                {"sched_wakeup_granularity_ns", std::to_string(wakeup_gran_)}};
    if (cfg_.preempt == PreemptModel::Rt)
        r.config["rt_mutex_pi"] = cfg_.rt_mutex_pi ? "true" : "false";
    if (lock_line_model(cfg_) != LineModel::Flat)
        r.config["spinlock"] = cfg_.spinlock == SpinlockImpl::Byte ? "byte" : "queued";
    for (size_t i = 0; i < cfg_.irqs.size(); ++i) {
        const IrqSource &src = cfg_.irqs[i];
        r.config[fmt::format("irq.{}", i)] = fmt::format(
            "{} every {} ns, handler {} ns, softirq {} ns, on {}", src.kind, src.period(),
            src.handler, src.softirq,
            src.cpus.empty() ? "every CPU" : fmt::format("CPUs {}", fmt::join(src.cpus, ",")));
    }
    for (size_t i = 0; i < op_stats_.size(); ++i)
        if (op_used_[i])
            r.ops[std::string(kernel::label_name(static_cast<uint32_t>(i)))] = op_stats_[i];
    r.wakeup_latency = wakeup_;
    r.wakeup_open_at_end = wakeup_open_;
    for (const auto &[probe, worst] : wakeup_worst_)
        r.wakeup_worst.insert(r.wakeup_worst.end(), worst.begin(), worst.end());
    std::stable_sort(r.wakeup_worst.begin(), r.wakeup_worst.end(),
                     [](const kernel::WakeupRecord &a, const kernel::WakeupRecord &b) {
                         return a.late > b.late;
                     });
    r.preempt_off = preempt_off_;
    r.irqs_off = irqs_off_;
    if (fully_preemptible(cfg_.preempt)) {
        for (Cpu &c : cpus_)
            record_held(c);
        r.cpu_held = cpu_held_;
        r.cpu_held_open_at_end = cpu_held_open_;
    } else {
        r.cpu_held_absent = fmt::format(
            "preemption {}: kernel code holds a CPU outside its sections, and those stretches are "
            "not recorded",
            r.config["preempt"]);
    }
    r.early_stop = early_stop_;
    if (cfg_.record_priced && cfg_.cost_model == CostModel::Counted) r.priced = priced_;
    locks_.collect(r.locks);
    r.rcu = rcu_.stats();
    r.memory = mem_;
    Time end = std::min(engine_.now(), cfg_.duration + cfg_.drain_limit);
    for (const Cpu &c : cpus_) {
        kernel::CpuStats s = c.stats;
        if (c.act != Act::Idle) s.busy_ns += end - c.busy_since;
        r.cpus.push_back(s);
    }
    for (size_t i = 0; i < stall_.size(); ++i)
        if (stall_[i].touches != 0)
            r.memory_stall[std::string(kernel::label_name(static_cast<uint32_t>(i)))] = {
                stall_[i].touches, stall_[i].l2_hits, stall_[i].llc_hits, stall_[i].dram,
                (stall_[i].stall_ps + 500) / 1000};
    for (size_t i = 0; i < compute_ns_.size(); ++i)
        if (compute_ns_[i] != 0)
            r.compute_ns[std::string(kernel::label_name(static_cast<uint32_t>(i)))] =
                compute_ns_[i];
    r.violations = violations_;
    return r;
}

// ---------------------------------------------------------------- cost of work

void SimPlatform::charge(Label label, const locksim::WorkCounts &counts, Time host_ns) {
    constexpr size_t kWork = static_cast<size_t>(PriceFamily::Work);
    constexpr size_t kMemory = static_cast<size_t>(PriceFamily::Memory);
    if (cfg_.cost_model != CostModel::Counted) {
        const auto ns =
            static_cast<Time>(static_cast<double>(host_ns) * cfg_.profile.measured_scale);
        if (cur_ && ns > 0) cur_->priced[kWork] += ns;
        ndelay(ns, label);
        return;
    }
    const int cpu = cur_ ? cur_->cpu : 0;
    int64_t ps = cfg_.host_span_overhead * 1000;
    if (cfg_.price_stand_ins || !counts.stand_in) ps += cfg_.profile.cost_ps(counts);
    if (const int64_t speed = speed_ppm_[static_cast<size_t>(cpu)]; speed != 1'000'000)
        ps = static_cast<int64_t>(static_cast<__int128>(ps) * 1'000'000 / speed);
    int64_t stall = 0;
    if (caches_ && counts.line_touches > 0) {
        MemoryTally t;
        // Lines leave a CPU's private levels while it idles, and the last level with time.
        const Time idle = cur_ ? cpus_[static_cast<size_t>(cpu)].idle_total : 0;
        stall = caches_->price_sampled(cpu, counts.lines, counts.line_touches, t, now(), idle);
        ps += stall;
        if (recording()) {
            if (label.id() >= stall_.size()) stall_.resize(label.id() + 1);
            MemoryTally &s = stall_[label.id()];
            s.touches += t.touches;
            s.l2_hits += t.l2_hits;
            s.llc_hits += t.llc_hits;
            s.dram += t.dram;
            s.stall_ps += t.stall_ps;
        }
    }
    const Time ns = (ps + 500) / 1000;
    if (cur_ && ns > 0) {
        const Time stall_ns = std::min(ns, (stall + 500) / 1000);
        cur_->priced[kWork] += ns - stall_ns;
        cur_->priced[kMemory] += stall_ns;
    }
    ndelay(ns, label);
}

// Time on the current task under a compute label: busy work that follows no price (a kernel's
// cpu_relax loop, a workload's), or charge()'s work, whose price family it has noted already.
void SimPlatform::ndelay(Time ns, Label label) {
    Task *t = cur_;
    if (!t || ns <= 0) return;
    if (recording()) {
        if (label.id() >= compute_ns_.size()) compute_ns_.resize(label.id() + 1, 0);
        compute_ns_[label.id()] += ns;
    }
    if (OpFrame *f = frame(t)) f->parts.compute_ns += ns;
    advance(ns, kUnpriced);
}

}  // namespace locksim::sim
