// Measured data in: cyclictest's histogram and JSON from a real cyclictest run on this machine
// (skipped with the reason where cyclictest cannot run), ftrace latency traces written in the
// format of Documentation/trace/ftrace.rst, a Chrome trace, and the errors a malformed file
// gives (file:line[:column], exit status 2 from the command line).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/measured/import.h"
#include "analysis/measured/measurement.h"
#include "tests/temp_dir.h"
#include "util/error.h"
#include "util/read_file.h"

using namespace locksim;
using namespace locksim::analysis;
using namespace locksim::analysis::measured;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(LOCKSIM_SOURCE_DIR) + "/tests/fixtures/measured/";
const std::string kLocksim = std::string(LOCKSIM_BINARY_DIR) + "/cli/locksim";

// A new directory of the test's own under the temporary directory.
fs::path fresh_dir(const std::string &name) {
    return locksim::testing::unique_temp_dir(name);
}

std::string read(const fs::path &p) {
    return read_whole_file(p.string(), "test file");
}

// The message of the UserError `f` throws ("" when it throws none).
template <class F>
std::string user_error(F f) {
    try {
        f();
    } catch (const UserError &e) {
        return e.what();
    }
    return "";
}

struct Command {
    int status = -1;
    std::string output;
};

Command run(const std::string &args) {
    const fs::path dir = fresh_dir("locksim_measured_cmd"), out = dir / "output.txt";
    int rc = std::system(fmt::format("{} {} >'{}' 2>&1", kLocksim, args, out.string()).c_str());
    Command c{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read(out)};
    fs::remove_all(dir);
    return c;
}

// A real cyclictest run of two threads writing both its histogram and its JSON; false (with the
// reason) when cyclictest is missing or refused (it needs SCHED_FIFO and mlockall).
bool run_cyclictest(const fs::path &dir, std::string &why) {
    if (access("/usr/bin/cyclictest", X_OK) != 0) {
        why = "cyclictest is not installed (Debian's rt-tests)";
        return false;
    }
    const std::string cmd = fmt::format(
        "cyclictest -m -q -D 1 -i 1000 -t 2 -h 300 --histfile='{0}/ct.hist' --json='{0}/ct.json' "
        ">'{0}/ct.out' 2>&1",
        dir.string());
    if (std::system(cmd.c_str()) != 0 || !fs::exists(dir / "ct.hist")) {
        why = "cyclictest could not run here (SCHED_FIFO or mlockall refused?): " +
              read(dir / "ct.out");
        return false;
    }
    return true;
}

}  // namespace

TEST(MeasuredCyclictest, HistogramAndJsonOfOneRealRunAgree) {
    fs::path dir = fresh_dir("locksim_cyclictest");
    std::string why;
    if (!run_cyclictest(dir, why)) GTEST_SKIP() << why;
    const Measurement hist = read_measured((dir / "ct.hist").string());
    const Measurement js = read_measured((dir / "ct.json").string());
    EXPECT_EQ(hist.format, "cyclictest-histogram");
    EXPECT_EQ(js.format, "cyclictest-json");
    ASSERT_EQ(hist.wakeup.size(), 2u);
    ASSERT_EQ(js.wakeup.size(), 2u);
    const json facts = json::parse(read(dir / "ct.json"));
    for (int t = 0; t < 2; ++t) {
        SCOPED_TRACE(t);
        const std::string name = fmt::format("thread {}", t);
        const kernel::Histogram &a = hist.wakeup.at(name), &b = js.wakeup.at(name);
        const json &thread = facts["thread"][std::to_string(t)];
        // Every cycle is in the histogram, overflows included, and the worst is cyclictest's.
        EXPECT_EQ(a.count(), thread["cycles"].get<uint64_t>());
        EXPECT_EQ(b.count(), a.count());
        EXPECT_EQ(a.max(), thread["max"].get<int64_t>() * 1000);
        EXPECT_EQ(b.max(), a.max());
        EXPECT_EQ(a.min(), thread["min"].get<int64_t>() * 1000);
        // Below the histogram's limit both files give the same samples.
        for (double p : {10.0, 50.0, 90.0})
            if (a.value_at_percentile(p) < 300'000) {
                EXPECT_EQ(a.value_at_percentile(p), b.value_at_percentile(p)) << p;
            }
    }
    EXPECT_EQ(hist.facts["histogram_limit_us"], 300);
    fs::remove_all(dir);
}

TEST(MeasuredCyclictest, TruncatedOrMisspeltHistogramNamesTheLine) {
    const std::string good =
        "# /dev/cpu_dma_latency set to 0us\n# Histogram\n000000 000000\t000000\n"
        "000001 000010\t000003\n000002 000001\t000000\n# Total: 000000011 000000003\n"
        "# Min Latencies: 00001 00001\n# Avg Latencies: 00001 00001\n"
        "# Max Latencies: 00009 00001\n# Histogram Overflows: 00001 00000\n"
        "# Histogram Overflow at cycle number:\n# Thread 0: 00007\n# Thread 1:\n";
    const Measurement m = parse_cyclictest_histogram(good, "g.hist");
    EXPECT_EQ(m.wakeup.at("thread 0").count(), 12u);  // 11 in rows, 1 overflow at its maximum
    EXPECT_EQ(m.wakeup.at("thread 0").max(), 9000);
    EXPECT_EQ(m.wakeup.at("thread 1").count(), 3u);
    // Cut before the footer.
    EXPECT_EQ(user_error([&] {
                  parse_cyclictest_histogram(good.substr(0, good.find("# Total")), "t.hist");
              }),
              "t.hist:5: the file ends without '# Max Latencies:' (truncated?)");
    std::string bad = good;
    bad.replace(bad.find("000010"), 6, "00001x");
    EXPECT_EQ(user_error([&] { parse_cyclictest_histogram(bad, "b.hist"); }),
              "b.hist:4:8: '00001x' is not a count");
    bad = good;
    bad.replace(bad.find("# Total: 000000011"), 18, "# Total: 000000099");
    EXPECT_TRUE(user_error([&] {
                    parse_cyclictest_histogram(bad, "c.hist");
                }).starts_with("c.hist:6: thread 0: Total 99 but its rows hold 11"));
    bad = good;
    bad.replace(bad.find("\t000003"), 7, "");
    EXPECT_TRUE(user_error([&] {
                    parse_cyclictest_histogram(bad, "d.hist");
                }).starts_with("d.hist:4:1: 1 counts where line 3 has 2"));
}

TEST(MeasuredFtrace, IrqsoffTraceGivesItsSectionWithTaskAndSites) {
    const Measurement m = read_measured(kFixtures + "irqsoff.trace");
    EXPECT_EQ(m.format, "ftrace");
    EXPECT_EQ(m.irqs_off.count(), 1u);
    EXPECT_EQ(m.irqs_off.max(), 212'000);
    EXPECT_EQ(m.preempt_off.count(), 0u);
    ASSERT_EQ(m.irqs_off_traced.size(), 1u);
    const TracedInterval &t = m.irqs_off_traced[0];
    EXPECT_EQ(t.task, "setsebool-4711");
    EXPECT_EQ(t.cpu, 2);
    EXPECT_EQ(t.start_site, "_raw_write_lock_irq");
    EXPECT_EQ(t.end_site, "_raw_write_unlock_irq");
    EXPECT_EQ(m.facts["kernel"], "6.6.0-test");
    EXPECT_EQ(m.facts["preemption_model"], "preempt");
    EXPECT_EQ(m.facts["events"], 6);
}

TEST(MeasuredFtrace, PreemptoffAndWakeupRtFillTheirMetrics) {
    const Measurement p = read_measured(kFixtures + "preemptoff.trace");
    EXPECT_EQ(p.preempt_off.max(), 1'187'000);
    EXPECT_EQ(p.preempt_off_traced.at(0).start_site, "_raw_read_lock");
    const Measurement w = read_measured(kFixtures + "wakeup_rt.trace");
    ASSERT_EQ(w.wakeup.size(), 1u);
    EXPECT_EQ(w.wakeup.at("cyclictest-2389").max(), 94'000);
    const TracedInterval &t = w.wakeup_traced.at(0);
    EXPECT_EQ(t.cpu, 3);
    EXPECT_EQ(t.running, "setseboo-4711");
    EXPECT_EQ(t.label, "woken while setseboo-4711 ran");
    EXPECT_EQ(t.start_site, "ttwu_do_activate");
    EXPECT_EQ(t.end_site, "__schedule");
    EXPECT_EQ(t.longest_gap, "ttwu_do_activate (89 us)");
    EXPECT_EQ(w.facts["preemption_model"], "preempt_rt");
}

TEST(MeasuredFtrace, MalformedTraceNamesLineAndColumn) {
    EXPECT_EQ(user_error([] { read_measured(kFixtures + "bad-latency.trace"); }),
              kFixtures + "bad-latency.trace:5:11: expected 'latency: <n> us'");
    const std::string text = read(kFixtures + "irqsoff.trace");
    std::string bad = text;
    bad.replace(bad.find("setseboo-4711      2d..1.    1us+"), 33, "garbage");
    EXPECT_EQ(user_error([&] { parse_ftrace_latency(bad, "g.trace"); }),
              "g.trace:23:1: not a trace event ('<comm>-<pid> <cpu><flags> <time>us: "
              "<function>')");
    bad = text;
    bad.replace(bad.find("irqsoff"), 7, "function");
    EXPECT_TRUE(user_error([&] {
                    parse_ftrace_latency(bad, "f.trace");
                }).starts_with("f.trace:1: tracer 'function' is not a latency tracer"));
    EXPECT_TRUE(user_error([&] {
                    parse_ftrace_latency(text.substr(0, 120), "cut.trace");
                }).starts_with("cut.trace:4: no '# latency: <n> us' line"));
}

TEST(MeasuredChromeTrace, SlicesByNameWithOpenAndUnmatchedCounted) {
    const Measurement m = read_measured(kFixtures + "slices.json");
    EXPECT_EQ(m.format, "chrome-trace");
    const Slices &av = m.slices.at("security_compute_av");
    EXPECT_EQ(av.duration.count(), 3u);
    EXPECT_EQ(av.duration.max(), 4000);
    EXPECT_EQ(av.duration.min(), 2500);
    const Slices &commit = m.slices.at("security_set_bools");
    EXPECT_EQ(commit.duration.count(), 1u);
    EXPECT_EQ(commit.duration.max(), 1'000'000);
    ASSERT_EQ(commit.open_ns.size(), 1u);  // begun at 1200 µs, the trace's last stamp 1300 µs
    EXPECT_EQ(commit.open_ns[0], 100'000);
    EXPECT_EQ(m.facts["other_events"], 2);
    std::string bad = read(kFixtures + "slices.json");
    bad.replace(bad.find("\"dur\": 3.0"), 10, "\"dur\": \"3\"");
    EXPECT_EQ(user_error([&] { parse_chrome_trace(bad, "s.json"); }),
              "s.json: traceEvents[2]: \"dur\" is not a number");
    EXPECT_TRUE(user_error([&] {
                    parse_chrome_trace(bad.substr(0, 200), "cut.json");
                }).starts_with("cut.json:3:"));
    // A number too large for a double is named with its place, not thrown past the reader.
    EXPECT_EQ(user_error([&] { parse_chrome_trace("{\"a\":\n 27E777777}", "big.json"); }),
              "big.json:2:2: not valid JSON: number overflow parsing '27E777777'");
}

TEST(MeasuredImport, SlicesMappedToMetricsFillTheSummary) {
    ImportOptions o;
    o.design = "device";
    o.slices = {parse_slice_mapping("--slice", "toggle=security_set_bools"),
                parse_slice_mapping("--slice", "reader=security_compute_av")};
    ResultsFile r = import_measured({kFixtures + "slices.json", kFixtures + "preemptoff.trace"}, o);
    ASSERT_EQ(r.runs.size(), 1u);
    const RunSummary s = r.summaries("imported").at(0);
    EXPECT_EQ(s.platform, "measured");
    EXPECT_EQ(s.label, "device");
    EXPECT_EQ(s.toggle_count, 1u);
    EXPECT_EQ(s.toggle_max_ns, 1'000'000);
    EXPECT_EQ(s.toggle_open.open_at_end, 1u);  // the commit still open at the trace's end
    EXPECT_EQ(s.reader_count, 3u);
    EXPECT_EQ(s.preempt_off_max_ns, 1'187'000);
    EXPECT_EQ(s.preempt_off_worst_label, "_raw_read_lock");
    EXPECT_EQ(r.runs[0]["detail"]["ops"]["set_bools"]["completed"], 1);
    EXPECT_EQ(r.runs[0]["detail"]["measured"]["reader_op"], "security_compute_av");
    EXPECT_EQ(user_error([] { parse_slice_mapping("--slice", "latency=x"); }),
              "--slice: 'latency=x' is not METRIC=SLICE (METRIC: preempt-off, irqs-off, "
              "probe-wakeup, toggle, reader)");
    o.slices = {parse_slice_mapping("--slice", "toggle=no_such_slice")};
    EXPECT_EQ(user_error([&] { import_measured({kFixtures + "slices.json"}, o); }),
              "--slice: no slice named 'no_such_slice' in the files given");
}

TEST(MeasuredImportCommand, WritesResultsAndMalformedFilesExitTwo) {
    fs::path dir = fresh_dir("locksim_import_cmd");
    Command ok = run(fmt::format("import {0}irqsoff.trace {0}wakeup_rt.trace -o '{1}'", kFixtures,
                                 dir.string()));
    ASSERT_EQ(ok.status, 0) << ok.output;
    EXPECT_NE(ok.output.find("imported 2 series from 2 files"), std::string::npos) << ok.output;
    const json results = json::parse(read(dir / "results.json"));
    ASSERT_EQ(results["runs"].size(), 2u);
    EXPECT_EQ(results["runs"][0]["label"], "irqsoff");
    EXPECT_EQ(results["runs"][0]["platform"], "measured");
    EXPECT_EQ(results["runs"][1]["probe_wakeup"]["max_ns"], 94'000);
    Command bad = run(fmt::format("import {}bad-latency.trace -o '{}'", kFixtures, dir.string()));
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(bad.output, fmt::format("locksim: {}bad-latency.trace:5:11: expected 'latency: <n> "
                                      "us'\n",
                                      kFixtures));
    fs::remove_all(dir);
}

// compare --measured puts the measured series in the table and results.json; pick judges an
// imported results file beside the simulated one; a malformed file stops compare before any run.
TEST(MeasuredCompareCommand, MeasuredSeriesBesideTheDesigns) {
    fs::path dir = fresh_dir("locksim_compare_measured");
    const std::string scenario = std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/default.toml";
    Command cmp = run(fmt::format(
        "compare {} --duration 20ms -s rwlock --seed 1 -o '{}/sim' --measured {}wakeup_rt.trace",
        scenario, dir.string(), kFixtures));
    ASSERT_EQ(cmp.status, 0) << cmp.output;
    EXPECT_NE(cmp.output.find("\nwakeup_rt "), std::string::npos) << cmp.output;
    const ResultsFile sim = load_results((dir / "sim" / "results.json").string());
    ASSERT_EQ(sim.runs.size(), 2u);
    EXPECT_EQ(sim.runs[1]["platform"], "measured");
    EXPECT_EQ(sim.runs[1]["index"], 1);

    Command imp = run(fmt::format("import {}preemptoff.trace -o '{}/m'", kFixtures, dir.string()));
    ASSERT_EQ(imp.status, 0) << imp.output;
    Command pk =
        run(fmt::format("pick '{0}/sim/results.json' '{0}/m/results.json' "
                        "--max-preempt-off 100us",
                        dir.string()));
    EXPECT_NE(pk.output.find("preempt-off 1.19ms > 100.0us"), std::string::npos) << pk.output;
    EXPECT_NE(pk.output.find(". preemptoff "), std::string::npos) << pk.output;

    Command bad = run(fmt::format("compare {} -o '{}/bad' --measured {}bad-latency.trace", scenario,
                                  dir.string(), kFixtures));
    EXPECT_EQ(bad.status, 2);
    EXPECT_FALSE(fs::exists(dir / "bad" / "results.json"));
    fs::remove_all(dir);
}
