// `locksim margin SCENARIO --key KEY --range A:B [--max-...]`: along one scenario key, where each
// design stops meeting each limit, and where the pick changes (analysis/margin.h). The key is any
// field a [sweep] axis can name, set on the same path (scenario_at), so a wrong key or value gets
// a sweep's message. -o DIR writes every run as results.json (pick --point KEY=VALUE judges one
// value, report draws it) and margin.json (the figures per value, the crossovers and how each
// was found).
#include <fmt/core.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "analysis/margin.h"
#include "analysis/results_file.h"
#include "cli/command.h"
#include "cli/limit_options.h"
#include "cli/paths.h"
#include "cli/run_choices.h"
#include "runner/runner.h"
#include "strategies/kernels.h"
#include "util/error.h"
#include "util/read_file.h"

namespace locksim::cli {
namespace {

namespace fs = std::filesystem;

struct MarginArgs {
    std::string file;
    std::string key;
    std::string range;
    std::vector<std::string> values;
    int steps = 5;
    double tolerance = 2;  // percent
    LimitArgs limits;
    std::string out_dir;
    RunChoices choices;
    int threads = 0;
    bool wall_clock = true;
};

// The text without a leading '+' (std::from_chars reads no sign but '-').
std::string_view unsigned_plus(const std::string &t) {
    std::string_view v(t);
    if (v.size() > 1 && v.front() == '+' && v[1] != '-') v.remove_prefix(1);
    return v;
}

bool integer_text(const std::string &t) {
    const std::string_view v = unsigned_plus(t);
    int64_t x = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    return ec == std::errc() && end == v.data() + v.size();
}

std::optional<double> real_text(const std::string &t) {
    const std::string_view v = unsigned_plus(t);
    double x = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(x)) return std::nullopt;
    return x;
}

// A --values entry as TOML: an integer or a boolean as written, a quoted string as that string,
// any other text as a string (a name, or a release such as 5.10, which is not a float here).
std::pair<std::string, std::string> list_value(const std::string &t) {
    if (integer_text(t) || t == "true" || t == "false") return {t, t};
    if (t.size() >= 2 && (t.front() == '"' || t.front() == '\'') && t.back() == t.front())
        return {t, t.substr(1, t.size() - 2)};
    std::string quoted = "\"";
    for (char c : t)
        quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return {quoted + "\"", t};
}

// The axis the options describe; UserError naming the option on a mistake.
analysis::MarginAxis make_axis(const MarginArgs &a) {
    analysis::MarginAxis axis;
    axis.key = a.key;
    axis.steps = a.steps;
    axis.tolerance = a.tolerance / 100;
    if (a.steps < 2 || a.steps > 100)
        throw UserError(
            fmt::format("--steps {}: from 2 to 100 (the scan's values, A and B "
                        "included)",
                        a.steps));
    if (!(a.tolerance > 0) || a.tolerance >= 100)
        throw UserError(
            fmt::format("--tolerance {}: a percentage above 0 and below 100", a.tolerance));
    if (a.range.empty() == a.values.empty())
        throw UserError("margin needs either --range A:B or --values V1,V2,... (not both)");
    if (!a.values.empty()) {
        axis.kind = analysis::KeyKind::List;
        for (const std::string &v : a.values) {
            auto [toml_text, shown] = list_value(v);
            axis.list.push_back(toml_text);
            axis.list_shown.push_back(shown);
        }
        if (axis.list.size() < 2)
            throw UserError("--values: at least two values to search between");
        return axis;
    }
    const size_t colon = a.range.find(':');
    if (colon == std::string::npos)
        throw UserError(fmt::format("--range {}: expected A:B, e.g. 2:16 or 20ms:200ms", a.range));
    const std::string lo = a.range.substr(0, colon), hi = a.range.substr(colon + 1);
    auto bad = [&](const std::string &why) {
        return UserError(fmt::format("--range {}: {}", a.range, why));
    };
    if (a.key == "kernel" || a.key.ends_with(".kernel")) {
        // Releases: the ones `locksim list kernels` describes, from A to B, in order.
        const auto first = parse_kernel_release(lo), last = parse_kernel_release(hi);
        if (!first || !last) throw bad("a kernel release range, e.g. 4.15:6.6");
        axis.kind = analysis::KeyKind::List;
        for (const KernelListing &k : kernel_listing()) {
            const KernelRelease r = *parse_kernel_release(k.name);
            if (r < *first || r > *last) continue;
            axis.list.push_back(fmt::format("\"{}\"", k.name));
            axis.list_shown.emplace_back(k.name);
        }
        if (axis.list.size() < 2)
            throw bad("fewer than two of the releases `locksim list kernels` describes lie in it");
        return axis;
    }
    if (integer_text(lo) && integer_text(hi)) {
        axis.kind = analysis::KeyKind::Integer;
        axis.lo = static_cast<double>(std::stoll(lo));
        axis.hi = static_cast<double>(std::stoll(hi));
    } else if (real_text(lo) && real_text(hi)) {
        axis.kind = analysis::KeyKind::Real;
        axis.lo = *real_text(lo);
        axis.hi = *real_text(hi);
    } else {
        axis.kind = analysis::KeyKind::Duration;
        try {
            axis.lo = static_cast<double>(analysis::parse_limit_ns("--range", lo));
            axis.hi = static_cast<double>(analysis::parse_limit_ns("--range", hi));
        } catch (const UserError &) {
            throw bad("A and B must both be integers, numbers or durations (e.g. 20ms:200ms)");
        }
    }
    if (!(axis.lo < axis.hi)) throw bad("A must be below B");
    return axis;
}

void run_margin(const MarginArgs &a) {
    const auto start = std::chrono::steady_clock::now();
    Scenario scenario = load_scenario(a.file);
    apply_run_choices(scenario, a.choices, false);
    const analysis::Limits limits = parse_limits(a.limits);  // none: find_margin refuses
    const analysis::MarginAxis axis = make_axis(a);
    const std::string at = fmt::format("--key {}", a.key);
    // Every value of the scan is set before anything runs: a wrong key or value costs no run.
    auto point_at = [&](const analysis::KeyValue &v) {
        Scenario p = scenario_at(scenario, a.key, v.toml, at);
        apply_to_point(p, scenario, a.choices);
        return p;
    };
    for (double x : axis.scan())
        point_at(axis.value(x));
    if (!scenario.sweep.empty())
        fmt::print(stderr, "note: {} has a [sweep]; margin varies {} from its base point, {}\n",
                   a.file, a.key, base_point_text(scenario));
    fs::path dir;
    if (!a.out_dir.empty()) {
        dir = a.out_dir;
        make_output_dir(dir, "-o");
    }
    std::vector<std::string> labels;
    for (const StrategySpec &s : scenario.strategies)
        labels.push_back(s.label);
    RunOptions options;
    options.threads = a.threads;
    options.wall_clock = a.wall_clock;
    // The results file names the key as a sweep axis over every value run.
    Scenario record = scenario;
    record.sweep = {SweepAxis{.field = a.key, .values = {}, .where = {}, .at = at}};
    auto run = [&](const std::vector<analysis::MarginRun> &batch) {
        // One point per value, holding the designs asked for there (with the point's options).
        std::vector<Scenario> points;
        std::vector<std::vector<std::string>> wanted;
        std::map<std::string, size_t> point_of;
        for (const analysis::MarginRun &r : batch) {
            auto [it, added] = point_of.emplace(r.value.shown, points.size());
            if (added) {
                points.push_back(point_at(r.value));
                wanted.emplace_back();
            }
            wanted[it->second].push_back(r.label);
        }
        for (size_t i = 0; i < points.size(); ++i)
            std::erase_if(points[i].strategies, [&](const StrategySpec &s) {
                return std::find(wanted[i].begin(), wanted[i].end(), s.label) == wanted[i].end();
            });
        return run_jobs(scenario, plan_runs(points), options).runs;
    };
    analysis::ResultsFile results;
    analysis::Margin m = analysis::find_margin(axis, limits, labels, results, run);
    for (const analysis::KeyValue &v : m.values)
        record.sweep.front().values.push_back(v.toml);
    m.results.scenario = scenario_json(record);
    m.results.scenario["complete"] = true;
    fmt::print("{}", analysis::format_margin(m));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (a.wall_clock) fmt::print("wall clock: {:.1f} s\n", seconds);
    if (!dir.empty()) {
        analysis::save_results(m.results, (dir / "results.json").string());
        write_whole_file((dir / "margin.json").string(),
                         analysis::margin_json(m, "results.json").dump(1) + "\n");
        fmt::print("results: {} and {}\n", (dir / "margin.json").string(),
                   (dir / "results.json").string());
    }
}

CommandRegistrar margin_registrar([](CLI::App &app) {
    auto a = std::make_shared<MarginArgs>();
    auto *cmd = app.add_subcommand(
        "margin", "Where along one scenario key each design stops meeting each limit");
    cmd->add_option("scenario", a->file, "Scenario file (TOML)")->required();
    cmd->add_option("--key", a->key,
                    "The scenario field to vary, as a [sweep] axis names it (machine.cpus, "
                    "workload.setsebool.period, machine.kernel ...)")
        ->required();
    cmd->add_option("--range", a->range,
                    "From A to B: integers (bisected over integers), numbers or durations "
                    "(bisected to --tolerance); kernel releases for a kernel key (scanned)");
    cmd->add_option("--values", a->values,
                    "An ordered list of values to scan instead of a range: integers, booleans or "
                    "names (5.10 is a name: a kernel release)")
        ->delimiter(',');
    cmd->add_option("--steps", a->steps, "Values of the first scan, A and B included")
        ->capture_default_str();
    cmd->add_option("--tolerance", a->tolerance,
                    "Bisection of a real or duration key stops at this width, in percent of the "
                    "value")
        ->capture_default_str();
    add_limit_options(cmd, a->limits);
    cmd->add_option("-o,--out", a->out_dir,
                    "Write results.json (every run) and margin.json (the search) here");
    add_run_choice_options(cmd, a->choices, a->threads, a->wall_clock, "scenario and seeds");
    cmd->footer(
        "A design meets a limit at a value as pick judges a sweep point: by its worst run over "
        "the seeds. A first scan runs every design at --steps values; where a design's verdict "
        "on a limit changes once along it, bisection narrows the change to adjacent values "
        "(integers) or to --tolerance; where it changes more than once it is reported as "
        "scanned, \"not monotone\". The pick (every design run) is found the same way. A "
        "(value, design) is never run twice; the last line says how many runs were made.\n"
        "Exit status: 0 when the search ran, 2 on bad input.");
    cmd->callback([a] { run_margin(*a); });
});

}  // namespace
}  // namespace locksim::cli
