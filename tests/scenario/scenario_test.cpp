// Scenario files: the shipped ones load; every broken one gives its expected file:line:column
// message (written on its first line as "# expect: ...").
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "scenario/core_settings.h"
#include "scenario/scenario.h"
#include "util/error.h"
#include "workloads/catalog.h"

namespace fs = std::filesystem;
using namespace locksim;

namespace {

std::vector<fs::path> toml_files(const fs::path &dir) {
    std::vector<fs::path> out;
    for (const auto &e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".toml") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST(Scenario, ShippedScenariosLoad) {
    // scenarios/ and its folders (scenarios/repro: the reproductions of the record).
    auto files = toml_files(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios");
    ASSERT_FALSE(files.empty());
    EXPECT_TRUE(std::count(
        files.begin(), files.end(),
        fs::path(LOCKSIM_SOURCE_DIR) / "scenarios" / "repro" / "kaigai-avc-scaling.toml"));
    for (const auto &f : files) {
        SCOPED_TRACE(f.string());
        Scenario s = load_scenario(f.string());
        EXPECT_FALSE(s.strategies.empty());
        EXPECT_FALSE(s.workloads.empty());
        EXPECT_FALSE(expand_sweep(s).empty());
    }
}

TEST(Scenario, BrokenScenariosNameTheirPlace) {
    auto dir = fs::path(LOCKSIM_SOURCE_DIR) / "tests" / "scenarios" / "broken";
    auto files = toml_files(dir);
    ASSERT_GE(files.size(), 10u);
    for (const auto &f : files) {
        SCOPED_TRACE(f.string());
        std::ifstream in(f);
        std::string first;
        std::getline(in, first);
        ASSERT_EQ(first.rfind("# expect: ", 0), 0u) << "first line must say what to expect";
        std::string expected = f.parent_path().string() + "/" + first.substr(10);
        try {
            load_scenario(f.string());
            ADD_FAILURE() << "loaded without error";
        } catch (const UserError &e) {
            EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u)
                << "got:      " << e.what() << "\nexpected: " << expected;
        }
    }
}

TEST(Scenario, DefaultsAndDurations) {
    Scenario s = parse_scenario(R"(
strategies = ["rwlock", "rcu-cond-dup"]
duration = "250ms"
warmup = "10ms"
[[workload]]
kind = "setsebool"
period = "20ms"
[[workload]]
kind = "probe"
)",
                                "t.toml");
    EXPECT_EQ(s.name, "t");
    EXPECT_EQ(s.duration_ns, 250'000'000);
    EXPECT_EQ(s.warmup_ns, 10'000'000);
    ASSERT_EQ(s.strategies.size(), 2u);
    EXPECT_EQ(s.strategies[1].label, "rcu-cond-dup");
    EXPECT_EQ(s.strategies[1].options.get_string("grace_period"), "normal");
    ASSERT_EQ(s.workloads.size(), 2u);
    EXPECT_EQ(s.workloads[0].params.get_duration_ns("period"), 20'000'000);
    EXPECT_EQ(s.workloads[0].params.get_string("mode"), "periodic");
    // A probe runs one pinned SCHED_FIFO 99 task per CPU unless told otherwise.
    EXPECT_EQ(s.workloads[1].tasks, 0);
    EXPECT_EQ(s.workloads[1].params.get_string("sched"), "fifo");
    EXPECT_EQ(s.workloads[1].params.get_int("prio"), 99);
}

TEST(Scenario, ValidateTable) {
    const std::string head = R"(
strategies = "all"
[[workload]]
kind = "probe"
)";
    Scenario d = parse_scenario(head, "t.toml");
    EXPECT_EQ(d.validate.read, ValidateRead::Decisions);
    EXPECT_EQ(d.validate.pool, 256);
    EXPECT_EQ(d.validate.toggle_ns, 20'000'000);
    Scenario s = parse_scenario(head + R"(
[validate]
read = "contexts"
sids = 12000
pool = 64
toggle = "2ms"
)",
                                "t.toml");
    EXPECT_EQ(s.validate.read, ValidateRead::Contexts);
    EXPECT_EQ(s.validate.sids, 12000);
    EXPECT_EQ(s.validate.pool, 64);
    EXPECT_EQ(s.validate.toggle_ns, 2'000'000);
    EXPECT_THROW(parse_scenario(head + "[validate]\nsids = 0\n", "t.toml"), UserError);
    EXPECT_THROW(parse_scenario(head + "[validate]\ntoggle = \"50us\"\n", "t.toml"), UserError);
}

// Unset, preemptible RCU follows the preemption model (Kconfig: PREEMPT_RCU with PREEMPTION);
// a sweep over the model gets each point's own default.
TEST(Scenario, PreemptRcuFollowsThePreemptionModelUnlessSet) {
    for (const char *model : {"none", "voluntary", "full", "rt"}) {
        Scenario s = parse_scenario(
            fmt::format("strategies = \"all\"\n[machine]\npreemption = \"{}\"\n[[workload]]\n"
                        "kind = \"probe\"\n",
                        model),
            "t.toml");
        const bool preemptible =
            std::string_view(model) == "full" || std::string_view(model) == "rt";
        EXPECT_EQ(s.machine.preempt_rcu, preemptible) << model;
    }
    Scenario sweep = parse_scenario(R"(
strategies = "all"
[[workload]]
kind = "probe"
[sweep]
"machine.preemption" = ["voluntary", "full"]
)",
                                    "t.toml");
    const std::vector<Scenario> points = expand_sweep(sweep);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_FALSE(points[0].machine.preempt_rcu);
    EXPECT_TRUE(points[1].machine.preempt_rcu);
}

TEST(Scenario, CoreAvcVariants) {
    const char *workload = "[[workload]]\nkind = \"probe\"\n";
    Scenario d = parse_scenario(std::string("strategies = \"all\"\n") + workload, "t.toml");
    EXPECT_EQ(d.core.avc_lock, AvcLock::Rcu);
    EXPECT_EQ(d.core.avc_audit, ss::AvcAudit::Needed);
    EXPECT_EQ(d.core.avc_slow_path, ss::AvcPath::Inline);
    for (const auto &[lock, value] : {std::pair{"rcu", AvcLock::Rcu},
                                      {"spinlock", AvcLock::Spinlock},
                                      {"rwlock", AvcLock::Rwlock}}) {
        Scenario s = parse_scenario(fmt::format("strategies = \"all\"\n[core]\navc_lock = \"{}\"\n"
                                                "avc_audit = \"always\"\n"
                                                "avc_slow_path = \"outline\"\n{}",
                                                lock, workload),
                                    "t.toml");
        EXPECT_EQ(s.core.avc_lock, value);
        EXPECT_EQ(s.core.avc_audit, ss::AvcAudit::Always);
        EXPECT_EQ(s.core.avc_slow_path, ss::AvcPath::OutOfLine);
    }
    try {
        parse_scenario(
            std::string("strategies = \"all\"\n[core]\navc_lock = \"rwlok\"\n") + workload,
            "t.toml");
        ADD_FAILURE() << "accepted avc_lock = rwlok";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("t.toml:3:12: 'core.avc_lock' must be one of rcu, "
                                             "spinlock, rwlock, not 'rwlok' (did you mean "
                                             "'rwlock'?)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Scenario, StrategyOptionsMakeLabels) {
    Scenario s = parse_scenario(R"(
[[strategy]]
name = "rcu-full-copy"
[[strategy]]
name = "rcu-full-copy"
copy = "sleepable"
[[strategy]]
name = "rcu-cond-dup"
grace_period = "expedited"
label = "fast-gp"
[[workload]]
kind = "probe"
)",
                                "t.toml");
    ASSERT_EQ(s.strategies.size(), 3u);
    EXPECT_EQ(s.strategies[0].label, "rcu-full-copy");
    EXPECT_EQ(s.strategies[1].label, "rcu-full-copy/sleepable");
    EXPECT_EQ(s.strategies[2].label, "fast-gp");
}

// A workload parameter's value outside its choices names the place and the closest choice.
TEST(Scenario, WorkloadChoiceErrorSuggestsTheClosest) {
    try {
        parse_scenario(
            "strategies = \"all\"\n[[workload]]\nkind = \"setsebool\"\nmode = \"bursts\"\n",
            "t.toml");
        FAIL() << "accepted";
    } catch (const UserError &e) {
        EXPECT_EQ(std::string(e.what()),
                  "t.toml:4:8: 'mode' must be one of periodic, random, burst, not 'bursts' (did "
                  "you mean 'burst'?)");
    }
}

TEST(Scenario, SweepExpandsTheGridInOrder) {
    Scenario s = parse_scenario(R"(
strategies = "rwlock"
[machine]
cpus = 2
[[workload]]
kind = "setsebool"
label = "toggle"
[sweep]
"machine.cpus" = [1, 4]
"workload.toggle.period" = ["10ms", "1s"]
)",
                                "t.toml");
    auto points = expand_sweep(s);
    ASSERT_EQ(points.size(), 4u);
    EXPECT_EQ(points[0].machine.cpus, 1);
    EXPECT_EQ(points[0].workloads[0].params.get_duration_ns("period"), 10'000'000);
    EXPECT_EQ(points[1].machine.cpus, 1);
    EXPECT_EQ(points[1].workloads[0].params.get_duration_ns("period"), 1'000'000'000);
    EXPECT_EQ(points[3].machine.cpus, 4);
    ASSERT_EQ(points[3].point.size(), 2u);
    EXPECT_EQ(points[3].point[0].first, "machine.cpus");
    EXPECT_EQ(points[3].point[0].second, "4");
}

TEST(Scenario, SweepOverAMissingWorkloadIsAnError) {
    EXPECT_THROW(parse_scenario(R"(
strategies = "rwlock"
[[workload]]
kind = "probe"
[sweep]
"workload.nothere.period" = ["1ms"]
)",
                                "t.toml"),
                 UserError);
}

TEST(Duration, ParsesAndFormats) {
    EXPECT_EQ(parse_duration_ns("1.5ms"), 1'500'000);
    EXPECT_EQ(parse_duration_ns("40us"), 40'000);
    EXPECT_EQ(parse_duration_ns("2s"), 2'000'000'000);
    EXPECT_EQ(parse_duration_ns("7ns"), 7);
    EXPECT_FALSE(parse_duration_ns("5"));
    EXPECT_FALSE(parse_duration_ns("ms"));
    EXPECT_FALSE(parse_duration_ns("-1ms"));
    // The micro sign the tables print, and the Greek mu that looks the same.
    EXPECT_EQ(parse_duration_ns("200\u00b5s"), 200'000);
    EXPECT_EQ(parse_duration_ns("200\u03bcs"), 200'000);
    // Too large for int64 nanoseconds: said so, not called malformed.
    std::string why;
    EXPECT_FALSE(parse_duration_ns("300y", &why));
    EXPECT_NE(why.find("not a duration"), std::string::npos) << why;
    EXPECT_FALSE(parse_duration_ns("1e12s", &why));
    EXPECT_NE(why.find("too large"), std::string::npos) << why;
    EXPECT_FALSE(parse_duration_ns("1e400s", &why));
    EXPECT_NE(why.find("too large"), std::string::npos) << why;
    EXPECT_FALSE(parse_duration_ns("1e300s"));
    EXPECT_EQ(format_duration_ns(1'500'000), "1.5ms");
    EXPECT_EQ(format_duration_ns(2'000'000'000), "2s");
    EXPECT_EQ(format_duration_ns(999), "999ns");
}

TEST(Scenario, CoreSettingsGiveBackEveryKeyAsWritten) {
    // core_settings is read_core's inverse: each [core] key of the catalog, set to each of its
    // values (or to a value other than its default), comes back under its own name.
    const char *tail = "[[workload]]\nkind = \"probe\"\n";
    auto settings_of = [&](const std::string &core_text) {
        Scenario s = parse_scenario("strategies = \"all\"\n[core]\n" + core_text + tail, "t.toml");
        std::map<std::string, ParamValue> out;
        for (auto &[key, value] : core_settings(s.core))
            out[key] = value;
        return out;
    };
    const auto defaults = settings_of("");
    ASSERT_EQ(defaults.size(), core_params().size());
    for (const ParamSpec &spec : core_params()) {
        SCOPED_TRACE(spec.name);
        ASSERT_TRUE(defaults.count(spec.name));
        EXPECT_EQ(defaults.at(spec.name), spec.default_value);
        std::vector<std::string> written;
        for (const auto &choice : spec.choices)
            written.push_back(fmt::format("{} = \"{}\"\n", spec.name, choice));
        if (spec.choices.empty()) written.push_back(fmt::format("{} = {}\n", spec.name, 64));
        for (const auto &text : written) {
            SCOPED_TRACE(text);
            const auto got = settings_of(text).at(spec.name);
            if (spec.choices.empty())
                EXPECT_EQ(got, ParamValue(int64_t{64}));
            else
                EXPECT_EQ(text,
                          fmt::format("{} = \"{}\"\n", spec.name, std::get<std::string>(got)));
        }
    }
}

// [prices] multiplies the profile's prices family by family; a sweep can name its factors.
TEST(Scenario, PricesAreReadAndSwept) {
    Scenario s = parse_scenario(R"(
strategies = "all"
[prices]
work = 1.25
[[workload]]
kind = "probe"
[sweep]
"prices.primitive" = [0.5, 2.0]
)",
                                "prices.toml");
    EXPECT_EQ(s.prices[0], 1.25);
    EXPECT_EQ(s.prices[2], 1.0);
    const auto points = expand_sweep(s);
    ASSERT_EQ(points.size(), 2u);
    EXPECT_EQ(points[0].prices[2], 0.5);
    EXPECT_EQ(points[1].prices[2], 2.0);
    EXPECT_EQ(points[1].prices[0], 1.25);
    const Scenario two = scenario_at(s, {{"prices.work", "2"}, {"prices.memory", "0.5"}}, "--test");
    EXPECT_EQ(two.prices[0], 2.0);
    EXPECT_EQ(two.prices[1], 0.5);
}
