#include "analysis/margin.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/metrics.h"
#include "analysis/table.h"
#include "util/error.h"
#include "util/name_table.h"

namespace locksim::analysis {

using nlohmann::json;

namespace {

// `x` rounded to `digits` significant digits.
double round_significant(double x, int digits) {
    if (x == 0) return 0;
    const double scale =
        std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
    return std::round(x * scale) / scale;
}

std::string_view kind_name(KeyKind k) {
    static const NameTable<KeyKind> names = {{KeyKind::Integer, "integer"},
                                             {KeyKind::Real, "real"},
                                             {KeyKind::Duration, "duration"},
                                             {KeyKind::List, "list"}};
    return names.name(k);
}

std::string limit_name(const std::string &path) {
    return find_metric(path)->pick.what;
}

// The pick at a value, as the pick-change line names it.
std::string pick_name(const std::string &pick) {
    return pick == "none" ? "none (no design meets every limit)" : pick;
}

}  // namespace

KeyValue MarginAxis::value(double x) const {
    KeyValue v;
    v.x = x;
    switch (kind) {
        case KeyKind::Integer:
            v.x = static_cast<double>(std::llround(x));
            v.toml = v.shown = fmt::format("{}", std::llround(x));
            break;
        case KeyKind::Real: {
            v.toml = v.shown = fmt::format("{}", x);
            // A TOML float needs its point: 2 would be read as an integer.
            if (v.toml.find_first_of(".eEn") == std::string::npos) v.toml = v.shown += ".0";
            break;
        }
        case KeyKind::Duration:
            v.x = static_cast<double>(std::llround(x));
            v.shown = exact_duration(std::llround(x));
            v.toml = "\"" + v.shown + "\"";
            break;
        case KeyKind::List: {
            const auto i = static_cast<size_t>(std::llround(x));
            v.x = static_cast<double>(i);
            v.toml = list.at(i);
            v.shown = list_shown.at(i);
            break;
        }
    }
    return v;
}

std::vector<double> MarginAxis::scan() const {
    std::vector<double> xs;
    if (kind == KeyKind::List) {
        for (size_t i = 0; i < list.size(); ++i)
            xs.push_back(static_cast<double>(i));
        return xs;
    }
    const int n = std::max(steps, 2);
    for (int i = 0; i < n; ++i) {
        double x = i == n - 1 ? hi : lo + (hi - lo) * i / (n - 1);
        if (kind == KeyKind::Real && i > 0 && i < n - 1) x = round_significant(x, 6);
        x = value(x).x;
        if (xs.empty() || x > xs.back()) xs.push_back(x);
    }
    return xs;
}

std::optional<double> MarginAxis::middle(double a, double b) const {
    if (kind == KeyKind::Integer || kind == KeyKind::List) {
        if (b - a <= 1) return std::nullopt;
        return std::floor((a + b) / 2);
    }
    if (b - a <= tolerance * std::max(std::fabs(a), std::fabs(b))) return std::nullopt;
    const double mid = (a + b) / 2;
    // The roundest value of the middle half: 45ms rather than 45.3125ms.
    for (int digits = 1; digits <= 15; ++digits) {
        const double v = value(round_significant(mid, digits)).x;
        if (v > a && v < b && v >= a + (b - a) / 4 && v <= b - (b - a) / 4) return v;
    }
    const double v = value(mid).x;
    if (v > a && v < b) return v;
    return std::nullopt;  // a duration interval of adjacent nanoseconds
}

namespace {

// The search's state: the runs so far and each value's judgement.
class Search {
  public:
    Search(const MarginAxis &axis, const Limits &limits, const std::vector<std::string> &labels,
           ResultsFile results, const MarginRunner &run)
        : axis_(axis), limits_(limits), labels_(labels), results_(std::move(results)), run_(run) {}

    // Runs what `want` holds that has not run, then judges the values it touched.
    void ensure(const std::vector<std::pair<double, std::string>> &want) {
        std::vector<MarginRun> batch;
        std::set<double> touched;
        for (const auto &[x, label] : want) {
            const KeyValue v = axis_.value(x);
            if (!ran_.insert({v.shown, label}).second) continue;
            values_.emplace(v.x, v);
            batch.push_back({v, label});
            touched.insert(v.x);
        }
        if (batch.empty()) return;
        for (json &r : run_(batch)) {
            r["index"] = results_.runs.size();
            summaries_.push_back(summary_from_json(r, "margin run"));
            results_.runs.push_back(std::move(r));
        }
        for (double x : touched)
            judge(x);
    }
    void ensure_all(const std::vector<double> &xs) {
        std::vector<std::pair<double, std::string>> want;
        for (double x : xs)
            for (const std::string &l : labels_)
                want.emplace_back(x, l);
        ensure(want);
    }

    const MarginCell &cell(double x, size_t design) const { return cells_.at(x).at(design); }
    bool all_ran(double x) const {
        const auto &c = cells_.at(x);
        return std::all_of(c.begin(), c.end(), [](const MarginCell &m) { return m.ran; });
    }
    const std::string &pick_at(double x) const { return picks_.at(x); }
    const std::map<double, KeyValue> &values() const { return values_; }
    ResultsFile take_results() { return std::move(results_); }

  private:
    void judge(double x) {
        const KeyValue &v = values_.at(x);
        PickScope scope;
        scope.point = {{axis_.key, v.shown}};
        const Pick p = pick(summaries_, limits_, tail_source(results_), scope);
        std::vector<MarginCell> &row = cells_[x];
        row.assign(labels_.size(), {});
        for (const Verdict &verdict : p.ranked) {
            const auto it = std::find(labels_.begin(), labels_.end(), verdict.label);
            if (it == labels_.end() || verdict.runs == 0) continue;
            MarginCell &c = row[static_cast<size_t>(it - labels_.begin())];
            c.ran = true;
            c.meets_all = verdict.meets;
            c.violations = verdict.violations;
            size_t k = 0;
            for (const auto &[path, limit] : limits_) {
                const LimitCheck &check = verdict.checks.at(k++);
                c.met.push_back(check.met);
                // The figure is in whole nanoseconds or bytes (ratio is figure / limit).
                c.figure.push_back(std::round(check.ratio * static_cast<double>(limit.value)));
            }
        }
        picks_[x] = p.any_meets() ? p.ranked.front().label : "none";
    }

    const MarginAxis &axis_;
    const Limits &limits_;
    const std::vector<std::string> &labels_;
    ResultsFile results_;
    const MarginRunner &run_;
    std::vector<RunSummary> summaries_;
    std::set<std::pair<std::string, std::string>> ran_;
    std::map<double, KeyValue> values_;
    std::map<double, std::vector<MarginCell>> cells_;
    std::map<double, std::string> picks_;
};

// One bisection: a design's limit (design, limit) or the pick (design = npos), between two
// values whose verdicts differ; `end` is where a pick search continues after a change.
struct Bisection {
    size_t design = std::string::npos, limit = 0;
    double lo = 0, hi = 0, end = 0;
    std::optional<double> mid;
};

// Adjacent values among `xs` where `verdict` differs.
template <typename F>
std::vector<std::pair<double, double>> changes_along(const std::vector<double> &xs, F verdict) {
    std::vector<std::pair<double, double>> out;
    for (size_t i = 0; i + 1 < xs.size(); ++i)
        if (verdict(xs[i]) != verdict(xs[i + 1])) out.emplace_back(xs[i], xs[i + 1]);
    return out;
}

}  // namespace

Margin find_margin(const MarginAxis &axis, const Limits &limits,
                   const std::vector<std::string> &labels, ResultsFile results,
                   const MarginRunner &run) {
    if (limits.empty())
        throw UserError("margin needs a limit to search for (--max-preempt-off, --max-toggle ...)");
    Search s(axis, limits, labels, std::move(results), run);
    const std::vector<double> scan = axis.scan();
    s.ensure_all(scan);
    auto met = [&](size_t d, size_t k) {
        return [&s, d, k](double x) { return static_cast<bool>(s.cell(x, d).met.at(k)); };
    };
    auto picked = [&](double x) { return s.pick_at(x); };
    std::vector<Bisection> active;
    const bool bisect = axis.kind != KeyKind::List;
    for (size_t d = 0; d < labels.size(); ++d)
        for (size_t k = 0; k < limits.size(); ++k)
            if (const auto c = changes_along(scan, met(d, k)); bisect && c.size() == 1)
                active.push_back({d, k, c[0].first, c[0].second, c[0].second, {}});
    if (bisect)
        for (const auto &[lo, hi] : changes_along(scan, picked))
            active.push_back({std::string::npos, 0, lo, hi, hi, {}});
    // Rounds: every search's next value, run together.
    while (!active.empty()) {
        std::vector<std::pair<double, std::string>> want;
        for (Bisection &b : active) {
            b.mid = axis.middle(b.lo, b.hi);
            if (!b.mid) continue;
            if (b.design == std::string::npos)
                for (const std::string &l : labels)
                    want.emplace_back(*b.mid, l);
            else
                want.emplace_back(*b.mid, labels[b.design]);
        }
        s.ensure(want);
        std::vector<Bisection> next;
        for (Bisection &b : active) {
            if (b.mid) {
                const double x = *b.mid;
                const bool same = b.design == std::string::npos
                                      ? picked(x) == picked(b.lo)
                                      : met(b.design, b.limit)(x) == met(b.design, b.limit)(b.lo);
                (same ? b.lo : b.hi) = x;
                next.push_back(b);
            } else if (b.design == std::string::npos && b.hi < b.end &&
                       picked(b.hi) != picked(b.end)) {
                // A pick between the two found another change before the end: search it too.
                next.push_back({std::string::npos, 0, b.hi, b.end, b.end, {}});
            }
        }
        active = std::move(next);
    }

    Margin m;
    m.axis = axis;
    m.limits = limits;
    m.labels = labels;
    std::vector<double> xs;
    for (const auto &[x, v] : s.values()) {
        xs.push_back(x);
        m.values.push_back(v);
        std::vector<MarginCell> row;
        for (size_t d = 0; d < labels.size(); ++d)
            row.push_back(s.cell(x, d));
        m.cells.push_back(std::move(row));
        m.pick_at.push_back(s.all_ran(x) ? s.pick_at(x) : "");
    }
    auto at = [&](double x) { return s.values().at(x); };
    for (size_t d = 0; d < labels.size(); ++d) {
        std::vector<double> mine;
        for (double x : xs)
            if (s.cell(x, d).ran) mine.push_back(x);
        size_t k = 0;
        for (const auto &[path, limit] : limits) {
            Crossover c{.label = labels[d], .limit = path};
            const auto scanned = changes_along(scan, met(d, k));
            c.method = bisect && scanned.size() == 1 ? "bisection" : "scan";
            // Not monotone along the scan: the scan's changes, as they were found (values run
            // for other searches are left out of them).
            for (const auto &[lo, hi] : changes_along(scanned.size() > 1 ? scan : mine, met(d, k)))
                c.changes.push_back({.lo = at(lo),
                                     .hi = at(hi),
                                     .met_lo = met(d, k)(lo),
                                     .figure_lo = s.cell(lo, d).figure.at(k),
                                     .figure_hi = s.cell(hi, d).figure.at(k)});
            c.monotone = c.changes.size() <= 1;
            c.kind = !c.changes.empty()   ? Crossover::Kind::Changes
                     : met(d, k)(mine[0]) ? Crossover::Kind::Meets
                                          : Crossover::Kind::MeetsNowhere;
            m.crossovers.push_back(std::move(c));
            ++k;
        }
    }
    std::vector<double> every;
    for (double x : xs)
        if (s.all_ran(x)) every.push_back(x);
    for (const auto &[lo, hi] : changes_along(every, picked))
        m.pick_changes.push_back(
            {.lo = at(lo), .hi = at(hi), .from = picked(lo), .to = picked(hi)});
    m.pick_method = bisect ? "bisection" : "scan";
    m.results = s.take_results();
    return m;
}

std::string format_margin(const Margin &m) {
    const MarginAxis &a = m.axis;
    std::string out;
    if (a.kind == KeyKind::List)
        out += fmt::format("margin: {} over {} values ({}), scanned\n", a.key, a.list.size(),
                           fmt::format("{} to {}", a.list_shown.front(), a.list_shown.back()));
    else
        out += fmt::format(
            "margin: {} from {} to {} ({}): a scan of {} values, then bisection {}\n", a.key,
            a.value(a.lo).shown, a.value(a.hi).shown, kind_name(a.kind), a.scan().size(),
            a.kind == KeyKind::Integer ? std::string("to adjacent integers")
                                       : fmt::format("to {}% of the value", a.tolerance * 100));
    out += fmt::format("limits: {}\n", limits_text(m.limits));
    size_t wd = 6, wl = 5;
    for (const Crossover &c : m.crossovers) {
        wd = std::max(wd, c.label.size());
        wl = std::max(wl, limit_name(c.limit).size());
    }
    out += fmt::format("{:<{}}  {:<{}}  where it stops meeting the limit\n", "design", wd, "limit",
                       wl);
    auto side = [&](const KeyValue &v, const std::string &path, double figure) {
        return fmt::format("{} ({})", v.shown, metric_figure_text(path, figure));
    };
    for (const Crossover &c : m.crossovers) {
        std::string text;
        if (c.kind == Crossover::Kind::Meets) {
            text = "meets over the whole range";
        } else if (c.kind == Crossover::Kind::MeetsNowhere) {
            text = "meets nowhere in the range";
        } else {
            if (!c.monotone) text = "not monotone: ";
            for (size_t i = 0; i < c.changes.size(); ++i) {
                const MarginChange &ch = c.changes[i];
                text += fmt::format("{}{} between {} and {}", i ? "; " : "",
                                    ch.met_lo ? "stops meeting" : "starts meeting",
                                    side(ch.lo, c.limit, ch.figure_lo),
                                    side(ch.hi, c.limit, ch.figure_hi));
            }
            text += fmt::format(" [{}]", c.method);
        }
        out += fmt::format("{:<{}}  {:<{}}  {}\n", c.label, wd, limit_name(c.limit), wl, text);
    }
    if (m.pick_changes.empty()) {
        std::string only;
        for (const std::string &p : m.pick_at)
            if (!p.empty()) only = p;
        out += only == "none" ? "no design meets every limit anywhere in the range\n"
                              : fmt::format("the pick is {} over the whole range\n", only);
    } else {
        for (const MarginChange &ch : m.pick_changes)
            out += fmt::format("the pick changes from {} to {} between {} and {} [{}]\n",
                               pick_name(ch.from), pick_name(ch.to), ch.lo.shown, ch.hi.shown,
                               m.pick_method);
    }
    std::set<uint64_t> seeds;
    for (const RunSummary &r : m.results.summaries("margin"))
        seeds.insert(r.seed);
    out += fmt::format("runs: {} ({} values of {}, {} design{}, {} seed{} each)\n",
                       m.results.runs.size(), m.values.size(), a.key, m.labels.size(),
                       m.labels.size() == 1 ? "" : "s", seeds.size(), seeds.size() == 1 ? "" : "s");
    return out;
}

json margin_json(const Margin &m, const std::string &results_name) {
    const MarginAxis &a = m.axis;
    auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    json limits = json::object();
    for (const auto &[path, l] : m.limits)
        limits[path] = {{"option", find_metric(path)->pick.option},
                        {"name", limit_name(path)},
                        {"value", l.value},
                        {"probability", l.probability ? json(*l.probability) : json(nullptr)}};
    json values = json::array();
    for (size_t i = 0; i < m.values.size(); ++i) {
        json designs = json::object();
        for (size_t d = 0; d < m.labels.size(); ++d) {
            const MarginCell &c = m.cells[i][d];
            if (!c.ran) continue;
            json per = json::object();
            size_t k = 0;
            for (const auto &[path, l] : m.limits) {
                per[path] = {{"figure", number(c.figure[k])}, {"met", static_cast<bool>(c.met[k])}};
                ++k;
            }
            designs[m.labels[d]] = {
                {"meets", c.meets_all}, {"violations", c.violations}, {"limits", per}};
        }
        values.push_back({{"value", m.values[i].shown},
                          {"x", m.values[i].x},
                          {"pick", m.pick_at[i].empty() ? json(nullptr) : json(m.pick_at[i])},
                          {"designs", designs}});
    }
    json crossovers = json::array();
    for (const Crossover &c : m.crossovers) {
        json changes = json::array();
        for (const MarginChange &ch : c.changes)
            changes.push_back({{"lo", ch.lo.shown},
                               {"hi", ch.hi.shown},
                               {"lo_x", ch.lo.x},
                               {"hi_x", ch.hi.x},
                               {"met_at_lo", ch.met_lo},
                               {"figure_lo", number(ch.figure_lo)},
                               {"figure_hi", number(ch.figure_hi)}});
        crossovers.push_back(
            {{"design", c.label},
             {"limit", c.limit},
             {"kind", c.kind == Crossover::Kind::Meets          ? "meets over the whole range"
                      : c.kind == Crossover::Kind::MeetsNowhere ? "meets nowhere in the range"
                                                                : "changes"},
             {"method", c.method},
             {"monotone", c.monotone},
             {"changes", changes}});
    }
    json picks = json::array();
    for (const MarginChange &ch : m.pick_changes)
        picks.push_back(
            {{"lo", ch.lo.shown}, {"hi", ch.hi.shown}, {"from", ch.from}, {"to", ch.to}});
    json axis = {{"key", a.key},
                 {"kind", kind_name(a.kind)},
                 {"steps", a.steps},
                 {"tolerance", a.tolerance}};
    if (a.kind == KeyKind::List)
        axis["values"] = a.list_shown;
    else
        axis["range"] = {a.value(a.lo).shown, a.value(a.hi).shown};
    return {{"margin", axis},
            {"limits", limits},
            {"designs", m.labels},
            {"results", results_name},
            {"runs", m.results.runs.size()},
            {"values", values},
            {"crossovers", crossovers},
            {"pick_method", m.pick_method},
            {"pick_changes", picks}};
}

}  // namespace locksim::analysis
