// The results file (results.json, schema "locksim/results/3"): what `run`, `compare` and `sweep`
// write, and what `pick`, `merge` and `report` read. analysis/ sees results only through this
// file's content, never through an engine.
//
// Each item of "runs" is one (strategy, seed, sweep point) with its summary and the platform's
// full detail under "detail". Summary keys: strategy, label, seed, platform, point{field: value},
// violation_kinds{kind: count}, and one key per metric of analysis/metrics.h (its path, e.g.
// preempt_off.max_ns; times in ns, integers), the table that documents each. The toggle group
// is taken from the commit's own operation (set_bools); its parts are totals over the run, and
// its count divides them.
// Schema 2 counts what was still open when the run ended (a section, an operation, a probe
// wake-up due): closed at the end, its elapsed part counted as a lower bound. `open_at_end` is
// how many were; `max_censored` says the worst (max_ns) is such a lower bound ("at least");
// `toggle.incomplete` says a commit never completed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "record/run_results.h"

namespace locksim::analysis {

inline constexpr const char *kResultsSchema = "locksim/results/3";

// What was open when a run ended, for one metric.
struct Censoring {
    uint64_t open_at_end = 0;
    bool max_censored = false;  // the worst value is a lower bound
};

struct RunSummary {
    std::string strategy;
    std::string label;
    std::string platform;
    uint64_t seed = 0;
    std::vector<std::pair<std::string, std::string>> point;
    int64_t preempt_off_max_ns = 0, preempt_off_p99_ns = 0, preempt_off_p50_ns = 0;
    uint64_t preempt_off_count = 0;
    std::string preempt_off_worst_label, preempt_off_worst_site;
    Censoring preempt_off_open;
    int64_t irqs_off_max_ns = 0, irqs_off_p99_ns = 0;
    uint64_t irqs_off_count = 0;
    Censoring irqs_off_open;
    int64_t probe_max_ns = 0, probe_p99_ns = 0, probe_p50_ns = 0;
    uint64_t probe_count = 0;
    Censoring probe_open;
    std::string probe_worst_cause;  // what delayed the worst wake-up (analysis/wakeup_cause.h)
    uint64_t toggle_count = 0;
    int64_t toggle_p50_ns = 0, toggle_max_ns = 0, toggle_mean_ns = 0;
    int64_t toggle_readers_blocked_ns = 0, toggle_preempt_off_ns = 0, toggle_irqs_off_ns = 0;
    int64_t toggle_gp_wait_ns = 0, toggle_bytes_allocated = 0, toggle_peak_live_bytes = 0;
    int64_t toggle_avc_refill_ns = 0;
    Censoring toggle_open;
    bool toggle_incomplete() const { return toggle_open.open_at_end > 0; }
    // The commits the latency histogram holds: those that completed and those still open at
    // the end (their elapsed part). The parts' totals hold the completed ones (toggle_count).
    uint64_t toggle_commits() const { return toggle_count + toggle_open.open_at_end; }
    uint64_t toggle_grace_periods = 0;
    uint64_t reader_count = 0;
    int64_t reader_p50_ns = 0, reader_p99_ns = 0, reader_max_ns = 0;
    Censoring reader_open;
    uint64_t ops = 0;
    double ops_per_sec = 0;
    int64_t peak_memory_bytes = 0;
    int64_t irq_ns = 0, softirq_ns = 0;  // interrupt load's work, over every CPU
    uint64_t violations = 0;
    std::vector<std::pair<std::string, uint64_t>> violation_kinds;
    // The metric whose figure passed its limit and ended the run early (detail.early_stop), or
    // empty: the figures are of part of the run, the stopping one over its limit.
    std::string early_stop;
    // The longest sections and commits with their time by price family (robust's simulated runs
    // under the counted cost model; empty otherwise): what re-pricing needs (analysis/reprice.h).
    kernel::PricedRecord priced;

    // "machine.cpus=8 workload.toggle.period=10ms" (empty for a plain run)
    std::string point_text() const;
};

nlohmann::json summary_to_json(const RunSummary &s);
// Throws UserError naming the file and the run index on a missing or mistyped key.
RunSummary summary_from_json(const nlohmann::json &j, const std::string &where);

struct ResultsFile {
    nlohmann::json scenario;           // the scenario as run (name, description, file, machine ...)
    std::vector<nlohmann::json> runs;  // each: the summary keys plus "detail"

    std::vector<RunSummary> summaries(const std::string &where) const;
    nlohmann::json to_json() const;
};

// What a results file was meant to hold, from its "scenario": the designs (labels), the seeds
// and the sweep points (each as RunSummary::point, fields in name order, as a run's "point"
// reads back). `complete` is false when runs are missing by design or by accident: the file
// says "complete": false (an interrupted run, a partial merge) or is one shard of a sweep
// ("shard": "I/N"); `why` then says which.
struct Plan {
    bool complete = true;
    std::string why;
    std::vector<std::string> labels;
    std::vector<uint64_t> seeds;
    std::vector<std::vector<std::pair<std::string, std::string>>> points;
};
Plan planned_runs(const ResultsFile &r);

// Reads and checks the schema; throws UserError naming the file on anything else.
ResultsFile load_results(const std::string &path);
void save_results(const ResultsFile &r, const std::string &path);

// Joins shard files into one: scenarios must be the same; runs are ordered by their "index".
// Every shard of the set ("shard": "I/N") must be there, else a UserError names the missing
// indices; with `allow_partial` what is there is joined and marked "complete": false.
ResultsFile merge_results(const std::vector<ResultsFile> &parts,
                          const std::vector<std::string> &names, bool allow_partial = false);

}  // namespace locksim::analysis
