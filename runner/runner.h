// Runs scenarios: for every sweep point, strategy and seed, one simulation of the scenario's
// workloads on a fresh copy of its policy, summarised into a results file (analysis/
// results_file.h). Points run in parallel (TBB); each run is single-threaded and, in the counted
// cost model, a function of (scenario, seed, binary).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "analysis/results_file.h"
#include "record/run_results.h"
#include "scenario/design_kernel.h"
#include "scenario/platform_config.h"
#include "scenario/scenario.h"
#include "scenario/to_json.h"
#include "sim/chrome_trace.h"
#include "sim/profile.h"
#include "strategies/kernels.h"
#include "strategies/security_server.h"

namespace locksim {

// The binary image of a scenario's policy: the built Debian policy, a file, or a synthetic
// policy generated and written by our writer. UserError when it cannot be had.
std::vector<uint8_t> scenario_policy_image(const PolicySpec &spec);
// Where the built Debian policies are looked for: $LOCKSIM_POLICY_DIR, else the build's.
std::filesystem::path debian_policy_dir();

// One unit of work: a sweep point, a strategy of it, a seed.
struct RunJob {
    size_t index = 0;  // position in the whole grid (shards keep it)
    const Scenario *point = nullptr;
    const StrategySpec *strategy = nullptr;
    int64_t seed = 1;
    // End the run as soon as a figure passes its limit (simulator only; sim/config.h).
    sim::SimConfig::StopOver stop_over;
    // Keep the longest sections and commits by price family (sim/config.h), as robust does.
    bool record_priced = false;
};

std::vector<RunJob> plan_runs(const std::vector<Scenario> &points);

// Where a run executes: the simulator, or host threads (real/: real primitives, measured
// time; runs then go one at a time, since each uses the machine's CPUs).
enum class PlatformKind { Sim, Real };

struct RunOptions {
    PlatformKind platform = PlatformKind::Sim;
    int threads = 0;  // 0: TBB's default (always 1 on the real platform)
    // A Chrome trace-event timeline of the first job (empty path: none; simulator only).
    std::string trace_path;
    sim::TraceOptions trace;
    std::function<void(size_t done, size_t total)> progress;
    const std::atomic<bool> *interrupted = nullptr;  // stop starting new runs when set
    // Simulated runs record the engine's speed in detail.engine: events and simulated
    // CPU-seconds always, and with wall_clock also the wall time of the simulation and the
    // rates per wall second (which differ from run to run: off for byte-identical files).
    bool wall_clock = true;
};

// Runs one job; the returned JSON is a results-file run (summary keys + "index" + "detail").
nlohmann::json run_job(const RunJob &job, const std::vector<uint8_t> &image,
                       kernel::RunResults *raw = nullptr, PlatformKind platform = PlatformKind::Sim,
                       const RunOptions *trace = nullptr, bool wall_clock = true);

// Refuses what a run of the points would refuse, without running: for each point and strategy
// (with the point's first seed) the policy image, the CPU profile, the simulated machine, the
// security server and every workload's setup, on the same path as a run (its UserError).
void check_runs(const std::vector<Scenario> &points);

// Runs the jobs (a shard of them, or all) and assembles the results file. Runs not started
// because of an interruption are left out and the file says "complete": false.
analysis::ResultsFile run_jobs(const Scenario &scenario, const std::vector<RunJob> &jobs,
                               const RunOptions &options);

// The summary of one run's raw results (what the table, pick and CSV use).
analysis::RunSummary summarize(const kernel::RunResults &r, const StrategySpec &strategy,
                               int64_t seed, const Scenario &point);

}  // namespace locksim
