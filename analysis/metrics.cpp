#include "analysis/metrics.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <type_traits>

#include "analysis/table.h"
#include "analysis/wakeup_cause.h"
#include "record/op_names.h"

namespace locksim::analysis {

namespace {

using kernel::Histogram;

// How many were open at the end, and whether the worst of `h` is one of them.
Censoring censoring(const std::vector<Time> &open, const Histogram &h) {
    Censoring c;
    c.open_at_end = open.size();
    for (Time t : open)
        c.max_censored = c.max_censored || t >= h.max();
    return c;
}

// The probe tasks' wake-ups, all together, and those due but not made when the run ended.
Histogram probe(const RunRecords &r) {
    Histogram h;
    for (const auto &[task, one] : r.results.wakeup_latency)
        h.merge(one);
    return h;
}
std::vector<Time> probe_open(const RunRecords &r) {
    std::vector<Time> open;
    for (const auto &[task, late] : r.results.wakeup_open_at_end)
        open.push_back(late);
    return open;
}

// The read-side operations, all together.
struct Readers {
    Histogram latency;
    std::vector<Time> open;
    uint64_t completed = 0;
};
Readers readers(const RunRecords &r) {
    Readers out;
    for (const auto &[label, op] : r.results.ops) {
        if (!r.is_reader(label)) continue;
        out.latency.merge(op.latency);
        out.open.insert(out.open.end(), op.open_at_end.begin(), op.open_at_end.end());
        out.completed += op.completed;
    }
    return out;
}

// The commit's own operation (set_bools); an empty one when nothing committed.
const kernel::OpStats &commit(const RunRecords &r) {
    static const kernel::OpStats none;
    auto it = r.results.ops.find(kernel::op::kSetBools);
    return it == r.results.ops.end() ? none : it->second;
}

const kernel::AtomicInterval *worst_section(const RunRecords &r) {
    const auto &longest = r.results.preempt_off.longest;
    return longest.empty() ? nullptr : &longest.front();
}

double throughput(const RunRecords &r) {
    const double ops = static_cast<double>(readers(r).completed);
    return r.measured_seconds > 0 ? ops / r.measured_seconds : 0;
}

// A CPU statistic summed over the CPUs.
int64_t cpu_total(const RunRecords &r, Time kernel::CpuStats::*field) {
    int64_t total = 0;
    for (const kernel::CpuStats &c : r.results.cpus)
        total += c.*field;
    return total;
}

// An interval's figures (preempt_off, irqs_off) share their extraction.
template <kernel::IntervalStats kernel::RunResults::*S>
Value interval_max(const RunRecords &r) {
    return (r.results.*S).length.max();
}
template <kernel::IntervalStats kernel::RunResults::*S, int P>
Value interval_pct(const RunRecords &r) {
    return (r.results.*S).length.value_at_percentile(P);
}
template <kernel::IntervalStats kernel::RunResults::*S>
Value interval_count(const RunRecords &r) {
    return (r.results.*S).length.count();
}
template <kernel::IntervalStats kernel::RunResults::*S>
Value interval_open(const RunRecords &r) {
    return uint64_t{(r.results.*S).open_at_end.size()};
}
template <kernel::IntervalStats kernel::RunResults::*S>
Value interval_censored(const RunRecords &r) {
    return censoring((r.results.*S).open_at_end, (r.results.*S).length).max_censored;
}

constexpr auto kPreemptOff = &kernel::RunResults::preempt_off;
constexpr auto kIrqsOff = &kernel::RunResults::irqs_off;

// The entries. Within a group: the worst (max) first, then percentiles, count, what follows
// the worst, and the censoring (open_at_end, max_censored) last.
const Metric kMetrics[] = {
    // --- preempt_off: outermost sections with preemption off (ftrace's preemptoff) ---
    {.group = "preempt_off",
     .key = "max_ns",
     .unit = Unit::Ns,
     .meaning = "longest preempt-off section",
     .field = &RunSummary::preempt_off_max_ns,
     .extract = interval_max<kPreemptOff>,
     .table = {"preempt-off", "worst"},
     .spread = SpreadColumn::Range,
     .spread_heading = "preempt-off worst",
     .pick = {"--max-preempt-off", "preempt-off",
              "Worst preempt-off section, e.g. 100us; 100us@1e-9: the tail estimate of the "
              "length exceeded with that probability per section",
              "section", TailMetric::PreemptOff},
     .series = Series::Scaling,
     .series_name = "worst preempt-off"},
    {.group = "preempt_off",
     .key = "p99_ns",
     .unit = Unit::Ns,
     .meaning = "99th percentile of the preempt-off sections",
     .field = &RunSummary::preempt_off_p99_ns,
     .extract = interval_pct<kPreemptOff, 99>,
     .table = {"preempt-off", "p99"},
     .spread = SpreadColumn::MeanCi,
     .spread_heading = "preempt-off p99"},
    {.group = "preempt_off",
     .key = "p50_ns",
     .unit = Unit::Ns,
     .meaning = "median preempt-off section",
     .field = &RunSummary::preempt_off_p50_ns,
     .extract = interval_pct<kPreemptOff, 50>},
    {.group = "preempt_off",
     .key = "count",
     .unit = Unit::Count,
     .meaning = "preempt-off sections",
     .field = &RunSummary::preempt_off_count,
     .extract = interval_count<kPreemptOff>,
     .worst = Worst::Sum},
    {.group = "preempt_off",
     .key = "worst_label",
     .unit = Unit::Text,
     .meaning = "the operation the longest section ran for",
     .field = &RunSummary::preempt_off_worst_label,
     .extract = [](const RunRecords &r) -> Value {
         const kernel::AtomicInterval *w = worst_section(r);
         return w ? section_operation(w->label, w->task) : std::string();
     },
     .worst = Worst::Follows,
     .leader = "max_ns"},
    {.group = "preempt_off",
     .key = "worst_site",
     .unit = Unit::Text,
     .meaning = "where the longest section began",
     .field = &RunSummary::preempt_off_worst_site,
     .extract = [](const RunRecords &r) -> Value {
         const kernel::AtomicInterval *w = worst_section(r);
         return w ? w->start_site : std::string();
     },
     .worst = Worst::Follows,
     .leader = "max_ns"},
    {.group = "preempt_off",
     .key = "open_at_end",
     .unit = Unit::Count,
     .meaning = "sections still open when the run ended",
     .field = CensoringPart{&RunSummary::preempt_off_open, false},
     .extract = interval_open<kPreemptOff>,
     .zero_reason = "a section is open at the end only when the run ends inside one"},
    {.group = "preempt_off",
     .key = "max_censored",
     .unit = Unit::Flag,
     .meaning = "the longest section was still open at the end (a lower bound)",
     .field = CensoringPart{&RunSummary::preempt_off_open, true},
     .extract = interval_censored<kPreemptOff>,
     .worst = Worst::Follows,
     .leader = "max_ns",
     .zero_reason = "only when the run ends inside its longest section"},

    // --- irqs_off: outermost sections with interrupts off (ftrace's irqsoff) ---
    {.group = "irqs_off",
     .key = "max_ns",
     .unit = Unit::Ns,
     .meaning = "longest IRQs-off section",
     .field = &RunSummary::irqs_off_max_ns,
     .extract = interval_max<kIrqsOff>,
     .table = {"irqs-off", "worst"},
     .pick = {"--max-irqs-off", "irqs-off", "Worst IRQs-off section (also DURATION@P)", "section",
              TailMetric::IrqsOff}},
    {.group = "irqs_off",
     .key = "p99_ns",
     .unit = Unit::Ns,
     .meaning = "99th percentile of the IRQs-off sections",
     .field = &RunSummary::irqs_off_p99_ns,
     .extract = interval_pct<kIrqsOff, 99>},
    {.group = "irqs_off",
     .key = "count",
     .unit = Unit::Count,
     .meaning = "IRQs-off sections",
     .field = &RunSummary::irqs_off_count,
     .extract = interval_count<kIrqsOff>,
     .worst = Worst::Sum},
    {.group = "irqs_off",
     .key = "open_at_end",
     .unit = Unit::Count,
     .meaning = "IRQs-off sections still open when the run ended",
     .field = CensoringPart{&RunSummary::irqs_off_open, false},
     .extract = interval_open<kIrqsOff>,
     .zero_reason = "a section is open at the end only when the run ends inside one"},
    {.group = "irqs_off",
     .key = "max_censored",
     .unit = Unit::Flag,
     .meaning = "the longest IRQs-off section was still open at the end",
     .field = CensoringPart{&RunSummary::irqs_off_open, true},
     .extract = interval_censored<kIrqsOff>,
     .worst = Worst::Follows,
     .leader = "max_ns",
     .zero_reason = "only when the run ends inside its longest section"},

    // --- probe_wakeup: how late the real-time probes woke (cyclictest) ---
    {.group = "probe_wakeup",
     .key = "max_ns",
     .unit = Unit::Ns,
     .meaning = "worst probe wake-up latency",
     .field = &RunSummary::probe_max_ns,
     .extract = [](const RunRecords &r) -> Value { return probe(r).max(); },
     .table = {"probe wake-up", "worst"},
     .spread = SpreadColumn::Range,
     .spread_heading = "probe worst",
     .pick = {"--max-probe-wakeup", "probe wake-up",
              "Worst real-time probe wake-up latency (200us@1e-9: per wake-up)", "wake-up",
              TailMetric::ProbeWakeup},
     .series = Series::Scaling,
     .series_name = "worst probe wake-up"},
    {.group = "probe_wakeup",
     .key = "p99_ns",
     .unit = Unit::Ns,
     .meaning = "99th percentile of the probe wake-ups",
     .field = &RunSummary::probe_p99_ns,
     .extract = [](const RunRecords &r) -> Value { return probe(r).value_at_percentile(99); },
     .table = {"probe wake-up", "p99"},
     .spread = SpreadColumn::MeanCi,
     .spread_heading = "probe p99"},
    {.group = "probe_wakeup",
     .key = "p50_ns",
     .unit = Unit::Ns,
     .meaning = "median probe wake-up",
     .field = &RunSummary::probe_p50_ns,
     .extract = [](const RunRecords &r) -> Value { return probe(r).value_at_percentile(50); }},
    {.group = "probe_wakeup",
     .key = "count",
     .unit = Unit::Count,
     .meaning = "probe wake-ups",
     .field = &RunSummary::probe_count,
     .extract = [](const RunRecords &r) -> Value { return probe(r).count(); },
     .worst = Worst::Sum},
    {.group = "probe_wakeup",
     .key = "worst_cause",
     .unit = Unit::Text,
     .meaning = "what delayed the worst wake-up: the section (label and site), the task or the "
                "kernel code that held its CPU, or on time",
     .field = &RunSummary::probe_worst_cause,
     .extract = [](const RunRecords &r) -> Value {
         const kernel::WakeupRecord *w = worst_wakeup(r.results);
         return w ? describe_cause(*w) : std::string();
     },
     .worst = Worst::Follows,
     .leader = "max_ns"},
    {.group = "probe_wakeup",
     .key = "open_at_end",
     .unit = Unit::Count,
     .meaning = "probe wake-ups due but not made when the run ended",
     .field = CensoringPart{&RunSummary::probe_open, false},
     .extract = [](const RunRecords &r) -> Value { return uint64_t{probe_open(r).size()}; },
     .zero_reason = "only when the run ends while a probe waits to run"},
    {.group = "probe_wakeup",
     .key = "max_censored",
     .unit = Unit::Flag,
     .meaning = "the worst wake-up was still due at the end",
     .field = CensoringPart{&RunSummary::probe_open, true},
     .extract = [](const RunRecords &r) -> Value {
         return censoring(probe_open(r), probe(r)).max_censored;
     },
     .worst = Worst::Follows,
     .leader = "max_ns",
     .zero_reason = "only when the run ends while the latest probe waits longer than any did"},

    // --- toggle: the boolean commit's own operation (set_bools); parts are run totals ---
    {.group = "toggle",
     .key = "count",
     .unit = Unit::Count,
     .meaning = "boolean commits that completed",
     .field = &RunSummary::toggle_count,
     .extract = [](const RunRecords &r) -> Value { return commit(r).completed; },
     .worst = Worst::Sum},
    {.group = "toggle",
     .key = "p50_ns",
     .unit = Unit::Ns,
     .meaning = "median commit latency",
     .field = &RunSummary::toggle_p50_ns,
     .extract = [](const RunRecords &r) -> Value {
         return commit(r).latency.value_at_percentile(50);
     },
     .table = {"toggle", "p50"}},
    {.group = "toggle",
     .key = "max_ns",
     .unit = Unit::Ns,
     .meaning = "worst commit latency",
     .field = &RunSummary::toggle_max_ns,
     .extract = [](const RunRecords &r) -> Value { return commit(r).latency.max(); },
     .table = {"toggle", "worst"},
     .spread = SpreadColumn::Range,
     .spread_heading = "toggle worst",
     .pick = {"--max-toggle", "toggle",
              "Worst boolean commit (setsebool) latency, e.g. 10ms (also DURATION@P, per commit)",
              "commit", TailMetric::Toggle},
     .series = Series::Scaling,
     .series_name = "worst boolean commit"},
    {.group = "toggle",
     .key = "mean_ns",
     .unit = Unit::Ns,
     .meaning = "mean latency of the commits that completed",
     .field = &RunSummary::toggle_mean_ns,
     .extract = [](const RunRecords &r) -> Value { return commit(r).completed_mean(); },
     .series = Series::CommitTime,
     .series_name = "latency (mean)"},
    {.group = "toggle",
     .key = "readers_blocked_ns",
     .unit = Unit::Ns,
     .meaning = "time other tasks waited for locks the commits held (total)",
     .field = &RunSummary::toggle_readers_blocked_ns,
     .extract = [](const RunRecords &r) -> Value { return commit(r).caused_wait_ns; },
     .series = Series::CommitTime,
     .series_name = "readers blocked",
     .per_commit_total = true,
     .zero_reason = "the RCU designs make a reader wait for the commit only on the AVC's "
                    "notification lock (avc_ss_reset against avc_insert), rarely"},
    {.group = "toggle",
     .key = "preempt_off_ns",
     .unit = Unit::Ns,
     .meaning = "preempt-off time of the commits' own sections (total)",
     .field = &RunSummary::toggle_preempt_off_ns,
     .extract = [](const RunRecords &r) -> Value { return commit(r).preempt_off_ns; },
     .series = Series::CommitTime,
     .series_name = "preempt-off",
     .per_commit_total = true},
    {.group = "toggle",
     .key = "irqs_off_ns",
     .unit = Unit::Ns,
     .meaning = "IRQs-off time of the commits' own sections (total)",
     .field = &RunSummary::toggle_irqs_off_ns,
     .extract = [](const RunRecords &r) -> Value { return commit(r).irqs_off_ns; },
     .series = Series::CommitTime,
     .series_name = "irqs-off",
     .per_commit_total = true},
    {.group = "toggle",
     .key = "gp_wait_ns",
     .unit = Unit::Ns,
     .meaning = "time the commits waited for RCU grace periods (total)",
     .field = &RunSummary::toggle_gp_wait_ns,
     .extract = [](const RunRecords &r) -> Value { return commit(r).gp_wait_ns; },
     .series = Series::CommitTime,
     .series_name = "grace-period wait",
     .per_commit_total = true},
    {.group = "toggle",
     .key = "grace_periods",
     .unit = Unit::Count,
     .meaning = "synchronize_rcu calls the commits waited in (total)",
     .field = &RunSummary::toggle_grace_periods,
     .extract = [](const RunRecords &r) -> Value { return commit(r).grace_periods; },
     .series = Series::CommitCount,
     .series_name = "Grace periods waited"},
    {.group = "toggle",
     .key = "bytes_allocated",
     .unit = Unit::Bytes,
     .meaning = "bytes the commits allocated (total)",
     .field = &RunSummary::toggle_bytes_allocated,
     .extract = [](const RunRecords &r) -> Value { return commit(r).bytes_allocated; },
     .series = Series::CommitBytes,
     .series_name = "allocated",
     .per_commit_total = true},
    {.group = "toggle",
     .key = "peak_live_bytes",
     .unit = Unit::Bytes,
     .meaning = "highest live bytes seen during a commit",
     .field = &RunSummary::toggle_peak_live_bytes,
     .extract = [](const RunRecords &r) -> Value { return commit(r).peak_live_bytes; }},
    {.group = "toggle",
     .key = "avc_refill_ns",
     .unit = Unit::Ns,
     .meaning = "time of the AVC misses that refilled what the commits flushed (total)",
     .field = &RunSummary::toggle_avc_refill_ns,
     .extract = [](const RunRecords &r) -> Value {
         auto it = r.results.ops.find(kernel::op::kAvcRefill);
         return it == r.results.ops.end() ? Time{0} : it->second.latency.sum();
     },
     .series = Series::CommitTime,
     .series_name = "AVC refill",
     .per_commit_total = true},
    {.group = "toggle",
     .key = "open_at_end",
     .unit = Unit::Count,
     .meaning = "commits still running when the run ended",
     .field = CensoringPart{&RunSummary::toggle_open, false},
     .extract = [](const RunRecords &r) -> Value { return uint64_t{commit(r).open_at_end.size()}; },
     .zero_reason = "only when the run ends inside a commit"},
    {.group = "toggle",
     .key = "incomplete",
     .unit = Unit::Flag,
     .meaning = "a commit never completed (open_at_end > 0)",
     .field = Derived{[](const RunSummary &s) { return s.toggle_incomplete(); }},
     .worst = Worst::Max,
     .zero_reason = "only when the run ends inside a commit"},
    {.group = "toggle",
     .key = "max_censored",
     .unit = Unit::Flag,
     .meaning = "the worst commit was still running at the end",
     .field = CensoringPart{&RunSummary::toggle_open, true},
     .extract = [](const RunRecords &r) -> Value {
         return censoring(commit(r).open_at_end, commit(r).latency).max_censored;
     },
     .worst = Worst::Follows,
     .leader = "max_ns",
     .zero_reason = "only when the run ends inside a commit longer than any that completed"},

    // --- reader: the read-side operations of the workloads, all together ---
    {.group = "reader",
     .key = "count",
     .unit = Unit::Count,
     .meaning = "read-side operations (those still open at the end included)",
     .field = &RunSummary::reader_count,
     .extract = [](const RunRecords &r) -> Value { return readers(r).latency.count(); },
     .worst = Worst::Sum},
    {.group = "reader",
     .key = "p50_ns",
     .unit = Unit::Ns,
     .meaning = "median read-side operation",
     .field = &RunSummary::reader_p50_ns,
     .extract = [](const RunRecords &r) -> Value {
         return readers(r).latency.value_at_percentile(50);
     }},
    {.group = "reader",
     .key = "p99_ns",
     .unit = Unit::Ns,
     .meaning = "99th percentile of the read-side operations",
     .field = &RunSummary::reader_p99_ns,
     .extract = [](const RunRecords &r) -> Value {
         return readers(r).latency.value_at_percentile(99);
     },
     .table = {"reader", "p99"},
     .pick = {"--max-reader-p99", "reader p99", "99th percentile of read-side operations"},
     .series = Series::Scaling,
     .series_name = "reader p99"},
    {.group = "reader",
     .key = "max_ns",
     .unit = Unit::Ns,
     .meaning = "worst read-side operation",
     .field = &RunSummary::reader_max_ns,
     .extract = [](const RunRecords &r) -> Value { return readers(r).latency.max(); }},
    {.group = "reader",
     .key = "open_at_end",
     .unit = Unit::Count,
     .meaning = "read-side operations still in flight when the drain ended",
     .field = CensoringPart{&RunSummary::reader_open, false},
     .extract = [](const RunRecords &r) -> Value { return uint64_t{readers(r).open.size()}; },
     .zero_reason = "only when a read-side operation outlasts the drain after the duration"},
    {.group = "reader",
     .key = "max_censored",
     .unit = Unit::Flag,
     .meaning = "the worst read-side operation was still open at the end",
     .field = CensoringPart{&RunSummary::reader_open, true},
     .extract = [](const RunRecords &r) -> Value {
         const Readers rd = readers(r);
         return censoring(rd.open, rd.latency).max_censored;
     },
     .worst = Worst::Follows,
     .leader = "max_ns",
     .zero_reason = "only when the run ends inside a read-side operation longer than any other"},

    // --- throughput, memory, self-checks ---
    {.group = "throughput",
     .key = "ops",
     .unit = Unit::Count,
     .meaning = "read-side operations that completed",
     .field = &RunSummary::ops,
     .extract = [](const RunRecords &r) -> Value { return readers(r).completed; },
     .worst = Worst::Follows,
     .leader = "ops_per_sec",
     .csv = "ops"},
    {.group = "throughput",
     .key = "ops_per_sec",
     .unit = Unit::PerSecond,
     .meaning = "read-side operations completed per second of measured time",
     .field = &RunSummary::ops_per_sec,
     .extract = [](const RunRecords &r) -> Value { return throughput(r); },
     .worst = Worst::Min,
     .csv = "ops_per_sec",
     .table = {"ops/s", "", 9},
     .series = Series::Scaling,
     .series_name = "throughput"},
    {.group = "memory",
     .key = "peak_bytes",
     .unit = Unit::Bytes,
     .meaning = "highest live bytes of the run",
     .field = &RunSummary::peak_memory_bytes,
     .extract = [](const RunRecords &r) -> Value { return r.results.memory.peak_bytes; },
     .csv = "peak_memory_bytes",
     .table = {"peak", "memory"},
     .pick = {"--max-memory", "memory", "Peak memory, e.g. 512M"}},
    {.group = "cpu",
     .key = "irq_ns",
     .unit = Unit::Ns,
     .meaning = "time in hard interrupt handlers, over every CPU ([[machine.irq]] load)",
     .field = &RunSummary::irq_ns,
     .extract = [](const RunRecords &r) -> Value {
         return cpu_total(r, &kernel::CpuStats::irq_ns);
     },
     .zero_reason = "only scenarios with a [[machine.irq]] load have interrupt handlers"},
    {.group = "cpu",
     .key = "softirq_ns",
     .unit = Unit::Ns,
     .meaning = "time in the softirq work after the handlers, over every CPU",
     .field = &RunSummary::softirq_ns,
     .extract = [](const RunRecords &r) -> Value {
         return cpu_total(r, &kernel::CpuStats::softirq_ns);
     },
     .zero_reason = "only scenarios with a [[machine.irq]] load that has softirq work"},
    {.key = "violations",
     .unit = Unit::Count,
     .meaning = "self-check violations (a broken design)",
     .field = &RunSummary::violations,
     .extract = [](const RunRecords &r) -> Value { return uint64_t{r.results.violations.size()}; },
     .worst = Worst::Sum,
     .table = {"viol", "", 4},
     .zero_reason = "the shipped designs are correct; the sleeping readers break a self-check "
                    "only where a workload reads from softirq context"},
};

template <class T>
T as(const Value &v) {
    return std::visit(
        [](const auto &x) -> T {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, std::string> || std::is_same_v<T, std::string>) {
                if constexpr (std::is_same_v<X, T>) return x;
                throw std::logic_error("metric: text and numbers mixed");
            } else {
                return static_cast<T>(x);
            }
        },
        v);
}

}  // namespace

std::string Metric::path() const {
    return group ? std::string(group) + "." + key : std::string(key);
}

std::string Metric::csv_column() const {
    if (csv) return csv;
    return group ? std::string(group) + "_" + key : std::string(key);
}

std::span<const Metric> metrics() {
    return kMetrics;
}

const Metric *find_metric(std::string_view path) {
    for (const Metric &m : kMetrics)
        if (m.path() == path) return &m;
    return nullptr;
}

const Metric *sibling(const Metric &m, std::string_view key) {
    for (const Metric &o : kMetrics)
        if (((!o.group && !m.group) ||
             (o.group && m.group && std::string_view(o.group) == m.group)) &&
            key == o.key)
            return &o;
    return nullptr;
}

Value get(const RunSummary &s, const Metric &m) {
    return std::visit(
        [&](const auto &f) -> Value {
            using F = std::decay_t<decltype(f)>;
            if constexpr (std::is_same_v<F, CensoringPart>) {
                const Censoring &c = s.*f.censoring;
                return f.max_censored ? Value(c.max_censored) : Value(c.open_at_end);
            } else if constexpr (std::is_same_v<F, Derived>) {
                return f(s);
            } else {
                return s.*f;
            }
        },
        m.field);
}

void set(RunSummary &s, const Metric &m, const Value &v) {
    std::visit(
        [&](const auto &f) {
            using F = std::decay_t<decltype(f)>;
            if constexpr (std::is_same_v<F, CensoringPart>) {
                Censoring &c = s.*f.censoring;
                if (f.max_censored)
                    c.max_censored = as<bool>(v);
                else
                    c.open_at_end = as<uint64_t>(v);
            } else if constexpr (std::is_same_v<F, Derived>) {
                // computed from the others
            } else {
                using T = std::decay_t<decltype(s.*f)>;
                s.*f = as<T>(v);
            }
        },
        m.field);
}

double number(const RunSummary &s, const Metric &m) {
    const Value v = get(s, m);
    if (const auto *text = std::get_if<std::string>(&v)) return text->empty() ? 0 : 1;
    return as<double>(v);
}

void extract_metrics(RunSummary &s, const RunRecords &records) {
    for (const Metric &m : kMetrics)
        if (m.extract) set(s, m, m.extract(records));
}

bool is_censorable_worst(const Metric &m) {
    const Metric *c = sibling(m, "max_censored");
    return c && c->leader && std::string_view(c->leader) == m.key;
}

std::string section_operation(const std::string &label, const std::string &task) {
    if (!label.empty()) return label;
    return fmt::format("no operation ({} ran)", task.empty() ? "?" : task);
}

bool nothing_counted(const RunSummary &s, const Metric &m) {
    const Metric *count = sibling(m, "count");
    if (!count) return false;
    const Metric *open = is_censorable_worst(m) ? sibling(m, "open_at_end") : nullptr;
    return number(s, *count) == 0 && (!open || number(s, *open) == 0);
}

std::string metric_figure_text(const std::string &path, double figure) {
    if (!std::isfinite(figure)) return "no figure";
    const auto v = static_cast<int64_t>(std::llround(figure));
    if (find_metric(path)->unit == Unit::Bytes) return human_bytes(v);
    // Four digits: two figures close to each other differ in the last ones.
    if (v < 1000) return fmt::format("{}ns", v);
    if (v < 1'000'000) return fmt::format("{:.2f}us", figure / 1e3);
    if (v < 1'000'000'000) return fmt::format("{:.3f}ms", figure / 1e6);
    return fmt::format("{:.4f}s", figure / 1e9);
}

}  // namespace locksim::analysis
