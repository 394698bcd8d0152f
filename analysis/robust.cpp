#include "analysis/robust.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "analysis/metrics.h"
#include "util/error.h"

namespace locksim::analysis {

using nlohmann::json;

namespace {

// A uniform draw in [0, 1) from the generator's top 53 bits.
double unit_draw(std::mt19937_64 &g) {
    return static_cast<double>(g() >> 11) * 0x1.0p-53;
}

// Least squares of y on the columns of x (each row one observation, an intercept included by
// the caller): the coefficients, or nullopt when the normal equations are singular.
std::optional<std::vector<double>> least_squares(const std::vector<std::vector<double>> &x,
                                                 const std::vector<double> &y) {
    const size_t p = x.front().size();
    std::vector<std::vector<double>> a(p, std::vector<double>(p + 1, 0));
    for (size_t r = 0; r < x.size(); ++r)
        for (size_t i = 0; i < p; ++i) {
            for (size_t j = 0; j < p; ++j)
                a[i][j] += x[r][i] * x[r][j];
            a[i][p] += x[r][i] * y[r];
        }
    for (size_t c = 0; c < p; ++c) {
        size_t best = c;
        for (size_t r = c + 1; r < p; ++r)
            if (std::fabs(a[r][c]) > std::fabs(a[best][c])) best = r;
        if (std::fabs(a[best][c]) < 1e-12) return std::nullopt;
        std::swap(a[c], a[best]);
        for (size_t r = 0; r < p; ++r) {
            if (r == c) continue;
            const double f = a[r][c] / a[c][c];
            for (size_t j = c; j <= p; ++j)
                a[r][j] -= f * a[c][j];
        }
    }
    std::vector<double> b(p);
    for (size_t i = 0; i < p; ++i)
        b[i] = a[i][p] / a[i][i];
    return b;
}

// An elasticity below this moves the figure by less than 0.1% across a 2x range: no flip.
constexpr double kNoEffect = 0.0015;
// A design and limit get a sensitivity line when some world's ratio lies within this factor
// of the limit.
constexpr double kNear = kStopFactor;
// A family that moves the figure by less than this factor over its range is named in one line.
constexpr double kMoves = 1.02;
// A flip factor is printed within these bounds (the factors a scenario's [prices] accepts).
constexpr double kMinFlip = 0.01, kMaxFlip = 100;

std::optional<Sensitivity> fit_sensitivity(const Robust &r, size_t design, size_t limit) {
    const PriceSpace &s = r.space;
    std::vector<size_t> fam;  // the families that vary
    for (size_t k = 0; k < s.families.size(); ++k)
        if (s.range[k] > 1) fam.push_back(k);
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    const std::string &path =
        std::next(r.limits.begin(), static_cast<std::ptrdiff_t>(limit))->first;
    for (size_t w = 0; w < r.worlds.size(); ++w) {
        const WorldCell &c = r.cells[w][design];
        // A run stopped early has a lower bound of its figure (or none of the others); a
        // re-priced cell has only the figures re-pricing estimates.
        if (!c.ran || !c.early_stop.empty() || !c.judged(path)) continue;
        const double f = c.figure.at(limit);
        if (!std::isfinite(f) || f <= 0) continue;
        std::vector<double> row{1.0};
        for (size_t k : fam)
            row.push_back(std::log(r.worlds[w][k]));
        x.push_back(std::move(row));
        y.push_back(std::log(f));
    }
    Sensitivity out;
    out.label = r.labels[design];
    out.limit = std::next(r.limits.begin(), static_cast<std::ptrdiff_t>(limit))->first;
    out.worlds = x.size();
    if (fam.empty()) return std::nullopt;
    if (x.size() < fam.size() + 2) {
        out.note = fmt::format(
            "{} world{} gave a figure (the others stopped early, or re-pricing left it open), "
            "too few to fit {} families: --full-runs runs them all",
            x.size(), x.size() == 1 ? "" : "s", fam.size());
        return out;
    }
    const auto b = least_squares(x, y);
    if (!b) {
        out.note = "the worlds' factors do not tell the families apart (a singular fit)";
        return out;
    }
    out.nominal = std::exp((*b)[0]);
    const double mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
    double ss_res = 0, ss_tot = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        double fit = 0;
        for (size_t j = 0; j < b->size(); ++j)
            fit += (*b)[j] * x[i][j];
        ss_res += (y[i] - fit) * (y[i] - fit);
        ss_tot += (y[i] - mean) * (y[i] - mean);
    }
    out.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
    const double limit_value = static_cast<double>(
        std::next(r.limits.begin(), static_cast<std::ptrdiff_t>(limit))->second.value);
    for (size_t j = 0; j < fam.size(); ++j) {
        const size_t k = fam[j];
        FamilyEffect e;
        e.family = s.families[k];
        e.elasticity = (*b)[j + 1];
        e.moves = std::pow(s.range[k], std::fabs(e.elasticity));
        if (std::fabs(e.elasticity) >= kNoEffect) {
            const double flip = std::pow(limit_value / out.nominal, 1 / e.elasticity);
            if (std::isfinite(flip)) {
                e.flip = flip;
                e.flip_in_range = flip >= 1 / s.range[k] && flip <= s.range[k];
            }
        }
        out.effects.push_back(e);
    }
    std::stable_sort(
        out.effects.begin(), out.effects.end(),
        [](const FamilyEffect &a, const FamilyEffect &b) { return a.moves > b.moves; });
    return out;
}

// A world's factors in re-pricing's family order (a family the space does not hold: 1).
Factors world_factors(const PriceSpace &space, const std::vector<double> &world) {
    Factors f;
    f.fill(1.0);
    for (size_t k = 0; k < space.families.size(); ++k)
        for (size_t j = 0; j < f.size(); ++j)
            if (space.families[k] == kernel::kPricedFamilies[j]) f[j] = world[k];
    return f;
}

using Point = std::vector<std::pair<std::string, std::string>>;

// Each design's nominal runs (at nominal_point), by label.
std::map<std::string, std::vector<const RunSummary *>> nominal_runs(
    const PriceSpace &space, const std::vector<RunSummary> &runs) {
    const Point nominal = nominal_point(space);
    std::map<std::string, std::vector<const RunSummary *>> out;
    for (const RunSummary &s : runs)
        if (s.point == nominal && s.early_stop.empty()) out[s.label].push_back(&s);
    return out;
}

// The margin re-pricing judges a design's figure `m` with: from its spread over the nominal runs.
double nominal_margin(const std::vector<const RunSummary *> &base, const Metric &m) {
    std::vector<double> figures;
    for (const RunSummary *s : base)
        figures.push_back(number(*s, m));
    return repricing_margin(figures);
}

// A design's nominal runs re-priced in one world: the summaries (one per seed), the limits the
// estimate leaves open (not repriceable, or its worst over the seeds within the figure's
// repricing_margin of the limit), and whether it decides the world without a full run: every limit
// clear, one clearly over (the design then fails there, the open ones not judged, as after an early
// stop), or a broken design (self-check violations: it meets nothing whatever its figures; its
// violations are what its code does at any price). nullopt: none of its runs recorded priced items.
struct CellEstimate {
    std::vector<RunSummary> runs;
    std::vector<std::string> open;
    bool decides = false;
};
std::optional<CellEstimate> estimate_cell(const std::vector<const RunSummary *> &base,
                                          const Factors &f, const Limits &limits,
                                          const Point &point) {
    CellEstimate c;
    bool broken = false;
    for (const RunSummary *b : base) {
        auto s = repriced(*b, f, point);
        if (!s) return std::nullopt;
        broken = broken || s->violations > 0;
        c.runs.push_back(std::move(*s));
    }
    if (c.runs.empty()) return std::nullopt;
    bool over = false;
    for (const auto &[path, limit] : limits) {
        std::optional<Estimate> worst;
        const Metric *m = find_metric(path);
        if (repriceable(path, limit) && m)
            for (const RunSummary *b : base) {
                const auto e = reprice(*b, path, f);
                if (!e) continue;
                if (!worst) worst = Estimate{0, 0};
                worst->lo = std::max(worst->lo, e->lo);
                worst->hi = std::max(worst->hi, e->hi);
            }
        const Side side = worst ? estimate_side(*worst, static_cast<double>(limit.value),
                                                nominal_margin(base, *m))
                                : Side::Near;
        if (side == Side::Near) c.open.push_back(path);
        over = over || side == Side::Over;
    }
    c.decides = broken || over || c.open.empty();
    return c;
}

// The run of `seed` among a design's runs, or nullptr.
const RunSummary *of_seed(const std::vector<const RunSummary *> &runs, uint64_t seed) {
    const auto it = std::find_if(runs.begin(), runs.end(),
                                 [&](const RunSummary *x) { return x->seed == seed; });
    return it == runs.end() ? nullptr : *it;
}

// How far re-pricing a design's nominal runs (`base`) in world `w` lies from its full runs there
// (`full`, none stopped early), per repriceable limit, each the worst over the seeds; and
// whether re-pricing alone would have judged the limit there.
std::vector<EstimateCheck> check_estimates(const std::string &label, size_t w,
                                           const std::vector<const RunSummary *> &base,
                                           const std::vector<const RunSummary *> &full,
                                           const Factors &f, const Limits &limits,
                                           const Point &point) {
    const auto alone = estimate_cell(base, f, limits, point);
    std::vector<EstimateCheck> out;
    for (const auto &[path, limit] : limits) {
        const Metric *m = find_metric(path);
        if (!repriceable(path, limit) || !m) continue;
        EstimateCheck check{label, path, w, 0, 0};
        check.limit_value = static_cast<double>(limit.value);
        check.decided =
            alone && alone->decides &&
            std::find(alone->open.begin(), alone->open.end(), path) == alone->open.end();
        bool every_seed = true;
        for (const RunSummary *s : full) {
            const RunSummary *nominal = of_seed(base, s->seed);
            const auto e = nominal ? reprice(*nominal, path, f) : std::nullopt;
            if (!e) {
                every_seed = false;
                break;
            }
            check.estimate = std::max(check.estimate, e->lo);
            check.full = std::max(check.full, number(*s, *m));
        }
        if (every_seed) out.push_back(check);
    }
    return out;
}

std::string percent(size_t k, size_t n) {
    return n ? fmt::format("{:.0f}%", 100.0 * static_cast<double>(k) / static_cast<double>(n))
             : "-";
}

std::string share_text(size_t k, size_t n) {
    if (n == 0) return "not judged";
    const ShareInterval i = wilson_interval(k, n);
    return fmt::format("{}/{} {} [{:.0f}-{:.0f}%]", k, n, percent(k, n), 100 * i.lo, 100 * i.hi);
}

std::string factor_text(double f) {
    return f >= 100 || f < 0.01 ? fmt::format("x{:.3g}", f) : fmt::format("x{:.3f}", f);
}

}  // namespace

std::vector<std::vector<double>> latin_hypercube(const PriceSpace &space, size_t n, uint64_t seed) {
    std::mt19937_64 g(seed);
    const size_t families = space.families.size();
    std::vector<std::vector<double>> worlds(n, std::vector<double>(families, 1.0));
    for (size_t k = 0; k < families; ++k) {
        std::vector<size_t> strata(n);
        std::iota(strata.begin(), strata.end(), size_t{0});
        // Fisher-Yates with the generator's own draws (std::shuffle's use of it is the
        // library's, and may differ between libraries).
        for (size_t i = n; i > 1; --i)
            std::swap(strata[i - 1], strata[static_cast<size_t>(g() % i)]);
        const double span = std::log(space.range[k]);
        for (size_t w = 0; w < n; ++w) {
            const double u =
                (static_cast<double>(strata[w]) + unit_draw(g)) / static_cast<double>(n);
            const double f = std::exp((2 * u - 1) * span);
            worlds[w][k] = std::round(f * 1e4) / 1e4;
        }
    }
    return worlds;
}

ShareInterval wilson_interval(size_t k, size_t n) {
    if (n == 0) return {0, 1};
    const double z = 1.959964, nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
    const double denom = 1 + z * z / nn;
    const double centre = (p + z * z / (2 * nn)) / denom;
    const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::vector<std::pair<std::string, std::string>> world_point(const PriceSpace &space,
                                                             const std::vector<double> &world) {
    std::vector<std::pair<std::string, std::string>> point;
    for (size_t k = 0; k < space.families.size(); ++k)
        point.emplace_back("prices." + space.families[k], fmt::format("{:.4f}", world[k]));
    // In the order a results file gives a run's point back (its keys sorted).
    std::sort(point.begin(), point.end());
    return point;
}

std::vector<std::pair<std::string, std::string>> nominal_point(const PriceSpace &space) {
    return world_point(space, std::vector<double>(space.families.size(), 1.0));
}

std::vector<std::vector<std::string>> full_runs_needed(
    const PriceSpace &space, const std::vector<std::vector<double>> &worlds, const Limits &limits,
    const std::vector<std::string> &labels, const std::vector<RunSummary> &runs) {
    const auto base = nominal_runs(space, runs);
    std::vector<std::vector<std::string>> out(worlds.size());
    for (size_t w = 0; w < worlds.size(); ++w)
        for (const std::string &label : labels) {
            const auto b = base.find(label);
            const auto c = b == base.end()
                               ? std::nullopt
                               : estimate_cell(b->second, world_factors(space, worlds[w]), limits,
                                               world_point(space, worlds[w]));
            if (!c || !c->decides) out[w].push_back(label);
        }
    return out;
}

Robust judge_robust(const PriceSpace &space, const std::vector<std::vector<double>> &worlds,
                    const Limits &limits, const std::vector<std::string> &labels,
                    const std::vector<RunSummary> &given_runs, const TailSource &given_tails) {
    if (limits.empty())
        throw UserError(
            "robust needs at least one limit (--max-preempt-off, --max-toggle ...): "
            "the share of worlds meeting it is what it measures");
    Robust r;
    r.space = space;
    r.limits = limits;
    r.labels = labels;
    r.worlds = worlds;
    r.how.assign(worlds.size(), "full runs");
    r.runs = given_runs.size();
    std::vector<uint64_t> seeds;
    for (const RunSummary &s : given_runs)
        seeds.push_back(s.seed);
    std::sort(seeds.begin(), seeds.end());
    r.seeds = static_cast<size_t>(std::unique(seeds.begin(), seeds.end()) - seeds.begin());
    r.shares.resize(labels.size());
    for (size_t d = 0; d < labels.size(); ++d) {
        r.shares[d].label = labels[d];
        r.shares[d].meets.assign(limits.size(), 0);
        r.shares[d].judged.assign(limits.size(), 0);
    }
    // The runs stopped early, by design and world (any seed's stop marks the world's cell), and
    // the designs that ran in each world.
    std::map<std::pair<std::string, Point>, std::string> stopped_early;
    std::set<std::pair<std::string, Point>> ran;
    for (const RunSummary &run : given_runs) {
        if (!run.early_stop.empty()) stopped_early[{run.label, run.point}] = run.early_stop;
        ran.insert({run.label, run.point});
    }
    // A design with no run in a world: its nominal runs re-priced there, after the given runs (a
    // tail asked of one is its nominal run's; its tail limits are not judged).
    const auto base = nominal_runs(space, given_runs);
    for (const auto &[label, b] : base) {
        r.nominal_runs += b.size();
        for (const auto &[path, limit] : limits) {
            const Metric *m = find_metric(path);
            if (!repriceable(path, limit) || !m || b.front()->priced.empty()) continue;
            r.margins.push_back({label, path, nominal_margin(b, *m)});
        }
    }
    std::vector<RunSummary> runs = given_runs;
    std::vector<size_t> tail_index(given_runs.size());
    std::iota(tail_index.begin(), tail_index.end(), size_t{0});
    std::map<std::pair<std::string, Point>, std::vector<std::string>> estimated;  // open limits
    std::set<std::pair<std::string, Point>> near;
    for (size_t w = 0; w < worlds.size(); ++w) {
        const Point point = world_point(space, worlds[w]);
        const Factors f = world_factors(space, worlds[w]);
        for (const std::string &label : labels) {
            const auto b = base.find(label);
            if (b == base.end()) continue;
            if (ran.count({label, point})) {
                // Both: how far the estimate lies from the full runs (unless one stopped early:
                // its figures are of part of the run), per limit the worst over the seeds.
                std::vector<const RunSummary *> full;
                bool whole = true;
                for (const RunSummary &s : given_runs)
                    if (s.label == label && s.point == point) {
                        full.push_back(&s);
                        whole = whole && s.early_stop.empty();
                    }
                if (whole) {
                    auto checks = check_estimates(label, w, b->second, full, f, limits, point);
                    r.estimate_checks.insert(r.estimate_checks.end(), checks.begin(), checks.end());
                }
                continue;
            }
            auto c = estimate_cell(b->second, f, limits, point);
            if (!c) continue;
            estimated[{label, point}] = c->open;
            if (!c->decides) near.insert({label, point});
            for (RunSummary &s : c->runs) {
                tail_index.push_back(
                    static_cast<size_t>(of_seed(b->second, s.seed) - given_runs.data()));
                runs.push_back(std::move(s));
            }
        }
    }
    const TailSource tails = given_tails ? TailSource([&](size_t i, TailMetric m, double p) {
        return given_tails(tail_index.at(i), m, p);
    })
                                         : TailSource();
    for (size_t w = 0; w < worlds.size(); ++w) {
        PickScope scope;
        scope.point = world_point(space, worlds[w]);
        const Pick p = pick(runs, limits, tails, scope);
        std::vector<WorldCell> row(labels.size());
        for (const Verdict &v : p.ranked) {
            const auto it = std::find(labels.begin(), labels.end(), v.label);
            if (it == labels.end() || v.runs == 0) continue;
            const auto d = static_cast<size_t>(it - labels.begin());
            WorldCell &c = row[d];
            c.ran = true;
            c.meets_all = v.meets;
            c.worst_ratio = v.worst_ratio;
            if (auto e = stopped_early.find({v.label, scope.point}); e != stopped_early.end())
                c.early_stop = e->second;
            if (auto e = estimated.find({v.label, scope.point}); e != estimated.end()) {
                c.estimated = true;
                c.open = e->second;
            }
            c.near = near.count({v.label, scope.point}) > 0;
            DesignShare &sh = r.shares[d];
            bool every_judged = true, one_failed = false;
            size_t k = 0;
            for (const auto &[path, limit] : limits) {
                const LimitCheck &check = v.checks.at(k);
                // The figure that stopped a run is a lower bound: it says the design is over a
                // limit below it, and nothing of a higher one (results judged again with other
                // limits than the ones that stopped it).
                const bool judged = c.judged(path) && !(c.early_stop == path && check.met);
                c.met.push_back(judged && check.met);
                c.figure.push_back(check.measured
                                       ? std::round(check.ratio * static_cast<double>(limit.value))
                                       : std::numeric_limits<double>::infinity());
                if (r.limit_names.size() < limits.size()) r.limit_names.push_back(check.limit);
                if (judged) ++sh.judged[k];
                if (judged && check.met) ++sh.meets[k];
                every_judged = every_judged && judged;
                one_failed = one_failed || (judged && !check.met);
                ++k;
            }
            if (!c.early_stop.empty()) ++sh.stopped_early;
            if (c.estimated) ++sh.estimated;
            if (c.near) ++r.near_unconfirmed;
            if (v.violations > 0) ++sh.broken;
            // Every limit together: met when each is judged and met; failed when one judged
            // fails (or the design is broken); else not judged in this world.
            c.meets_all = v.meets && every_judged;
            ++sh.worlds;
            if (every_judged || one_failed || v.violations > 0) ++sh.all_judged;
            if (c.meets_all) ++sh.meets_all;
            sh.mean_worst_ratio += v.worst_ratio;
        }
        std::string stopped;
        for (size_t d = 0; d < labels.size(); ++d)
            if (!row[d].early_stop.empty())
                stopped += fmt::format("{}{} ({})", stopped.empty() ? "" : ", ", labels[d],
                                       row[d].early_stop);
        std::string repriced_designs;
        for (size_t d = 0; d < labels.size(); ++d)
            if (row[d].estimated)
                repriced_designs += (repriced_designs.empty() ? "" : ", ") + labels[d];
        if (!repriced_designs.empty())
            r.how[w] = "re-priced from the nominal runs: " + repriced_designs;
        if (!stopped.empty())
            r.how[w] +=
                fmt::format("{}full runs, but stopped early once over {}x a limit: {}",
                            repriced_designs.empty() ? "" : "; other ", kStopFactor, stopped);
        else if (!repriced_designs.empty() &&
                 std::any_of(row.begin(), row.end(),
                             [](const WorldCell &c) { return c.ran && !c.estimated; }))
            r.how[w] += "; the others full runs";
        if (std::none_of(row.begin(), row.end(), [](const WorldCell &c) { return c.ran; }))
            throw UserError(fmt::format("robust: world {} ({}) has no run", w + 1,
                                        RunSummary{.point = scope.point}.point_text()));
        r.cells.push_back(std::move(row));
    }
    for (DesignShare &sh : r.shares)
        if (sh.worlds) sh.mean_worst_ratio /= static_cast<double>(sh.worlds);
    // The robust pick.
    const DesignShare *best = nullptr;
    for (const DesignShare &sh : r.shares) {
        if (sh.meets_all == 0) continue;
        const double share = static_cast<double>(sh.meets_all) / static_cast<double>(sh.all_judged);
        if (!best) {
            best = &sh;
            continue;
        }
        const double best_share =
            static_cast<double>(best->meets_all) / static_cast<double>(best->all_judged);
        if (share > best_share ||
            (share == best_share && sh.mean_worst_ratio < best->mean_worst_ratio))
            best = &sh;
    }
    if (best) r.pick = best->label;
    // Sensitivity where a design comes near a limit.
    for (size_t d = 0; d < labels.size(); ++d)
        for (size_t k = 0; k < limits.size(); ++k) {
            const double limit_value = static_cast<double>(
                std::next(limits.begin(), static_cast<std::ptrdiff_t>(k))->second.value);
            bool near = false;
            for (size_t w = 0; w < worlds.size(); ++w) {
                const WorldCell &c = r.cells[w][d];
                const std::string &path =
                    std::next(limits.begin(), static_cast<std::ptrdiff_t>(k))->first;
                if (!c.ran || !c.early_stop.empty() || !c.judged(path) ||
                    !std::isfinite(c.figure[k]))
                    continue;
                const double ratio = c.figure[k] / limit_value;
                near = near || (ratio >= 1 / kNear && ratio <= kNear);
            }
            if (!near) continue;
            if (auto s = fit_sensitivity(r, d, k)) r.sensitivity.push_back(std::move(*s));
        }
    return r;
}

std::string format_robust(const Robust &r) {
    std::string out;
    const PriceSpace &s = r.space;
    out += fmt::format("robust: {} cost worlds, Latin hypercube over the price families ({})\n",
                       r.worlds.size(), s.source);
    std::string ranges;
    for (size_t k = 0; k < s.families.size(); ++k)
        ranges += s.range[k] == 1 ? fmt::format("{}{} x1 (not drawn)", k ? ", " : "", s.families[k])
                                  : fmt::format("{}{} x{:.3g}-x{:.3g}", k ? ", " : "",
                                                s.families[k], 1 / s.range[k], s.range[k]);
    out += fmt::format("  factors: {}\n", ranges);
    out += fmt::format("limits: {}\n", limits_text(r.limits));
    size_t wd = 6;
    for (const std::string &l : r.labels)
        wd = std::max(wd, l.size());
    constexpr size_t kCol = 22;
    auto line = [&](const std::string &first, const std::vector<std::string> &cells) {
        std::string l = fmt::format("{:<{}}", first, wd);
        for (const std::string &c : cells)
            l += fmt::format("  {:<{}}", c, kCol);
        while (!l.empty() && l.back() == ' ')
            l.pop_back();
        return l + "\n";
    };
    std::vector<std::string> heads{"every limit"};
    heads.insert(heads.end(), r.limit_names.begin(), r.limit_names.end());
    out += line("design", heads);
    for (const DesignShare &sh : r.shares) {
        std::vector<std::string> cells{share_text(sh.meets_all, sh.all_judged)};
        for (size_t k = 0; k < sh.meets.size(); ++k)
            cells.push_back(share_text(sh.meets[k], sh.judged[k]));
        out += line(sh.label, cells);
    }
    out += "(worlds meeting it of the worlds judged, share, 95% Wilson interval)\n";
    std::string stopped;
    for (const DesignShare &sh : r.shares)
        if (sh.stopped_early)
            stopped +=
                fmt::format("{}{} in {}", stopped.empty() ? "" : ", ", sh.label, sh.stopped_early);
    if (!stopped.empty())
        out += fmt::format(
            "stopped early once a figure passed {}x its limit (over that limit; the others not "
            "judged in that world): {}\n",
            kStopFactor, stopped);
    std::string repriced_text;
    for (const DesignShare &sh : r.shares) {
        if (sh.estimated)
            repriced_text += fmt::format("{}{} in {}", repriced_text.empty() ? "" : ", ", sh.label,
                                         sh.estimated);
    }
    if (!repriced_text.empty())
        out += fmt::format(
            "re-priced from the {} nominal runs' recorded work, not run (each limit clear of it by "
            "its margin, one as far over it, or broken): {}\n",
            r.nominal_runs, repriced_text);
    if (!r.margins.empty()) {
        std::string wide;
        for (const RepricingMargin &m : r.margins)
            if (m.margin > kRepriceError)
                wide += fmt::format("{}{} {} {}", wide.empty() ? "" : ", ", m.label,
                                    find_metric(m.limit)->pick.what,
                                    std::isfinite(m.margin)
                                        ? fmt::format("{:.0f}%", 100 * m.margin)
                                        : std::string("(a seed without one: always run)"));
        out += fmt::format("re-pricing margins: {:.0f}%{}{}\n", 100 * kRepriceError,
                           wide.empty() ? ""
                                        : ", wider where the figure moves more between the "
                                          "seeds at the profile's prices: ",
                           wide);
    }
    if (r.near_unconfirmed)
        out += fmt::format(
            "{} re-priced cell{} undecided, with no full run (a limit within its margin or not "
            "one re-pricing estimates: not judged there): run robust with these limits to run "
            "{} in full\n",
            r.near_unconfirmed, r.near_unconfirmed == 1 ? "" : "s",
            r.near_unconfirmed == 1 ? "it" : "them");
    if (!r.estimate_checks.empty()) {
        std::vector<double> errors;
        const EstimateCheck *worst = nullptr;
        for (const EstimateCheck &c : r.estimate_checks) {
            errors.push_back(std::fabs(c.error()));
            if (!worst || std::fabs(c.error()) > std::fabs(worst->error())) worst = &c;
        }
        std::sort(errors.begin(), errors.end());
        auto at = [&](double q) {
            return 100 *
                   errors[std::min(errors.size() - 1,
                                   static_cast<size_t>(q * static_cast<double>(errors.size())))];
        };
        out += fmt::format(
            "re-pricing against the full runs ({} figures, each the worst over the seeds): error "
            "median {:.1f}%, 90th percentile "
            "{:.1f}%, largest {:+.1f}% ({} {} in world {}: {} estimated, {} run)\n",
            errors.size(), at(0.5), at(0.9), 100 * worst->error(), worst->label,
            find_metric(worst->limit)->pick.what, worst->world + 1,
            metric_figure_text(worst->limit, worst->estimate),
            metric_figure_text(worst->limit, worst->full));
        size_t decided = 0;
        std::string otherwise;
        size_t n_otherwise = 0;
        for (const EstimateCheck &c : r.estimate_checks) {
            decided += c.decided;
            if (!c.judged_otherwise()) continue;
            ++n_otherwise;
            otherwise += fmt::format(
                "{}{} {} in world {} ({} estimated, {} run)", otherwise.empty() ? "" : "; ",
                c.label, find_metric(c.limit)->pick.what, c.world + 1,
                metric_figure_text(c.limit, c.estimate), metric_figure_text(c.limit, c.full));
        }
        out += fmt::format(
            "  re-pricing alone would have judged {} of them without a run, {} "
            "otherwise than the full run{}{}\n",
            decided, n_otherwise, n_otherwise ? ": " : "", otherwise);
    }
    std::string broken;
    for (const DesignShare &sh : r.shares)
        if (sh.broken)
            broken += fmt::format("{}{} in {}", broken.empty() ? "" : ", ", sh.label, sh.broken);
    if (!broken.empty())
        out += fmt::format(
            "broken (self-check violations: meets no limit whatever its figures; `pick` on the "
            "results names them): {}\n",
            broken);
    if (r.pick.empty()) {
        out += "robust pick: none: no design meets every limit in any world\n";
    } else {
        const DesignShare &sh =
            *std::find_if(r.shares.begin(), r.shares.end(),
                          [&](const DesignShare &x) { return x.label == r.pick; });
        const ShareInterval i = wilson_interval(sh.meets_all, sh.all_judged);
        out += fmt::format(
            "robust pick: {}, meets every limit in {} of {} worlds ({}, 95% interval "
            "{:.0f}-{:.0f}%)\n",
            r.pick, sh.meets_all, sh.all_judged, percent(sh.meets_all, sh.all_judged), 100 * i.lo,
            100 * i.hi);
    }
    if (r.sensitivity.empty()) {
        out += fmt::format("sensitivity: no design comes within {:.1f}x of a limit in any world\n",
                           kNear);
    } else {
        out += fmt::format(
            "sensitivity (designs within {:.1f}x of a limit in some world; fit ln figure = a + "
            "sum b ln factor over the worlds):\n",
            kNear);
        for (const Sensitivity &se : r.sensitivity) {
            if (!se.note.empty()) {
                out += fmt::format("  {} {}: not fitted: {}\n", se.label,
                                   find_metric(se.limit)->pick.what, se.note);
                continue;
            }
            out += fmt::format("  {} {}: {} at the profile's prices (fit R^2 {:.2f}, {} worlds)\n",
                               se.label, find_metric(se.limit)->pick.what,
                               metric_figure_text(se.limit, se.nominal), se.r2, se.worlds);
            std::string small;
            for (const FamilyEffect &e : se.effects) {
                if (e.moves < kMoves) {
                    small += (small.empty() ? "" : ", ") + e.family;
                    continue;
                }
                std::string flip = "its verdict flips only beyond x0.01-x100";
                if (e.flip && *e.flip >= kMinFlip && *e.flip <= kMaxFlip)
                    flip =
                        fmt::format("its verdict flips at {} {} {}", e.family, factor_text(*e.flip),
                                    e.flip_in_range ? "(within the range)" : "(outside the range)");
                out += fmt::format(
                    "    {:<13} elasticity {:+.2f}, moves it up to x{:.3f} over "
                    "the range; {}\n",
                    e.family, e.elasticity, e.moves, flip);
            }
            if (!small.empty())
                out +=
                    fmt::format("    {} move{} it by less than {:.0f}% over {} range{}\n", small,
                                small.find(',') == std::string::npos ? "s" : "", (kMoves - 1) * 100,
                                small.find(',') == std::string::npos ? "its" : "their",
                                small.find(',') == std::string::npos ? "" : "s");
        }
    }
    const std::string grid =
        fmt::format("{} worlds, {} design{}, {} seed{} each", r.worlds.size(), r.labels.size(),
                    r.labels.size() == 1 ? "" : "s", r.seeds, r.seeds == 1 ? "" : "s");
    if (r.nominal_runs == 0)
        out += fmt::format("runs: {} ({})\n", r.runs, grid);
    else
        out +=
            fmt::format("runs: {} ({} at the profile's prices, {} of the {} in the worlds: {})\n",
                        r.runs, r.nominal_runs, r.runs - r.nominal_runs,
                        r.worlds.size() * r.labels.size() * r.seeds, grid);
    return out;
}

json robust_json(const Robust &r, const std::string &results_name) {
    json space = {
        {"families", r.space.families}, {"range", r.space.range}, {"source", r.space.source}};
    json limits = json::object();
    for (const auto &[path, l] : r.limits)
        limits[path] = l.value;
    json worlds = json::array();
    for (size_t w = 0; w < r.worlds.size(); ++w) {
        json prices = json::object();
        for (size_t k = 0; k < r.space.families.size(); ++k)
            prices[r.space.families[k]] = r.worlds[w][k];
        json designs = json::object();
        for (size_t d = 0; d < r.labels.size(); ++d) {
            const WorldCell &c = r.cells[w][d];
            if (!c.ran) continue;
            json figures = json::object(), met = json::object();
            size_t k = 0;
            for (const auto &[path, l] : r.limits) {
                figures[path] = std::isfinite(c.figure[k]) ? json(c.figure[k]) : json(nullptr);
                met[path] = static_cast<bool>(c.met[k]);
                ++k;
            }
            designs[r.labels[d]] = {
                {"meets_all", c.meets_all},
                {"estimated", c.estimated},
                {"near", c.near},
                {"early_stop", c.early_stop.empty() ? json(nullptr) : json(c.early_stop)},
                {"met", met},
                {"figure", figures},
                {"worst_ratio", c.worst_ratio}};
        }
        worlds.push_back({{"prices", prices}, {"how", r.how[w]}, {"designs", designs}});
    }
    json shares = json::array();
    for (const DesignShare &sh : r.shares) {
        const ShareInterval all = wilson_interval(sh.meets_all, sh.all_judged);
        json per = json::object();
        size_t k = 0;
        for (const auto &[path, l] : r.limits) {
            const ShareInterval i = wilson_interval(sh.meets[k], sh.judged[k]);
            per[path] = {
                {"meets", sh.meets[k]}, {"judged", sh.judged[k]}, {"interval", {i.lo, i.hi}}};
            ++k;
        }
        shares.push_back({{"label", sh.label},
                          {"worlds", sh.worlds},
                          {"meets_all", sh.meets_all},
                          {"all_judged", sh.all_judged},
                          {"stopped_early", sh.stopped_early},
                          {"estimated", sh.estimated},
                          {"broken", sh.broken},
                          {"interval", {all.lo, all.hi}},
                          {"mean_worst_ratio", sh.mean_worst_ratio},
                          {"limits", per}});
    }
    json sens = json::array();
    for (const Sensitivity &se : r.sensitivity) {
        json effects = json::array();
        for (const FamilyEffect &e : se.effects)
            effects.push_back({{"family", e.family},
                               {"elasticity", e.elasticity},
                               {"moves", e.moves},
                               {"flip", e.flip ? json(*e.flip) : json(nullptr)},
                               {"flip_in_range", e.flip_in_range}});
        sens.push_back({{"label", se.label},
                        {"note", se.note.empty() ? json(nullptr) : json(se.note)},
                        {"limit", se.limit},
                        {"nominal", se.nominal},
                        {"r2", se.r2},
                        {"worlds", se.worlds},
                        {"effects", effects}});
    }
    json margins = json::array();
    for (const RepricingMargin &m : r.margins)
        margins.push_back({{"label", m.label},
                           {"limit", m.limit},
                           {"margin", std::isfinite(m.margin) ? json(m.margin) : json(nullptr)}});
    json checks = json::array();
    for (const EstimateCheck &c : r.estimate_checks)
        checks.push_back({{"label", c.label},
                          {"limit", c.limit},
                          {"world", c.world + 1},
                          {"estimate", c.estimate},
                          {"full", c.full},
                          {"decided", c.decided},
                          {"judged_otherwise", c.judged_otherwise()}});
    return {{"schema", "locksim/robust/1"},
            {"results", results_name},
            {"space", space},
            {"limits", limits},
            {"worlds", worlds},
            {"shares", shares},
            {"pick", r.pick.empty() ? json(nullptr) : json(r.pick)},
            {"sensitivity", sens},
            {"runs", r.runs},
            {"nominal_runs", r.nominal_runs},
            {"near_unconfirmed", r.near_unconfirmed},
            {"margins", margins},
            {"estimate_checks", checks},
            {"seeds", r.seeds}};
}

}  // namespace locksim::analysis
