#include "analysis/pick.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "analysis/duration_advice.h"
#include "analysis/held_tail.h"
#include "analysis/seeds.h"
#include "analysis/table.h"
#include "util/error.h"
#include "util/params.h"

namespace locksim::analysis {

namespace {

// One limit checked against a set of runs.
struct Outcome {
    std::string what;
    bool given = false;
    bool measured = true;  // false: a measured series without a sample of the metric
    bool over = false;
    double ratio = 0;
    std::string text;
};

std::string prob_text(double p) {
    return fmt::format("{:.0e}", p);
}

// The limits checked against the worst of `runs` (indices into `all`).
std::vector<Outcome> judge(const std::vector<RunSummary> &all, const std::vector<size_t> &runs,
                           const Limits &limits, const TailSource &tails) {
    std::vector<const RunSummary *> ptrs;
    for (size_t i : runs)
        ptrs.push_back(&all[i]);
    const RunSummary w = worst_over(ptrs);
    struct Check {
        const char *what;
        std::optional<int64_t> limit;
        int64_t value;
        Censoring censoring;
        bool incomplete;
        bool bytes;
        std::optional<double> probability;
        TailMetric metric;
        const char *per;
        uint64_t samples = 1;  // 0: nothing recorded of this metric
    };
    std::vector<Check> checks;
    for (const Metric &m : metrics()) {
        if (!m.pick.option) continue;
        Check c{m.pick.what, {},          std::get<int64_t>(get(w, m)),
                {},          false,       m.unit == Unit::Bytes,
                {},          m.pick.tail, m.pick.per ? m.pick.per : ""};
        if (auto it = limits.find(m.path()); it != limits.end()) {
            c.limit = it->second.value;
            c.probability = it->second.probability;
        }
        if (is_censorable_worst(m)) {
            c.censoring = {static_cast<uint64_t>(number(w, *sibling(m, "open_at_end"))),
                           number(w, *sibling(m, "max_censored")) != 0};
            const Metric *incomplete = sibling(m, "incomplete");
            c.incomplete = incomplete && number(w, *incomplete) != 0;
        }
        // Whether anything of the metric was recorded (a measured series may lack it).
        c.samples =
            sibling(m, "count") ? (nothing_counted(w, m) ? 0u : 1u) : (number(w, m) != 0 ? 1u : 0u);
        checks.push_back(c);
    }
    std::vector<Outcome> out;
    for (const auto &c : checks) {
        Outcome o;
        o.what = c.what;
        o.given = c.limit.has_value();
        if (!o.given) {
            out.push_back(o);
            continue;
        }
        if (c.samples == 0 && w.platform == "measured") {
            // A measured series from files that do not measure this metric: no verdict on it.
            o.measured = false;
            o.text = fmt::format("{}: not measured (no sample in the measured files)", c.what);
            out.push_back(o);
            continue;
        }
        auto show = [&](int64_t x) { return c.bytes ? human_bytes(x) : human_ns(x); };
        const int64_t limit = *c.limit;
        auto ratio_of = [&](double v) {
            return limit > 0 ? v / static_cast<double>(limit) : (v > 0 ? 1e9 : 0);
        };
        if (c.probability) {
            // The tail estimate of every run; the largest upper bound is judged.
            double high = 0, estimate = 0;
            std::string poor, basis;
            for (size_t i : runs) {
                TailQuantile q = tails ? tails(i, c.metric, *c.probability) : TailQuantile{};
                if (!tails) q.note = "no histograms to estimate from";
                if (!q.ok) {
                    poor = q.note;
                    // A run with fewer wake-ups than a tail estimate needs: how much longer to
                    // run it (the run's own warning gives the duration).
                    const auto have = static_cast<double>(all[i].probe_count);
                    if (c.metric == TailMetric::ProbeWakeup && !q.held && have > 0 &&
                        have < kMinWakeups)
                        poor += fmt::format(
                            "; that run has {:.0f} wake-ups, an estimate needs at least {:.0f} "
                            "per run: run at least {:.1f}x as long",
                            have, kMinWakeups, std::ceil(10 * kMinWakeups / have) / 10);
                    break;
                }
                if (q.high >= high) {
                    high = q.high;
                    estimate = q.estimate;
                    basis = q.held ? ", by the stretches that held the CPUs" : "";
                }
            }
            if (!poor.empty()) {
                o.over = true;
                o.ratio = std::numeric_limits<double>::infinity();  // no figure to compare
                o.text = fmt::format("{} at p={} per {}: no estimate ({}): cannot meet {}", c.what,
                                     prob_text(*c.probability), c.per, poor, show(limit));
            } else {
                o.over = !(high <= static_cast<double>(limit));
                o.ratio = ratio_of(high);
                o.text = fmt::format(
                    "{} at p={} per {}: {} (upper bound {}{}) {} {} ({:.2f}x of the limit)", c.what,
                    prob_text(*c.probability), c.per, show(std::llround(estimate)),
                    std::isfinite(high) ? show(std::llround(high)) : std::string("unbounded"),
                    basis, o.over ? ">" : "<=", show(limit), o.ratio);
            }
            out.push_back(o);
            continue;
        }
        o.ratio = ratio_of(static_cast<double>(c.value));
        const std::string at_least = c.censoring.max_censored ? "\u2265" : "";
        if (c.incomplete) {
            // A commit that never completed: its cost is unknown, so no commit limit is met.
            o.over = true;
            o.ratio = std::max(o.ratio, 1.0);
            o.text = fmt::format(
                "{} {}{} vs {}: incomplete (a commit was still running when the run ended)", c.what,
                at_least, show(c.value), show(limit));
        } else if (c.censoring.max_censored) {
            o.over = true;
            o.ratio = std::max(o.ratio, 1.0);
            o.text = fmt::format("{} {}{} {} {}: still open when the run ended{}", c.what, at_least,
                                 show(c.value), c.value > limit ? ">" : "vs", show(limit),
                                 c.value > limit ? "" : ", so cannot tell");
        } else {
            o.over = c.value > limit;
            o.text = fmt::format("{} {} {} {} ({:.2f}x of the limit)", c.what, show(c.value),
                                 o.over ? ">" : "<=", show(limit), o.ratio);
        }
        out.push_back(o);
    }
    return out;
}

}  // namespace

TailSample run_tail_sample(const nlohmann::json &run, TailMetric m, const std::string &toggle_op) {
    const nlohmann::json &d = run.at("detail");
    kernel::Histogram h;
    std::vector<int64_t> open;
    auto take = [&](const nlohmann::json &hist, const nlohmann::json *opened) {
        h.merge(hist.get<kernel::Histogram>());
        if (opened)
            for (const auto &v : *opened)
                open.push_back(v.get<int64_t>());
    };
    auto opened = [](const nlohmann::json &j, const char *key) {
        return j.contains(key) ? &j.at(key) : nullptr;
    };
    switch (m) {
        case TailMetric::PreemptOff:
        case TailMetric::IrqsOff: {
            const auto &s = d.at(m == TailMetric::PreemptOff ? "preempt_off" : "irqs_off");
            take(s.at("length_ns"), opened(s, "open_at_end_ns"));
            break;
        }
        case TailMetric::ProbeWakeup:
            for (const auto &[task, hist] : d.at("wakeup_latency_ns").items())
                take(hist, nullptr);
            if (d.contains("wakeup_open_at_end_ns"))
                for (const auto &[task, late] : d.at("wakeup_open_at_end_ns").items())
                    open.push_back(late.get<int64_t>());
            break;
        case TailMetric::Toggle:
            if (d.at("ops").contains(toggle_op)) {
                const auto &op = d.at("ops").at(toggle_op);
                take(op.at("latency_ns"), opened(op, "open_at_end_ns"));
            }
            break;
    }
    return tail_sample(h, open);
}

TailSource tail_source(const ResultsFile &file) {
    return [&file](size_t index, TailMetric m, double probability) {
        TailOptions o;
        o.bucketed = true;
        const nlohmann::json &run = file.runs.at(index);
        // A results file edited or cut by hand: the run and what in it could not be read.
        try {
            if (m == TailMetric::ProbeWakeup)
                return probe_wakeup_tails(run, {probability}, o).front();
            return tail_quantile(run_tail_sample(run, m), probability, o);
        } catch (const std::exception &e) {
            // nlohmann's exceptions and a histogram's own (a bucket out of range); a UserError
            // gets the run in front.
            throw UserError(fmt::format("run {} of the results: the {} histograms: {}", index,
                                        m == TailMetric::ProbeWakeup ? "probe wake-up"
                                        : m == TailMetric::Toggle    ? "commit"
                                                                     : "section",
                                        e.what()));
        }
    };
}

namespace {

// A design's verdict over `mine` (indices into `runs`), as one set: the worst over them, and
// which seeds meet every limit.
Verdict judge_design(const std::string &label, const std::vector<RunSummary> &runs,
                     const std::vector<size_t> &mine, const Limits &limits,
                     const TailSource &tails) {
    std::vector<const RunSummary *> ptrs;
    std::map<uint64_t, std::vector<size_t>> by_seed;
    std::set<std::string> points;
    for (size_t i : mine) {
        ptrs.push_back(&runs[i]);
        by_seed[runs[i].seed].push_back(i);
        points.insert(runs[i].point_text());
    }
    const RunSummary w = worst_over(ptrs);
    Verdict v{.label = label,
              .meets = true,
              .ops_per_sec = std::max(0.0, w.ops_per_sec),
              .violations = w.violations};
    v.runs = mine.size();
    v.seeds = by_seed.size();
    v.points = points.size();
    const std::vector<Outcome> overall = judge(runs, mine, limits, tails);
    // Per seed: which limits each seed's runs meet.
    std::vector<size_t> meeting(overall.size(), 0);
    for (const auto &[seed, idx] : by_seed) {
        const std::vector<Outcome> one = judge(runs, idx, limits, tails);
        bool all = true;
        uint64_t seed_violations = 0;
        for (size_t i : idx)
            seed_violations += runs[i].violations;
        for (size_t k = 0; k < one.size(); ++k) {
            if (!one[k].given) continue;
            if (!one[k].over) ++meeting[k];
            all = all && !one[k].over;
        }
        if (all && seed_violations == 0) ++v.seeds_meeting;
    }
    for (size_t k = 0; k < overall.size(); ++k) {
        const Outcome &o = overall[k];
        if (!o.given) continue;
        if (o.ratio > v.worst_ratio || v.worst_limit.empty()) {
            v.worst_ratio = std::max(v.worst_ratio, o.ratio);
            v.worst_limit = o.what;
        }
        v.meets = v.meets && !o.over && o.measured;  // an unmeasured limit is not met
        v.checks.push_back(
            LimitCheck{o.what, "", !o.over, o.measured, o.text, meeting[k], o.ratio, v.seeds});
    }
    v.unstable = v.seeds_meeting > 0 && v.seeds_meeting < v.seeds;
    if (w.violations) v.meets = false;
    return v;
}

// Whether `a` is a worse verdict than `b` (the point that decides a design's worst case).
bool worse_point(const Verdict &a, const Verdict &b) {
    if ((a.violations > 0) != (b.violations > 0)) return a.violations > 0;
    if (a.meets != b.meets) return !a.meets;
    if (a.worst_ratio != b.worst_ratio) return a.worst_ratio > b.worst_ratio;
    return a.ops_per_sec < b.ops_per_sec;
}

// The lines pick prints under a design: one per limit, then its violations.
void explain(Verdict &v, bool sweep) {
    v.why.clear();
    for (const LimitCheck &c : v.checks) {
        std::string line = c.text;
        if (sweep && !c.point.empty()) line += " at " + c.point;
        // In a sweep, a limit's seeds are counted at the point of its worst.
        const size_t seeds = sweep ? c.seeds : v.seeds;
        if (seeds > 1) {
            line += fmt::format("; {} of {} seeds meet it{}", c.seeds_meeting, seeds,
                                sweep ? " there" : "");
            if (c.seeds_meeting > 0 && c.seeds_meeting < seeds) line += " (unstable)";
        }
        v.why.push_back(std::move(line));
    }
    if (v.violations) {
        std::string where;
        if (sweep)
            for (const Verdict &at : v.at_points)
                if (at.violations) where += (where.empty() ? " at " : ", ") + at.point;
        v.why.push_back(fmt::format("{} self-check violation{} (a broken design){}", v.violations,
                                    v.violations == 1 ? "" : "s", where));
    }
}

// `x` and `y` shown with the fewest decimals (at least `least`) that tell them apart.
std::pair<std::string, std::string> apart(double x, double y, int least) {
    for (int d = least; d < 9; ++d) {
        std::string a = fmt::format("{:.{}f}", x, d), b = fmt::format("{:.{}f}", y, d);
        if (a != b || d == 8) return {a, b};
    }
    return {};
}

// A worst ratio as shown ("1.33x of the preempt-off limit"); an infinite one is a tail limit
// without an estimate or with an unbounded interval.
std::string of_limit(double ratio, const std::string &shown, const std::string &limit) {
    return std::isfinite(ratio) ? fmt::format("{}x of the {} limit", shown, limit)
                                : fmt::format("without a finite bound for the {} limit", limit);
}

// The figure that puts `a` above `b` in the ranking (the rule of pick.h, in its order).
std::string above_reason(const Verdict &a, const Verdict &b) {
    if (a.meets != b.meets) return fmt::format("it meets every limit; {} does not", b.label);
    if ((a.violations == 0) != (b.violations == 0))
        return fmt::format("it has no self-check violations; {} has {}", b.label, b.violations);
    if (a.worst_ratio != b.worst_ratio) {
        auto [x, y] = apart(a.worst_ratio, b.worst_ratio, 2);
        return fmt::format("headroom: its worst is {}, {}'s {}",
                           of_limit(a.worst_ratio, x, a.worst_limit), b.label,
                           of_limit(b.worst_ratio, y, b.worst_limit));
    }
    if (a.ops_per_sec != b.ops_per_sec) {
        auto [x, y] = apart(a.ops_per_sec, b.ops_per_sec, 0);
        return fmt::format("throughput: {} ops/s, {}'s {} ops/s", x, b.label, y);
    }
    return fmt::format("tied with {} on every figure: kept in the results file's order", b.label);
}

// The runs of `runs` at the point `want` (every pair must match); UserError on a key that is
// no axis of the runs, or a value no run has.
std::vector<size_t> runs_at(const std::vector<RunSummary> &runs,
                            const std::vector<std::pair<std::string, std::string>> &want) {
    std::map<std::string, std::set<std::string>> axes;
    for (const RunSummary &r : runs)
        for (const auto &[field, value] : r.point)
            axes[field].insert(value);
    for (const auto &[field, value] : want) {
        auto join = [](const auto &names) {
            std::string out;
            for (const std::string &n : names)
                out += (out.empty() ? "" : ", ") + n;
            return out;
        };
        auto it = axes.find(field);
        if (it == axes.end()) {
            std::vector<std::string> names;
            for (const auto &[f, values] : axes)
                names.push_back(f);
            throw UserError(fmt::format(
                "--point {}={}: the runs have no sweep axis '{}' ({})", field, value, field,
                names.empty() ? "they are not a sweep" : "their axes: " + join(names)));
        }
        if (!it->second.count(value))
            throw UserError(fmt::format("--point {}={}: no run has {} = {} (values: {})", field,
                                        value, field, value, join(it->second)));
    }
    std::vector<size_t> out;
    for (size_t i = 0; i < runs.size(); ++i)
        if (std::all_of(want.begin(), want.end(), [&](const auto &kv) {
                return std::find(runs[i].point.begin(), runs[i].point.end(), kv) !=
                       runs[i].point.end();
            }))
            out.push_back(i);
    return out;
}

std::string point_text(const std::vector<std::pair<std::string, std::string>> &point) {
    RunSummary r;
    r.point = point;
    return r.point_text();
}

}  // namespace

Pick pick(const std::vector<RunSummary> &runs, const Limits &limits, const TailSource &tails,
          const PickScope &scope) {
    // A run's tail estimate is asked for again at each grouping: estimate it once.
    std::map<std::tuple<size_t, TailMetric, double>, TailQuantile> estimated;
    TailSource cached;
    if (tails)
        cached = [&](size_t i, TailMetric m, double p) {
            auto key = std::make_tuple(i, m, p);
            auto it = estimated.find(key);
            if (it == estimated.end()) it = estimated.emplace(key, tails(i, m, p)).first;
            return it->second;
        };
    Pick p;
    p.limits_given = !limits.empty();
    const std::vector<size_t> chosen = runs_at(runs, scope.point);
    const Plan &plan = scope.plan;
    auto in_scope = [&](const std::vector<std::pair<std::string, std::string>> &point) {
        return std::all_of(scope.point.begin(), scope.point.end(), [&](const auto &kv) {
            return std::find(point.begin(), point.end(), kv) != point.end();
        });
    };
    // Designs and points in the order they first appear, then those planned and not run.
    std::vector<std::string> order;
    std::map<std::string, std::vector<size_t>> by_label;
    std::set<uint64_t> seeds;
    for (size_t i : chosen) {
        const RunSummary &r = runs[i];
        if (!by_label.count(r.label)) order.push_back(r.label);
        by_label[r.label].push_back(i);
        if (r.platform == "measured") continue;  // a measured series has no point or seed
        seeds.insert(r.seed);
        if (std::find(p.points.begin(), p.points.end(), r.point_text()) == p.points.end())
            p.points.push_back(r.point_text());
    }
    p.runs = chosen.size();
    p.seeds = seeds.size();
    if (!plan.complete) {
        p.incomplete = true;
        p.incomplete_why = plan.why;
        size_t planned_points = 0;
        for (const auto &point : plan.points) {
            if (!in_scope(point)) continue;
            ++planned_points;
            if (std::find(p.points.begin(), p.points.end(), point_text(point)) == p.points.end())
                p.points.push_back(point_text(point));
        }
        for (const std::string &label : plan.labels)
            if (!by_label.count(label)) p.not_run.push_back(label);
        p.planned_runs = plan.labels.size() * planned_points * plan.seeds.size();
    }
    const bool sweep = p.points.size() > 1;
    for (const auto &label : order) {
        const std::vector<size_t> &mine = by_label[label];
        Verdict v = judge_design(label, runs, mine, limits, cached);
        const bool measured = std::all_of(mine.begin(), mine.end(),
                                          [&](size_t i) { return runs[i].platform == "measured"; });
        if (!measured) {
            // Its verdict at each point, and the point that decided the worst.
            const Verdict *decided = nullptr;
            for (const std::string &point : p.points) {
                std::vector<size_t> here;
                for (size_t i : mine)
                    if (runs[i].point_text() == point) here.push_back(i);
                Verdict at = here.empty() ? Verdict{.label = label, .seeds = 0}
                                          : judge_design(label, runs, here, limits, cached);
                at.point = point;
                v.at_points.push_back(std::move(at));
            }
            for (const Verdict &at : v.at_points)
                if (at.runs && (!decided || worse_point(at, *decided))) decided = &at;
            if (decided) v.point = decided->point;
            // Each limit at the point of its worst (not met there, if anywhere).
            for (size_t k = 0; k < v.checks.size(); ++k) {
                const Verdict *worst = nullptr;
                for (const Verdict &at : v.at_points) {
                    if (!at.runs) continue;
                    const LimitCheck &c = at.checks[k], *w = worst ? &worst->checks[k] : nullptr;
                    if (!w || (!c.met && w->met) || (c.met == w->met && c.ratio > w->ratio))
                        worst = &at;
                }
                if (!worst) continue;
                const bool met = v.checks[k].met;
                v.checks[k] = worst->checks[k];
                v.checks[k].point = worst->point;
                v.checks[k].met = met;
            }
            if (sweep)
                v.unstable = std::any_of(v.at_points.begin(), v.at_points.end(),
                                         [](const Verdict &at) { return at.unstable; });
        }
        explain(v, sweep);
        p.ranked.push_back(std::move(v));
    }
    std::stable_sort(p.ranked.begin(), p.ranked.end(), [](const Verdict &a, const Verdict &b) {
        if (a.meets != b.meets) return a.meets;
        if ((a.violations == 0) != (b.violations == 0)) return a.violations == 0;
        if (a.worst_ratio != b.worst_ratio) return a.worst_ratio < b.worst_ratio;
        return a.ops_per_sec > b.ops_per_sec;
    });
    for (size_t i = 0; i + 1 < p.ranked.size(); ++i)
        p.above.push_back(above_reason(p.ranked[i], p.ranked[i + 1]));
    return p;
}

const char *verdict_text(const Verdict &v, bool limits_given) {
    if (v.runs == 0) return "not run";
    if (v.violations > 0) return "broken (self-check violations)";
    if (!limits_given) return "no limit given";
    if (v.meets) return "meets the limits";
    const bool over =
        std::any_of(v.checks.begin(), v.checks.end(), [](const LimitCheck &c) { return !c.met; });
    return over ? "over a limit" : "not all measured";
}

std::string limits_text(const Limits &l) {
    std::string out;
    for (const Metric &m : metrics()) {
        auto it = l.find(m.path());
        if (!m.pick.option || it == l.end()) continue;
        const Limit &v = it->second;
        out += fmt::format("{}{} {}{}", out.empty() ? "" : " ", m.pick.option,
                           m.unit == Unit::Bytes ? human_bytes(v.value) : human_ns(v.value),
                           v.probability ? "@" + prob_text(*v.probability) : std::string());
    }
    return out.empty() ? "none given" : out;
}

std::string pick_line(const Pick &p) {
    std::string out;
    if (p.ranked.empty()) {
        out = "pick: none: no design has a run to judge";
    } else if (p.any_meets()) {
        out = fmt::format("pick: {}", p.ranked.front().label);
        if (!p.limits_given) out += " (by throughput: no limit given)";
    } else {
        const Verdict *closest = nullptr;
        for (const auto &v : p.ranked)
            if (v.violations == 0) {
                closest = &v;
                break;
            }
        out = p.limits_given ? "pick: none of the designs meets every limit"
                             : "pick: none: every design is broken";
        if (closest) out += fmt::format("; the closest is {}", closest->label);
    }
    if (p.incomplete) {
        out += ", among the designs and points that ran";
        if (!p.not_run.empty()) {
            out += " (not run:";
            for (size_t i = 0; i < p.not_run.size(); ++i)
                out += (i ? ", " : " ") + p.not_run[i];
            out += ")";
        }
    }
    return out;
}

namespace {

std::string plural(size_t n, const char *one, const char *many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

// A design's cell at one point of the verdict table.
std::string point_cell(const Verdict &at, bool limits_given) {
    if (at.runs == 0) return "not run";
    std::string cell;
    if (at.violations > 0)
        cell = "broken";
    else if (!limits_given)
        cell = fmt::format("{:.0f} ops/s", at.ops_per_sec);
    else
        cell = std::isfinite(at.worst_ratio)
                   ? fmt::format("{} {:.2f}x", at.meets ? "meets" : "over", at.worst_ratio)
                   : std::string("over, no finite bound");
    if (at.seeds > 1 && limits_given)
        cell += fmt::format(" {}/{} seeds", at.seeds_meeting, at.seeds);
    return cell;
}

}  // namespace

std::string format_pick(const Pick &p, const Limits &limits) {
    std::vector<std::string> given;
    for (const Metric &m : metrics()) {
        auto it = limits.find(m.path());
        if (!m.pick.option || it == limits.end()) continue;
        given.push_back(fmt::format(
            "{} <= {}{}", m.pick.what,
            m.unit == Unit::Bytes ? human_bytes(it->second.value) : human_ns(it->second.value),
            it->second.probability ? " at p=" + prob_text(*it->second.probability) : ""));
    }
    std::string out = "limits: ";
    for (size_t i = 0; i < given.size(); ++i)
        out += (i ? ", " : "") + given[i];
    if (given.empty())
        out +=
            "none given (--max-... options): ranked by self-checks, then throughput; no design "
            "is judged against a limit";
    out += "\n";
    if (p.incomplete)
        out += fmt::format("warning: incomplete results: {}; {} of {} planned runs are here\n",
                           p.incomplete_why, p.runs, p.planned_runs);
    const std::string point =
        p.points.size() == 1 && !p.points[0].empty() ? " (" + p.points[0] + ")" : "";
    out += fmt::format("judged: {} of {}, {}{}, {}\n", plural(p.runs, "run", "runs"),
                       plural(p.ranked.size(), "design", "designs"),
                       plural(p.points.size(), "point", "points"), point,
                       plural(p.seeds, "seed", "seeds"));
    if (p.points.size() > 1) {
        // The table of points x designs, designs in rank order.
        std::vector<const Verdict *> cols;
        for (const Verdict &v : p.ranked)
            if (!v.at_points.empty()) cols.push_back(&v);
        out += fmt::format("verdict per point (the worst over seeds{}):\n",
                           p.limits_given ? "; x: its largest value/limit" : "; throughput");
        size_t first = 5;
        for (const std::string &pt : p.points)
            first = std::max(first, pt.size());
        std::vector<size_t> widths;
        for (const Verdict *v : cols) {
            size_t w = v->label.size();
            for (const Verdict &at : v->at_points)
                w = std::max(w, point_cell(at, p.limits_given).size());
            widths.push_back(w);
        }
        auto row = [&](const std::string &first_cell, auto cell) {
            std::string line = fmt::format("  {:<{}}", first_cell, first);
            for (size_t c = 0; c < cols.size(); ++c)
                line += fmt::format("  {:<{}}", cell(c), widths[c]);
            while (!line.empty() && line.back() == ' ')
                line.pop_back();
            out += line + "\n";
        };
        row("point", [&](size_t c) { return cols[c]->label; });
        for (size_t k = 0; k < p.points.size(); ++k)
            row(p.points[k],
                [&](size_t c) { return point_cell(cols[c]->at_points[k], p.limits_given); });
    }
    if (p.ranked.empty() && p.not_run.empty()) return out + "no runs to judge\n";
    out += pick_line(p) + "\n";
    size_t width = 0;
    for (const auto &v : p.ranked)
        width = std::max(width, v.label.size());
    for (size_t rank = 0; rank < p.ranked.size(); ++rank) {
        const Verdict &v = p.ranked[rank];
        std::string counts;
        if (v.points > 1 || v.seeds > 1)
            counts =
                fmt::format("  ({}: {}, {})", plural(v.runs, "run", "runs"),
                            plural(v.points, "point", "points"), plural(v.seeds, "seed", "seeds"));
        out += fmt::format("{:>2}. {:<{}}  {}  {:.0f} ops/s{}\n", rank + 1, v.label, width,
                           verdict_text(v, p.limits_given), v.ops_per_sec, counts);
        if (p.points.size() > 1 && !v.point.empty()) {
            size_t met = 0, ran = 0;
            std::string missing;
            for (const Verdict &at : v.at_points) {
                if (!at.runs) {
                    missing += (missing.empty() ? "" : ", ") + at.point;
                    continue;
                }
                ++ran;
                met += at.meets;
            }
            const Verdict &decided =
                *std::find_if(v.at_points.begin(), v.at_points.end(),
                              [&](const Verdict &at) { return at.point == v.point; });
            out += fmt::format("      worst case at {}: {}", v.point,
                               verdict_text(decided, p.limits_given));
            if (!p.limits_given)
                out += fmt::format(", {:.0f} ops/s", decided.ops_per_sec);
            else
                out += fmt::format("; meets the limits at {} of {} points", met, ran);
            out += "\n";
            if (!missing.empty()) out += fmt::format("      not run at {}\n", missing);
        }
        if (v.unstable) {
            if (p.points.size() > 1) {
                std::string where;
                for (const Verdict &at : v.at_points)
                    if (at.unstable)
                        where += fmt::format("{}{} ({} of {} seeds meet every limit)",
                                             where.empty() ? "" : ", ", at.point, at.seeds_meeting,
                                             at.seeds);
                out += fmt::format("      **unstable**: the verdict differs between seeds at {}\n",
                                   where);
            } else {
                out += fmt::format(
                    "      **unstable**: the verdict differs between seeds ({} of {} meet every "
                    "limit)\n",
                    v.seeds_meeting, v.seeds);
            }
        }
        for (const auto &why : v.why)
            out += "      " + why + "\n";
        if (rank < p.above.size())
            out += fmt::format("      above {}: {}\n", p.ranked[rank + 1].label, p.above[rank]);
    }
    for (const std::string &label : p.not_run)
        out +=
            fmt::format(" -. {:<{}}  not run  (no run in the results: not ranked)\n", label, width);
    return out;
}

std::pair<std::string, std::string> parse_point(const std::string &text) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        throw UserError(
            fmt::format("--point: '{}' is not KEY=VALUE (like core.sidtab=legacy)", text));
    return {text.substr(0, eq), text.substr(eq + 1)};
}

int64_t parse_limit_ns(const std::string &option, const std::string &text) {
    std::string why;
    auto ns = parse_duration_ns(text, &why);
    if (!ns)
        throw UserError(fmt::format("{}: '{}' is {} (like 100us, 10ms, 1s)", option, text, why));
    return *ns;
}

std::pair<int64_t, std::optional<double>> parse_tail_limit(const std::string &option,
                                                           const std::string &text) {
    const size_t at = text.find('@');
    if (at == std::string::npos) return {parse_limit_ns(option, text), std::nullopt};
    const std::string prob = text.substr(at + 1);
    double p = 0;
    auto [ptr, ec] = std::from_chars(prob.data(), prob.data() + prob.size(), p);
    if (ec != std::errc() || ptr != prob.data() + prob.size() || !(p > 0 && p < 1))
        throw UserError(
            fmt::format("{}: '{}' after '@' is not a probability between 0 and 1 (like 200us@1e-9)",
                        option, prob));
    return {parse_limit_ns(option, text.substr(0, at)), p};
}

int64_t parse_limit_bytes(const std::string &option, const std::string &text) {
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    std::string unit(ptr, text.data() + text.size());
    double scale = unit.empty() || unit == "B"    ? 1
                   : unit == "K" || unit == "KiB" ? 1024.0
                   : unit == "M" || unit == "MiB" ? 1024.0 * 1024
                   : unit == "G" || unit == "GiB" ? 1024.0 * 1024 * 1024
                                                  : -1;
    if (ec != std::errc() || ptr == text.data() || scale < 0 || number < 0)
        throw UserError(fmt::format("{}: '{}' is not a size (like 512M, 2G, 4096)", option, text));
    return static_cast<int64_t>(number * scale);
}

}  // namespace locksim::analysis
