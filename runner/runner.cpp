#include "runner/runner.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>

#include "analysis/metrics.h"
#include "real/real_platform.h"
#include "sim/sim_platform.h"
#include "ss/policy_gen.h"
#include "ss/policydb.h"
#include "ss/services.h"
#include "strategies/catalog.h"
#include "strategies/security_server.h"
#include "util/error.h"
#include "workloads/policy_facts.h"
#include "workloads/workload.h"

#ifndef LOCKSIM_POLICY_DIR
#define LOCKSIM_POLICY_DIR ".cache/policies"
#endif

namespace locksim {

using nlohmann::json;

std::filesystem::path debian_policy_dir() {
    const char *env = std::getenv("LOCKSIM_POLICY_DIR");
    return env && *env ? env : LOCKSIM_POLICY_DIR;
}

std::vector<uint8_t> scenario_policy_image(const PolicySpec &spec) {
    // The image every run loads, which load_policy reloads and rcu-full-copy copies. A policy
    // older than the writer's oldest format (19..23) is written as that format, version 24,
    // which holds all it has (as `policy convert` does).
    auto read_file = [](const std::string &path) {
        const ss::Policydb db = ss::policydb_read_file(path);
        return ss::policydb_write(db, std::max(db.version(), ss::kPolicyVersionWriteMin));
    };
    switch (spec.source) {
        case PolicySpec::Source::DebianDefault:
        case PolicySpec::Source::DebianMls: {
            auto path = debian_policy_dir() / (spec.source == PolicySpec::Source::DebianDefault
                                                   ? "default.policy.33"
                                                   : "mls.policy.33");
            if (!std::filesystem::exists(path))
                throw UserError(
                    fmt::format("{}: the Debian policy is not built; run scripts/setup.sh "
                                "(or set LOCKSIM_POLICY_DIR)",
                                path.string()));
            return read_file(path.string());
        }
        case PolicySpec::Source::File:
            return at_place(spec.path_at, [&] { return read_file(spec.path); });
        case PolicySpec::Source::Synthetic:
            return ss::policydb_write(ss::policy_generate(synthetic_options(spec.synthetic)));
    }
    throw std::logic_error("unknown policy source");
}

std::vector<RunJob> plan_runs(const std::vector<Scenario> &points) {
    std::vector<RunJob> jobs;
    for (const auto &p : points)
        for (const auto &st : p.strategies)
            for (int64_t seed : p.seeds)
                jobs.push_back({jobs.size(), &p, &st, seed});
    return jobs;
}

// detail.config's kernel entries: the release and what it selected, as the run used them.
void record_kernel(kernel::RunResults &r, const DesignKernel &k, const CoreConfig &core) {
    r.config["kernel"] = kernel_release_name(k.behaviour.release);
    r.config["kernel.sidtab"] = ss::sidtab_era_name(core.sidtab);
    r.config["kernel.sid_string_cache"] = std::to_string(core.sid_string_cache);
    r.config["kernel.sidtab_freeze"] = k.behaviour.sidtab_freeze ? "true" : "false";
    r.config["kernel.xfrm_lock"] = xfrm_lock_name(core.xfrm_rtnl);
    r.config["kernel.ima_measure"] = ima_measure_name(core.ima);
    if (!k.never_existed.empty())
        r.config["kernel.never_existed"] =
            fmt::format("a kernel that never existed: {}", fmt::join(k.never_existed, "; "));
}

analysis::RunSummary summarize(const kernel::RunResults &r, const StrategySpec &strategy,
                               int64_t seed, const Scenario &point) {
    analysis::RunSummary s;
    s.strategy = strategy.name;
    s.label = strategy.label;
    s.platform = r.platform;
    s.seed = static_cast<uint64_t>(seed);
    s.point = point.point;
    // A run stopped early measured until the stop.
    const double seconds =
        static_cast<double>(r.early_stop.metric.empty() ? point.duration_ns - point.warmup_ns
                                                        : r.duration_ns) /
        1e9;
    analysis::extract_metrics(s, {r, is_reader_op, seconds});
    std::map<std::string, uint64_t> kinds;
    for (const auto &v : r.violations)
        ++kinds[v.kind];
    s.violation_kinds.assign(kinds.begin(), kinds.end());
    s.early_stop = r.early_stop.metric;
    s.priced = r.priced;
    return s;
}

namespace {

// detail.engine of a simulated run: what the engine processed, and (wall_s >= 0) how fast.
json engine_speed(uint64_t events, const Scenario &point, double wall_s) {
    const double cpu_s =
        static_cast<double>(point.machine.cpus) * static_cast<double>(point.duration_ns) / 1e9;
    json e = {{"events", events}, {"simulated_cpu_seconds", cpu_s}};
    if (wall_s >= 0) {
        e["wall_seconds"] = wall_s;
        e["events_per_second"] = wall_s > 0 ? static_cast<double>(events) / wall_s : 0.0;
        e["simulated_cpu_seconds_per_wall_second"] = wall_s > 0 ? cpu_s / wall_s : 0.0;
    }
    return e;
}

// " (at sweep point f=v ...)" for a point of a sweep, empty otherwise.
std::string at_point(const Scenario &point) {
    if (point.point.empty()) return "";
    std::string where;
    for (const auto &[field, value] : point.point)
        where += fmt::format(" {}={}", field, value);
    return fmt::format(" (at sweep point{})", where);
}

// The platform's side of a job: the server, the workloads, the run.
kernel::RunResults run_on(kernel::Platform &platform,
                          const std::function<kernel::RunResults()> &run, const RunJob &job,
                          const std::vector<uint8_t> &image) {
    const Scenario &point = *job.point;
    kernel::PlatformScope scope(platform);
    const DesignKernel design = design_kernel(point, *job.strategy);
    const CoreConfig core = core_config(point.core, design.behaviour, point.machine.ima);
    std::unique_ptr<SecurityServer> server = make_security_server(
        job.strategy->name, job.strategy->options,
        make_policy_state(ss::policydb_read(image, "scenario policy"), core), core);
    PolicyFacts facts(server->setup_state());
    WorkloadEnv env{*server, facts, point.machine.cpus, [&image] { return image; }, nullptr, {}};
    set_workload_machine(point, job.seed, env);
    for (const auto &w : point.workloads) {
        try {
            spawn_workload(w, env);
        } catch (const UserError &e) {
            // What only this point's policy or machine refuses: say which point.
            if (point.point.empty()) throw;
            throw UserError(fmt::format("{}{}", e.what(), at_point(point)));
        }
    }
    kernel::RunResults results = run();
    record_kernel(results, design, core);
    if (!core.sidtab_freeze)
        results.config["kernel.sidtab_mirror_collisions"] =
            std::to_string(server->sidtab_mirror_collisions());
    results.workload_notes = std::move(env.notes);  // the run's `point` says where, in a sweep
    server.reset();  // frees the policy states while the platform is current
    return results;
}

}  // namespace

json run_job(const RunJob &job, const std::vector<uint8_t> &image, kernel::RunResults *raw,
             PlatformKind kind, const RunOptions *trace, bool wall_clock) {
    const Scenario &point = *job.point;
    const ss::Avtab::GenerationScope generations;  // the job's tables numbered from 1
    kernel::RunResults results;
    json engine;
    if (kind == PlatformKind::Real) {
        auto platform = real::make_real_platform(real_config(point, job.seed));
        results = run_on(
            *platform, [&] { return platform->run(); }, job, image);
    } else {
        sim::SimConfig config = sim_config(point, job.seed);
        config.stop_over = job.stop_over;
        config.record_priced = job.record_priced;
        sim::SimPlatform platform(std::move(config));
        std::unique_ptr<sim::ChromeTraceRecorder> recorder;
        if (trace && !trace->trace_path.empty())
            recorder = sim::enable_chrome_trace(platform, trace->trace);
        double wall_s = 0;
        results = run_on(
            platform,
            [&] {
                const auto t0 = std::chrono::steady_clock::now();
                kernel::RunResults r = platform.run();
                wall_s =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                return r;
            },
            job, image);
        if (recorder) sim::write_chrome_trace(*recorder, trace->trace_path);
        engine = engine_speed(results.events, point, wall_clock ? wall_s : -1);
    }
    json item = analysis::summary_to_json(summarize(results, *job.strategy, job.seed, point));
    item["index"] = job.index;
    item["detail"] = results;
    if (!engine.is_null()) item["detail"]["engine"] = std::move(engine);
    if (raw) *raw = std::move(results);
    return item;
}

namespace {

// One policy image per distinct policy source among the jobs' points, by policy_key.
std::string policy_key(const PolicySpec &p) {
    const auto &s = p.synthetic;
    return fmt::format("{}|{}|{}|{},{},{},{},{},{},{},{},{}", static_cast<int>(p.source), p.path,
                       s.preset, s.types, s.booleans, s.attributes, s.rules, s.users, s.roles,
                       s.categories, s.mls, s.seed);
}

std::map<std::string, std::vector<uint8_t>> policy_images(const std::vector<RunJob> &jobs) {
    std::map<std::string, std::vector<uint8_t>> images;
    for (const auto &job : jobs) {
        std::string k = policy_key(job.point->policy);
        if (!images.count(k)) images[k] = scenario_policy_image(job.point->policy);
    }
    return images;
}

}  // namespace

void check_runs(const std::vector<Scenario> &points) {
    std::vector<RunJob> jobs;
    for (const RunJob &job : plan_runs(points))
        if (job.seed == job.point->seeds.front()) jobs.push_back(job);
    const auto images = policy_images(jobs);
    for (const RunJob &job : jobs) {
        const ss::Avtab::GenerationScope generations;
        sim::SimPlatform platform(sim_config(*job.point, job.seed));
        run_on(
            platform, [] { return kernel::RunResults{}; }, job,
            images.at(policy_key(job.point->policy)));
    }
}

analysis::ResultsFile run_jobs(const Scenario &scenario, const std::vector<RunJob> &jobs,
                               const RunOptions &options) {
    const auto images = policy_images(jobs);
    std::vector<json> items(jobs.size());
    std::vector<char> ran(jobs.size(), 0);
    std::atomic<size_t> done{0};
    std::mutex progress_mutex;
    std::optional<tbb::global_control> limit;
    const int threads = options.platform == PlatformKind::Real ? 1 : options.threads;
    if (threads > 0)
        limit.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t i) {
        if (options.interrupted && options.interrupted->load()) return;
        items[i] = run_job(jobs[i], images.at(policy_key(jobs[i].point->policy)), nullptr,
                           options.platform, i == 0 ? &options : nullptr, options.wall_clock);
        ran[i] = 1;
        size_t n = ++done;
        if (options.progress) {
            std::lock_guard lock(progress_mutex);
            options.progress(n, jobs.size());
        }
    });
    analysis::ResultsFile out;
    out.scenario = scenario_json(scenario);
    out.scenario["complete"] = done.load() == jobs.size();
    for (size_t i = 0; i < jobs.size(); ++i)
        if (ran[i]) out.runs.push_back(std::move(items[i]));
    return out;
}

}  // namespace locksim
