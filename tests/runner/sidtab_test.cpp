// The SID table on kernel primitives, from real simulated runs: its spinlock's sections are
// IRQs-off sections of their own, a reload's live conversion races with new contexts, and the
// three eras (core.sidtab) cost what their lookups do.
#include <gtest/gtest.h>

#include <string>

#include "analysis/results_file.h"
#include "runner/runner.h"
#include "util/error.h"

using namespace locksim;

namespace {

nlohmann::json run_points(const Scenario &s) {
    std::vector<Scenario> points = expand_sweep(s);
    return run_jobs(s, plan_runs(points), {}).to_json()["runs"];
}

int64_t op_value(const nlohmann::json &run, const char *op, const char *key) {
    const auto &ops = run["detail"]["ops"];
    return ops.contains(op) ? ops[op][key].get<int64_t>() : 0;
}

int64_t op_latency(const nlohmann::json &run, const char *op, const char *key) {
    const auto &ops = run["detail"]["ops"];
    return ops.contains(op) ? ops[op]["latency_ns"][key].get<int64_t>() : 0;
}

// New contexts made from a table of `preload` entries, on each era.
Scenario era_scenario(int preload) {
    return parse_scenario(R"(
name = "eras"
duration = "40ms"
warmup = "2ms"
strategies = ["rcu-cond-dup"]
[machine]
cpus = 2
[policy]
source = "debian-default"
[[workload]]
kind = "new_contexts"
label = "grow"
tasks = 2
rate = 5000
preload = )" + std::to_string(preload) +
                              R"(
lookups = 50
[sweep]
"core.sidtab" = ["hash", "linear", "legacy"]
)",
                          "eras.toml");
}

}  // namespace

TEST(SidtabRuns, PolicyReloadShowsTheSidTablesIrqsOffSections) {
    Scenario s = load_scenario(std::string(LOCKSIM_SCENARIO_DIR) + "/policy-reload.toml");
    s.duration_ns = 450'000'000;  // two reloads
    s.strategies = {s.strategies[0], s.strategies[3]};
    nlohmann::json runs = run_points(s);
    ASSERT_EQ(runs.size(), 2u);
    for (const auto &run : runs) {
        SCOPED_TRACE(run["strategy"].get<std::string>());
        EXPECT_GE(op_value(run, "load_policy", "completed"), 1);
        // Each place the kernel takes the SID table's spinlock is a labelled IRQs-off section.
        for (const char *section :
             {"sidtab_insert", "sidtab_convert_begin", "sidtab_convert_hashtable"}) {
            EXPECT_GT(op_value(run, section, "completed"), 0) << section;
            EXPECT_GT(op_value(run, section, "irqs_off_ns"), 0) << section;
        }
        // The freeze exists from 5.10.30: rcu-cond-dup's 6.6 has it, rwlock's 5.9 does not.
        if (run["strategy"] == "rwlock") {
            EXPECT_EQ(op_value(run, "sidtab_freeze", "completed"), 0);
        } else {
            EXPECT_GT(op_value(run, "sidtab_freeze", "completed"), 0);
            EXPECT_GT(op_value(run, "sidtab_freeze", "irqs_off_ns"), 0);
        }
        // The new table's hash table is built with interrupts off for every entry: the
        // longest of the table's sections, and one of the run's longest.
        EXPECT_GT(op_latency(run, "sidtab_convert_hashtable", "max"),
                  op_latency(run, "sidtab_insert", "p50"));
        bool listed = false;
        for (const auto &iv : run["detail"]["irqs_off"]["longest"])
            listed = listed || iv["label"].get<std::string>().starts_with("sidtab_");
        EXPECT_TRUE(listed);
    }
}

TEST(SidtabRuns, ErasCostWhatTheirLookupsDo) {
    nlohmann::json runs = run_points(era_scenario(3000));
    ASSERT_EQ(runs.size(), 3u);
    const auto &hash = runs[0], &linear = runs[1], &legacy = runs[2];
    ASSERT_EQ(hash["point"]["core.sidtab"], "hash");
    ASSERT_EQ(legacy["point"]["core.sidtab"], "legacy");
    for (const auto &run : runs) {
        EXPECT_GT(op_value(run, "new_contexts.create", "completed"), 10);
        EXPECT_GT(op_value(run, "new_contexts.lookup", "completed"), 10);
    }
    // A new context: the hash era probes one chain, the linear era scans every entry once
    // (lock-free), the legacy era scans them twice (once more under the lock).
    EXPECT_LT(op_latency(hash, "new_contexts.create", "mean"),
              op_latency(linear, "new_contexts.create", "mean"));
    EXPECT_LT(op_latency(linear, "new_contexts.create", "mean"),
              op_latency(legacy, "new_contexts.create", "mean"));
    // The insert's IRQs-off section: a chain or the few entries added meanwhile, against the
    // whole table in the legacy era.
    EXPECT_LT(op_latency(hash, "sidtab_insert", "mean"),
              op_latency(legacy, "sidtab_insert", "mean"));
    EXPECT_LT(op_latency(linear, "sidtab_insert", "mean"),
              op_latency(legacy, "sidtab_insert", "mean"));
    // A context asked for again: one chain against a scan (the small cache rarely holds it).
    EXPECT_LT(op_latency(hash, "new_contexts.lookup", "mean"),
              op_latency(linear, "new_contexts.lookup", "mean"));
}

TEST(SidtabRuns, LegacyTableRefusesNewContextsDuringAReload) {
    Scenario s = era_scenario(200);
    s = parse_scenario(std::string(s.source_text) + R"(
[[workload]]
kind = "load_policy"
period = "10ms"
)",
                       "eras.toml");
    nlohmann::json runs = run_points(s);
    ASSERT_EQ(runs.size(), 3u);
    // Before 5.1 a shut-down table fails the insert (-ENOMEM); since, the live convert takes
    // it and the table is only frozen once the new policy is in (-ESTALE, retried).
    EXPECT_EQ(op_value(runs[0], "sidtab_insert_failed", "completed"), 0);
    EXPECT_EQ(op_value(runs[1], "sidtab_insert_failed", "completed"), 0);
    EXPECT_GT(op_value(runs[2], "sidtab_insert_failed", "completed"), 0);
    EXPECT_GT(op_value(runs[2], "sidtab_shutdown", "completed"), 0);
    EXPECT_EQ(op_value(runs[0], "sidtab_shutdown", "completed"), 0);
}

TEST(SidtabRuns, NewContextsNeedCategoryPairs) {
    Scenario s = parse_scenario(R"(
strategies = ["rwlock"]
duration = "5ms"
warmup = "1ms"
[policy]
source = "synthetic"
[policy.synthetic]
types = 50
mls = false
[[workload]]
kind = "new_contexts"
)",
                                "nomls.toml");
    try {
        run_points(s);
        ADD_FAILURE() << "ran without MLS";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("an MLS policy with categories is needed"),
                  std::string::npos)
            << e.what();
    }
}
