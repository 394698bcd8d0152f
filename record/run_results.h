// The results of one run on a platform: plain structs the platforms fill and the command line
// serialises (to_json, snake_case keys, maps sorted by name so that a deterministic run gives a
// byte-identical file). analysis/ reads these; it never looks inside an engine.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "record/histogram.h"
#include "util/time.h"

namespace locksim::kernel {

inline constexpr int kResultsSchemaVersion = 2;

// One atomic section (preemption or interrupts off) on one CPU, as ftrace's preemptoff and
// irqsoff tracers report it: the outermost section, the operation it ran for, where it began
// and where it ended.
struct AtomicInterval {
    int cpu = 0;
    Time start = 0;
    Time length = 0;
    std::string task;
    std::string label;  // innermost operation of the task when the section began ("" if none)
    std::string start_site;
    std::string end_site;
};

// Every interval in a histogram, the longest `keep` with their labels. A section still open
// when the run ended is closed at the end and counted like the others, its length a lower bound
// ("at least"); `open_at_end` lists those lengths (right-censored values).
struct IntervalStats {
    Histogram length;
    Time total = 0;
    size_t keep = 20;
    std::vector<AtomicInterval> longest;  // longest first; ties by start time
    std::vector<Time> open_at_end;

    bool worth_keeping(Time len) const;
    void add(AtomicInterval iv);
    // Puts `iv` in the longest list if it is worth keeping (without counting it).
    void keep_if_longest(AtomicInterval iv);
    // Counts a section of `len` (the longest list gets it only when worth keeping).
    void record(Time len, const std::function<AtomicInterval()> &describe);
    // Counts a section still open at the end, `len` being the part that elapsed.
    void record_open(Time len, const std::function<AtomicInterval()> &describe);
    // Merging (here and in the structs below): what two parts recorded (two threads of a run,
    // as the real platform collects them) as one part recording both would hold. Sums add up,
    // histograms merge, the highest peak and the longest sections are kept, what was open at
    // the end is listed.
    void merge(const IntervalStats &part);
};

// What happens inside one operation (or all of a label's): the parts a platform attributes to
// the innermost operation open on a task.
struct OpParts {
    Time compute_ns = 0;      // charged core work inside the operation
    Time preempt_off_ns = 0;  // preempt-off time of the operation's own sections
    Time irqs_off_ns = 0;
    Time lock_wait_ns = 0;       // time the operation waited for locks
    Time gp_wait_ns = 0;         // time it waited for RCU grace periods
    uint64_t grace_periods = 0;  // synchronize_rcu calls (plain or expedited) it waited in
    int64_t bytes_allocated = 0;
    // The host's view of the operation's thread, where the real platform was asked for it
    // (RealConfig::host_clock_ops; zero elsewhere): the CPU time the thread ran, and how often
    // the host's scheduler took its CPU away (involuntary context switches).
    Time host_cpu_ns = 0;
    uint64_t host_preemptions = 0;

    OpParts &operator+=(const OpParts &o) {
        compute_ns += o.compute_ns;
        preempt_off_ns += o.preempt_off_ns;
        irqs_off_ns += o.irqs_off_ns;
        lock_wait_ns += o.lock_wait_ns;
        gp_wait_ns += o.gp_wait_ns;
        grace_periods += o.grace_periods;
        bytes_allocated += o.bytes_allocated;
        host_cpu_ns += o.host_cpu_ns;
        host_preemptions += o.host_preemptions;
        return *this;
    }
};

// Per operation label.
struct OpStats : OpParts {
    uint64_t completed = 0;
    Histogram latency;
    Time caused_wait_ns = 0;      // time other tasks waited for locks this operation held
    int64_t peak_live_bytes = 0;  // highest platform-wide live bytes seen during one operation
    // Operations in flight when the run ended: their elapsed time is in `latency` (a lower bound)
    // and listed here; `completed` does not count them.
    std::vector<Time> open_at_end;
    // The mean latency of the operations that completed: the histogram also holds the elapsed
    // part of those still open at the end.
    Time completed_mean() const {
        Time open = 0;
        for (Time t : open_at_end)
            open += t;
        return completed ? (latency.sum() - open) / static_cast<Time>(completed) : 0;
    }
    void merge(const OpStats &part);
};

// Per lock class (lock name). Index 0: exclusive (write), 1: shared (read).
struct LockStats {
    std::string kind;
    uint64_t acquisitions[2] = {0, 0};
    uint64_t contended[2] = {0, 0};
    Histogram wait[2];
    Histogram hold[2];
    std::vector<Time> wait_open_at_end[2];  // waits still going at the end (also in `wait`)
    void merge(const LockStats &part);      // the kind stays
};

struct RcuStats {
    uint64_t grace_periods = 0;
    uint64_t expedited_grace_periods = 0;
    uint64_t callbacks_invoked = 0;
    Histogram grace_period_ns;
    Histogram expedited_grace_period_ns;
    void merge(const RcuStats &part);
};

struct MemStats {
    int64_t live_bytes = 0;
    int64_t peak_bytes = 0;
    uint64_t allocs_atomic = 0;
    uint64_t allocs_sleeping = 0;
    int64_t bytes_atomic = 0;
    int64_t bytes_sleeping = 0;
    uint64_t frees = 0;
    // Live bytes add; the peak is the higher of the two (parts that allocate at different times).
    void merge(const MemStats &part);
};

struct CpuStats {
    Time busy_ns = 0;
    uint64_t context_switches = 0;
    Time preempt_off_ns = 0;
    Time irqs_off_ns = 0;
    // Interrupt load (sim): time in hard interrupt handlers and in the softirq work after them.
    Time irq_ns = 0;
    Time softirq_ns = 0;
    void merge(const CpuStats &part);
};

// What kept a probe from running during one stretch between its due time and the moment it ran.
// `kind`:
//   "irqs_off": an IRQs-off section on the probe's CPU (it held back the timer interrupt, or the
//     switch to the woken probe);
//   "preempt_off": a preempt-off section on the probe's CPU;
//   "kernel_code": kernel code that is not preemptible under preemption none or voluntary (no
//     section; `label` is the operation it ran, `site` is empty);
//   "task": a task of higher or equal priority ran (equal: it was ahead of the probe in FIFO
//     order); `label` is its innermost operation, `site` is empty;
//   "overdue": the wake-up was due before the probe went to sleep for it (the probe itself was
//     still late: its previous wake-up, or its start, says why); `task` is the probe.
//   "irq": hard interrupt work (the interrupt load's handlers, and their softirq time where it
//     runs inline) held off the switch to the probe; `task` is the probe, `label` "hardirq";
//   "softirq": softirq work ran on the probe's CPU (in softirq context, which outranks every
//     task); `task` is the CPU's softirq task, `label` the operation it ran;
//   "pi_chain": a task that outranked the probe only through priority inheritance ran: a
//     higher-priority task waits for an rt_mutex it holds (PREEMPT_RT); `via` names that waiter
//     and the lock.
struct WakeupDelay {
    std::string kind;
    int cpu = 0;
    std::string task;     // the task that held the CPU
    std::string label;    // the section's operation (or the task's, for kernel_code and task)
    std::string site;     // where the section began
    Time start = 0;       // when the section began (kernel_code, task: when the stretch began)
    Time length = 0;      // the section's whole length (kernel_code, task: the stretch's)
    Time delayed_ns = 0;  // the part of the wake-up's lateness this stretch accounts for
    std::string via;      // pi_chain: the waiter that lent its priority, and the lock
};

// One probe wake-up with what delayed it. `delays` in time order, empty when nothing held the
// CPU: the lateness is then the wake-up path itself (timer interrupt, context switch, idle exit).
struct WakeupRecord {
    std::string probe;
    int cpu = 0;  // the CPU the probe ran on
    Time due = 0;
    Time late = 0;
    bool open_at_end = false;  // still waiting when the run ended: `late` is a lower bound
    std::vector<WakeupDelay> delays;

    // The stretch that accounts for most of the lateness; nullptr when the wake-up was on time.
    const WakeupDelay *cause() const;
};

struct Violation {
    std::string kind;  // sleep_in_atomic, lock_order, rcu_free_in_use, lock_held_at_exit, ...
    Time time = 0;
    int cpu = -1;
    std::string task;
    std::string message;
};

struct MemoryStall {
    uint64_t lines = 0;    // distinct lines read, per call, summed
    uint64_t l2_hits = 0;  // of those, served by the private level past the first ([memory] l1_kib)
    uint64_t llc_hits = 0;  // served by the last level
    uint64_t dram = 0;      // served by memory
    Time stall_ns = 0;
    MemoryStall &operator+=(const MemoryStall &o) {
        lines += o.lines, l2_hits += o.l2_hits, llc_hits += o.llc_hits, dram += o.dram;
        stall_ns += o.stall_ns;
        return *this;
    }
};

// The longest items of one kind (preempt-off sections, irqs-off sections, boolean commits) with
// their time split by price family (sim/profile.h's PriceFamily: work, memory, primitive,
// grace_period; what is left of `len` followed no price: waiting, spinning, interrupts, jiffies).
// Enough to price the run's worst item again under other prices without running it again
// (analysis/reprice.h): every item not kept is no longer than the shortest kept.
struct PricedItem {
    Time len = 0;
    std::array<Time, 4> family{};
};
struct PricedTop {
    static constexpr size_t kKeep = 16;
    std::vector<PricedItem> items;  // the longest, longest first
    uint64_t count = 0;             // items seen, kept or not
    // Inline where the item is too short to keep (most sections), out of line where it is kept.
    void add(const PricedItem &item) {
        ++count;
        if (items.size() < kKeep || item.len > items.back().len) keep(item);
    }

  private:
    void keep(const PricedItem &item);
};
inline constexpr std::array<const char *, 4> kPricedFamilies = {"work", "memory", "primitive",
                                                                "grace_period"};
struct PricedRecord {
    PricedTop preempt_off, irqs_off, toggle;
    bool empty() const { return !preempt_off.count && !irqs_off.count && !toggle.count; }
    // The list whose longest item is the metric's worst value (nullptr: none is recorded).
    const PricedTop *of(std::string_view metric_path) const;
};
// The kinds a PricedRecord keeps, by name: the results file's keys, and the group of the metric
// (`<name>.max_ns`) whose worst item each holds.
inline constexpr std::array<std::pair<const char *, PricedTop PricedRecord::*>, 3> kPricedKinds = {
    {{"preempt_off", &PricedRecord::preempt_off},
     {"irqs_off", &PricedRecord::irqs_off},
     {"toggle", &PricedRecord::toggle}}};
inline constexpr std::string_view kPricedMetricKey = ".max_ns";

struct RunResults {
    int schema_version = kResultsSchemaVersion;
    std::string platform;                       // "sim" or "real"
    std::map<std::string, std::string> config;  // the platform's configuration, as text
    Time duration_ns = 0;
    uint64_t seed = 0;
    uint64_t events = 0;  // engine events processed (sim)
    std::map<std::string, OpStats> ops;
    std::map<std::string, Histogram> wakeup_latency;  // per probe task
    // Probe wake-ups due but not yet made when the run ended: lateness so far (also counted in
    // wakeup_latency), per probe task.
    std::map<std::string, Time> wakeup_open_at_end;
    // The worst wake-ups of the probe tasks with their causes, worst first (ties: by probe, then
    // due time); the simulator keeps `keep_longest` per probe. A platform that cannot tell what
    // held a CPU leaves it empty and says why in `wakeup_causes_absent`.
    std::vector<WakeupRecord> wakeup_worst;
    std::string wakeup_causes_absent;
    // The stretches in which a CPU could not switch to a woken task of the highest priority:
    // its preempt-off and IRQs-off sections and its interrupt time, overlapping ones merged into
    // one, each CPU apart. A wake-up at a random instant meets them in proportion to their
    // length (analysis/held_tail.h). A platform that cannot see them all leaves the histogram
    // empty and says why in `cpu_held_absent`.
    Histogram cpu_held;
    std::vector<Time> cpu_held_open_at_end;  // stretches still open when the run ended (so far)
    std::string cpu_held_absent;
    IntervalStats preempt_off;
    IntervalStats irqs_off;
    std::map<std::string, LockStats> locks;
    RcuStats rcu;
    MemStats memory;
    std::vector<CpuStats> cpus;
    std::map<std::string, Time> compute_ns;  // charged work per compute label
    // Where the profile models caches: per compute label, the part of compute_ns spent waiting
    // for lines the CPU's private cache lacked (included in compute_ns), and the line counts.
    std::map<std::string, MemoryStall> memory_stall;
    std::vector<Violation> violations;
    // What a workload's setup could not give as asked, one line each (fewer distinct senders,
    // domains or objects than it asked for, because the policy has no more): in the results
    // file as `workload_notes` (only when there are some) and printed as warnings, with the
    // run's sweep point.
    std::vector<std::string> workload_notes;
    // A run ended early because a figure passed its limit (sim::SimConfig::stop_over): the
    // metric's path ("preempt_off.max_ns"), the figure, the limit and when. Empty `metric`: ran
    // to its end.
    struct EarlyStop {
        std::string metric;
        Time value = 0, limit = 0, at_ns = 0;
    } early_stop;
    // Under the counted cost model: the longest sections and commits by price family.
    PricedRecord priced;

    // Violations of one kind.
    size_t count_violations(std::string_view kind) const;
};

void to_json(nlohmann::json &j, const AtomicInterval &v);
void to_json(nlohmann::json &j, const IntervalStats &v);
void to_json(nlohmann::json &j, const OpStats &v);
void to_json(nlohmann::json &j, const LockStats &v);
void to_json(nlohmann::json &j, const RcuStats &v);
void to_json(nlohmann::json &j, const MemStats &v);
void to_json(nlohmann::json &j, const CpuStats &v);
void to_json(nlohmann::json &j, const WakeupDelay &v);
void to_json(nlohmann::json &j, const WakeupRecord &v);
// Reads what to_json wrote; nlohmann's exceptions on a missing or mistyped key.
void from_json(const nlohmann::json &j, WakeupDelay &v);
void from_json(const nlohmann::json &j, WakeupRecord &v);
void to_json(nlohmann::json &j, const Violation &v);
void to_json(nlohmann::json &j, const MemoryStall &v);
void to_json(nlohmann::json &j, const RunResults &v);

}  // namespace locksim::kernel
