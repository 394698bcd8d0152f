// `locksim calibrate`: fits a CPU profile to this host (calibrate/calibrate.h) and writes it as a
// profile file, by default the `host` profile that `validate` and scenarios
// (`machine.profile = "host"`) use.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "calibrate/calibrate.h"
#include "cli/command.h"
#include "cli/host_calibration.h"
#include "runner/runner.h"
#include "sim/profile.h"
#include "util/error.h"

namespace locksim::cli {
namespace {

namespace fs = std::filesystem;

struct CalibrateArgs {
    HostCalibration host;
    std::string output;
    bool verbose = false;
};

}  // namespace

CalibrateOptions calibrate_options(const HostCalibration &h) {
    CalibrateOptions o;
    o.policy_image = scenario_policy_image(calibration_policy(h.policy));
    o.policy_name = h.policy;
    o.base = sim::find_profile(h.base);
    o.name = h.name;
    o.passes = h.passes ? h.passes : h.quick ? 1 : 3;
    if (h.quick) {
        o.rounds = 5;
        o.max_buffer_bytes = size_t{64} << 20;
    }
    o.progress = [](const std::string &line) { fmt::print(stderr, "  {}\n", line); };
    return o;
}

void write_profile(const fs::path &out, const sim::CpuProfile &profile) {
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    std::ofstream f(out);
    f << "# A CPU profile fitted to this host by `locksim calibrate`.\n"
      << sim::format_profile(profile);
    if (!f.flush()) throw UserError(fmt::format("{}: cannot write the profile", out.string()));
    sim::load_profile_file(out);  // what was written reads back
}

namespace {

void run(const CalibrateArgs &a) {
    const CalibrateOptions o = calibrate_options(a.host);
    const fs::path out =
        a.output.empty() ? sim::profile_dir() / (a.host.name + ".toml") : fs::path(a.output);
    fmt::print(stderr, "calibrating on policy '{}' (base profile {})\n", a.host.policy,
               o.base.name);
    Calibration c = calibrate(o);

    const MemoryMeasure &m = c.memory;
    fmt::print(
        "memory: first level {} KiB, private {} KiB, last level {} KiB (from {}); pointer chase "
        "{:.1f} ns (first level), {:.1f} ns (private), {:.1f} ns (last level), {:.1f} ns "
        "(memory); independent loads {:.1f} ns (memory-level parallelism mlp = {:.2f}); l2_ns "
        "{}; fitted to the hot and cold times: llc_ns {}, dram_ns {}\n\n",
        m.l1_kib, m.private_kib, m.llc_kib, m.sizes_from, m.l1_ns, m.private_ns, m.llc_ns,
        m.dram_ns, m.independent_ns, c.profile.memory.mlp, c.profile.memory.l2_ns,
        c.profile.memory.llc_ns, c.profile.memory.dram_ns);
    fmt::print("{:<56} {:>10} {:>10} {:>6}  {:>10} {:>10} {:>6}\n", "operation", "hot host",
               "model", "ratio", "cold host", "model", "ratio");
    bool shown_only = false;
    for (const auto &s : c.samples) {
        fmt::print("{:<56} {:>10.0f} {:>10.0f} {:>6.2f}  {:>10.0f} {:>10.0f} {:>6.2f}{}\n", s.name,
                   s.host_ns, s.predicted_ns, s.predicted_ns / s.host_ns, s.host_cold_ns,
                   s.predicted_cold_ns, s.predicted_cold_ns / s.host_cold_ns, s.fitted ? "" : " *");
        shown_only |= !s.fitted;
    }
    {
        double hot = 1, cold = 1;
        for (const auto &s : c.samples)
            hot = std::max(hot, s.host_spread), cold = std::max(cold, s.host_cold_spread);
        fmt::print(
            "over {} passes, an operation's largest time over its smallest: hot up to {:.2f}, "
            "cold up to {:.2f}{}\n",
            o.passes, hot, cold,
            std::max(hot, cold) > 1.25 ? " (the host moved while it was timed: the medians are "
                                         "kept; a calibration at another time may differ as much)"
                                       : "");
    }
    if (shown_only)
        fmt::print(
            "* shown, not fitted: the same few decisions repeated, whose branches the host's "
            "predictors learn (no decision a kernel computes on an AVC miss is)\n");
    if (a.verbose)
        for (const auto &s : c.samples) {
            fmt::print("{}:", s.name);
            for (size_t k = 0; k < locksim::kWorkKinds; ++k)
                if (s.counts.n[k]) fmt::print(" {}={}", locksim::kWorkNames[k], s.counts.n[k]);
            fmt::print(
                "; lines {}: hot from the private level {}, last level {}, memory {}; cold "
                "{}, {}, {}\n",
                s.lines.size(), s.hot.l2_hits, s.hot.llc_hits, s.hot.dram, s.cold.l2_hits,
                s.cold.llc_hits, s.cold.dram);
        }
    fmt::print("\n{:<20} {:>10}  {}\n", "work unit", "base ns", "fitted");
    for (size_t k = 0; k < locksim::kWorkKinds; ++k)
        fmt::print("{:<20} {:>10.3f}  {}\n", locksim::kWorkNames[k],
                   static_cast<double>(o.base.work_ps[k]) / 1000.0, price_text(c.prices[k]));
    fmt::print("\n{:<32} {:>10}\n", "primitive (host)", "ns");
    for (const auto &p : c.primitives)
        fmt::print("{:<32} {:>10.1f}  {}\n", p.name, p.host_ns, p.how);

    write_profile(out, c.profile);
    fmt::print("\nwrote {} (profile '{}')\n", out.string(), c.profile.name);
}

CommandRegistrar calibrate_registrar([](CLI::App &app) {
    auto a = std::make_shared<CalibrateArgs>();
    auto *cmd = app.add_subcommand(
        "calibrate",
        "Fit a CPU profile to this host from timed runs of the security-server core "
        "and of kernel/ primitives on host threads");
    cmd->add_option("--policy", a->host.policy,
                    "Policy to time the core on: default, mls (Debian) or a binary policy file");
    cmd->add_option("--base", a->host.base,
                    "Profile giving the prior and what user space cannot time (default "
                    "x86-modern)");
    cmd->add_option("--name", a->host.name, "Name of the written profile (default host)");
    cmd->add_option("-o,--output", a->output,
                    "Profile file to write (default: <profile dir>/<name>.toml)");
    cmd->add_flag("-v,--verbose", a->verbose, "Also print each operation's work counts");
    cmd->add_option("--passes", a->host.passes,
                    "Times every operation is timed, in passes one after the other; the median "
                    "is kept (default 3; 1 with --quick)")
        ->check(CLI::Range(1, 100));
    cmd->add_flag("--quick", a->host.quick,
                  "Fewer timing rounds and buffers of at most 64 MiB (less precise; for tests)");
    cmd->callback([a] { run(*a); });
});

}  // namespace
}  // namespace locksim::cli
