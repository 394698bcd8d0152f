// `locksim report` on a small results file built here: three designs swept over machine.cpus,
// with hand-filled histograms, intervals and operations; and on the results of a real short run,
// whose boolean-commit figures must draw every part the run recorded. Checks every expected file,
// the PNG sizes, what the figures say about the histograms, the errors, and (with Debian's
// chromium) that index.html loads without console errors and shows the table.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "analysis/measured/import.h"
#include "analysis/report.h"
#include "analysis/table.h"
#include "record/run_results.h"
#include "runner/runner.h"
#include "tests/temp_dir.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::analysis;
using kernel::Histogram;
using kernel::Time;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr Time kUs = 1000, kMs = 1000 * kUs;

struct Design {
    const char *name;
    Time section;  // typical preempt-off section
    Time worst;    // its worst one
    Time toggle;   // typical boolean commit
};

const Design kDesigns[] = {
    {"rwlock", 4 * kUs, 1200 * kUs, 2 * kMs},
    {"rwsem", 1 * kUs, 30 * kUs, 3 * kMs},
    {"rcu-cond-dup", 500, 6 * kUs, 8 * kMs},
};

// One run's detail, filled by hand: exponential-ish samples around the design's typical values.
kernel::RunResults detail_for(const Design &d, int cpus, uint64_t seed) {
    std::mt19937_64 rng(seed * 131 + static_cast<uint64_t>(cpus));
    std::exponential_distribution<double> expo(1.0);
    auto sample = [&](Time typical) {
        return static_cast<Time>(static_cast<double>(typical) * expo(rng)) + 1;
    };
    kernel::RunResults r;
    r.platform = "sim";
    r.duration_ns = 100 * kMs;
    r.seed = seed;
    r.config = {{"cpus", std::to_string(cpus)}};
    for (int i = 0; i < 3000; ++i)
        r.preempt_off.add({i % cpus, i * 10 * kUs, std::min(sample(d.section), d.worst - 1),
                           "reader" + std::to_string(i % 4), "compute_av", "read_lock @ x.cpp:1",
                           "read_unlock @ x.cpp:9"});
    // The worst section grows with the machine (a sweep's points differ, in a known order).
    r.preempt_off.add({1, 50 * kMs, d.worst + (cpus - 2) * 50 * kUs, "login", "get_user_sids",
                       "read_lock @ s.cpp:10", "read_unlock @ s.cpp:40"});
    for (int i = 0; i < 200; ++i)
        r.irqs_off.add({0, i * kMs, sample(2 * kUs), "writer", "set_bools", "a", "b"});
    for (const char *probe : {"probe0", "probe1"})
        for (int i = 0; i < 1000; ++i)
            r.wakeup_latency[probe].record(sample(3 * kUs + d.section));
    kernel::OpStats &read = r.ops["file_read"];
    for (int i = 0; i < 20000; ++i)
        read.latency.record(sample(2 * kUs) + (i % 997 == 0 ? d.worst : 0));
    read.completed = read.latency.count();
    kernel::OpStats &miss = r.ops["avc_miss"];
    for (int i = 0; i < 500; ++i)
        miss.latency.record(sample(10 * kUs));
    miss.completed = miss.latency.count();
    kernel::OpStats &toggle = r.ops["set_bools"];
    for (int i = 0; i < 40; ++i)
        toggle.latency.record(sample(d.toggle));
    toggle.completed = toggle.latency.count();
    return r;
}

RunSummary summary_for(const Design &d, const kernel::RunResults &r, int cpus, uint64_t seed,
                       bool sweep) {
    RunSummary s;
    s.strategy = s.label = d.name;
    s.platform = "sim";
    s.seed = seed;
    if (sweep) s.point = {{"machine.cpus", std::to_string(cpus)}};
    const Histogram &po = r.preempt_off.length;
    s.preempt_off_max_ns = po.max();
    s.preempt_off_p99_ns = po.value_at_percentile(99);
    s.preempt_off_p50_ns = po.value_at_percentile(50);
    s.preempt_off_count = po.count();
    s.preempt_off_worst_label = "get_user_sids";
    s.preempt_off_worst_site = "read_lock @ s.cpp:10";
    s.irqs_off_max_ns = r.irqs_off.length.max();
    s.irqs_off_count = r.irqs_off.length.count();
    Histogram probe;
    for (const auto &[n, h] : r.wakeup_latency)
        probe.merge(h);
    s.probe_max_ns = probe.max();
    s.probe_p99_ns = probe.value_at_percentile(99);
    s.probe_count = probe.count();
    const Histogram &t = r.ops.at("set_bools").latency;
    s.toggle_count = t.count();
    s.toggle_max_ns = t.max();
    s.toggle_p50_ns = t.value_at_percentile(50);
    s.toggle_mean_ns = static_cast<int64_t>(t.mean());
    s.toggle_readers_blocked_ns = d.toggle / 2 * cpus;
    s.toggle_preempt_off_ns = d.toggle / 10;
    s.toggle_irqs_off_ns = d.toggle / 20;
    s.toggle_gp_wait_ns = d.name[0] == 'r' && d.name[1] == 'c' ? d.toggle / 2 : 0;
    s.toggle_avc_refill_ns = 40 * kUs;
    const Histogram &rd = r.ops.at("file_read").latency;
    s.reader_count = rd.count();
    s.reader_p50_ns = rd.value_at_percentile(50);
    s.reader_p99_ns = rd.value_at_percentile(99);
    s.reader_max_ns = rd.max();
    s.ops = rd.count();
    s.ops_per_sec = static_cast<double>(rd.count()) * 10 * cpus;
    s.peak_memory_bytes = 64 << 20;
    return s;
}

// A results file with the three designs at `cpus` (a sweep when there are several).
ResultsFile make_results(const std::vector<int> &cpus) {
    ResultsFile f;
    f.scenario = {{"name", "report-test"}, {"description", "Three designs <hand-made> & swept"}};
    int index = 0;
    for (int c : cpus)
        for (const Design &d : kDesigns) {
            kernel::RunResults r = detail_for(d, c, 1);
            json run = summary_to_json(summary_for(d, r, c, 1, cpus.size() > 1));
            run["index"] = index++;
            run["detail"] = r;
            f.runs.push_back(std::move(run));
        }
    return f;
}

// A new directory of the test's own under the temporary directory (ctest runs tests in parallel,
// and two test commands may run at once).
fs::path fresh_dir(const std::string &name) {
    return locksim::testing::unique_temp_dir(name);
}

std::string read_text(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Width and height from a PNG's signature and IHDR chunk; {0, 0} when it is not a PNG.
std::pair<uint32_t, uint32_t> png_size(const fs::path &p) {
    std::string b = read_text(p);
    static const std::string sig("\x89PNG\r\n\x1a\n", 8);
    if (b.size() < 24 || b.compare(0, 8, sig) != 0 || b.compare(12, 4, "IHDR") != 0) return {0, 0};
    auto be32 = [&](size_t at) {
        uint32_t v = 0;
        for (size_t i = 0; i < 4; ++i)
            v = (v << 8) | static_cast<unsigned char>(b[at + i]);
        return v;
    };
    return {be32(16), be32(20)};
}

bool contains(const std::string &hay, const std::string &needle) {
    return hay.find(needle) != std::string::npos;
}

// A report written into a directory of its own (ctest may run tests in parallel).
struct Generated {
    fs::path dir;
    ResultsFile results;
    ReportOutput out;
    json figures;

    explicit Generated(const std::vector<int> &cpus)
        : dir(fresh_dir(fmt::format("locksim_report_{}_{}", cpus.size(), getpid()))),
          results(make_results(cpus)) {
        save_results(results, (dir / "results.json").string());
        ReportOptions o;
        o.limits = {{"preempt_off.max_ns", {100 * kUs}}, {"toggle.max_ns", {10 * kMs}}};
        o.plots_script = std::string(LOCKSIM_SOURCE_DIR) + "/analysis/plots.py";
        o.per_run = true;  // a sweep's run histograms too
        out = write_report(results, (dir / "results.json").string(), (dir / "out").string(), o);
        figures = json::parse(read_text(dir / "out" / "figures.json"))["figures"];
    }
    ~Generated() { fs::remove_all(dir); }
    Generated(const Generated &) = delete;
    Generated &operator=(const Generated &) = delete;

    const json &figure(const std::string &stem) const {
        for (const json &f : figures)
            if (f["file"] == stem) return f;
        static const json none;
        ADD_FAILURE() << "no figure " << stem;
        return none;
    }
};

void check_files(const Generated &g, const std::set<std::string> &expected) {
    std::set<std::string> stems;
    for (const json &f : g.figures)
        stems.insert(f["file"].get<std::string>());
    EXPECT_EQ(stems, expected);
    fs::path out = g.dir / "out";
    std::set<std::string> written;
    for (const auto &e : fs::directory_iterator(out))
        written.insert(e.path().filename().string());
    std::set<std::string> want = {"index.html", "figures.json"};
    for (const std::string &s : expected) {
        want.insert(s + ".png");
        want.insert(s + ".svg");
    }
    EXPECT_EQ(written, want);
    EXPECT_EQ(g.out.files.size(), want.size());
    EXPECT_EQ(g.out.index, (out / "index.html").string());
}

void check_images(const Generated &g) {
    fs::path out = g.dir / "out";
    for (const json &f : g.figures) {
        std::string stem = f["file"];
        auto [w, h] = png_size(out / (stem + ".png"));
        EXPECT_EQ(w, f["width"].get<uint32_t>()) << stem;
        EXPECT_EQ(h, f["height"].get<uint32_t>()) << stem;
        EXPECT_GT(fs::file_size(out / (stem + ".png")), 5000u) << stem;  // drawn, not blank
        std::string svg = read_text(out / (stem + ".svg"));
        EXPECT_TRUE(contains(svg, "<svg")) << stem;
        EXPECT_TRUE(contains(svg, "</svg>")) << stem;
    }
}

void check_index(const Generated &g) {
    std::string html = read_text(g.dir / "out" / "index.html");
    // The table, HTML-escaped, line by line.
    std::istringstream table(format_table(g.results.summaries("r")));
    for (std::string line; std::getline(table, line);)
        EXPECT_TRUE(contains(html, line)) << line;
    EXPECT_TRUE(contains(html, "--max-preempt-off 100.0us --max-toggle 10.00ms"));
    EXPECT_TRUE(contains(html, "pick: "));
    EXPECT_TRUE(contains(html, "Three designs &lt;hand-made&gt; &amp; swept"));
    for (const json &f : g.figures)
        EXPECT_TRUE(contains(html, fmt::format("src=\"{}.png\"", f["file"].get<std::string>())));
    EXPECT_FALSE(contains(html, "http://"));
    EXPECT_FALSE(contains(html, "https://"));
    EXPECT_FALSE(contains(html, "<script"));
}

std::set<std::string> run_histograms(int runs) {
    std::set<std::string> out;
    for (int i = 0; i < runs; ++i) {
        out.insert(fmt::format("run-{}-preempt-off", i));
        out.insert(fmt::format("run-{}-probe", i));
    }
    return out;
}

}  // namespace

// Three designs at 2 and 8 CPUs: every figure and file, the images' sizes, what the figures say
// about the histograms, and the index.
TEST(Report, SweepWritesEveryFigureAndTheIndex) {
    Generated g({2, 8});
    std::set<std::string> expected = run_histograms(6);
    expected.insert({"spectrum-reader-0", "spectrum-reader-1", "spectrum-toggle-0",
                     "spectrum-toggle-1", "toggle-cost-0", "toggle-cost-1", "toggle-alloc-0",
                     "toggle-alloc-1", "scaling-machine.cpus", "preempt-off-0", "preempt-off-1",
                     "probe-0", "probe-1"});
    check_files(g, expected);
    check_images(g);
    check_index(g);

    // Run 0 is rwlock at 2 CPUs: every section lands in a bin; the worst one is marked with the
    // operation and the sites that opened and closed it.
    const json &po = g.figure("run-0-preempt-off");
    uint64_t total = 0;
    double last_edge = 0;
    for (const json &b : po["bins"]) {
        total += b[2].get<uint64_t>();
        EXPECT_GE(b[0].get<double>(), last_edge);
        last_edge = b[0].get<double>() + b[1].get<double>();
    }
    EXPECT_EQ(total, 3001u);
    EXPECT_EQ(po["samples"], 3001u);
    EXPECT_DOUBLE_EQ(po["worst"]["x"].get<double>(), 1200.0);
    std::string worst = po["worst"]["text"];
    EXPECT_TRUE(contains(worst, "1.20ms")) << worst;
    EXPECT_TRUE(contains(worst, "get_user_sids in login")) << worst;
    EXPECT_TRUE(contains(worst, "read_lock @ s.cpp:10")) << worst;
    EXPECT_LE(po["bins"].size(), 201u);
    // The point's summary: one line per design, each with every section of its run; the worst
    // is rwlock's, marked with its run.
    const json &summary = g.figure("preempt-off-0");
    ASSERT_EQ(summary["series"].size(), 3u);
    for (size_t d = 0; d < 3; ++d) {
        uint64_t n = 0;
        for (const json &b : summary["series"][d]["bins"])
            n += b[2].get<uint64_t>();
        EXPECT_EQ(n, 3001u) << d;
        EXPECT_EQ(summary["series"][d]["label"], kDesigns[d].name);
    }
    EXPECT_DOUBLE_EQ(summary["worst"]["x"].get<double>(), 1200.0);
    EXPECT_TRUE(contains(summary["worst"]["text"], "rwlock, seed 1: worst 1.20ms"))
        << summary["worst"]["text"];
    // Both probe tasks are merged.
    EXPECT_EQ(g.figure("run-0-probe")["samples"], 2000u);
    // Spectra: one line per design; the reader op is the most frequent non-writer op; each line
    // ends at the design's worst case, at 1/(1-p) = count.
    const json &spec = g.figure("spectrum-reader-0");
    EXPECT_TRUE(contains(spec["title"], "file_read")) << spec["title"];
    ASSERT_EQ(spec["lines"].size(), 3u);
    const json &rw = spec["lines"][0];
    EXPECT_TRUE(contains(rw["name"], "rwlock"));
    EXPECT_DOUBLE_EQ(rw["x"].back().get<double>(), 20000.0);
    Histogram reader;
    from_json(g.results.runs[0]["detail"]["ops"]["file_read"]["latency_ns"], reader);
    EXPECT_DOUBLE_EQ(rw["y"].back().get<double>(), static_cast<double>(reader.max()) / 1000.0);
    for (size_t i = 1; i < rw["y"].size(); ++i)
        EXPECT_GE(rw["y"][i].get<double>(), rw["y"][i - 1].get<double>());
    EXPECT_EQ(g.figure("spectrum-toggle-1")["lines"].size(), 3u);
    // Toggle parts per design; scaling has the two CPU counts per design.
    const json &bars = g.figure("toggle-cost-0");
    EXPECT_EQ(bars["groups"], json({"rwlock", "rwsem", "rcu-cond-dup"}));
    EXPECT_EQ(bars["parts"][1]["name"], "readers blocked");
    // 2 ms / 2 * 2 CPUs blocked over the run, per commit.
    const double commits = g.results.runs[0]["toggle"]["count"].get<double>();
    EXPECT_DOUBLE_EQ(bars["parts"][1]["values"][0].get<double>(), 2000.0 / commits);
    const json &scaling = g.figure("scaling-machine.cpus");
    ASSERT_EQ(scaling["panels"].size(), 5u);  // preempt-off, commit, reader, probe, throughput
    const json &line = scaling["panels"][0]["lines"][0];
    // rwlock's worst section: 1.2 ms at 2 CPUs, 1.5 ms at 8.
    EXPECT_EQ(line["x"], json({2.0, 8.0}));
    EXPECT_EQ(line["y"], json({1200.0, 1500.0}));
}

// A short run of the main job (scenarios/default.toml: 40 ms, three designs, a commit every
// 5 ms on average), through the runner and the simulator on the Debian policy: the commit
// figures draw every part the commit recorded, and none of preempt-off, IRQs-off and
// grace-period wait exceeds the commit's latency.
TEST(Report, CommitFiguresOfARealRunDrawEveryPart) {
    Scenario s = load_scenario(std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/default.toml");
    s.duration_ns = 40 * kMs;
    s.warmup_ns = 2 * kMs;
    std::erase_if(s.strategies, [](const StrategySpec &st) {
        return st.name != "rwlock" && st.name != "rcu-cond-dup" && st.name != "rcu-full-copy";
    });
    for (auto &w : s.workloads)
        if (w.kind == "setsebool") w.params.set("period", int64_t{5 * kMs});
    std::vector<Scenario> points = expand_sweep(s);
    ResultsFile results = run_jobs(s, plan_runs(points), {});
    fs::path dir = fresh_dir(fmt::format("locksim_report_real_{}", getpid()));
    save_results(results, (dir / "results.json").string());
    ReportOptions o;
    o.plots_script = std::string(LOCKSIM_SOURCE_DIR) + "/analysis/plots.py";
    write_report(results, (dir / "results.json").string(), (dir / "out").string(), o);
    json figures = json::parse(read_text(dir / "out" / "figures.json"))["figures"];
    auto figure = [&](const char *stem) {
        for (const json &f : figures)
            if (f["file"] == stem) return f;
        ADD_FAILURE() << "no figure " << stem;
        return json();
    };
    const json cost = figure("toggle-cost"), alloc = figure("toggle-alloc");
    ASSERT_EQ(cost["groups"], json({"rwlock", "rcu-full-copy", "rcu-cond-dup"}));
    const json &parts = cost["parts"];
    for (size_t g = 0; g < 3; ++g) {
        SCOPED_TRACE(cost["groups"][g].get<std::string>());
        const double latency = parts[0]["values"][g];
        EXPECT_GT(latency, 0);
        for (size_t p : {2, 3, 4}) {  // preempt-off, irqs-off, grace-period wait
            const double v = parts[p]["values"][g];
            EXPECT_GT(v, 0) << parts[p]["name"];
            EXPECT_LE(v, latency * 1.001) << parts[p]["name"];
        }
        EXPECT_GT(alloc["parts"][0]["values"][g].get<double>(), 0);
    }
    const std::string caption = cost["caption"];
    EXPECT_TRUE(contains(caption, "rwlock 1.0, rcu-full-copy 2.0, rcu-cond-dup 2.0")) << caption;
    for (const char *stem : {"toggle-cost", "toggle-alloc"})
        EXPECT_GT(fs::file_size(dir / "out" / (std::string(stem) + ".png")), 5000u) << stem;
    fs::remove_all(dir);
}

namespace {

// Headless Chromium, or "" when it is not installed.
std::string chromium() {
    for (const char *c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
        if (access(c, X_OK) == 0) return c;
    return "";
}

struct Browser {
    int status = -1;
    std::string dom, log;
};

// The report has no script; the test loads a copy with one that, once the page has loaded,
// logs a console error for every image that did not load and counts those that did.
const char *kImageCheck = R"(<script>
window.addEventListener('load', () => {
  const bad = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0));
  if (bad.length) console.error('images not loaded: ' + bad.map(i => i.src).join(' '));
  document.body.setAttribute('data-images-loaded', String(document.images.length - bad.length));
});
</script>
)";

// Loads `page` (with the image check added) in headless Chromium; returns the DOM after load
// and the browser's log.
Browser load_page(const fs::path &page) {
    fs::path work = fresh_dir(fmt::format("locksim_chromium_{}", getpid()));
    fs::path checked = page.parent_path() / "index.check.html";
    std::string html = read_text(page);
    size_t body_end = html.rfind("</body>");
    std::ofstream(checked) << html.substr(0, body_end) << kImageCheck << html.substr(body_end);
    fs::path dom = work / "dom.html", log = work / "log.txt";
    std::string cmd = fmt::format(
        "'{}' --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --no-first-run "
        "--user-data-dir='{}' --enable-logging=stderr --v=0 --dump-dom 'file://{}' >'{}' 2>'{}'",
        chromium(), (work / "profile").string(), fs::absolute(checked).string(), dom.string(),
        log.string());
    Browser b;
    b.status = std::system(cmd.c_str());
    b.dom = read_text(dom);
    b.log = read_text(log);
    fs::remove_all(work);
    fs::remove(checked);
    return b;
}

// Console messages of the page (console calls and uncaught errors), as Chromium logs them.
std::vector<std::string> console_lines(const std::string &log) {
    std::vector<std::string> out;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);)
        if (contains(line, ":CONSOLE")) out.push_back(line);
    return out;
}

size_t image_count(const std::string &html) {
    size_t n = 0;
    for (size_t at = html.find("<img "); at != std::string::npos; at = html.find("<img ", at + 1))
        ++n;
    return n;
}

}  // namespace

// One machine size (no sweep): the files of a plain report, and the page in a real browser.
TEST(Report, IndexLoadsInHeadlessChromium) {
    Generated g({4});
    std::set<std::string> expected = run_histograms(3);
    expected.insert({"spectrum-reader", "spectrum-toggle", "toggle-cost", "toggle-alloc"});
    check_files(g, expected);
    check_images(g);
    check_index(g);
    EXPECT_TRUE(contains(read_text(g.out.index), "Not a sweep"));
    if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh adds it)";
    // The check can fail: a page with a missing image is reported.
    fs::path bad = fresh_dir(fmt::format("locksim_bad_page_{}", getpid())) / "index.html";
    std::ofstream(bad) << "<!DOCTYPE html><html><body><img src=\"missing.png\"></body></html>\n";
    Browser control = load_page(bad);
    EXPECT_EQ(console_lines(control.log).size(), 1u) << "a missing image went unnoticed; log:\n"
                                                     << control.log;
    EXPECT_TRUE(contains(control.dom, "data-images-loaded=\"0\"")) << control.dom;
    fs::remove_all(bad.parent_path());

    fs::path index = g.out.index;
    Browser b = load_page(index);
    EXPECT_EQ(b.status, 0) << b.log;
    std::vector<std::string> console = console_lines(b.log);
    EXPECT_TRUE(console.empty()) << console.front();
    size_t images = image_count(read_text(index));
    EXPECT_EQ(images, g.figures.size());  // one PNG each; the SVG is linked
    EXPECT_TRUE(contains(b.dom, fmt::format("data-images-loaded=\"{}\"", images)))
        << b.dom.substr(0, 2000);
    EXPECT_TRUE(contains(b.dom, "<pre id=\"table\">")) << b.dom.substr(0, 2000);
    EXPECT_TRUE(contains(b.dom, "rcu-cond-dup"));
}

TEST(ReportErrors, MissingPythonOrMatplotlibIsAUserError) {
    fs::path dir = fresh_dir(fmt::format("locksim_report_errors_{}", getpid()));
    ResultsFile r = make_results({4});
    ReportOptions o;
    o.python = (dir / "no-such-python").string();
    try {
        write_report(r, "results.json", (dir / "a").string(), o);
        ADD_FAILURE() << "no error";
    } catch (const UserError &e) {
        EXPECT_TRUE(contains(e.what(), "LOCKSIM_PYTHON")) << e.what();
    }
    o.python = "no-such-python-on-path";  // looked up on PATH
    EXPECT_THROW(write_report(r, "results.json", (dir / "a").string(), o), UserError);
    // A python that cannot import matplotlib (site packages off).
    fs::path nompl = dir / "python-without-matplotlib";
    std::ofstream(nompl) << "#!/bin/sh\nexec /usr/bin/python3 -S -I \"$@\"\n";
    fs::permissions(nompl, fs::perms::owner_all);
    o.python = nompl.string();
    o.plots_script = std::string(LOCKSIM_SOURCE_DIR) + "/analysis/plots.py";
    try {
        write_report(r, "results.json", (dir / "b").string(), o);
        ADD_FAILURE() << "no error";
    } catch (const UserError &e) {
        EXPECT_TRUE(contains(e.what(), "python3-matplotlib")) << e.what();
    }
    fs::remove_all(dir);
}

TEST(ReportErrors, BadDetailNamesThePlace) {
    ResultsFile r = make_results({4});
    r.runs[1]["detail"]["preempt_off"]["length_ns"]["buckets"] = json::array({{999999, 1}});
    try {
        report_figures(r, "results.json", ReportOptions{});
        ADD_FAILURE() << "no error";
    } catch (const UserError &e) {
        EXPECT_TRUE(contains(e.what(), "results.json: run 1: detail.preempt_off.length_ns"))
            << e.what();
    }
    r = make_results({4});
    r.runs[0]["detail"]["wakeup_latency_ns"]["probe0"] = "many";
    EXPECT_THROW(report_figures(r, "results.json", ReportOptions{}), UserError);
    ResultsFile none;
    EXPECT_THROW(report_figures(none, "results.json", ReportOptions{}), UserError);
}

TEST(ReportErrors, RunsWithoutDetailStillGetTheirFigures) {
    ResultsFile r = make_results({4});
    for (json &run : r.runs)
        run.erase("detail");
    json figs = report_figures(r, "results.json", ReportOptions{});
    size_t histograms = 0;
    for (const json &f : figs)
        if (f["kind"] == "histogram") {
            ++histograms;
            EXPECT_TRUE(f["worst"].is_null());
            EXPECT_TRUE(f.contains("empty_text"));
        }
    EXPECT_EQ(histograms, 6u);
}

namespace {

// A real cyclictest histogram of this machine (two threads, 1 s), or "" with the reason when
// cyclictest cannot run here (not installed, SCHED_FIFO or mlockall refused).
std::string real_cyclictest(const fs::path &dir, std::string &why) {
    if (access("/usr/bin/cyclictest", X_OK) != 0) {
        why = "cyclictest is not installed (Debian's rt-tests)";
        return "";
    }
    const fs::path hist = dir / "cyclictest.hist", log = dir / "cyclictest.log";
    const std::string cmd =
        fmt::format("cyclictest -m -q -D 1 -i 1000 -t 2 -h 400 --histfile='{}' >'{}' 2>&1",
                    hist.string(), log.string());
    if (std::system(cmd.c_str()) != 0 || !fs::exists(hist)) {
        why = "cyclictest could not run (SCHED_FIFO or mlockall refused?): " + read_text(log);
        return "";
    }
    return hist.string();
}

// Writes a PNG of `page` as headless Chromium renders it; the command's exit status.
int screenshot(const fs::path &page, const fs::path &png) {
    fs::path profile = fresh_dir(fmt::format("locksim_chromium_shot_{}", getpid()));
    std::string cmd = fmt::format(
        "'{}' --headless --disable-gpu --no-sandbox --disable-dev-shm-usage --no-first-run "
        "--user-data-dir='{}' --hide-scrollbars --window-size=1200,2400 --screenshot='{}' "
        "'file://{}' >/dev/null 2>&1",
        chromium(), profile.string(), png.string(), fs::absolute(page).string());
    int rc = std::system(cmd.c_str());
    fs::remove_all(profile);
    return rc;
}

// How varied the PNG's image data is: distinct pixel-sized byte groups of its (filtered)
// scanlines on a 7-pixel grid, read with Python's zlib; -1 when it cannot be read. A blank page
// gives 2 (its filtered rows are nearly all zero); a rendered report page, hundreds.
int png_variety(const fs::path &png) {
    const std::string script = fmt::format(
        "import struct,zlib\n"
        "d=open('{}','rb').read()\n"
        "w,h,bits,ct=struct.unpack('>IIBB',d[16:26])\n"
        "raw=b''\n"
        "i=8\n"
        "while i<len(d):\n"
        "  n,=struct.unpack('>I',d[i:i+4]); t=d[i+4:i+8]\n"
        "  if t==b'IDAT': raw+=d[i+8:i+8+n]\n"
        "  i+=12+n\n"
        "px=zlib.decompress(raw)\n"
        "bpp={{2:3,6:4}}.get(ct,1)\n"
        "stride=w*bpp+1\n"
        "print(len({{px[r*stride+1:(r+1)*stride][c:c+bpp] for r in range(0,h,7) "
        "for c in range(0,w*bpp,bpp*7)}}))\n",
        png.string());
    const fs::path py = png.parent_path() / "variety.py", out = png.parent_path() / "variety.txt";
    std::ofstream(py) << script;
    if (std::system(
            fmt::format("/usr/bin/python3 '{}' >'{}' 2>&1", py.string(), out.string()).c_str()) !=
        0)
        return -1;
    return std::atoi(read_text(out).c_str());
}

}  // namespace

// A short real run of two designs beside a measured kernel: a cyclictest histogram made on
// this machine and an ftrace wakeup_rt trace. The report puts both measured series in the
// probe plots and figures.json, pick ranks them, and headless Chromium shows the verdict table,
// the limit lines and the worst wake-up's cause.
TEST(Report, MeasuredSeriesBesideARealRun) {
    fs::path dir = fresh_dir(fmt::format("locksim_report_measured_{}", getpid()));
    // Without cyclictest here, everything but its overlay is still checked (the test is then
    // reported skipped, with the reason, unless something else failed).
    std::string why;
    const std::string hist = real_cyclictest(dir, why);
    const bool cyclictest = !hist.empty();
    std::vector<std::string> measured_files;
    if (cyclictest) measured_files.push_back(hist);
    measured_files.push_back(std::string(LOCKSIM_SOURCE_DIR) +
                             "/tests/fixtures/measured/wakeup_rt.trace");
    const size_t series = measured_files.size();  // measured probe series: overlays
    Scenario s = load_scenario(std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/default.toml");
    s.duration_ns = 30 * kMs;
    s.warmup_ns = 2 * kMs;
    s.seeds = {1, 2};
    std::erase_if(s.strategies, [](const StrategySpec &st) {
        return st.name != "rwlock" && st.name != "rcu-cond-dup";
    });
    std::vector<Scenario> points = expand_sweep(s);
    ResultsFile results = run_jobs(s, plan_runs(points), {});
    const size_t simulated = results.runs.size();
    measured::append_runs(results, measured::import_measured(measured_files, {}));
    // A Perfetto-style export whose slices stand for the read side.
    measured::ImportOptions slices;
    slices.design = "perfetto";
    slices.slices = {measured::parse_slice_mapping("--slice", "reader=security_compute_av")};
    measured::append_runs(
        results,
        measured::import_measured(
            {std::string(LOCKSIM_SOURCE_DIR) + "/tests/fixtures/measured/slices.json"}, slices));
    ASSERT_EQ(results.runs.size(), simulated + series + 1);
    ReportOptions o;
    o.plots_script = std::string(LOCKSIM_SOURCE_DIR) + "/analysis/plots.py";
    o.limits["preempt_off.max_ns"] = {100 * kUs, {}};
    o.limits["probe_wakeup.max_ns"] = {200 * kUs, {}};
    ReportOutput out = write_report(results, "results.json", (dir / "out").string(), o);
    json figures = json::parse(read_text(dir / "out" / "figures.json"))["figures"];

    // Every simulated probe histogram carries both measured series, and its limit line.
    size_t overlaid = 0;
    for (const json &f : figures) {
        const std::string stem = f["file"];
        if (f["kind"] != "histogram" || !stem.ends_with("-probe")) continue;
        EXPECT_EQ(f["limits"][0]["value"], 200.0) << stem;
        EXPECT_EQ(f["limits"][0]["label"], "limit 200.0us") << stem;
        if (std::stoul(stem.substr(4)) >= simulated) continue;
        ASSERT_TRUE(f.contains("overlays")) << stem;
        ASSERT_EQ(f["overlays"].size(), series) << stem;
        if (cyclictest) {
            EXPECT_EQ(f["overlays"][0]["label"], "cyclictest");
        }
        EXPECT_EQ(f["overlays"][series - 1]["label"], "wakeup_rt");
        // Every measured sample is drawn, on the run's own bins' axis and width.
        for (const json &overlay : f["overlays"]) {
            uint64_t drawn = 0;
            for (const json &b : overlay["bins"]) {
                drawn += b[2].get<uint64_t>();
                EXPECT_EQ(b[1], f["bins"][0][1]) << stem;
            }
            EXPECT_EQ(drawn, overlay["samples"].get<uint64_t>()) << stem;  // none lost
        }
        ++overlaid;
    }
    EXPECT_EQ(overlaid, simulated);
    // The measured series' own histograms: cyclictest's every cycle, the trace's cause.
    auto probe_figure = [&](size_t run) {
        for (const json &f : figures)
            if (f["file"] == fmt::format("run-{}-probe", run)) return f;
        ADD_FAILURE() << "no probe histogram of run " << run;
        return json();
    };
    if (cyclictest) {
        EXPECT_GT(probe_figure(simulated)["samples"].get<uint64_t>(), 1000u);
    }
    const json trace = probe_figure(simulated + series - 1);
    EXPECT_EQ(trace["worst_cause"]["text"],
              "cyclictest-2389 on CPU#3, woken while setseboo-4711 ran; the longest wait "
              "followed ttwu_do_activate (89 us)");
    EXPECT_EQ(trace["worst"]["x"], 94.0);
    // The read-side slices in the reader spectrum, beside the designs.
    const json reader = [&] {
        for (const json &f : figures)
            if (f["file"] == "spectrum-reader") return f;
        return json();
    }();
    std::set<std::string> lines;
    for (const json &l : reader["lines"])
        lines.insert(l["name"].get<std::string>());
    EXPECT_TRUE(lines.count("perfetto (n=3)")) << reader.dump();
    EXPECT_EQ(lines.size(), 3u) << reader.dump();

    // pick ranks the measured series beside the designs.
    const Pick p = pick(results.summaries("results.json"), o.limits, tail_source(results));
    std::set<std::string> ranked;
    for (const Verdict &v : p.ranked)
        ranked.insert(v.label);
    std::set<std::string> expected_ranked = {"rwlock", "rcu-cond-dup", "wakeup_rt", "perfetto"};
    if (cyclictest) expected_ranked.insert("cyclictest");
    EXPECT_EQ(ranked, expected_ranked);
    for (const Verdict &v : p.ranked)
        if (v.label == "wakeup_rt") {
            ASSERT_EQ(v.checks.size(), 2u);
            EXPECT_FALSE(v.checks[0].measured);  // an ftrace wake-up trace has no section
            EXPECT_TRUE(v.checks[1].measured);
            EXPECT_TRUE(v.checks[1].met);  // 94 us <= 200 us
            EXPECT_FALSE(v.meets);         // not every limit measured
            EXPECT_STREQ(verdict_text(v), "not all measured");
        }

    // The page: the verdict table, the limit lines (in the SVG and named in the caption), the
    // worst wake-up's cause.
    const std::string html = read_text(out.index);
    EXPECT_TRUE(contains(html, "<table id=\"verdict-table\""));
    EXPECT_TRUE(contains(html, "2 of 2"));  // the seeds' spread
    EXPECT_TRUE(contains(read_text(dir / "out" / "run-0-probe.svg"), "id=\"limit-line-0\""));
    EXPECT_TRUE(contains(read_text(dir / "out" / "run-0-probe.svg"), "id=\"measured-0\""));
    if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh adds it)";
    Browser b = load_page(out.index);
    EXPECT_EQ(b.status, 0) << b.log;
    EXPECT_TRUE(console_lines(b.log).empty()) << b.log;
    EXPECT_TRUE(contains(b.dom, "<table id=\"verdict-table\"")) << b.dom.substr(0, 3000);
    EXPECT_TRUE(contains(b.dom, "<td class=\"fail\"><b>fail</b>"));
    EXPECT_TRUE(contains(b.dom, "<td class=\"pass\"><b>pass</b>"));
    EXPECT_TRUE(contains(b.dom, "<td class=\"unmeasured\"><b>not measured</b>"));
    EXPECT_TRUE(contains(b.dom, "The dashed grey line is pick's limit 200.0us"));
    EXPECT_TRUE(contains(b.dom,
                         "Worst wake-up: cyclictest-2389 on CPU#3, woken while "
                         "setseboo-4711 ran"));
    // ... and the simulated design's, named by its section.
    const std::string sim_cause = [&] {
        for (const json &f : figures)
            if (f["file"] == "run-0-probe") return f["worst_cause"]["text"].get<std::string>();
        return std::string();
    }();
    EXPECT_FALSE(sim_cause.empty());
    EXPECT_TRUE(contains(b.dom, "Worst wake-up: " + sim_cause)) << sim_cause;
    EXPECT_TRUE(contains(b.dom, fmt::format("data-images-loaded=\"{}\"", image_count(html))));
    const fs::path png = dir / "page.png";
    ASSERT_EQ(screenshot(out.index, png), 0);
    EXPECT_EQ(png_size(png), (std::pair<uint32_t, uint32_t>{1200, 2400}));
    EXPECT_GT(png_variety(png), 20);  // a rendered page, not a blank one
    fs::remove_all(dir);
    if (!cyclictest) GTEST_SKIP() << "the cyclictest overlay was not checked: " << why;
}

// A real short run of the main job: each simulated probe histogram names what delayed its worst
// wake-up (the section's label and site, or the task) in figures.json, on the page and in the
// page as headless Chromium renders it.
TEST(Report, SimulatedProbeHistogramNamesItsWorstWakeupsCause) {
    fs::path dir = fresh_dir(fmt::format("locksim_report_cause_{}", getpid()));
    Scenario s = load_scenario(std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/default.toml");
    s.duration_ns = 30 * kMs;
    s.warmup_ns = 2 * kMs;
    s.seeds = {1};
    std::erase_if(s.strategies, [](const StrategySpec &st) { return st.name != "rwlock"; });
    std::vector<Scenario> points = expand_sweep(s);
    const ResultsFile results = run_jobs(s, plan_runs(points), {});
    const std::vector<RunSummary> sums = results.summaries("results.json");
    ASSERT_EQ(sums.size(), 1u);
    ReportOptions o;
    o.plots_script = std::string(LOCKSIM_SOURCE_DIR) + "/analysis/plots.py";
    ReportOutput out = write_report(results, "results.json", (dir / "out").string(), o);
    const json figures = json::parse(read_text(dir / "out" / "figures.json"))["figures"];
    const json probe = [&] {
        for (const json &f : figures)
            if (f["file"] == "run-0-probe") return f;
        return json();
    }();
    ASSERT_TRUE(probe.contains("worst_cause")) << probe.dump();
    const json &cause = probe["worst_cause"];
    const json &worst = results.runs[0]["detail"]["wakeup_worst"][0];
    EXPECT_EQ(cause["late_ns"], worst["late_ns"]);
    EXPECT_EQ(cause["late_ns"], sums[0].probe_max_ns);
    const std::string text = cause["text"];
    EXPECT_EQ(text, worst["probe"].get<std::string>() + ": " + sums[0].probe_worst_cause);
    // A section is named by its operation and site; a task by its name.
    // The cause held the probe's CPU while the probe was late: on that CPU, overlapping
    // [due, due + late].
    const kernel::WakeupRecord record = cause.get<kernel::WakeupRecord>();
    if (const kernel::WakeupDelay *d = record.cause()) {
        EXPECT_TRUE(contains(text, d->kind == "task" ? d->task : d->site)) << text;
        EXPECT_EQ(d->cpu, record.cpu);
        EXPECT_LT(d->start, record.due + record.late);
        EXPECT_GT(d->start + d->length, record.due);
    } else {
        EXPECT_TRUE(contains(text, "on time")) << text;  // nothing held the CPU
    }

    EXPECT_TRUE(contains(probe["worst"]["text"].get<std::string>(), text));
    const std::string html = read_text(out.index);
    EXPECT_TRUE(contains(html, "Worst wake-up: " + text)) << text;
    if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh adds it)";
    Browser b = load_page(out.index);
    EXPECT_EQ(b.status, 0) << b.log;
    EXPECT_TRUE(contains(b.dom, "Worst wake-up: " + text)) << text;
    const fs::path png = dir / "page.png";
    ASSERT_EQ(screenshot(out.index, png), 0);
    EXPECT_GT(png_variety(png), 20);
    fs::remove_all(dir);
}
