// The worst probe wake-up names what delayed it, from real short runs: a design whose commit has
// a known long preempt-off section (rcu-full-copy with its copy made atomically) delays the
// probe by that section, and probe_wakeup.worst_cause names its label and site; the main job's
// worst wake-up names its cause in the results and in the text below the table.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/results_file.h"
#include "analysis/table.h"
#include "analysis/wakeup_cause.h"
#include "runner/runner.h"
#include "tests/runner/run_all.h"

using namespace locksim;
using kernel::kMsec;
using locksim::testing::run_all;

namespace {

// The worst wake-up's record, read back from the results file's detail.
kernel::WakeupRecord worst_record(const analysis::ResultsFile &f, size_t run) {
    const auto worst =
        f.runs.at(run).at("detail").at("wakeup_worst").get<std::vector<kernel::WakeupRecord>>();
    EXPECT_FALSE(worst.empty());
    return worst.empty() ? kernel::WakeupRecord{} : worst.front();
}

// The cause held the probe's CPU while the probe was late: its stretch lies on that CPU and
// overlaps [due, due + late].
void expect_cause_overlaps_the_lateness(const kernel::WakeupRecord &w,
                                        const kernel::WakeupDelay &d) {
    EXPECT_EQ(d.cpu, w.cpu) << d.kind << " " << d.label;
    EXPECT_LT(d.start, w.due + w.late) << d.kind << " " << d.label << ": begins after the wake-up";
    EXPECT_GT(d.start + d.length, w.due) << d.kind << " " << d.label << ": ends before it was due";
    EXPECT_GT(d.delayed_ns, 0);
    EXPECT_LE(d.delayed_ns, w.late);
}

}  // namespace

TEST(WakeupCauseRun, AtomicCopyDelaysTheProbeAndIsNamedWithItsLabelAndSite) {
    const Scenario s = parse_scenario(R"(
name = "atomic-copy"
duration = "60ms"
warmup = "5ms"
strategies = []
[[strategy]]
name = "rcu-full-copy"
copy = "atomic"
[machine]
cpus = 2
[policy]
source = "debian-default"
[[workload]]
kind = "syscalls"
tasks = 2
[[workload]]
kind = "setsebool"
period = "10ms"
[[workload]]
kind = "probe"
period = "100us"
)",
                                      "atomic-copy.toml");
    const analysis::ResultsFile f = run_all(s);
    const std::vector<analysis::RunSummary> sums = f.summaries("atomic-copy");
    ASSERT_EQ(sums.size(), 1u);
    const analysis::RunSummary &r = sums[0];
    // The copy is the longest section, and the probe waited behind it.
    ASSERT_GT(r.preempt_off_max_ns, 100 * kernel::kUsec);
    const kernel::WakeupRecord w = worst_record(f, 0);
    EXPECT_EQ(w.late, r.probe_max_ns);
    const kernel::WakeupDelay *d = w.cause();
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->kind, "preempt_off");
    EXPECT_EQ(d->label, r.preempt_off_worst_label);
    EXPECT_EQ(d->site, r.preempt_off_worst_site);
    EXPECT_LE(d->delayed_ns, d->length);
    EXPECT_LE(d->length, r.preempt_off_max_ns);
    // It is one of the sections the run measured (a commit's copy), the same on both records.
    const auto longest = f.runs[0].at("detail").at("preempt_off").at("longest");
    EXPECT_TRUE(std::any_of(longest.begin(), longest.end(), [&](const nlohmann::json &iv) {
        return iv.at("start_ns") == d->start && iv.at("length_ns") == d->length &&
               iv.at("cpu") == d->cpu && iv.at("start_site") == d->site;
    })) << longest.dump();
    EXPECT_GT(d->delayed_ns, r.probe_max_ns / 2);
    expect_cause_overlaps_the_lateness(w, *d);
    // The summary's text names the section's label and site.
    EXPECT_NE(r.probe_worst_cause.find("preempt-off section of " + r.preempt_off_worst_label +
                                       ", " + r.preempt_off_worst_site),
              std::string::npos)
        << r.probe_worst_cause;
    EXPECT_NE(analysis::format_worst_causes(sums).find(r.probe_worst_cause), std::string::npos);
}

// The main job, shortened: every design's worst probe wake-up names its cause, the same in the
// summary and in the detail, and the text below the table shows it. Over a few seeds (each a
// different alignment of the workload's periods), at least one worst wake-up had a cause.
TEST(WakeupCauseRun, MainJobNamesTheCauseOfEachDesignsWorstWakeup) {
    Scenario s = load_scenario(std::string(LOCKSIM_SCENARIO_DIR) + "/default.toml");
    s.duration_ns = 40 * kMsec;  // long enough for a worst wake-up to have a cause
    s.warmup_ns = 2 * kMsec;
    std::erase_if(s.strategies, [](const StrategySpec &st) {
        return st.name != "rwlock" && st.name != "seqlock";
    });
    size_t caused = 0;  // worst wake-ups that something delayed
    for (int64_t seed : {1, 2, 3, 4}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        s.seeds = {seed};
        const analysis::ResultsFile f = run_all(s);
        const std::vector<analysis::RunSummary> sums = f.summaries("default");
        ASSERT_EQ(sums.size(), 2u);
        const std::string below = analysis::format_worst_causes(sums);
        for (size_t i = 0; i < sums.size(); ++i) {
            SCOPED_TRACE(sums[i].label);
            const kernel::WakeupRecord w = worst_record(f, i);
            EXPECT_EQ(w.late, sums[i].probe_max_ns);
            EXPECT_FALSE(sums[i].probe_worst_cause.empty());
            EXPECT_NE(below.find(sums[i].label), std::string::npos) << below;
            EXPECT_NE(below.find(sums[i].probe_worst_cause), std::string::npos) << below;
            // The cause held the probe's CPU while it was late; a section names its site, a
            // task its name. A wake-up that nothing delayed (the wake-up path's own cost) says
            // so.
            const kernel::WakeupDelay *d = w.cause();
            if (!d) {
                EXPECT_NE(sums[i].probe_worst_cause.find("on time"), std::string::npos)
                    << sums[i].probe_worst_cause;
                continue;
            }
            ++caused;
            expect_cause_overlaps_the_lateness(w, *d);
            EXPECT_NE(sums[i].probe_worst_cause.find(d->kind == "task" ? d->task : d->site),
                      std::string::npos)
                << sums[i].probe_worst_cause;
        }
    }
    EXPECT_GT(caused, 0u) << "no design's worst wake-up had a cause to check";
}
