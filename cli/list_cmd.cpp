// `locksim list strategies|workloads|core`: what a scenario can name, with the documentation of
// every option and parameter.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "cli/command.h"
#include "scenario/core_settings.h"
#include "strategies/catalog.h"
#include "workloads/catalog.h"

namespace locksim::cli {
namespace {

std::string show_value(const ParamValue &v, ParamType t) {
    return std::visit(
        [t](const auto &x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, int64_t>) {
                return t == ParamType::Duration ? fmt::format("\"{}\"", format_duration_ns(x))
                                                : std::to_string(x);
            } else if constexpr (std::is_same_v<T, double>) {
                return fmt::format("{}", x);
            } else if constexpr (std::is_same_v<T, bool>) {
                return x ? "true" : "false";
            } else if constexpr (std::is_same_v<T, std::string>) {
                return fmt::format("\"{}\"", x);
            } else {
                std::string out = "[";
                for (size_t i = 0; i < x.size(); ++i) {
                    if (i) out += ", ";
                    if constexpr (std::is_same_v<T, std::vector<std::string>>)
                        out += fmt::format("\"{}\"", x[i]);
                    else
                        out += std::to_string(x[i]);
                }
                return out + "]";
            }
        },
        v);
}

void print_params(const std::vector<ParamSpec> &specs, bool verbose) {
    if (!verbose) return;
    for (const auto &p : specs) {
        fmt::print(
            "      {:<18} {} (default {}){}\n", p.name, p.doc, show_value(p.default_value, p.type),
            p.choices.empty() ? "" : fmt::format("; one of: {}", fmt::join(p.choices, ", ")));
    }
}

CommandRegistrar list_registrar([](CLI::App &app) {
    auto *list = shared_subcommand(app, "list", kListHelp);
    auto verbose = std::make_shared<bool>(false);
    auto *strategies = list->add_subcommand("strategies", "Locking strategies");
    strategies->add_flag("-v,--verbose", *verbose, "Also print each option");
    strategies->callback([verbose] {
        for (const auto &s : strategy_catalog()) {
            fmt::print("{:<20} {}{}\n", s.name,
                       s.experimental ? "(experimental: not in strategies = \"all\") " : "",
                       s.summary);
            if (*verbose) fmt::print("      models: {}\n", s.models);
            print_params(s.options, *verbose);
        }
    });
    auto *workloads = list->add_subcommand("workloads", "Workloads");
    workloads->add_flag("-v,--verbose", *verbose, "Also print each parameter");
    workloads->callback([verbose] {
        for (const auto &w : workload_catalog()) {
            fmt::print("{:<14} {}\n", w.name, w.summary);
            print_params(w.params, *verbose);
            if (!*verbose || w.common_defaults.empty()) continue;
            // Where a workload has its own defaults for the common parameters (the probe: one
            // SCHED_FIFO task per CPU), say so here rather than let the common list mislead.
            std::vector<std::string> own;
            for (const auto &[name, value] : w.common_defaults)
                for (const auto &spec : common_workload_params())
                    if (spec.name == name)
                        own.push_back(fmt::format("{} = {}", name, show_value(value, spec.type)));
            fmt::print("      its own defaults of the common parameters: {}\n",
                       fmt::join(own, ", "));
        }
        if (*verbose) {
            fmt::print("every workload also takes (defaults unless a workload says otherwise):\n");
            print_params(common_workload_params(), true);
        }
    });
    auto *kernels = list->add_subcommand("kernels", "Kernel releases and what each selects");
    kernels->callback([] {
        fmt::print("{:<9} {:<12} {:<13} {:<7} {:<14} {:<10} {:<13} {}\n", "kernel", "SID table",
                   "string cache", "freeze", "policy lock", "xfrm lock", "IMA step", "commit path");
        for (const KernelListing &k : kernel_listing()) {
            const KernelBehaviour b = kernel_behaviour(*parse_kernel_release(k.name));
            fmt::print("{:<9} {:<12} {:<13} {:<7} {:<14} {:<10} {:<13} {}\n", k.name,
                       ss::sidtab_era_name(b.sidtab),
                       b.sid_string_cache ? std::to_string(b.sid_string_cache) : "none",
                       b.sidtab_freeze ? "yes" : "no", policy_lock_name(b.policy_rcu),
                       xfrm_lock_name(b.xfrm_rtnl), ima_measure_name(b.ima_step),
                       commit_path_text(b));
        }
        fmt::print("\nread from:\n");
        for (const KernelListing &k : kernel_listing())
            fmt::print("  {:<9} {}\n", k.name, k.read);
        fmt::print(
            "\nAny release from 4.15 on may be named: each behaviour follows the release where "
            "its source changed\n(e.g. the freeze reached 5.10.30, 5.11.14 and 5.12). The IMA step "
            "runs only with 'machine.ima = true'\n(CONFIG_IMA): it writes the whole policy out on "
            "every policy change.\n\nThe "
            "designs, the release each runs on unless the scenario says otherwise, and the "
            "releases it existed in:\n");
        for (const auto &s : strategy_catalog())
            fmt::print("  {:<20} {:<8} ({})\n", s.name, s.kernels.preferred, s.kernels.text());
    });
    auto *core = list->add_subcommand("core", "The [core] table: the core's runtime variants");
    core->callback([] {
        fmt::print("[core]\n");
        print_params(core_params(), true);
    });
});

}  // namespace
}  // namespace locksim::cli
