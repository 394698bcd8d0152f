// `locksim validate FILE`: the simulator against reality. Runs the scenario's policy and
// strategies on both platforms with the same two-task workload (one reader running access
// decisions in the strategy's read section, one task toggling every boolean; the torture
// workload with its checks), on 2 CPUs, the simulator with the host's calibrated profile, and
// prints the metrics both measure side by side with the ratio sim/real: the read-side section
// length distribution, the toggle (set_bools) latency and the reader throughput.
// `--torture` instead runs the torture test of every strategy on host threads with the RCU
// checks on, and fails when any strategy does.
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <string>

#include "cli/command.h"
#include "kernel/op_names.h"
#include "kernel/results.h"
#include "real/real_platform.h"
#include "runner/calibrate.h"
#include "runner/runner.h"
#include "sim/profile.h"
#include "sim/sim_platform.h"
#include "ss/policydb.h"
#include "strategies/security_server.h"
#include "util/error.h"
#include "workloads/scenario.h"
#include "workloads/torture.h"

namespace locksim::cli {
namespace {

using kernel::Time;

struct ValidateArgs {
    std::string file;
    std::string profile = "host";
    int64_t duration_ms = 0;  // overrides the scenario's
    int64_t toggle_us = 20000;
    size_t pool = 256;
    bool torture = false;
};

struct Side {
    kernel::RunResults results;
    TortureStats torture;
};

// The two-task workload on `platform` (current on this thread), for one strategy.
// Each run gets its own copy of the policy: in-place strategies change the conditional state.
template <class P>
Side run_on(P &platform, const std::vector<uint8_t> &image, const StrategySpec &spec,
            const CoreConfig &core, const TortureConfig &tc) {
    kernel::PlatformScope scope(platform);
    auto server = make_security_server(spec.name, spec.options,
                                       make_policy_state(ss::policydb_read(image), core), core);
    Torture t(*server, tc);
    t.create_tasks();
    Side side;
    side.results = platform.run();
    side.torture = t.finish(side.results);
    return side;
}

double ratio(double sim, double real) {
    return real > 0 ? sim / real : 0;
}

void print_row(const std::string &metric, double sim, double real, const char *unit) {
    fmt::print("  {:<28} {:>12.1f} {:>12.1f} {:>4} {:>8.2f}\n", metric, sim, real, unit,
               ratio(sim, real));
}

int validate(const ValidateArgs &a) {
    Scenario s = load_scenario(a.file);
    const Time duration = a.duration_ms > 0 ? a.duration_ms * kernel::kMsec : s.duration_ns;
    const CoreConfig core = core_config(s.core);
    const std::vector<uint8_t> image = scenario_policy_image(s.policy);
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
            Side side = run_on(rp, image, spec, core, tc);
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

    sim::CpuProfile profile;
    std::string note;
    try {
        profile = sim::find_profile(a.profile);
    } catch (const UserError &) {
        if (a.profile != "host") throw;
        profile = sim::find_profile("x86-modern");
        note = " (no 'host' profile: run 'locksim calibrate'; using x86-modern)";
    }
    // The real platform's RCU is liburcu: the simulator gets the user-space model with the
    // grace period the calibration measured.
    Time urcu_gp = -1;
    if (auto it = profile.calibration.find(kUrcuGracePeriodKey); it != profile.calibration.end())
        urcu_gp = std::llround(std::stod(it->second));
    fmt::print("validate {}: 2 CPUs, {} ms per platform, profile {}{}\n", a.file,
               duration / 1000000, profile.name, note);
    fmt::print(
        "reader: 4 access decisions per read section, drawn from {}; writer: every boolean "
        "every {} us\n",
        a.pool, a.toggle_us);
    fmt::print("simulated RCU: {}\n",
               urcu_gp >= 0 ? fmt::format("user-space model, grace period {:.1f} us after the "
                                          "last reader (calibrated liburcu)",
                                          static_cast<double>(urcu_gp) / 1000.0)
                            : std::string("the kernel's (the profile has no calibrated liburcu "
                                          "grace period)"));
    TortureConfig tc;
    tc.readers = 1;
    tc.reader_hold = 0;
    tc.queries = 4;
    tc.pool = a.pool;
    tc.writer_period = a.toggle_us * kernel::kUsec;
    for (const StrategySpec &spec : s.strategies) {
        sim::SimConfig sc;
        sc.cpus = 2;
        sc.duration = duration;
        sc.seed = s.seeds.empty() ? 1 : static_cast<uint64_t>(s.seeds.front());
        sc.profile = profile;
        sc.hz = s.machine.hz;
        sc.preempt_rcu = s.machine.preempt_rcu;
        sc.userspace_rcu_gp = urcu_gp;
        sim::SimPlatform sp(sc);
        Side sim_side = run_on(sp, image, spec, core, tc);

        real::RealConfig rc;
        rc.cpus = 2;
        rc.duration = duration;
        rc.seed = sc.seed;
        rc.handle_signals = true;
        real::RealPlatform rp(rc);
        Side real_side = run_on(rp, image, spec, core, tc);

        auto &so = sim_side.results.ops[kernel::op::kTortureRead];
        auto &ro = real_side.results.ops[kernel::op::kTortureRead];
        auto &st = sim_side.results.ops[kernel::op::kSetBools];
        auto &rt = real_side.results.ops[kernel::op::kSetBools];
        fmt::print("\n{}\n  {:<28} {:>12} {:>12} {:>4} {:>8}\n", spec.label, "metric", "sim",
                   "real", "", "sim/real");
        for (double pct : {50.0, 90.0, 99.0})
            print_row(fmt::format("read section p{:.0f}", pct),
                      so.latency.value_at_percentile(pct) / 1000.0,
                      ro.latency.value_at_percentile(pct) / 1000.0, "us");
        print_row(fmt::format("toggle ({}) p50", kernel::op::kSetBools),
                  st.latency.value_at_percentile(50) / 1000.0,
                  rt.latency.value_at_percentile(50) / 1000.0, "us");
        print_row(fmt::format("toggle ({}) mean", kernel::op::kSetBools),
                  st.latency.mean() / 1000.0, rt.latency.mean() / 1000.0, "us");
        auto per_s = [](const kernel::OpStats &o, const kernel::RunResults &r) {
            return r.duration_ns ? o.completed * 1e9 / static_cast<double>(r.duration_ns) : 0.0;
        };
        print_row("reader throughput", per_s(so, sim_side.results) / 1000.0,
                  per_s(ro, real_side.results) / 1000.0, "k/s");
        for (const Side *side : {&sim_side, &real_side})
            if (side->torture.failed()) {
                ++failed;
                fmt::print("  {} run FAILED its checks:\n", side->results.platform);
                for (const auto &f : side->torture.failures)
                    fmt::print("    {}\n", f);
            }
        if (rp.interrupted()) break;
    }
    return failed ? kExitInternal : kExitOk;
}

CommandRegistrar validate_command([](CLI::App &app) {
    auto args = std::make_shared<ValidateArgs>();
    auto *cmd = app.add_subcommand(
        "validate",
        "Run a scenario's strategies on the simulator and on host threads, side by side");
    cmd->add_option("file", args->file, "Scenario file (TOML)")->required();
    cmd->add_option("--profile", args->profile,
                    "CPU profile for the simulator (default: host, from 'locksim calibrate')");
    cmd->add_option("--duration-ms", args->duration_ms,
                    "run time per platform (default: the scenario's)")
        ->check(CLI::Range(1, 3600000));
    cmd->add_option("--toggle-us", args->toggle_us, "microseconds between boolean commits")
        ->check(CLI::Range(100, 10000000));
    cmd->add_option("--pool", args->pool,
                    "access decisions the reader draws its four from, at random (default 256: "
                    "out of the cache, like AVC misses; 4: the same four, hot)")
        ->check(CLI::Range(4, 100000));
    cmd->add_flag("--torture", args->torture,
                  "torture every strategy on host threads (RCU checks on); fail on any error");
    cmd->callback([args] {
        int rc = validate(*args);
        if (rc) throw CLI::RuntimeError(rc);
    });
});

}  // namespace
}  // namespace locksim::cli
