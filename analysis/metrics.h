// The metrics of a run, described once. Each entry of metrics() says where a figure lives in a
// results file's summary (group.key), its unit, how it is taken from a run's records, how the
// runs of several seeds combine into a design's worst, and where the user sees it: the CSV
// column, the comparison table's column, the spread-over-seeds column, the limit `pick` judges
// it by, and the report's series that draws it. The results file's writer and reader, the CSV,
// the table, `pick`, `report`, the seeds' aggregation and the runner's summary all walk this
// table; adding a metric is one RunSummary field (analysis/results_file.h) and one entry with
// its extraction (analysis/metrics.cpp). docs/developing.md shows one added.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "analysis/results_file.h"
#include "analysis/tail.h"
#include "record/run_results.h"

namespace locksim::analysis {

enum class Unit { Ns, Bytes, Count, PerSecond, Flag, Text };

// How the runs of one design (its seeds) combine into its worst (worst_over).
enum class Worst {
    Max,      // the largest
    Sum,      // counts add up
    Min,      // throughput: the lowest
    Follows,  // taken from the run that gave the worst of `leader` (same group)
};

// Where the report draws a metric (analysis/report.h).
enum class Series {
    None,
    CommitTime,   // a bar of toggle-cost: time per commit
    CommitBytes,  // a bar of toggle-alloc: bytes per commit
    CommitCount,  // toggle-cost's caption: how many per commit
    Scaling,      // a panel of scaling-<axis>
};

// The spread-over-seeds table's column (analysis/seeds.h).
enum class SpreadColumn { None, Range, MeanCi };

// The metrics a tail limit applies to.
enum class TailMetric { PreemptOff, IrqsOff, ProbeWakeup, Toggle };

// What an extraction reads: a run's records and what the runner knows of the run.
struct RunRecords {
    const kernel::RunResults &results;
    std::function<bool(std::string_view)> is_reader;  // read-side operation labels
    double measured_seconds = 0;                      // simulated time after the warm-up
};

using Value = std::variant<int64_t, uint64_t, double, bool, std::string>;

// A RunSummary member a metric is kept in; the censoring members by their part.
struct CensoringPart {
    Censoring RunSummary::*censoring;
    bool max_censored;  // false: open_at_end
};
// A figure computed from the others (written, and checked when read back).
using Derived = bool (*)(const RunSummary &);
using Field = std::variant<int64_t RunSummary::*, uint64_t RunSummary::*, double RunSummary::*,
                           std::string RunSummary::*, CensoringPart, Derived>;

struct TableColumn {
    const char *heading = nullptr;  // first header line (columns of one heading group together)
    const char *sub = "";           // second header line
    int width = 8;
};

struct PickLimit {
    const char *option = nullptr;  // --max-...
    const char *what = "";         // "preempt-off", as the verdict says it
    const char *help = "";
    const char *per = nullptr;  // "section": a tail limit (DURATION@P) is allowed, per this
    TailMetric tail = TailMetric::PreemptOff;
};

struct Metric {
    const char *group = nullptr;  // the summary's object ("preempt_off"); nullptr: top level
    const char *key = nullptr;    // "max_ns"
    Unit unit = Unit::Count;
    const char *meaning = "";
    Field field;
    // How the figure is taken from a run's records (nullptr for a Derived field).
    Value (*extract)(const RunRecords &) = nullptr;
    Worst worst = Worst::Max;
    const char *leader = nullptr;  // Worst::Follows: the key it follows
    const char *csv = nullptr;     // CSV column; nullptr: group_key
    TableColumn table;
    SpreadColumn spread = SpreadColumn::None;
    const char *spread_heading = "";
    PickLimit pick;
    Series series = Series::None;
    const char *series_name = "";
    bool per_commit_total = false;  // CommitTime/CommitBytes: a total over the run's commits
    // Why the figure may be zero in every shipped scenario's run (nullptr: it must not be).
    const char *zero_reason = nullptr;

    std::string path() const;        // "preempt_off.max_ns"
    std::string csv_column() const;  // "preempt_off_max_ns"
};

// Every metric, in the order of the CSV's columns.
std::span<const Metric> metrics();
// By path ("toggle.max_ns"); nullptr when there is none.
const Metric *find_metric(std::string_view path);
// A sibling in the same group (nullptr when there is none).
const Metric *sibling(const Metric &m, std::string_view key);
// A figure of the metric at `path` with four digits and its unit ("81.70us", "12.4 MiB");
// "no figure" when it is not finite.
std::string metric_figure_text(const std::string &path, double figure);

Value get(const RunSummary &s, const Metric &m);
void set(RunSummary &s, const Metric &m, const Value &v);
double number(const RunSummary &s, const Metric &m);  // bool and text: 0 or 1

// The summary's metrics taken from a run's records (identity fields are the caller's).
void extract_metrics(RunSummary &s, const RunRecords &records);

// Whether `m` is a worst case that can be censored (its group's max_censored follows it), and
// whether anything was counted for it.
bool is_censorable_worst(const Metric &m);
bool nothing_counted(const RunSummary &s, const Metric &m);

// What an atomic section ran for: its operation, or, for a section outside every operation
// (the softirq task's __do_softirq, an idle CPU's), the task that ran it.
std::string section_operation(const std::string &label, const std::string &task);

}  // namespace locksim::analysis
