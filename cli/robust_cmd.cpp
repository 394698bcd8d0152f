// `locksim robust SCENARIO|RESULTS.json [--worlds N] [--max-...] [-o DIR]`: the verdict across the
// uncertainty of the CPU profile's prices (analysis/robust.h). From a scenario: draws the cost
// worlds, runs every design in each (the scenario's seeds in every world) and judges them; -o DIR
// writes results.json (every run, each world's factors in its point and the draw in the
// scenario's "robust") and robust.json. From a results file `robust` wrote (or a merge of its
// shards): judges it again, with other limits.
#include <fmt/core.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "analysis/results_file.h"
#include "analysis/robust.h"
#include "cli/batch_jobs.h"
#include "cli/command.h"
#include "cli/limit_options.h"
#include "cli/paths.h"
#include "cli/run_choices.h"
#include "runner/runner.h"
#include "scenario/platform_config.h"
#include "scenario/to_json.h"
#include "util/error.h"
#include "util/read_file.h"

namespace locksim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RobustArgs {
    std::string input;
    int worlds = 16;
    std::optional<uint64_t> world_seed;
    std::vector<std::string> ranges;  // FAMILY=F
    LimitArgs limits;
    std::string out_dir;
    RunChoices choices;
    int threads = 0;
    bool wall_clock = true;
    bool full_runs = false;
    bool no_estimates = false;
    bool quiet = false;
    std::string shard;
    SlurmArgs slurm;
};

// A run stops once a figure passes kStopFactor x its limit (sim/config.h): the limits of the
// maxima the simulator sees as they happen; a tail limit (DURATION@P) or another figure never
// stops a run.
sim::SimConfig::StopOver stop_over(const analysis::Limits &limits) {
    sim::SimConfig::StopOver s;
    for (const auto &[path, l] : limits) {
        if (l.probability) continue;
        const auto at = static_cast<sim::Time>(
            std::llround(static_cast<double>(l.value) * analysis::kStopFactor));
        if (path == "preempt_off.max_ns") s.preempt_off = at;
        if (path == "irqs_off.max_ns") s.irqs_off = at;
        if (path == "toggle.max_ns") s.commit = at;
        if (path == "probe_wakeup.max_ns") s.wakeup = at;
    }
    return s;
}

// The space: the profile's [uncertainty], with --range FAMILY=F over it.
analysis::PriceSpace price_space(const Scenario &s, const std::vector<std::string> &ranges) {
    const sim::CpuProfile profile = point_profile(s);
    analysis::PriceSpace space;
    std::string stated, defaulted;
    for (size_t k = 0; k < sim::kPriceFamilies; ++k) {
        space.families.emplace_back(sim::kPriceFamilyNames[k]);
        space.range.push_back(profile.uncertainty.factor[k]);
        std::string &list = profile.uncertainty.stated[k] ? stated : defaulted;
        list += (list.empty() ? "" : ", ") + space.families.back();
    }
    space.source = fmt::format("profile {}: {}{}{}", profile.name,
                               stated.empty() ? "" : "stated for " + stated,
                               !stated.empty() && !defaulted.empty() ? "; " : "",
                               defaulted.empty() ? "" : "defaults for " + defaulted);
    std::string given;
    for (const std::string &r : ranges) {
        const size_t eq = r.find('=');
        const std::string family = r.substr(0, eq);
        auto it = std::find(space.families.begin(), space.families.end(), family);
        if (eq == std::string::npos || it == space.families.end())
            throw UserError(fmt::format(
                "--range {}: expected FAMILY=FACTOR with FAMILY one of work, memory, primitive, "
                "grace_period (e.g. work=1.3)",
                r));
        double f = 0;
        try {
            size_t used = 0;
            f = std::stod(r.substr(eq + 1), &used);
            if (used != r.size() - eq - 1) f = 0;
        } catch (const std::exception &) {
            f = 0;
        }
        if (!(f >= 1 && f <= sim::kMaxPriceFactor))
            throw UserError(
                fmt::format("--range {}: the factor must be a number from 1 (the "
                            "profile's prices, certain) to {:.0f}",
                            r, sim::kMaxPriceFactor));
        space.range[static_cast<size_t>(it - space.families.begin())] = f;
        given += (given.empty() ? "" : ", ") + r;
    }
    if (!given.empty()) space.source += "; --range " + given;
    // Without [memory] the profile prices no miss: the family moves nothing, and is not drawn.
    if (profile.memory.private_kib <= 0) {
        const size_t m = static_cast<size_t>(sim::PriceFamily::Memory);
        if (space.range[m] != 1) space.source += "; memory not drawn (the profile has no [memory])";
        space.range[m] = 1;
    }
    return space;
}

// The draw recorded in a results file's scenario ("robust"), and back.
json draw_json(const analysis::PriceSpace &space, uint64_t seed,
               const std::vector<std::vector<double>> &worlds) {
    return {{"families", space.families},
            {"range", space.range},
            {"source", space.source},
            {"seed", seed},
            {"worlds", worlds}};
}

struct Draw {
    analysis::PriceSpace space;
    std::vector<std::vector<double>> worlds;
};

Draw draw_from(const json &scenario, const std::string &file) {
    const auto it = scenario.find("robust");
    if (it == scenario.end())
        throw UserError(
            fmt::format("{}: not a results file `locksim robust` wrote (its scenario "
                        "has no \"robust\": the worlds drawn)",
                        file));
    try {
        Draw d;
        d.space.families = it->at("families").get<std::vector<std::string>>();
        d.space.range = it->at("range").get<std::vector<double>>();
        d.space.source = it->at("source").get<std::string>();
        d.worlds = it->at("worlds").get<std::vector<std::vector<double>>>();
        for (const auto &w : d.worlds)
            if (w.size() != d.space.families.size()) throw std::invalid_argument("world size");
        if (d.space.range.size() != d.space.families.size() || d.worlds.empty())
            throw std::invalid_argument("ranges");
        return d;
    } catch (const std::exception &e) {
        throw UserError(fmt::format("{}: its \"robust\" record is malformed ({})", file, e.what()));
    }
}

std::vector<std::string> scenario_labels(const json &scenario) {
    std::vector<std::string> labels;
    if (auto it = scenario.find("strategies"); it != scenario.end() && it->is_array())
        for (const json &l : *it)
            if (l.is_string()) labels.push_back(l.get<std::string>());
    return labels;
}

// The input is a results file robust wrote (judged again), not a scenario.
bool judged_again(const RobustArgs &a) {
    return fs::path(a.input).extension() == ".json";
}

void print_and_write(const analysis::ResultsFile &results, const Draw &d,
                     const analysis::Limits &limits, const RobustArgs &a, const fs::path &dir) {
    const std::vector<analysis::RunSummary> runs = results.summaries("robust");
    const analysis::Robust r =
        analysis::judge_robust(d.space, d.worlds, limits, scenario_labels(results.scenario), runs,
                               analysis::tail_source(results));
    if (!a.quiet) fmt::print("{}", analysis::format_robust(r));
    if (dir.empty()) return;
    // The results file robust.json names: the one written beside it, or the one judged again.
    const bool again = judged_again(a);
    if (!again) analysis::save_results(results, (dir / "results.json").string());
    const std::string results_name = again ? fs::absolute(a.input).string() : "results.json";
    write_whole_file((dir / "robust.json").string(),
                     analysis::robust_json(r, results_name).dump(1) + "\n");
    fmt::print("results: {}{}\n", (dir / "robust.json").string(),
               again ? "" : fmt::format(" and {}", (dir / "results.json").string()));
}

// The options a shard or the judgement after the merge is given, as given here.
std::vector<std::string> pass_args(const RobustArgs &a) {
    std::vector<std::string> out = {"--worlds", std::to_string(a.worlds)};
    if (a.world_seed) out.insert(out.end(), {"--world-seed", std::to_string(*a.world_seed)});
    for (const auto &r : a.ranges)
        out.insert(out.end(), {"--range", r});
    if (a.full_runs) out.push_back("--full-runs");
    if (a.no_estimates) out.push_back("--no-estimates");
    for (const auto &s : a.choices.strategies)
        out.insert(out.end(), {"--strategy", s});
    for (int64_t seed : a.choices.seeds)
        out.insert(out.end(), {"--seed", std::to_string(seed)});
    if (!a.choices.duration.empty()) out.insert(out.end(), {"--duration", a.choices.duration});
    if (!a.wall_clock) out.push_back("--no-wall-clock");
    return out;
}

std::vector<std::string> limit_args(const RobustArgs &a) {
    std::vector<std::string> out;
    for (const analysis::Metric &m : analysis::metrics())
        if (m.pick.option)
            if (auto it = a.limits.find(m.path()); it != a.limits.end() && !it->second.empty())
                out.insert(out.end(), {m.pick.option, it->second});
    return out;
}

// `robust --slurm`: an array job of shards (each with the limits, which decide the early
// stops), and after the merge robust judging the merged file into the output directory.
void submit_robust(const RobustArgs &a, const Scenario &scenario, const fs::path &dir,
                   size_t runs) {
    if (!a.shard.empty()) throw UserError("--slurm chooses the shards itself; drop --shard");
    if (dir.empty()) throw UserError("--slurm needs -o DIR (the shards' and the merged results)");
    SweepCommand sweep;
    sweep.command = "robust";
    sweep.scenario = fs::absolute(a.input).string();
    sweep.out_dir = fs::absolute(dir).lexically_normal().string();
    for (char c : scenario.name)  // in the jobs' names
        sweep.name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
    sweep.runs = runs;
    sweep.pass_args = pass_args(a);
    const std::vector<std::string> limits = limit_args(a);
    sweep.pass_args.insert(sweep.pass_args.end(), limits.begin(), limits.end());
    if (a.threads > 0)
        sweep.pass_args.insert(sweep.pass_args.end(), {"-j", std::to_string(a.threads)});
    sweep.after_merge = {"robust", (fs::path(sweep.out_dir) / "results.json").string(), "-o",
                         sweep.out_dir};
    sweep.after_merge.insert(sweep.after_merge.end(), limits.begin(), limits.end());
    slurm_submit(a.slurm, sweep);
}

void run_robust(const RobustArgs &a) {
    const auto start = std::chrono::steady_clock::now();
    const analysis::Limits limits = parse_limits(a.limits);
    if (limits.empty())
        throw UserError(
            "robust needs at least one limit (--max-preempt-off, --max-toggle ...): "
            "the share of worlds meeting it is what it measures");
    fs::path dir;
    if (!a.out_dir.empty()) {
        dir = a.out_dir;
        make_output_dir(dir, "-o");
    }
    if (judged_again(a)) {
        const analysis::ResultsFile results = analysis::load_results(a.input);
        print_and_write(results, draw_from(results.scenario, a.input), limits, a, dir);
        return;
    }
    if (a.worlds < 2 || a.worlds > 10000)
        throw UserError(fmt::format("--worlds {}: from 2 to 10000", a.worlds));
    Scenario scenario = load_scenario(a.input);
    apply_run_choices(scenario, a.choices, false);
    if (scenario.prices != sim::kNominalPrices)
        throw UserError(fmt::format(
            "{}: the scenario sets [prices]; robust draws the prices itself (around the "
            "profile's): leave [prices] out",
            a.input));
    if (!scenario.sweep.empty())
        fmt::print(stderr, "note: {} has a [sweep]; robust runs its base point, {}\n", a.input,
                   base_point_text(scenario));
    Draw d;
    d.space = price_space(scenario, a.ranges);
    const uint64_t seed = a.world_seed.value_or(static_cast<uint64_t>(scenario.seeds.front()));
    d.worlds = analysis::latin_hypercube(d.space, static_cast<size_t>(a.worlds), seed);
    // Every world is set before anything runs: a mistake costs no run. The first point is the
    // profile's own prices (the nominal runs re-pricing starts from), then the worlds.
    std::vector<Scenario> points;
    json point_list = json::array();
    for (size_t w = 0; w <= d.worlds.size(); ++w) {
        const auto fields = w == 0 ? analysis::nominal_point(d.space)
                                   : analysis::world_point(d.space, d.worlds[w - 1]);
        Scenario p =
            scenario_at(scenario, fields,
                        w == 0 ? std::string("the nominal prices") : fmt::format("world {}", w));
        apply_to_point(p, scenario, a.choices);
        points.push_back(std::move(p));
        json pj = json::array();
        for (const auto &[f, v] : fields)
            pj.push_back({f, v});
        point_list.push_back(pj);
    }
    RunOptions options;
    options.threads = a.threads;
    options.wall_clock = a.wall_clock;
    std::vector<RunJob> jobs = plan_runs(points);
    for (RunJob &j : jobs)
        j.record_priced = true;
    // The nominal runs go to their end (their figures are the base of every estimate); a world's
    // stop once over a limit.
    if (!a.full_runs)
        for (RunJob &j : jobs)
            if (j.point != &points.front()) j.stop_over = stop_over(limits);
    if (a.slurm.enabled) return submit_robust(a, scenario, dir, jobs.size());
    // A shard cannot wait for the nominal runs that re-pricing starts from: shards run every
    // world, as --no-estimates does (and merge into its file).
    std::string shard_text;
    if (!a.shard.empty()) {
        const Shard shard = resolve_shard(a.shard, process_environment());
        std::erase_if(jobs, [&](const RunJob &j) { return j.index % shard.count != shard.index; });
        shard_text = shard.text();
    }
    analysis::ResultsFile results;
    if (!shard_text.empty() || a.full_runs || a.no_estimates) {
        results = run_jobs(scenario, jobs, options);
    } else {
        // The nominal runs first; then, per world, only the designs re-pricing them does not
        // decide there (analysis/reprice.h).
        std::vector<RunJob> nominal, confirm;
        for (const RunJob &j : jobs)
            (j.point == &points.front() ? nominal : confirm).push_back(j);
        results = run_jobs(scenario, nominal, options);
        std::vector<std::string> labels;
        for (const StrategySpec &st : scenario.strategies)
            labels.push_back(st.label);
        const auto needed = analysis::full_runs_needed(d.space, d.worlds, limits, labels,
                                                       results.summaries("robust"));
        std::erase_if(confirm, [&](const RunJob &j) {
            const auto &labels = needed[static_cast<size_t>(j.point - &points[1])];
            return std::find(labels.begin(), labels.end(), j.strategy->label) == labels.end();
        });
        if (!confirm.empty()) {
            analysis::ResultsFile more = run_jobs(scenario, confirm, options);
            for (auto &run : more.runs)
                results.runs.push_back(std::move(run));
        }
    }
    Scenario record = scenario;
    record.sweep.clear();
    results.scenario = scenario_json(record);
    results.scenario["points"] = point_list;
    results.scenario["robust"] = draw_json(d.space, seed, d.worlds);
    results.scenario["complete"] = true;
    if (!shard_text.empty()) {
        // A shard is judged once merged with the others (`locksim merge`, then robust on it).
        results.scenario["shard"] = shard_text;
        if (dir.empty()) throw UserError("--shard needs -o DIR (the shard's results.json)");
        analysis::save_results(results, (dir / "results.json").string());
        fmt::print("shard {}: {} runs in {}\n", shard_text, results.runs.size(),
                   (dir / "results.json").string());
        return;
    }
    print_and_write(results, d, limits, a, dir);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (a.wall_clock) fmt::print("wall clock: {:.1f} s\n", seconds);
}

CommandRegistrar robust_registrar([](CLI::App &app) {
    auto a = std::make_shared<RobustArgs>();
    auto *cmd = app.add_subcommand(
        "robust",
        "How sure the verdict is: every design across cost worlds drawn around the "
        "profile's prices");
    cmd->add_option("input", a->input,
                    "Scenario FILE (TOML), or a RESULTS file robust wrote (judged again)")
        ->required();
    cmd->add_option("--worlds", a->worlds, "Cost worlds to draw (Latin hypercube)")
        ->capture_default_str();
    cmd->add_option("--world-seed", a->world_seed,
                    "Seed of the draw (default: the scenario's first seed)");
    cmd->add_option("--range", a->ranges,
                    "FAMILY=F: prices of the family within [price/F, price x F] instead of the "
                    "profile's [uncertainty] (work, memory, primitive, grace_period)");
    add_limit_options(cmd, a->limits);
    cmd->add_flag("--full-runs", a->full_runs,
                  "Run every design in every world to its end: no estimate, no early stop (and "
                  "say how far re-pricing lies from the full runs)");
    cmd->add_flag("--no-estimates", a->no_estimates,
                  "Run every design in every world (stopping once over 1.5x a limit) instead of "
                  "re-pricing the nominal runs where that decides; as --shard and --slurm do");
    cmd->add_option("-o,--out", a->out_dir,
                    "Write results.json (every run) and robust.json (the worlds, shares and "
                    "sensitivity) here");
    cmd->add_flag("-q,--quiet", a->quiet, "Print no table (the files only)");
    cmd->add_option("--shard", a->shard,
                    "I/N, auto or auto/N: run only the runs whose index is I mod N, into -o "
                    "DIR/results.json, to be joined by `locksim merge` and judged by robust on "
                    "the merged file");
    add_slurm_options(cmd, a->slurm);
    add_run_choice_options(cmd, a->choices, a->threads, a->wall_clock,
                           "scenario, seeds and worlds");
    cmd->footer(fmt::format(
        "Each world multiplies the profile's prices family by family (a scenario's [prices]). "
        "Every design first runs at the profile's prices (the nominal runs); in each world, "
        "re-pricing their recorded sections and commits estimates the worst preempt-off, "
        "irqs-off and commit figures, and a design runs there in full (the same seeds) only "
        "where an estimate comes within its margin of a limit ({:.0f}%, or the figure's spread "
        "between the seeds at the profile's prices where wider) or a limit is of another figure. "
        "Each is judged as pick judges a sweep point. The table gives, per design, the worlds "
        "in which it meets every limit and each limit, with a 95% Wilson interval; the robust "
        "pick meets every limit in the most worlds. The sensitivity lines fit each near-limit "
        "figure to the factors (a power law) and name the factor at which the verdict flips.\n"
        "Exit status: 0 when the worlds were judged, 2 on bad input.",
        100 * analysis::kRepriceError));
    cmd->callback([a] { run_robust(*a); });
});

}  // namespace
}  // namespace locksim::cli
