// `locksim run|compare|sweep FILE`: run a scenario and write its results.
//   run      one strategy (--strategy, default the scenario's first), with a detailed report:
//            the longest preempt-off sections with their labels and sites, per-operation
//            latency, lock statistics, violations;
//   compare  every strategy of the scenario side by side (the mailing-list table); --measured
//            FILE... adds measured series (cyclictest, ftrace, Perfetto) beside them;
//   sweep    every point of the scenario's [sweep] grid, points in parallel; --shard I/N runs
//            one slice for a batch scheduler, `locksim merge` joins the slices.
// Results go to the scenario's output directory (or -o): results.json, results.csv and one
// .hgrm percentile file per histogram. Ctrl-C stops starting new runs and keeps what finished.
#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>

#include "analysis/metrics.h"
#include "analysis/results_file.h"
#include "analysis/table.h"
#include "analysis/wakeup_cause.h"
#include "cli/batch_jobs.h"
#include "cli/command.h"
#include "cli/duration_warnings.h"
#include "cli/measured_options.h"
#include "cli/paths.h"
#include "cli/run_choices.h"
#include "cli/trace_options.h"
#include "record/run_results.h"
#include "runner/runner.h"
#include "scenario/phases.h"
#include "util/error.h"
#include "util/read_file.h"
#include "workloads/catalog.h"

namespace locksim::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
    g_interrupted.store(true);
}

enum class Mode { Run, Compare, Sweep };

struct RunArgs {
    std::string file;
    std::string out_dir;
    std::vector<std::string> strategies;
    std::vector<int64_t> seeds;
    std::string shard;
    std::string duration;
    SlurmArgs slurm;
    int threads = 0;
    bool quiet = false;
    bool wall_clock = true;
    std::string platform = "sim";
    TraceArgs trace;
    MeasuredArgs measured;  // compare: measured series side by side with the designs
    RunChoices choices() const { return {seeds, strategies, duration}; }
};

std::string safe_name(std::string s) {
    for (char &c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') c = '_';
    return s;
}

// One .hgrm file per histogram of each run: preempt-off, IRQs-off, probe wake-up, and the
// latency of every operation.
void write_hgrm(const fs::path &dir, const analysis::ResultsFile &results) {
    fs::create_directories(dir / "hgrm");
    for (const auto &run : results.runs) {
        const auto &detail = run.at("detail");
        std::string stem = fmt::format("{:03}-{}-seed{}", run.value("index", 0),
                                       safe_name(run.value("label", "")), run.value("seed", 0));
        auto dump = [&](const nlohmann::json &h, const std::string &what) {
            kernel::Histogram hist = h.get<kernel::Histogram>();
            if (hist.count() == 0) return;
            write_whole_file(
                (dir / "hgrm" / fmt::format("{}-{}.hgrm", stem, safe_name(what))).string(),
                hist.percentile_table(1000.0));
        };
        dump(detail.at("preempt_off").at("length_ns"), "preempt_off");
        dump(detail.at("irqs_off").at("length_ns"), "irqs_off");
        kernel::Histogram probe;
        for (const auto &[task, h] : detail.at("wakeup_latency_ns").items())
            probe.merge(h.get<kernel::Histogram>());
        if (probe.count()) {
            write_whole_file((dir / "hgrm" / fmt::format("{}-probe_wakeup.hgrm", stem)).string(),
                             probe.percentile_table(1000.0));
        }
        for (const auto &[label, op] : detail.at("ops").items())
            dump(op.at("latency_ns"), "op-" + label);
    }
}

// The run's worst probe wake-ups with what delayed each, or why the platform cannot say.
void print_worst_wakeups(const nlohmann::json &d) {
    const auto probes = d.find("wakeup_latency_ns");
    if (probes == d.end() || probes->empty()) return;
    if (const auto absent = d.find("wakeup_worst_absent"); absent != d.end()) {
        fmt::print("worst probe wake-ups: causes not recorded: {}\n", absent->get<std::string>());
        return;
    }
    const auto worst = d.at("wakeup_worst").get<std::vector<kernel::WakeupRecord>>();
    fmt::print("worst probe wake-ups and what delayed them\n");
    for (size_t i = 0; i < worst.size() && i < 5; ++i)
        fmt::print("  {}\n", analysis::describe_wakeup(worst[i]));
}

void print_run_detail(const nlohmann::json &run) {
    const auto &d = run.at("detail");
    fmt::print("\n{} (seed {}): longest preempt-off sections\n", run.value("label", ""),
               run.value("seed", 0));
    int n = 0;
    for (const auto &iv : d.at("preempt_off").at("longest")) {
        if (n++ == 8) break;
        fmt::print("  {:>10}  cpu {:<3} {:<18} {:<22} {} -> {}\n",
                   analysis::human_ns(iv.value("length_ns", int64_t{0})), iv.value("cpu", 0),
                   iv.value("task", ""),
                   analysis::section_operation(iv.value("label", ""), iv.value("task", "")),
                   iv.value("start_site", ""), iv.value("end_site", ""));
    }
    print_worst_wakeups(d);
    fmt::print("operations\n");
    for (const auto &[label, op] : d.at("ops").items()) {
        kernel::Histogram h = op.at("latency_ns").get<kernel::Histogram>();
        fmt::print("  {:<22} {:>9} done  p50 {:>9}  p99 {:>9}  max {:>9}  lock wait {:>9}\n", label,
                   op.value("completed", uint64_t{0}),
                   analysis::human_ns(h.value_at_percentile(50)),
                   analysis::human_ns(h.value_at_percentile(99)), analysis::human_ns(h.max()),
                   analysis::human_ns(op.value("lock_wait_ns", int64_t{0})));
    }
    if (!d.at("violations").empty()) {
        fmt::print("violations\n");
        for (const auto &v : d.at("violations"))
            fmt::print("  {}: {}\n", v.value("kind", ""), v.value("message", ""));
    }
}

// `sweep --slurm`: the shards get the options that choose the runs, as given.
void submit_sweep(const RunArgs &a, const Scenario &scenario, const fs::path &dir, size_t runs) {
    if (!a.shard.empty()) throw UserError("--slurm chooses the shards itself; drop --shard");
    if (!a.trace.path.empty()) throw UserError("--trace cannot be used with --slurm");
    SweepCommand sweep;
    sweep.scenario = fs::absolute(a.file).string();
    sweep.out_dir = fs::absolute(dir).lexically_normal().string();
    sweep.name = safe_name(scenario.name);
    sweep.runs = runs;
    for (const auto &s : a.strategies)
        sweep.pass_args.insert(sweep.pass_args.end(), {"--strategy", s});
    for (int64_t seed : a.seeds)
        sweep.pass_args.insert(sweep.pass_args.end(), {"--seed", std::to_string(seed)});
    if (!a.wall_clock) sweep.pass_args.push_back("--no-wall-clock");
    if (!a.duration.empty())
        sweep.pass_args.insert(sweep.pass_args.end(), {"--duration", a.duration});
    if (a.threads > 0)
        sweep.pass_args.insert(sweep.pass_args.end(), {"-j", std::to_string(a.threads)});
    if (a.platform != "sim")
        sweep.pass_args.insert(sweep.pass_args.end(), {"--platform", a.platform});
    slurm_submit(a.slurm, sweep);
}

// On host threads a scenario that asks for more CPUs, or has more tasks that may run at once,
// than the host has shares the host's CPUs: the host preempts threads inside their would-be
// atomic sections, which then last as long as the host keeps them off the CPU.
void warn_host_cpus(const std::string &file, const std::vector<Scenario> &points) {
    cpu_set_t set;
    const int host = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    int cpus = 0;
    int64_t tasks = 0;
    for (const Scenario &p : points) {
        int64_t n = 0;
        for (const WorkloadSpec &w : p.workloads)
            if (find_workload_info(w.kind) && find_workload_info(w.kind)->irq_kind.empty())
                n += w.tasks == 0 ? p.machine.cpus : w.tasks;
        cpus = std::max(cpus, p.machine.cpus);
        tasks = std::max(tasks, n);
    }
    if (host > 0 && (cpus > host || tasks > host))
        fmt::print(stderr,
                   "warning: {}: {} CPUs and {} tasks, more than the host's {} CPU{}: the host "
                   "runs the threads in turn, and its preemptions lengthen their sections\n",
                   file, cpus, tasks, host, host == 1 ? "" : "s");
}

void run_command(Mode mode, const RunArgs &a) {
    Scenario scenario = load_scenario(a.file);
    // Measured files are read before any run, so that a malformed one costs no simulation.
    const analysis::ResultsFile measured = import_measured_args(a.measured);
    apply_run_choices(scenario, a.choices(), mode == Mode::Run);
    std::vector<Scenario> points =
        mode == Mode::Sweep ? expand_sweep(scenario) : std::vector<Scenario>{scenario};
    std::string base_note;
    if (mode != Mode::Sweep && !scenario.sweep.empty()) {
        size_t grid = 1;
        for (const SweepAxis &axis : scenario.sweep)
            grid *= axis.values.size();
        // Said once every option is checked, just before the runs (a mistake stays one line).
        base_note = fmt::format(
            "note: {} has a [sweep] of {} points; {} runs only its base point, {}; "
            "`locksim sweep` runs every point\n",
            a.file, grid, mode == Mode::Run ? "run" : "compare", base_point_text(scenario));
        // The results hold the base point only: they name no sweep that was not run.
        points[0].sweep.clear();
        scenario.sweep.clear();
    }
    // A sweep point is re-read from the file: the command line's choices apply to it too.
    for (Scenario &p : points)
        apply_to_point(p, scenario, a.choices());
    std::vector<RunJob> jobs = plan_runs(points);
    // The output directory is checked before anything runs, so a wrong -o costs no run.
    fs::path dir = !a.out_dir.empty()             ? fs::path(a.out_dir)
                   : !scenario.output.dir.empty() ? fs::path(scenario.output.dir)
                                                  : fs::path("results") / scenario.name;
    make_output_dir(dir, a.out_dir.empty() ? "output.dir" : "-o");
    if (a.slurm.enabled) return submit_sweep(a, scenario, dir, jobs.size());
    std::string shard_text;
    if (!a.shard.empty()) {
        Shard shard = resolve_shard(a.shard, process_environment());
        std::vector<RunJob> slice;
        for (const auto &j : jobs)
            if (j.index % shard.count == shard.index) slice.push_back(j);
        jobs = std::move(slice);
        shard_text = shard.text();
    }
    const bool tty = isatty(STDERR_FILENO) && !a.quiet;
    RunOptions options;
    options.threads = a.threads;
    options.platform = a.platform == "real" ? PlatformKind::Real : PlatformKind::Sim;
    if (options.platform == PlatformKind::Real &&
        std::any_of(points.begin(), points.end(),
                    [](const Scenario &p) { return !p.machine.irqs.empty(); }))
        fmt::print(stderr,
                   "warning: {}: [[machine.irq]] is simulated interrupt load; on --platform real "
                   "the threads get only the host's own interrupts\n",
                   scenario.file);
    if (options.platform == PlatformKind::Real &&
        std::any_of(points.begin(), points.end(),
                    [](const Scenario &p) { return p.prices != sim::kNominalPrices; }))
        fmt::print(stderr,
                   "warning: {}: [prices] multiplies the simulator's prices; on --platform real "
                   "the threads take the host's own time\n",
                   scenario.file);
    if (options.platform == PlatformKind::Real) warn_host_cpus(scenario.file, points);
    options.interrupted = &g_interrupted;
    options.wall_clock = a.wall_clock;
    options.trace_path = a.trace.path;
    if (a.trace.path.empty() && !a.trace.worst_wakeup.empty())
        throw UserError("--trace-worst-wakeup needs --trace FILE");
    if (!a.trace.path.empty() && options.platform == PlatformKind::Real)
        throw UserError(
            "--trace records the simulator's timeline; it cannot be used with "
            "--platform real");
    if (!a.trace.path.empty() && !jobs.empty()) {
        options.trace = trace_options(a.trace, jobs.front().point->duration_ns);
        check_output_file(a.trace.path, "--trace");
    }
    if (tty) {
        options.progress = [](size_t done, size_t total) {
            const int width = 40;
            int filled = static_cast<int>(width * done / std::max<size_t>(total, 1));
            fmt::print(stderr, "\r[{}{}] {}/{} runs", std::string(filled, '#'),
                       std::string(width - filled, '.'), done, total);
            if (done == total) fmt::print(stderr, "\n");
        };
    }
    fmt::print(stderr, "{}", base_note);
    // The handler stays for the rest of the process: a Ctrl-C after the last run only raises
    // the flag, so results.json and the other outputs are never left half written.
    std::signal(SIGINT, on_sigint);
    analysis::ResultsFile results = run_jobs(scenario, jobs, options);
    if (!shard_text.empty()) results.scenario["shard"] = shard_text;

    const auto &formats = scenario.output.formats;
    auto wants = [&](const char *f) { return std::count(formats.begin(), formats.end(), f) > 0; };
    // The duration advice counts the simulated runs only, taken before measured ones join.
    const std::vector<analysis::RunSummary> simulated = results.summaries(dir.string());
    analysis::measured::append_runs(results, measured);
    std::vector<analysis::RunSummary> summaries = results.summaries(dir.string());
    if (wants("table") && !a.quiet) {
        if (!scenario.description.empty()) fmt::print("{}\n\n", scenario.description);
        fmt::print("{}", analysis::format_table(summaries));
        if (const std::string causes = analysis::format_worst_causes(summaries); !causes.empty())
            fmt::print("\n{}", causes);
        if (mode == Mode::Run)
            for (const auto &run : results.runs)
                print_run_detail(run);
    }
    // results.json is always written: pick, merge and report read it.
    analysis::save_results(results, (dir / "results.json").string());
    if (wants("csv"))
        write_whole_file((dir / "results.csv").string(), analysis::format_csv(summaries));
    if (wants("hgrm")) write_hgrm(dir, results);
    if (!a.quiet) fmt::print("\nresults: {}\n", (dir / "results.json").string());
    print_workload_notes(a.file, results);
    print_duration_warnings(a.file, counted(scenario, simulated));
    for (const std::string &note : phase_lock_notes(points))
        fmt::print(stderr, "note: {}: {}\n", a.file, note);
    for (const std::string &note : kernel_notes(points))
        fmt::print(stderr, "note: {}: {}\n", a.file, note);
    if (!a.trace.path.empty() && !results.runs.empty() && !a.quiet)
        fmt::print("timeline of {} (seed {}){}: {}\n", jobs.front().strategy->label,
                   jobs.front().seed,
                   a.trace.worst_wakeup.empty()
                       ? ""
                       : fmt::format(", {} around its worst probe wake-up", a.trace.worst_wakeup),
                   a.trace.path);
    // Ctrl-C during the last runs lets them finish: then nothing was lost and nothing is said.
    if (g_interrupted.load() && !results.scenario.value("complete", true)) {
        fmt::print(stderr, "interrupted: {} of {} runs finished and were kept\n",
                   results.runs.size(), jobs.size());
        throw CLI::RuntimeError(130);
    }
}

void add_mode(CLI::App &app, Mode mode, const char *name, const char *help) {
    auto a = std::make_shared<RunArgs>();
    auto *cmd = app.add_subcommand(name, help);
    cmd->add_option("scenario", a->file, "Scenario file (TOML)")->required();
    cmd->add_option("-o,--out", a->out_dir,
                    "Results directory (default: the scenario's output.dir, "
                    "else results/<scenario name>)");
    cmd->add_option("-s,--strategy", a->strategies, "Only these strategies (by label)");
    cmd->add_option("--seed", a->seeds, "Seeds to run instead of the scenario's");
    cmd->add_option("--duration", a->duration,
                    "Simulated time of each run instead of the scenario's, e.g. 5ms (the "
                    "warm-up is cut to a tenth of it when longer)");
    cmd->add_option("-j,--threads", a->threads, "Runs in parallel (default: all cores)");
    cmd->add_option("--platform", a->platform,
                    "sim (default) or real: host threads with real primitives, one run at a time")
        ->check(CLI::IsMember({"sim", "real"}));
    cmd->add_flag("-q,--quiet", a->quiet, "No table, no progress");
    cmd->add_flag("!--no-wall-clock", a->wall_clock,
                  "Leave the wall-clock speed out of detail.engine: the same binary, scenario "
                  "and seed then give the same results file byte for byte");
    add_trace_options(cmd, a->trace);
    if (mode == Mode::Compare) add_measured_options(cmd, a->measured, "--measured");
    if (mode == Mode::Sweep) {
        cmd->add_option("--shard", a->shard,
                        "Run slice I of N (0-based), e.g. 0/4; auto: from a Slurm array task, "
                        "auto/N: from a Kubernetes Indexed Job of N completions");
        add_slurm_options(cmd, a->slurm);
    }
    cmd->callback([mode, a] { run_command(mode, *a); });
}

CommandRegistrar run_registrar([](CLI::App &app) {
    add_mode(app, Mode::Run, "run", "Run one strategy of a scenario, with a detailed report");
    add_mode(app, Mode::Compare, "compare", "Run every strategy of a scenario side by side");
    add_mode(app, Mode::Sweep, "sweep", "Run every point of a scenario's sweep grid");
});

}  // namespace
}  // namespace locksim::cli
