// `locksim validate FILE`: the simulator against reality. Runs the scenario's policy and
// strategies on both platforms with the same two-task workload (one reader running access
// decisions in the strategy's read section, one task toggling every boolean; the torture
// workload with its checks), on 2 CPUs, the simulator with the host's calibrated profile, and
// prints the metrics both measure side by side with the ratio sim/real: the read-side section
// length distribution, the toggle (set_bools) latency and the reader throughput.
// The host's speed drifts, so it makes `--rounds` rounds (5 by default), each running every
// strategy on host threads and then on the simulator, one strategy after the other; the
// simulated run gets as many CPU-bound tasks as other tasks were runnable on the host during the
// real one (sampled from /proc; `--no-host-load`: none). It reports per strategy and metric the
// median over the rounds of sim, real and their ratio, with the ratio's spread (smallest and
// largest); `-o DIR` writes them to DIR/validate.json.
// The profile's prices are the host's as it was calibrated, and a virtual host's speed moves by
// more than the simulator's error: before and after every real run, validate times the
// calibration's operation that does what the reader does (HostSpeedProbe) and reports beside
// each ratio the same with the real side on the host as calibrated ('host-adj.': the real times
// divided by the median timing over the calibrated one). What the core counts for the kernel
// and the host does not execute (an audit record's emission) is priced at nothing in the
// simulated runs, as it costs the real ones nothing.
// `--torture` instead runs the torture test of every strategy on host threads with the RCU
// checks on, and fails when any strategy does.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "analysis/pick.h"
#include "calibrate/calibrate.h"
#include "cli/command.h"
#include "cli/host_calibration.h"
#include "cli/paths.h"
#include "real/real_platform.h"
#include "record/op_names.h"
#include "record/run_results.h"
#include "runner/runner.h"
#include "scenario/scenario.h"
#include "sim/profile.h"
#include "sim/sim_platform.h"
#include "ss/policydb.h"
#include "strategies/security_server.h"
#include "util/error.h"
#include "util/median.h"
#include "util/read_file.h"
#include "validate/side.h"

namespace locksim::cli {
namespace {

using kernel::Time;

struct ValidateArgs {
    std::string file;
    std::string profile = "host";
    int64_t duration_ms = 0;  // overrides the scenario's
    std::string duration;     // the same as a duration ("300ms"), as the other commands take it
    int64_t toggle_us = 0;    // 0: the scenario's ([validate] toggle)
    size_t pool = 0;          // 0: the scenario's ([validate] pool)
    int rounds = 5;
    bool host_load = true;
    std::string out_dir;
    bool torture = false;
    // Calibrate the host before every round instead of taking --profile (HostCalibration's
    // defaults, `calibrate --quick` with quick).
    bool calibrate = false;
    bool quick = false;
};

double ratio(double sim, double real) {
    return real > 0 ? sim / real : 0;
}

// One metric of one strategy over the rounds: each round's sim and real value.
struct Series {
    std::string group, name, unit, text;
    bool rate = false;  // a count per second (a slower host lowers it), not a time

    std::vector<double> sim, real;

    std::vector<double> ratios() const {
        std::vector<double> r;
        for (size_t i = 0; i < sim.size(); ++i)
            r.push_back(ratio(sim[i], real[i]));
        return r;
    }
    // The ratio with the host as it was calibrated, the host the simulator's prices describe:
    // each real time divided by how much slower the host was than then (`slower`), each rate
    // multiplied by it.
    double adjust(double r, double slower) const { return rate ? r / slower : r * slower; }
    // The rounds' ratios: their median and spread.
    struct Spread {
        double median = 0, min = 0, max = 0;
    };
    static Spread spread(const std::vector<double> &r) {
        if (r.empty()) return {};
        const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
        return {median(r), *lo, *hi};
    }
    // The spread of the ratios adjusted by `slower`.
    Spread adjusted(const Spread &sp, double slower) const {
        const double a = adjust(sp.min, slower), b = adjust(sp.max, slower);
        return {adjust(sp.median, slower), std::min(a, b), std::max(a, b)};
    }
    // `slower`: the host's slowness against its calibration over the rounds (0: not known).
    nlohmann::ordered_json json(double slower) const {
        const std::vector<double> r = ratios();
        const Spread sp = spread(r);
        nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
        for (size_t i = 0; i < sim.size(); ++i)
            rounds.push_back({{"sim", sim[i]}, {"real", real[i]}, {"ratio", r[i]}});
        nlohmann::ordered_json j = {{"unit", unit},         {"sim", median(sim)},
                                    {"real", median(real)}, {"ratio", sp.median},
                                    {"ratio_min", sp.min},  {"ratio_max", sp.max}};
        if (slower > 0) {
            const Spread sa = adjusted(sp, slower);
            j["ratio_adjusted"] = sa.median;
            j["ratio_adjusted_min"] = sa.min;
            j["ratio_adjusted_max"] = sa.max;
        }
        j["rounds"] = rounds;
        return j;
    }
    void print(double slower) const {
        const Spread sp = spread(ratios());
        fmt::print("  {:<28} {:>12.1f} {:>12.1f} {:>4} {:>8.2f}  {:.2f}-{:.2f}", text, median(sim),
                   median(real), unit, sp.median, sp.min, sp.max);
        if (slower > 0) {
            const Spread sa = adjusted(sp, slower);
            fmt::print("  {:>9.2f}  {:.2f}-{:.2f}", sa.median, sa.min, sa.max);
        }
        fmt::print("\n");
    }
};

// What one strategy's rounds measured, in the order printed.
struct StrategySeries {
    std::vector<Series> metrics;
    std::vector<double> host_load;  // per round: the host's other runnable tasks (mean)
    int failed = 0;
    // Where the time goes: per compute label, the work charged on each platform, summed over
    // the rounds (the reader's labels and the writer's), and the operations it was spent on.
    std::map<std::string, std::pair<kernel::Time, kernel::Time>> compute_ns;
    uint64_t sim_reads = 0, real_reads = 0, sim_commits = 0, real_commits = 0;
    // The commits' time on each platform, summed over the rounds: their latency, and the
    // parts of it spent in charged work, waiting for locks and waiting for grace periods.
    struct CommitParts {
        kernel::Time latency = 0;
        kernel::OpParts parts;
        void add(const kernel::OpStats &o) {
            latency += o.completed_mean() * static_cast<kernel::Time>(o.completed);
            parts += o;
        }
    };
    CommitParts sim_commit, real_commit;
    // The simulator's cache model per compute label, summed over the rounds: where its lines
    // were served from and the stall they cost.
    std::map<std::string, kernel::MemoryStall> sim_memory;

    void add(size_t i, double sim, double real) {
        metrics[i].sim.push_back(sim);
        metrics[i].real.push_back(real);
    }
};

StrategySeries empty_series() {
    StrategySeries s;
    for (double pct : {50.0, 90.0, 99.0})
        s.metrics.push_back({"read_section", fmt::format("p{:.0f}", pct), "us",
                             fmt::format("read section p{:.0f}", pct)});
    s.metrics.push_back(
        {"commit", "p50", "us", fmt::format("toggle ({}) p50", kernel::op::kSetBools)});
    s.metrics.push_back(
        {"commit", "mean", "us", fmt::format("toggle ({}) mean", kernel::op::kSetBools)});
    s.metrics.push_back({"throughput", "reads_per_s", "k/s", "reader throughput", true});
    return s;
}

// The calibration's pointer chases beside the same timed before and after the rounds: printed,
// and validate.json's "host_drift".
nlohmann::ordered_json host_drift(const std::string &profile, const ChaseSet &calibrated,
                                  const ChaseSet &before, const ChaseSet &after) {
    fmt::print("\nthe host since its calibration: ");
    if (calibrated.empty()) {
        fmt::print("not known (profile '{}' records no {}: run 'locksim calibrate')\n", profile,
                   kHostChaseKey);
        return {{"recorded", false}};
    }
    fmt::print("pointer chase, ns per load (calibrated / before the rounds / after)\n ");
    nlohmann::ordered_json levels = nlohmann::ordered_json::array();
    for (size_t i = 0; i < calibrated.size(); ++i) {
        const ChasePoint &c = calibrated[i];
        fmt::print(" {} ({} KiB) {:.1f} / {:.1f} / {:.1f}", c.level, c.kib, c.ns, before[i].ns,
                   after[i].ns);
        levels.push_back({{"level", c.level},
                          {"kib", c.kib},
                          {"calibrated_ns", c.ns},
                          {"before_ns", before[i].ns},
                          {"after_ns", after[i].ns}});
    }
    const double moved =
        std::max(largest_move(calibrated, before), largest_move(calibrated, after));
    fmt::print("\n  largest move x{:.2f}{}\n", moved,
               moved > 1.25 ? " (over 1.25: the simulator prices the host as it was then; "
                              "recalibrate, or read the sim/real ratios with this in mind)"
                            : "");
    return {{"recorded", true}, {"levels", levels}, {"largest_move", moved}};
}

// How much slower than at its calibration the host is: the calibration's operation that does
// what the reader does (HostSpeedProbe), timed before and after each real run. The host's speed
// moves within a second by more than the simulator's error (1.5x and back on a virtual machine),
// so one timing does not tell how fast a run beside it went; their median over the rounds tells
// how fast the host was while validate ran, against the time the profile was fitted to.
struct ReaderProbe {
    std::unique_ptr<HostSpeedProbe> probe;
    double calibrated_ns = 0;  // the operation's time in the profile the rounds now use
    std::string why_not;       // without a probe
    std::vector<double> times;
    std::vector<double> slowness;  // each timing over the calibrated time then
    nlohmann::ordered_json rounds = nlohmann::ordered_json::array();

    // The profile calibrated again (validate --calibrate): later timings are against its time.
    void recalibrated(const sim::CpuProfile &profile) {
        if (probe) calibrated_ns = calibrated_host_ns(profile, probe->op());
    }

    // Runs `run` between two timings of the probe.
    template <class F>
    void around(const std::string &strategy, int round, F &&run) {
        const double before = probe ? probe->time_ns() : 0;
        run();
        if (!probe) return;
        const double after = probe->time_ns();
        for (const double t : {before, after}) {
            times.push_back(t);
            slowness.push_back(t / calibrated_ns);
        }
        rounds.push_back({{"strategy", strategy},
                          {"round", round + 1},
                          {"before_ns", before},
                          {"after_ns", after},
                          {"calibrated_ns", calibrated_ns}});
    }
    // The median of the timings over the calibrated time; 0 without a probe or a timing.
    double slower() const { return probe && !slowness.empty() ? median(slowness) : 0; }
    nlohmann::ordered_json json() const {
        if (!probe) return {{"known", false}, {"why", why_not}};
        return {{"known", true},
                {"op", probe->op()},
                {"calibrated_ns", calibrated_ns},
                {"median_ns", median(times)},
                {"slower", slower()},
                {"rounds", rounds}};
    }
    bool rounds_calibrated = false;  // validate --calibrate
    void print() const {
        fmt::print("the host's speed, by the reader's operation: ");
        if (!probe) {
            fmt::print("not timed ({}): no ratio adjusted\n", why_not);
            return;
        }
        const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
        fmt::print(
            "'{}' timed before and after each real run: median {:.0f} ns ({:.0f}-{:.0f}) against "
            "the calibration's {:.0f} ns{}, x{:.2f}; 'host-adj.' is sim/real with the real times "
            "divided by x{:.2f} (rates multiplied), as on the host the profile was fitted to\n",
            probe->op(), median(times), times.empty() ? 0.0 : *lo, times.empty() ? 0.0 : *hi,
            calibrated_ns,
            rounds_calibrated ? " (the last round's; each timing against its own round's)" : "",
            slower(), slower());
    }
};

ReaderProbe reader_probe(const sim::CpuProfile &profile, ValidateRead read) {
    ReaderProbe p;
    const auto it = profile.calibration.find("policy");
    if (it == profile.calibration.end()) {
        p.why_not = fmt::format("profile '{}' records no calibration: run 'locksim calibrate'",
                                profile.name);
        return p;
    }
    CalibrateOptions o;
    o.policy_name = it->second;
    o.base = profile;
    try {
        o.policy_image = scenario_policy_image(calibration_policy(it->second));
        p.probe = std::make_unique<HostSpeedProbe>(o, read);
    } catch (const UserError &e) {
        p.why_not = fmt::format("the calibration's policy '{}': {}", it->second, e.what());
        return p;
    }
    // A record that is there and cannot be read is the profile's mistake, and said as one.
    p.calibrated_ns = calibrated_host_ns(profile, p.probe->op());
    if (p.calibrated_ns <= 0) {
        p.why_not = fmt::format("profile '{}' records no 'op: {}'", profile.name, p.probe->op());
        p.probe.reset();
    }
    return p;
}

// What the simulator takes from a calibrated profile to compare with the real platform.
struct HostSideCosts {
    // The real platform's RCU is liburcu: the simulator gets the user-space model with the
    // grace period the calibration measured (-1: none recorded, the kernel's RCU).
    Time urcu_gp = -1;
    // liburcu's wait for a reader still inside: its polling window and the grace period's end
    // after such a reader left, when it slept for it (0: no such path recorded).
    Time urcu_spin = 0, urcu_sleep = 0;
    // The real platform's bookkeeping around each compute() span, which the work units' prices
    // leave out: the simulator charges it to every span.
    Time span_overhead = 0;
    // And what it spends queuing a call_rcu callback (the kernel's is not priced).
    Time call_rcu = 0;

    static HostSideCosts of(const sim::CpuProfile &p) {
        auto ns = [&p](const char *key) { return std::llround(calibrated_ns(p, key).value_or(0)); };
        HostSideCosts c;
        if (calibrated_ns(p, kUrcuGracePeriodKey)) c.urcu_gp = ns(kUrcuGracePeriodKey);
        c.urcu_spin = ns(kUrcuSpinKey);
        c.urcu_sleep = ns(kUrcuSleepKey);
        c.span_overhead = ns(kComputeSpanKey);
        c.call_rcu = ns(kCallRcuKey);
        return c;
    }
    // Sets them in `sc`, with what the core only counts priced at nothing (the host runs none
    // of it).
    void apply(sim::SimConfig &sc) const {
        sc.userspace_rcu_gp = urcu_gp;
        sc.userspace_rcu_spin = urcu_spin;
        sc.userspace_rcu_sleep = urcu_sleep;
        sc.host_span_overhead = span_overhead;
        sc.host_call_rcu = call_rcu;
        sc.price_stand_ins = false;
    }
};

int validate(const ValidateArgs &a) {
    Scenario s = load_scenario(a.file);
    Time duration = a.duration_ms > 0 ? a.duration_ms * kernel::kMsec : s.duration_ns;
    if (!a.duration.empty()) {
        duration = analysis::parse_limit_ns("--duration", a.duration);
        if (duration < kernel::kMsec || duration > 3600 * kernel::kSec)
            throw UserError(fmt::format("--duration {}: between 1ms and 1h", a.duration));
    }
    // The core of each design on its own kernel.
    auto core_of = [&s](const StrategySpec &spec) {
        return core_config(s.core, design_kernel(s, spec).behaviour, s.machine.ima);
    };
    const CoreConfig core = core_of(s.strategies.front());
    const ValidateSpec &v = s.validate;
    const int64_t toggle_us = a.toggle_us ? a.toggle_us : v.toggle_ns / kernel::kUsec;
    const size_t pool = a.pool ? a.pool : static_cast<size_t>(v.pool);
    const std::vector<uint8_t> image = scenario_policy_image(s.policy);
    // The torture's readers check decisions that the booleans change: a policy without them is
    // refused here, before any output, naming the scenario's policy.
    size_t booleans = 0;  // the writer flips every one each commit
    at_place(s.policy.path_at.empty() ? a.file : s.policy.path_at, [&] {
        ss::PolicyState st = make_policy_state(ss::policydb_read(image), core);
        ss::PolicyState on, off;
        boolean_dependent_queries(st, 1, &on, &off);
        booleans = ss::get_bools(st).size();
    });
    int failed = 0;

    if (a.torture) {
        for (const StrategySpec &spec : s.strategies) {
            real::RealConfig rc;
            rc.cpus = 0;
            rc.duration = duration;
            rc.checks = true;
            rc.handle_signals = true;
            rc.report_violations = true;
            real::RealPlatform rp(rc);
            TortureConfig tc;
            tc.readers = 2;
            tc.writer_period = 1 * kernel::kMsec;
            Side side = run_side(rp, image, spec, core_of(spec), tc);
            const TortureStats &t = side.torture;
            fmt::print("{:<24} {} reads, {} commits, {} mixed, {} freed, {}: {}\n", spec.label,
                       t.reads, t.commits, t.mixed, t.freed, t.pipe_text(),
                       t.failed() ? "FAILED" : "ok");
            for (const auto &f : t.failures)
                fmt::print("    {}\n", f);
            failed += t.failed();
            if (rp.interrupted()) break;
        }
        return failed ? kExitInternal : kExitOk;
    }

    const std::filesystem::path out_dir(a.out_dir);
    if (!a.out_dir.empty()) make_output_dir(out_dir, "-o");
    // With --calibrate, the host is calibrated before every round and the round's simulated
    // runs use what it found: a virtual host's speed moves by more than the simulator's error
    // within minutes (bench/README.md), and a profile fitted seconds before a round describes
    // the host of that round better than one fitted before the whole validate.
    HostCalibration recalibration;
    recalibration.quick = a.quick;
    nlohmann::ordered_json calibrations = nlohmann::ordered_json::array();
    auto calibrate_round = [&](int round) {
        fmt::print(stderr, "round {}/{}: calibrating the host\n", round + 1, a.rounds);
        CalibrateOptions co = calibrate_options(recalibration);
        co.progress = [](const std::string &line) {  // its warnings only
            if (line.starts_with("warning:")) fmt::print(stderr, "  {}\n", line);
        };
        sim::CpuProfile p = calibrate(co).profile;
        nlohmann::ordered_json c = {{"round", round + 1}};
        if (!a.out_dir.empty()) {
            const std::filesystem::path file =
                out_dir / fmt::format("calibration-{}.toml", round + 1);
            write_profile(file, p);
            c["profile"] = file.filename().string();
        }
        for (const char *key : {kUrcuGracePeriodKey, kComputeSpanKey, kCallRcuKey})
            c[key] = calibrated_ns(p, key).value_or(0);
        c["llc_ns"] = p.memory.llc_ns;
        c["dram_ns"] = p.memory.dram_ns;
        calibrations.push_back(std::move(c));
        return p;
    };
    sim::CpuProfile profile;
    std::string note;
    if (a.calibrate) {
        profile = calibrate_round(0);
        note = fmt::format(", fitted to this host before every round{}",
                           a.quick ? " (as 'calibrate --quick')" : "");
    } else {
        try {
            profile = sim::find_profile(a.profile);
        } catch (const UserError &) {
            if (a.profile != "host") throw;
            profile = sim::find_profile("x86-modern");
            note = " (no 'host' profile: run 'locksim calibrate'; using x86-modern)";
        }
    }
    // What the core counts for the kernel and does not run (kernel::stand_in: an audit
    // record's emission and text, the notifiers' cache flushes, selinuxfs's files, a system
    // call's path): the real side spends nothing on it, so here, where the two are compared,
    // the simulator prices it at nothing too (a run prices it as the kernel's). Priced, an
    // in-place commit of every boolean was 99 us longer in the simulator than the host spends on
    // its audit alone (bench/README.md).
    const std::string unpriced =
        "the work of kernel code the core only counts (kernel::stand_in: audit records, the "
        "notifiers' cache flushes, selinuxfs's files, system calls' paths)";
    HostSideCosts host = HostSideCosts::of(profile);
    const HostSideCosts first = host;  // round 1's: what the header and validate.json's top show
    fmt::print("validate {}: 2 CPUs, {} ms per platform, profile {}{}\n", a.file,
               duration / 1000000, profile.name, note);
    if (a.calibrate)
        fmt::print(
            "each round's simulated runs use the profile calibrated just before that round; the "
            "prices below are round 1's{}\n",
            a.out_dir.empty() ? "" : " (validate.json 'calibrations' lists every round's)");
    if (v.read == ValidateRead::Contexts)
        fmt::print(
            "reader: context_to_sid of one of {} contexts made before the run (MCS "
            "category pairs), at random; writer: every boolean every {} us\n",
            v.sids, toggle_us);
    else
        fmt::print(
            "reader: 4 access decisions per read section, drawn from {}; writer: every "
            "boolean every {} us\n",
            pool, toggle_us);
    fmt::print("priced at zero in the simulator, as the host runs nothing for it: {}\n", unpriced);
    fmt::print(
        "simulated RCU: {}\n",
        first.urcu_gp >= 0
            ? fmt::format("user-space model, grace period {:.1f} us after the last reader, or "
                          "{} (calibrated liburcu)",
                          static_cast<double>(first.urcu_gp) / 1000.0,
                          first.urcu_sleep > 0
                              ? fmt::format("{:.1f} us after one still inside {:.1f} us into it, "
                                            "which liburcu sleeps for",
                                            static_cast<double>(first.urcu_sleep) / 1000.0,
                                            static_cast<double>(first.urcu_spin) / 1000.0)
                              : std::string("no sleeping wait recorded"))
            : std::string("the kernel's (the profile has no calibrated liburcu "
                          "grace period)"));
    auto host_cost = [](Time ns, const char *to_what) {
        return ns > 0 ? fmt::format("{} ns, charged to every {} in the simulator (calibrated)", ns,
                                    to_what)
                      : std::string("not in the profile (calibrate records it): not charged");
    };
    fmt::print("the real platform's own bookkeeping around a compute() span: {}\n",
               host_cost(first.span_overhead, "span"));
    fmt::print("the real platform's call_rcu (a deferred free): {}\n",
               host_cost(first.call_rcu, "call_rcu"));
    // How far the host has moved since the calibration: its pointer chases timed again before
    // and after the rounds (a virtual machine's memory latency can move 2x in minutes, and the
    // profile's prices do not follow it).
    ChaseSet calibrated;
    if (auto it = profile.calibration.find(kHostChaseKey); it != profile.calibration.end())
        calibrated = at_place(fmt::format("profile '{}' [calibration]", profile.name),
                              [&] { return parse_chase_record(it->second); });
    const CalibrateOptions chase_options;
    auto chase_now = [&] {
        return chase_again(calibrated, chase_steps(chase_options), chase_options.rounds);
    };
    const ChaseSet chase_before = chase_now();
    ReaderProbe speed_probe = reader_probe(profile, v.read);
    speed_probe.rounds_calibrated = a.calibrate;
    // Each calibration's time for the reader's operation: how fast the host was at each.
    auto note_reader_op = [&] {
        if (a.calibrate && speed_probe.probe)
            calibrations.back()["reader_op_ns"] = speed_probe.calibrated_ns;
    };
    note_reader_op();
    const double steal_before = host_steal_ms();
    const auto rounds_start = std::chrono::steady_clock::now();
    TortureConfig tc;
    tc.readers = 1;
    tc.reader_hold = 0;
    tc.queries = 4;
    tc.pool = pool;
    tc.read = v.read;
    tc.sids = v.read == ValidateRead::Contexts ? static_cast<size_t>(v.sids) : 0;
    tc.writer_period = toggle_us * kernel::kUsec;
    fmt::print(
        "{} interleaved rounds (each: every strategy, real then sim); medians over the "
        "rounds, the ratio's spread min-max\n",
        a.rounds);
    std::map<std::string, StrategySeries> series;
    const uint64_t seed0 = s.seeds.empty() ? 1 : static_cast<uint64_t>(s.seeds.front());
    bool interrupted = false;
    int rounds_done = 0;
    for (int round = 0; round < a.rounds && !interrupted; ++round) {
        if (a.calibrate && round > 0) {
            profile = calibrate_round(round);
            host = HostSideCosts::of(profile);
            speed_probe.recalibrated(profile);
            note_reader_op();
        }
        fmt::print(stderr, "round {}/{}\n", round + 1, a.rounds);
        for (const StrategySpec &spec : s.strategies) {
            const uint64_t seed = seed0 + static_cast<uint64_t>(round);
            // The host first: how many other tasks were runnable meanwhile is the load the
            // simulator then gets beside the reader and the writer.
            real::RealConfig rc;
            rc.cpus = 2;
            rc.duration = duration;
            rc.seed = seed;
            rc.handle_signals = true;
            rc.host_clock_ops = {kernel::op::kSetBools};  // where a commit's host time goes
            real::RealPlatform rp(rc);
            Side real_side;
            double load = 0;
            speed_probe.around(spec.label, round, [&] {
                load = others_runnable_during(
                    [&] { real_side = run_side(rp, image, spec, core_of(spec), tc); });
            });
            if (rp.interrupted()) {
                interrupted = true;  // a partial round is not kept
                break;
            }

            sim::SimConfig sc;
            sc.cpus = 2;
            sc.duration = duration;
            sc.seed = seed;
            sc.profile = profile;
            sc.hz = s.machine.hz;
            sc.preempt_rcu = s.machine.preempt_rcu;
            host.apply(sc);
            const ss::Avtab::GenerationScope generations;  // the run's tables numbered from 1
            sim::SimPlatform sp(sc);
            Side sim_side = run_side(sp, image, spec, core_of(spec), tc,
                                     a.host_load ? static_cast<int>(std::lround(load)) : 0);

            auto [it, fresh] = series.try_emplace(spec.label, empty_series());
            StrategySeries &ss = it->second;
            ss.host_load.push_back(load);
            const auto &so = sim_side.results.ops[kernel::op::kTortureRead];
            const auto &ro = real_side.results.ops[kernel::op::kTortureRead];
            const auto &st = sim_side.results.ops[kernel::op::kSetBools];
            const auto &rt = real_side.results.ops[kernel::op::kSetBools];
            size_t m = 0;
            for (double pct : {50.0, 90.0, 99.0})
                ss.add(m++, so.latency.value_at_percentile(pct) / 1000.0,
                       ro.latency.value_at_percentile(pct) / 1000.0);
            ss.add(m++, st.latency.value_at_percentile(50) / 1000.0,
                   rt.latency.value_at_percentile(50) / 1000.0);
            ss.add(m++, st.latency.mean() / 1000.0, rt.latency.mean() / 1000.0);
            auto per_s = [](const kernel::OpStats &o, const kernel::RunResults &r) {
                return r.duration_ns ? o.completed * 1e9 / static_cast<double>(r.duration_ns) : 0.0;
            };
            ss.add(m++, per_s(so, sim_side.results) / 1000.0,
                   per_s(ro, real_side.results) / 1000.0);
            for (const auto &[label, ns] : sim_side.results.compute_ns)
                ss.compute_ns[label].first += ns;
            for (const auto &[label, ns] : real_side.results.compute_ns)
                ss.compute_ns[label].second += ns;
            for (const auto &[label, m] : sim_side.results.memory_stall)
                ss.sim_memory[label] += m;
            ss.sim_reads += so.completed, ss.real_reads += ro.completed;
            ss.sim_commits += st.completed, ss.real_commits += rt.completed;
            ss.sim_commit.add(st);
            ss.real_commit.add(rt);
            for (const Side *side : {&sim_side, &real_side})
                if (side->torture.failed()) {
                    ++ss.failed;
                    ++failed;
                    fmt::print("  {} {} run FAILED its checks:\n", spec.label,
                               side->results.platform);
                    for (const auto &f : side->torture.failures)
                        fmt::print("    {}\n", f);
                }
        }
        if (!interrupted) ++rounds_done;
    }

    const double rounds_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - rounds_start)
            .count();
    const double steal_after = host_steal_ms();
    const ChaseSet chase_after = chase_now();
    nlohmann::ordered_json doc = {{"schema", "locksim/validate/1"},
                                  {"scenario", a.file},
                                  {"profile", profile.name},
                                  {"cpus", 2},
                                  {"duration_ms", duration / kernel::kMsec},
                                  {"rounds", rounds_done},
                                  {"interrupted", interrupted},
                                  {"read", validate_read_names().name(v.read)},
                                  {"pool", pool},
                                  {"sids", tc.sids},
                                  {"toggle_us", toggle_us},
                                  {"booleans", booleans},
                                  {"unpriced_work", unpriced},
                                  {"simulated_rcu", first.urcu_gp >= 0 ? "user-space" : "kernel"},
                                  {"urcu_ns",
                                   {{"grace_period", first.urcu_gp},
                                    {"reader_spin", first.urcu_spin},
                                    {"reader_sleep", first.urcu_sleep}}},
                                  {"span_overhead_ns", first.span_overhead},
                                  {"call_rcu_ns", first.call_rcu}};
    if (a.calibrate) doc["calibrations"] = calibrations;
    nlohmann::ordered_json &strategies = doc["strategies"] = nlohmann::ordered_json::object();
    const double slower = speed_probe.slower();
    fmt::print("\n");
    speed_probe.print();
    if (a.calibrate) {
        fmt::print("the host at each round's calibration:");
        for (const auto &c : calibrations)
            fmt::print(" {}: reader's operation {:.0f} us, liburcu grace period {:.1f} us;",
                       c["round"].get<int>(), c.value("reader_op_ns", 0.0) / 1000.0,
                       c[kUrcuGracePeriodKey].get<double>() / 1000.0);
        fmt::print("\n");
    }
    for (const StrategySpec &spec : s.strategies) {
        auto it = series.find(spec.label);
        if (it == series.end()) continue;
        fmt::print("\n{}\n  {:<28} {:>12} {:>12} {:>4} {:>8}  {}{}\n", spec.label,
                   "metric (median)", "sim", "real", "", "sim/real", "min-max",
                   slower > 0 ? fmt::format("    {:>9}  {}", "host-adj.", "min-max") : "");
        nlohmann::ordered_json &j = strategies[spec.label];
        for (const Series &m : it->second.metrics) {
            m.print(slower);
            j[m.group][m.name] = m.json(slower);
        }
        const std::vector<double> &hl = it->second.host_load;
        j["host_load"] = {{"mean_other_runnable", median(hl)},
                          {"simulated_tasks", a.host_load ? nlohmann::ordered_json(hl)
                                                          : nlohmann::ordered_json::array()}};
        fmt::print("  host's other runnable tasks during the real runs: median {:.2f} ({})\n",
                   median(hl),
                   a.host_load ? "as many CPU-bound tasks in the simulation, rounded"
                               : "not simulated (--no-host-load)");
        const StrategySeries &sr = it->second;
        nlohmann::ordered_json &work = j["compute"];
        work["reads"] = {{"sim", sr.sim_reads}, {"real", sr.real_reads}};
        work["commits"] = {{"sim", sr.sim_commits}, {"real", sr.real_commits}};
        for (const auto &[label, ns] : sr.compute_ns)
            work["ns"][label] = {{"sim", ns.first}, {"real", ns.second}};
        for (const auto &[side, c] : {std::pair{"sim", &sr.sim_commit}, {"real", &sr.real_commit}})
            work["commit_parts"][side] = {{"latency_ns", c->latency},
                                          {"compute_ns", c->parts.compute_ns},
                                          {"lock_wait_ns", c->parts.lock_wait_ns},
                                          {"gp_wait_ns", c->parts.gp_wait_ns},
                                          {"grace_periods", c->parts.grace_periods}};
        // The host's own count of the writer's time in its commits: CPU time run, and the
        // times another thread took its CPU.
        work["commit_parts"]["real"]["host_cpu_ns"] = sr.real_commit.parts.host_cpu_ns;
        work["commit_parts"]["real"]["host_preemptions"] = sr.real_commit.parts.host_preemptions;
        for (const auto &[label, m] : sr.sim_memory)
            work["sim_memory"][label] = {{"lines", m.lines},
                                         {"l2_hits", m.l2_hits},
                                         {"llc_hits", m.llc_hits},
                                         {"dram", m.dram},
                                         {"stall_ns", m.stall_ns}};
        j["failed_checks"] = it->second.failed;
    }
    doc["host_drift"] = host_drift(profile.name, calibrated, chase_before, chase_after);
    doc["host_drift"]["reader_op"] = speed_probe.json();
    // The hypervisor's steal over the rounds: time this VM's CPUs wanted and did not get.
    const double steal = steal_before >= 0 && steal_after >= 0 ? steal_after - steal_before : -1;
    doc["host_drift"]["steal_ms"] = steal;
    doc["host_drift"]["rounds_ms"] = rounds_ms;
    if (steal >= 0)
        fmt::print(
            "  stolen by the hypervisor during the rounds: {:.0f} ms of the {} CPUs' {:.0f} ms "
            "({:.1f}%)\n",
            steal, std::thread::hardware_concurrency(), rounds_ms,
            100.0 * steal / (rounds_ms * std::max(1u, std::thread::hardware_concurrency())));
    if (!a.out_dir.empty()) {
        const std::filesystem::path path = out_dir / "validate.json";
        write_whole_file(path.string(), doc.dump(2) + "\n");
        fmt::print("\nwrote {}\n", path.string());
    }
    return failed ? kExitInternal : kExitOk;
}

CommandRegistrar validate_registrar([](CLI::App &app) {
    auto args = std::make_shared<ValidateArgs>();
    auto *cmd = app.add_subcommand(
        "validate",
        "Run a scenario's strategies on the simulator and on host threads, side by side");
    cmd->add_option("file", args->file, "Scenario file (TOML)")->required();
    auto *profile =
        cmd->add_option("--profile", args->profile,
                        "CPU profile for the simulator (default: host, from 'locksim calibrate')");
    auto *calibrate = cmd->add_flag(
        "--calibrate", args->calibrate,
        "calibrate the host before every round (about 25 s each, as 'locksim calibrate') and "
        "price that round's simulated runs with what it found, instead of --profile; -o also "
        "writes each round's profile");
    calibrate->excludes(profile);
    auto *quick = cmd->add_flag("--quick", args->quick,
                                "with --calibrate: calibrate as 'calibrate --quick' does (less "
                                "precise; for tests)")
                      ->needs(calibrate);
    auto *duration = cmd->add_option("--duration", args->duration,
                                     "run time per platform, e.g. 300ms (default: the scenario's)");
    cmd->add_option("--duration-ms", args->duration_ms, "the same in milliseconds")
        ->check(CLI::Range(1, 3600000))
        ->excludes(duration);
    cmd->add_option("--toggle-us", args->toggle_us,
                    "microseconds between boolean commits (default: the scenario's [validate] "
                    "toggle, else 20000)")
        ->check(CLI::Range(100, 10000000));
    cmd->add_option("--pool", args->pool,
                    "access decisions the reader draws its four from, at random (default: the "
                    "scenario's [validate] pool, else 256: out of the cache, like AVC misses; 4: "
                    "the same four, hot)")
        ->check(CLI::Range(4, 100000));
    auto *rounds =
        cmd->add_option("--rounds", args->rounds,
                        "interleaved rounds, each running every strategy on both platforms "
                        "(default 5); medians and spreads are over them")
            ->check(CLI::Range(1, 1000));
    auto *out = cmd->add_option("-o,--out", args->out_dir, "directory to write validate.json to");
    auto *no_load = cmd->add_flag(
        "!--no-host-load", args->host_load,
        "do not give the simulation the host's other load (by default each round's simulated "
        "run gets as many CPU-bound tasks as other tasks were runnable on the host, on "
        "average, "
        "during its real run)");
    cmd->add_flag("--torture", args->torture,
                  "torture every strategy on host threads (RCU checks on); fail on any error")
        ->excludes(rounds)
        ->excludes(out)
        ->excludes(no_load)
        ->excludes(calibrate)
        ->excludes(quick);
    cmd->callback([args] {
        int rc = validate(*args);
        if (rc) throw CLI::RuntimeError(rc);
    });
});

}  // namespace
}  // namespace locksim::cli
