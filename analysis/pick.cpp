#include "analysis/pick.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

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
            std::string poor;
            for (size_t i : runs) {
                TailQuantile q = tails ? tails(i, c.metric, *c.probability) : TailQuantile{};
                if (!tails) q.note = "no histograms to estimate from";
                if (!q.ok) {
                    poor = q.note;
                    break;
                }
                if (q.high >= high) {
                    high = q.high;
                    estimate = q.estimate;
                }
            }
            if (!poor.empty()) {
                o.over = true;
                o.ratio = 1e9;
                o.text = fmt::format("{} at p={} per {}: no estimate ({}): cannot meet {}", c.what,
                                     prob_text(*c.probability), c.per, poor, show(limit));
            } else {
                o.over = !(high <= static_cast<double>(limit));
                o.ratio = ratio_of(high);
                o.text = fmt::format(
                    "{} at p={} per {}: {} (upper bound {}) {} {} ({:.2f}x of the limit)", c.what,
                    prob_text(*c.probability), c.per, show(std::llround(estimate)),
                    std::isfinite(high) ? show(std::llround(high)) : std::string("unbounded"),
                    o.over ? ">" : "<=", show(limit), o.ratio);
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
        return tail_quantile(run_tail_sample(file.runs.at(index), m), probability, o);
    };
}

Pick pick(const std::vector<RunSummary> &runs, const Limits &limits, const TailSource &tails) {
    std::map<std::string, std::vector<size_t>> by_label;
    std::vector<std::string> order;
    for (size_t i = 0; i < runs.size(); ++i) {
        if (!by_label.count(runs[i].label)) order.push_back(runs[i].label);
        by_label[runs[i].label].push_back(i);
    }
    Pick p;
    for (const auto &label : order) {
        const std::vector<size_t> &mine = by_label[label];
        std::vector<const RunSummary *> ptrs;
        std::map<uint64_t, std::vector<size_t>> by_seed;
        for (size_t i : mine) {
            ptrs.push_back(&runs[i]);
            by_seed[runs[i].seed].push_back(i);
        }
        const RunSummary w = worst_over(ptrs);
        Verdict v{label, true, 0, std::max(0.0, w.ops_per_sec), {}, w.violations};
        v.seeds = by_seed.size();
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
            v.worst_ratio = std::max(v.worst_ratio, o.ratio);
            v.meets = v.meets && !o.over && o.measured;  // an unmeasured limit is not met
            std::string line = o.text;
            if (v.seeds > 1) {
                line += fmt::format("; {} of {} seeds meet it", meeting[k], v.seeds);
                if (meeting[k] > 0 && meeting[k] < v.seeds) line += " (unstable)";
            }
            v.checks.push_back(LimitCheck{o.what, !o.over, o.measured, o.text, meeting[k]});
            v.why.push_back(std::move(line));
        }
        if (w.violations) {
            v.meets = false;
            v.why.push_back(fmt::format("{} self-check violation{} (a broken design)", w.violations,
                                        w.violations == 1 ? "" : "s"));
        }
        v.unstable = v.seeds_meeting > 0 && v.seeds_meeting < v.seeds;
        p.ranked.push_back(std::move(v));
    }
    std::stable_sort(p.ranked.begin(), p.ranked.end(), [](const Verdict &a, const Verdict &b) {
        if (a.meets != b.meets) return a.meets;
        if ((a.violations == 0) != (b.violations == 0)) return a.violations == 0;
        if (a.worst_ratio != b.worst_ratio) return a.worst_ratio < b.worst_ratio;
        return a.ops_per_sec > b.ops_per_sec;
    });
    return p;
}

const char *verdict_text(const Verdict &v) {
    if (v.meets) return "meets the limits";
    const bool over = v.violations > 0 || std::any_of(v.checks.begin(), v.checks.end(),
                                                      [](const LimitCheck &c) { return !c.met; });
    return over ? "over a limit    " : "not all measured";
}

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
    if (given.empty()) out += "(none: ranked by self-checks, then throughput)";
    out += "\n";
    if (p.ranked.empty()) return out + "no runs to judge\n";
    if (p.any_meets()) {
        out += fmt::format("pick: {}\n", p.ranked.front().label);
    } else {
        const Verdict *closest = nullptr;
        for (const auto &v : p.ranked)
            if (v.violations == 0) {
                closest = &v;
                break;
            }
        out += "pick: none of the designs meets every limit";
        out += closest ? fmt::format("; the closest is {}\n", closest->label) : "\n";
    }
    int rank = 1;
    for (const auto &v : p.ranked) {
        out += fmt::format("{:>2}. {:<24} {}  {:.0f} ops/s\n", rank++, v.label, verdict_text(v),
                           v.ops_per_sec);
        if (v.unstable)
            out += fmt::format(
                "      **unstable**: the verdict differs between seeds ({} of {} meet every "
                "limit)\n",
                v.seeds_meeting, v.seeds);
        for (const auto &why : v.why)
            out += "      " + why + "\n";
    }
    return out;
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
