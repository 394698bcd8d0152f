// `locksim policy info|convert|gen`: inspect, rewrite and synthesise binary policies.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <optional>

#include "cli/command.h"
#include "ss/policy_gen.h"
#include "ss/policy_info.h"
#include "ss/policydb.h"
#include "util/error.h"

namespace locksim::cli {
namespace {

nlohmann::ordered_json fan_out_json(const ss::FanOutStats &s) {
    nlohmann::ordered_json j;
    j["types"] = s.types;
    j["mean"] = s.mean;
    j["p50"] = s.p50;
    j["p90"] = s.p90;
    j["p99"] = s.p99;
    j["max"] = s.max;
    j["tail"] = s.tail;
    return j;
}

void print_fan_out(const char *what, const ss::FanOutStats &s) {
    fmt::print(
        "  {:<28} {} types, mean {:.2f}, p50 {}, p90 {}, p99 {}, max {}; {} ({:.1f} %) "
        "at least max/2\n",
        what, s.types, s.mean, s.p50, s.p90, s.p99, s.max, s.tail,
        s.types ? 100.0 * static_cast<double>(s.tail) / static_cast<double>(s.types) : 0.0);
}

void print_info(const std::string &file, bool json, bool fan_out) {
    ss::Policydb db = ss::policydb_read_file(file);
    ss::PolicyInfo info = ss::policy_info(db);
    std::optional<ss::FanOut> fo;
    if (fan_out) fo = ss::policy_fan_out(db);
    if (json) {
        nlohmann::ordered_json j;
        j["file"] = file;
        j["version"] = info.version;
        j["mls"] = info.mls;
        j["handle_unknown"] = info.handle_unknown;
        for (const auto &[k, v] : info.counts)
            j[k] = v;
        if (fo) {
            j["fan_out"]["domains_by"] = fo->domains_by;
            j["fan_out"]["domains"] = fan_out_json(fo->domains);
            j["fan_out"]["others"] = fan_out_json(fo->others);
        }
        fmt::print("{}\n", j.dump(2));
        return;
    }
    fmt::print("{}\n", file);
    fmt::print("  {:<28} {}\n", "version", info.version);
    fmt::print("  {:<28} {}\n", "mls", info.mls ? "yes" : "no");
    fmt::print("  {:<28} {}\n", "handle_unknown", info.handle_unknown);
    for (const auto &[k, v] : info.counts)
        fmt::print("  {:<28} {}\n", k, v);
    if (fo) {
        fmt::print(
            "type -> attribute fan-out (type_attr_map sizes, the type itself included; "
            "domains by {})\n",
            fo->domains_by);
        print_fan_out("domains", fo->domains);
        print_fan_out("other types", fo->others);
    }
}

CommandRegistrar policy_registrar([](CLI::App &app) {
    auto *policy = app.add_subcommand("policy", "Inspect, convert and generate binary policies");
    policy->require_subcommand(1);

    auto *info = policy->add_subcommand("info", "Print the version and the size of every table");
    static std::string info_file;
    static bool info_json = false, info_fan_out = false;
    info->add_option("FILE", info_file, "binary policy")->required();
    info->add_flag("--json", info_json, "JSON output (keys documented in docs/policies.md)");
    info->add_flag("--fan-out", info_fan_out,
                   "also the type -> attribute fan-out of domains and other types (mean, "
                   "percentiles, maximum)");
    info->callback([] { print_info(info_file, info_json, info_fan_out); });

    auto *convert = policy->add_subcommand("convert", "Read a binary policy and write it again");
    static std::string conv_in, conv_out;
    static uint32_t conv_version = 0;
    convert->add_option("IN", conv_in, "input binary policy")->required();
    convert->add_option("OUT", conv_out, "output binary policy")->required();
    convert->add_option("--version", conv_version, "policy version to write (default: as read)")
        ->check(CLI::Range(ss::kPolicyVersionWriteMin, ss::kPolicyVersionWriteMax));
    convert->callback([] {
        ss::Policydb db = ss::policydb_read_file(conv_in);
        ss::policydb_write_file(db, conv_out, conv_version);
    });

    auto *gen = policy->add_subcommand("gen", "Write a synthetic policy of a chosen size");
    static std::string gen_out;
    static ss::GenOptions o;
    static bool no_mls = false;
    static std::string preset;
    gen->add_option("OUT", gen_out, "output binary policy")->required();
    std::string preset_names;
    for (const ss::GenPreset &p : ss::gen_presets())
        preset_names += (preset_names.empty() ? "" : ", ") + std::string(p.name);
    gen->add_option("--preset", preset,
                    "start from a distribution policy's proportions (" + preset_names +
                        "); the other options override it");
    gen->add_option("--types", o.types, "concrete types")->check(CLI::Range(8u, 60000u));
    gen->add_option("--attributes", o.attributes, "attributes (0: types/18)")
        ->check(CLI::Range(0u, 4000u));
    gen->add_option("--booleans", o.booleans, "booleans")->check(CLI::Range(0u, 10000u));
    gen->add_option("--rules", o.rules, "unconditional allow rules (0: 20 per type)")
        ->check(CLI::Range(0u, 20000000u));
    gen->add_option("--cond-rules", o.cond_rules, "conditional rules (0: rules/4)")
        ->check(CLI::Range(0u, 5000000u));
    gen->add_option("--users", o.users, "users")->check(CLI::Range(1u, 1000u));
    gen->add_option("--roles", o.roles, "roles besides object_r")->check(CLI::Range(1u, 1000u));
    gen->add_option("--categories", o.categories, "MLS categories")->check(CLI::Range(1u, 4096u));
    gen->add_option("--sensitivities", o.sensitivities, "MLS sensitivities")
        ->check(CLI::Range(1u, 64u));
    gen->add_option("--constraints", o.constraints, "constraints (0: a few per class)")
        ->check(CLI::Range(0u, 10000u));
    gen->add_flag("--no-mls", no_mls, "a policy without MLS");
    gen->add_option("--policy-version", o.version, "policy version to write")
        ->check(CLI::Range(ss::kPolicyVersionWriteMin, ss::kPolicyVersionWriteMax));
    gen->add_option("--seed", o.seed, "random seed");
    gen->callback([gen] {
        o.mls = !no_mls;
        for (const char *flag : {"--categories", "--sensitivities"})
            if (no_mls && gen->count(flag))
                throw UserError(fmt::format("{}: a policy without MLS (--no-mls) has none", flag));
        if (!preset.empty()) {
            // The preset's values where no option was given.
            ss::GenOptions base = ss::find_gen_preset(preset).options;
            const std::pair<const char *, uint32_t ss::GenOptions::*> given[] = {
                {"--types", &ss::GenOptions::types},
                {"--attributes", &ss::GenOptions::attributes},
                {"--booleans", &ss::GenOptions::booleans},
                {"--rules", &ss::GenOptions::rules},
                {"--cond-rules", &ss::GenOptions::cond_rules},
                {"--users", &ss::GenOptions::users},
                {"--roles", &ss::GenOptions::roles},
                {"--categories", &ss::GenOptions::categories},
                {"--sensitivities", &ss::GenOptions::sensitivities},
                {"--constraints", &ss::GenOptions::constraints},
                {"--policy-version", &ss::GenOptions::version}};
            for (const auto &[flag, field] : given)
                if (gen->count(flag)) base.*field = o.*field;
            base.mls = o.mls;
            base.seed = o.seed;
            o = base;
        }
        ss::Policydb db = ss::policy_generate(o);
        ss::policydb_write_file(db, gen_out, o.version);
    });
});

}  // namespace
}  // namespace locksim::cli
