#include "analysis/results_file.h"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "analysis/metrics.h"
#include "util/error.h"
#include "util/json_text.h"
#include "util/read_file.h"

namespace locksim::analysis {

using nlohmann::json;

std::string RunSummary::point_text() const {
    std::string out;
    for (const auto &[field, value] : point)
        out += (out.empty() ? "" : " ") + field + "=" + value;
    return out;
}

namespace {

// "priced": {"families": [...], "preempt_off": {"count": N, "items": [[len, work, memory,
// primitive, grace_period], ...]}, "irqs_off": ..., "toggle": ...}
json priced_to_json(const kernel::PricedRecord &r) {
    json j = {{"families", kernel::kPricedFamilies}};
    for (const auto &[name, list] : kernel::kPricedKinds) {
        json items = json::array();
        for (const kernel::PricedItem &i : (r.*list).items) {
            json row = {i.len};
            for (int64_t f : i.family)
                row.push_back(f);
            items.push_back(std::move(row));
        }
        j[name] = {{"count", (r.*list).count}, {"items", std::move(items)}};
    }
    return j;
}

kernel::PricedRecord priced_from_json(const json &j, const std::string &where) {
    auto bad = [&](const std::string &why) {
        return UserError(fmt::format("{}: 'priced' {}", where, why));
    };
    if (!j.is_object() || j.value("families", json()) != json(kernel::kPricedFamilies))
        throw bad(fmt::format("must name the families {}", json(kernel::kPricedFamilies).dump()));
    kernel::PricedRecord r;
    for (const auto &[name, list] : kernel::kPricedKinds) {
        const json &l = j.value(name, json());
        const json count = l.is_object() ? l.value("count", json()) : json();
        if (!count.is_number_integer() || count.get<int64_t>() < 0 ||
            !l.value("items", json()).is_array())
            throw bad(fmt::format("'{}' needs a count and items", name));
        kernel::PricedTop &top = r.*list;
        top.count = count.get<uint64_t>();
        for (const json &row : l["items"]) {
            if (!row.is_array() || row.size() != 1 + kernel::kPricedFamilies.size())
                throw bad(fmt::format("'{}': an item is [length, one time per family]", name));
            kernel::PricedItem item;
            int64_t sum = 0;
            for (size_t k = 0; k < row.size(); ++k) {
                if (!row[k].is_number_integer() || row[k].get<int64_t>() < 0)
                    throw bad(fmt::format("'{}': times are non-negative integers", name));
                const int64_t v = row[k].get<int64_t>();
                (k == 0 ? item.len : item.family[k - 1]) = v;
                if (k > 0 && v > item.len - sum)  // no sum that overflows
                    throw bad(fmt::format("'{}': an item's families exceed its length", name));
                if (k > 0) sum += v;
            }
            if (!top.items.empty() && item.len > top.items.back().len)
                throw bad(fmt::format("'{}': items must be longest first", name));
            top.items.push_back(item);
        }
        if (top.items.size() > top.count)
            throw bad(fmt::format("'{}': more items than its count", name));
    }
    return r;
}

}  // namespace

json summary_to_json(const RunSummary &s) {
    json point = json::object();
    for (const auto &[f, v] : s.point)
        point[f] = v;
    json kinds = json::object();
    for (const auto &[k, n] : s.violation_kinds)
        kinds[k] = n;
    json j = {{"strategy", s.strategy}, {"label", s.label}, {"platform", s.platform},
              {"seed", s.seed},         {"point", point},   {"violation_kinds", kinds}};
    if (!s.early_stop.empty()) j["early_stop"] = s.early_stop;
    if (!s.priced.empty()) j["priced"] = priced_to_json(s.priced);
    for (const Metric &m : metrics()) {
        json &at = m.group ? j[m.group] : j;
        at[m.key] = std::visit([](const auto &v) { return json(v); }, get(s, m));
    }
    return j;
}

namespace {

// Reads j[a][b] (or j[a] when b is empty) as T, naming the key path in the error.
class Reader {
  public:
    Reader(const json &j, std::string where) : j_(j), where_(std::move(where)) {}

    template <class T>
    T get(const char *a, const char *b = nullptr) const {
        const json *n = &j_;
        std::string path = a;
        n = step(*n, a, path);
        if (b) {
            path += std::string(".") + b;
            n = step(*n, b, path);
        }
        try {
            return n->get<T>();
        } catch (const json::exception &) {
            throw UserError(fmt::format("{}: '{}' has the wrong type", where_, path));
        }
    }

  private:
    const json *step(const json &n, const char *key, const std::string &path) const {
        if (!n.is_object() || !n.contains(key))
            throw UserError(fmt::format("{}: missing '{}'", where_, path));
        return &n.at(key);
    }
    const json &j_;
    std::string where_;
};

}  // namespace

RunSummary summary_from_json(const json &j, const std::string &where) {
    Reader r(j, where);
    RunSummary s;
    s.strategy = r.get<std::string>("strategy");
    s.label = r.get<std::string>("label");
    s.platform = r.get<std::string>("platform");
    s.seed = r.get<uint64_t>("seed");
    const json point = r.get<json>("point");
    for (const auto &[f, v] : point.items()) {
        if (!v.is_string())
            throw UserError(fmt::format("{}: 'point.{}' must be a string", where, f));
        s.point.emplace_back(f, v.get<std::string>());
    }
    if (auto it = j.find("early_stop"); it != j.end()) {
        if (!it->is_string())
            throw UserError(fmt::format("{}: 'early_stop' must be a metric's path", where));
        s.early_stop = it->get<std::string>();
    }
    if (auto it = j.find("priced"); it != j.end()) s.priced = priced_from_json(*it, where);
    const json kinds = r.get<json>("violation_kinds");
    for (const auto &[k, v] : kinds.items()) {
        if (!v.is_number_unsigned())
            throw UserError(fmt::format("{}: 'violation_kinds.{}' must be a count", where, k));
        s.violation_kinds.emplace_back(k, v.get<uint64_t>());
    }
    // Each metric as the type its field has; a derived one must agree with the others.
    const RunSummary zero;
    std::vector<std::pair<const Metric *, Value>> derived;
    for (const Metric &m : metrics()) {
        const Value read = std::visit(
            [&](const auto &z) -> Value {
                using T = std::decay_t<decltype(z)>;
                return m.group ? r.get<T>(m.group, m.key) : r.get<T>(m.key);
            },
            get(zero, m));
        if (std::holds_alternative<Derived>(m.field))
            derived.emplace_back(&m, read);
        else
            set(s, m, read);
    }
    for (const auto &[m, read] : derived)
        if (get(s, *m) != read)
            throw UserError(fmt::format("{}: '{}' disagrees with the figures it is derived from",
                                        where, m->path()));
    return s;
}

std::vector<RunSummary> ResultsFile::summaries(const std::string &where) const {
    std::vector<RunSummary> out;
    for (size_t i = 0; i < runs.size(); ++i)
        out.push_back(summary_from_json(runs[i], fmt::format("{}: run {}", where, i)));
    return out;
}

json ResultsFile::to_json() const {
    return {{"schema", kResultsSchema}, {"scenario", scenario}, {"runs", runs}};
}

ResultsFile load_results(const std::string &path) {
    std::string text = read_whole_file(path, "results file");
    json j = parse_json_text(text, path);
    if (!j.is_object() || !j.contains("schema") || j["schema"] != kResultsSchema)
        throw UserError(fmt::format("{}: not a locksim results file (expected \"schema\": \"{}\")",
                                    path, kResultsSchema));
    if (!j.contains("runs") || !j["runs"].is_array())
        throw UserError(fmt::format("{}: missing the 'runs' array", path));
    ResultsFile r;
    r.scenario = j.value("scenario", json::object());
    for (auto &run : j["runs"])
        r.runs.push_back(std::move(run));
    r.summaries(path);  // validates every run
    return r;
}

Plan planned_runs(const ResultsFile &r) {
    Plan plan;
    const json &sc = r.scenario;
    if (sc.contains("shard")) {
        plan.complete = false;
        plan.why = fmt::format("it is shard {} of a sweep", sc.at("shard").dump());
    } else if (!sc.value("complete", true)) {
        plan.complete = false;
        plan.why = "it says \"complete\": false (interrupted, or a partial merge)";
    }
    if (auto it = sc.find("strategies"); it != sc.end() && it->is_array())
        for (const json &l : *it)
            if (l.is_string()) plan.labels.push_back(l.get<std::string>());
    if (auto it = sc.find("seeds"); it != sc.end() && it->is_array())
        for (const json &s : *it)
            if (s.is_number_integer() && s.get<int64_t>() >= 0)
                plan.seeds.push_back(s.get<uint64_t>());
    plan.points.emplace_back();
    if (auto it = sc.find("sweep"); it != sc.end() && it->is_object())
        for (const auto &[field, values] : it->items()) {
            if (!values.is_array()) continue;
            std::vector<std::vector<std::pair<std::string, std::string>>> grown;
            for (const auto &p : plan.points)
                for (const json &v : values) {
                    // A run's point shows a value without its TOML quotes (expand_sweep).
                    std::string shown = v.is_string() ? v.get<std::string>() : v.dump();
                    if (shown.size() >= 2 && (shown.front() == '\'' || shown.front() == '"') &&
                        shown.back() == shown.front())
                        shown = shown.substr(1, shown.size() - 2);
                    grown.push_back(p);
                    grown.back().emplace_back(field, shown);
                }
            plan.points = std::move(grown);
        }
    // Points that are not a grid (robust's cost worlds): listed one by one, each a list of
    // [field, value] pairs in the order a run's point has them.
    if (auto it = sc.find("points"); it != sc.end() && it->is_array()) {
        plan.points.clear();
        for (const json &p : *it) {
            if (!p.is_array()) continue;
            plan.points.emplace_back();
            for (const json &fv : p)
                if (fv.is_array() && fv.size() == 2 && fv[0].is_string() && fv[1].is_string())
                    plan.points.back().emplace_back(fv[0].get<std::string>(),
                                                    fv[1].get<std::string>());
        }
    }
    return plan;
}

void save_results(const ResultsFile &r, const std::string &path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("{}: cannot write the results file", path));
    out << r.to_json().dump(1) << '\n';
    if (!out) throw UserError(fmt::format("{}: write failed", path));
}

namespace {

// The shard set of the parts: N and which indices are there. A file without "shard" is the
// whole set (0/1).
void check_shard_set(const std::vector<ResultsFile> &parts, const std::vector<std::string> &names,
                     bool allow_partial, json &merged_scenario) {
    size_t total = 0;
    std::vector<char> seen;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (!allow_partial && !parts[i].scenario.value("complete", true))
            throw UserError(fmt::format(
                "{}: incomplete (interrupted before every run finished; --allow-partial joins it "
                "and marks the result incomplete)",
                names[i]));
        std::string text = parts[i].scenario.value("shard", std::string("0/1"));
        size_t index = 0, n = 0;
        char slash = 0;
        std::istringstream in(text);
        if (!(in >> index >> slash >> n) || slash != '/' || n == 0 || index >= n || !in.eof())
            throw UserError(fmt::format("{}: \"shard\": '{}' is not I/N", names[i], text));
        if (total && n != total)
            throw UserError(fmt::format("{}: shard {} belongs to a set of {}, not {}", names[i],
                                        text, n, total));
        total = n;
        seen.resize(n);
        if (seen[index])
            throw UserError(fmt::format("{}: shard {} is given twice", names[i], text));
        seen[index] = 1;
    }
    std::string missing;
    for (size_t k = 0; k < total; ++k)
        if (!seen[k]) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", k);
    if (missing.empty()) return;
    if (!allow_partial)
        throw UserError(
            fmt::format("merge: shards {} of {} are missing (--allow-partial joins "
                        "the others and marks the result incomplete)",
                        missing, total));
    merged_scenario["complete"] = false;
}

}  // namespace

ResultsFile merge_results(const std::vector<ResultsFile> &parts,
                          const std::vector<std::string> &names, bool allow_partial) {
    if (parts.empty()) throw UserError("merge: no results files given");
    ResultsFile merged;
    merged.scenario = parts[0].scenario;
    merged.scenario.erase("shard");
    for (size_t i = 0; i < parts.size(); ++i) {
        json sc = parts[i].scenario;
        sc.erase("shard");
        if (sc != merged.scenario)
            throw UserError(
                fmt::format("{}: comes from a different scenario than {}", names[i], names[0]));
        for (const auto &run : parts[i].runs)
            merged.runs.push_back(run);
    }
    std::stable_sort(merged.runs.begin(), merged.runs.end(), [](const json &a, const json &b) {
        return a.value("index", int64_t{0}) < b.value("index", int64_t{0});
    });
    for (size_t i = 1; i < merged.runs.size(); ++i) {
        if (merged.runs[i].value("index", int64_t{-1}) ==
            merged.runs[i - 1].value("index", int64_t{-2}))
            throw UserError(fmt::format("merge: run {} appears in two shards",
                                        merged.runs[i].value("index", int64_t{0})));
    }
    check_shard_set(parts, names, allow_partial, merged.scenario);
    return merged;
}

}  // namespace locksim::analysis
