#include "analysis/measured/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "record/op_names.h"
#include "util/error.h"

namespace locksim::analysis::measured {

using json = nlohmann::json;
using kernel::Histogram;

namespace {

json interval_json(const TracedInterval &t, const std::string &source) {
    json j = {{"cpu", t.cpu},           {"start_ns", 0},    {"length_ns", t.length_ns},
              {"task", t.task},         {"label", t.label}, {"start_site", t.start_site},
              {"end_site", t.end_site}, {"source", source}};
    if (!t.running.empty()) j["running"] = t.running;
    if (!t.longest_gap.empty()) j["longest_gap"] = t.longest_gap;
    return j;
}

struct Metric {
    Histogram h;
    std::vector<int64_t> open;
    json longest = json::array();
};

Censoring censoring(const Metric &m) {
    Censoring c;
    c.open_at_end = m.open.size();
    for (int64_t v : m.open)
        if (v >= m.h.max()) c.max_censored = true;
    return c;
}

// The longest first, at most 20 kept (the rest are in the histogram).
json sorted_longest(json list) {
    std::stable_sort(list.begin(), list.end(), [](const json &a, const json &b) {
        return a.at("length_ns").get<int64_t>() > b.at("length_ns").get<int64_t>();
    });
    if (list.size() > 20) list.erase(list.begin() + 20, list.end());
    return list;
}

json interval_stats(const Metric &m) {
    return {{"length_ns", m.h},
            {"total_ns", m.h.sum()},
            {"longest", sorted_longest(m.longest)},
            {"open_at_end_ns", m.open}};
}

}  // namespace

SliceMapping parse_slice_mapping(const std::string &option, const std::string &text) {
    const size_t eq = text.find('=');
    const std::string metric = text.substr(0, eq == std::string::npos ? 0 : eq);
    static const std::pair<const char *, SliceMetric> kNames[] = {
        {"preempt-off", SliceMetric::PreemptOff},
        {"irqs-off", SliceMetric::IrqsOff},
        {"probe-wakeup", SliceMetric::ProbeWakeup},
        {"toggle", SliceMetric::Toggle},
        {"reader", SliceMetric::Reader}};
    for (const auto &[name, m] : kNames)
        if (metric == name && eq + 1 < text.size()) return {m, text.substr(eq + 1)};
    throw UserError(fmt::format(
        "{}: '{}' is not METRIC=SLICE (METRIC: preempt-off, irqs-off, probe-wakeup, toggle, "
        "reader)",
        option, text));
}

std::string design_of(const std::string &path) {
    std::string stem = std::filesystem::path(path).stem().string();
    return stem.empty() ? path : stem;
}

json measured_run(const std::vector<Measurement> &ms, const std::string &design, size_t index,
                  const std::vector<SliceMapping> &slices) {
    Metric preempt_off, irqs_off, toggle, reader;
    std::map<std::string, Histogram> wakeup;
    std::vector<int64_t> wakeup_open;
    json wakeup_worst = json::array();
    json ops = json::object();
    json sources = json::array();
    auto mapped = [&](const std::string &slice) -> std::vector<SliceMetric> {
        std::vector<SliceMetric> out;
        for (const SliceMapping &m : slices)
            if (m.slice == slice) out.push_back(m.metric);
        return out;
    };
    for (const Measurement &m : ms) {
        sources.push_back({{"file", m.file}, {"format", m.format}, {"facts", m.facts}});
        preempt_off.h.merge(m.preempt_off);
        irqs_off.h.merge(m.irqs_off);
        for (const TracedInterval &t : m.preempt_off_traced)
            preempt_off.longest.push_back(interval_json(t, m.file));
        for (const TracedInterval &t : m.irqs_off_traced)
            irqs_off.longest.push_back(interval_json(t, m.file));
        for (const TracedInterval &t : m.wakeup_traced)
            wakeup_worst.push_back(interval_json(t, m.file));
        for (const auto &[name, h] : m.wakeup)
            wakeup[ms.size() > 1 ? fmt::format("{} ({})", name, design_of(m.file)) : name].merge(h);
        for (const auto &[name, s] : m.slices) {
            json &op = ops[name];
            Histogram h =
                op.contains("latency_ns") ? op["latency_ns"].get<Histogram>() : Histogram{};
            h.merge(s.duration);
            std::vector<int64_t> open = op.contains("open_at_end_ns")
                                            ? op["open_at_end_ns"].get<std::vector<int64_t>>()
                                            : std::vector<int64_t>{};
            open.insert(open.end(), s.open_ns.begin(), s.open_ns.end());
            op = {{"completed", h.count()}, {"latency_ns", h}, {"open_at_end_ns", open}};
            for (SliceMetric metric : mapped(name)) {
                switch (metric) {
                    case SliceMetric::PreemptOff:
                    case SliceMetric::IrqsOff: {
                        Metric &to = metric == SliceMetric::PreemptOff ? preempt_off : irqs_off;
                        to.h.merge(s.duration);
                        to.open.insert(to.open.end(), s.open_ns.begin(), s.open_ns.end());
                        if (s.duration.count())
                            to.longest.push_back({{"cpu", -1},
                                                  {"start_ns", 0},
                                                  {"length_ns", s.duration.max()},
                                                  {"task", ""},
                                                  {"label", name},
                                                  {"start_site", name},
                                                  {"end_site", name},
                                                  {"source", m.file}});
                        break;
                    }
                    case SliceMetric::ProbeWakeup:
                        wakeup[name].merge(s.duration);
                        wakeup_open.insert(wakeup_open.end(), s.open_ns.begin(), s.open_ns.end());
                        break;
                    case SliceMetric::Toggle:
                        toggle.h.merge(s.duration);
                        toggle.open.insert(toggle.open.end(), s.open_ns.begin(), s.open_ns.end());
                        break;
                    case SliceMetric::Reader:
                        reader.h.merge(s.duration);
                        reader.open.insert(reader.open.end(), s.open_ns.begin(), s.open_ns.end());
                        break;
                }
            }
        }
    }
    // A toggle slice is the boolean commit: the report and pick find it under the commit's name.
    if (toggle.h.count() || !toggle.open.empty())
        ops[kernel::op::kSetBools] = {{"completed", toggle.h.count()},
                                      {"latency_ns", toggle.h},
                                      {"open_at_end_ns", toggle.open}};
    RunSummary s;
    s.strategy = "measured";
    s.label = design;
    s.platform = "measured";
    s.preempt_off_max_ns = preempt_off.h.max();
    s.preempt_off_p99_ns = preempt_off.h.value_at_percentile(99);
    s.preempt_off_p50_ns = preempt_off.h.value_at_percentile(50);
    s.preempt_off_count = preempt_off.h.count();
    s.preempt_off_open = censoring(preempt_off);
    const json longest = sorted_longest(preempt_off.longest);
    if (!longest.empty()) {
        s.preempt_off_worst_label = longest.front().at("label");
        s.preempt_off_worst_site = longest.front().at("start_site");
    }
    s.irqs_off_max_ns = irqs_off.h.max();
    s.irqs_off_p99_ns = irqs_off.h.value_at_percentile(99);
    s.irqs_off_count = irqs_off.h.count();
    s.irqs_off_open = censoring(irqs_off);
    Metric probe;
    for (const auto &[name, h] : wakeup)
        probe.h.merge(h);
    probe.open = wakeup_open;
    s.probe_max_ns = probe.h.max();
    s.probe_p99_ns = probe.h.value_at_percentile(99);
    s.probe_p50_ns = probe.h.value_at_percentile(50);
    s.probe_count = probe.h.count();
    s.probe_open = censoring(probe);
    s.toggle_count = toggle.h.count();
    s.toggle_p50_ns = toggle.h.value_at_percentile(50);
    s.toggle_max_ns = toggle.h.max();
    s.toggle_mean_ns = static_cast<int64_t>(toggle.h.mean());
    s.toggle_open = censoring(toggle);
    s.reader_count = reader.h.count();
    s.reader_p50_ns = reader.h.value_at_percentile(50);
    s.reader_p99_ns = reader.h.value_at_percentile(99);
    s.reader_max_ns = reader.h.max();
    s.reader_open = censoring(reader);
    json run = summary_to_json(s);
    run["index"] = index;
    json measured = {{"sources", std::move(sources)}};
    for (const SliceMapping &m : slices)
        if (m.metric == SliceMetric::Reader && ops.contains(m.slice)) {
            measured["reader_op"] = m.slice;  // the report's reader spectrum draws it
            break;
        }
    json wakeup_open_json = json::object();
    for (size_t i = 0; i < wakeup_open.size(); ++i)
        wakeup_open_json[fmt::format("open {}", i)] = wakeup_open[i];
    run["detail"] = {{"platform", "measured"},
                     {"measured", std::move(measured)},
                     {"preempt_off", interval_stats(preempt_off)},
                     {"irqs_off", interval_stats(irqs_off)},
                     {"wakeup_latency_ns", wakeup},
                     {"wakeup_open_at_end_ns", wakeup_open_json},
                     {"wakeup_worst", sorted_longest(wakeup_worst)},
                     {"ops", ops}};
    return run;
}

ResultsFile import_measured(const std::vector<std::string> &paths, const ImportOptions &o) {
    if (paths.empty()) throw UserError("import: no measured files given");
    ResultsFile r;
    std::vector<Measurement> all;
    json files = json::array();
    for (const std::string &p : paths) {
        all.push_back(read_measured(p));
        files.push_back({{"file", p}, {"format", all.back().format}});
    }
    if (!o.design.empty()) {
        r.runs.push_back(measured_run(all, o.design, 0, o.slices));
    } else {
        // One series per file, named by the file without its extension (with it when two
        // files share a stem, as cyclictest's --histfile and --json of one run do).
        for (size_t i = 0; i < all.size(); ++i) {
            std::string d = design_of(all[i].file);
            for (size_t k = 0; k < all.size(); ++k)
                if (k != i && design_of(all[k].file) == d)
                    d = std::filesystem::path(all[i].file).filename().string();
            r.runs.push_back(measured_run({all[i]}, d, i, o.slices));
        }
    }
    for (const SliceMapping &m : o.slices) {
        bool found = false;
        for (const json &run : r.runs)
            found = found || run.at("detail").at("ops").contains(m.slice);
        if (!found)
            throw UserError(
                fmt::format("--slice: no slice named '{}' in the files given", m.slice));
    }
    r.scenario = {{"name", "measured"},
                  {"description", "Latencies measured on a real kernel, imported by locksim"},
                  {"measured_files", std::move(files)}};
    return r;
}

void append_runs(ResultsFile &results, const ResultsFile &measured) {
    if (measured.runs.empty()) return;
    int64_t next = 0;
    for (const json &run : results.runs)
        next = std::max(next, run.value("index", int64_t{0}) + 1);
    for (json run : measured.runs) {
        run["index"] = next++;
        results.runs.push_back(std::move(run));
    }
    json files = results.scenario.value("measured_files", json::array());
    for (const json &f : measured.scenario.value("measured_files", json::array()))
        files.push_back(f);
    results.scenario["measured_files"] = std::move(files);
}

}  // namespace locksim::analysis::measured
