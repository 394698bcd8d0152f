#include "analysis/reprice.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/metrics.h"

namespace locksim::analysis {

namespace {

double priced_length(const kernel::PricedItem &i, const Factors &f) {
    double sum = static_cast<double>(i.len);
    for (size_t k = 0; k < f.size(); ++k)
        sum += (f[k] - 1) * static_cast<double>(i.family[k]);
    return sum;
}

}  // namespace

std::optional<Estimate> reprice(const RunSummary &run, std::string_view metric, const Factors &f) {
    const kernel::PricedTop *top = run.priced.of(metric);
    if (!top || run.priced.empty()) return std::nullopt;
    Estimate e;
    for (const kernel::PricedItem &i : top->items)
        e.lo = std::max(e.lo, priced_length(i, f));
    e.hi = e.lo;
    if (top->count > top->items.size() && !top->items.empty()) {
        const double stretch = std::max(1.0, *std::max_element(f.begin(), f.end()));
        e.hi = std::max(e.lo, static_cast<double>(top->items.back().len) * stretch);
    }
    return e;
}

bool repriceable(const std::string &metric, const Limit &limit) {
    return !limit.probability && kernel::PricedRecord{}.of(metric) != nullptr;
}

double repricing_margin(const std::vector<double> &figures) {
    if (figures.empty()) return kRepriceError;
    const auto [lo, hi] = std::minmax_element(figures.begin(), figures.end());
    if (*hi <= 0) return kRepriceError;
    if (*lo <= 0) return std::numeric_limits<double>::infinity();
    return std::max(kRepriceError, *hi / *lo - 1);
}

Side estimate_side(const Estimate &e, double limit, double margin) {
    if (e.hi * (1 + margin) <= limit) return Side::Under;
    if (e.lo * (1 - margin) > limit) return Side::Over;
    return Side::Near;
}

std::optional<RunSummary> repriced(const RunSummary &base, const Factors &f,
                                   std::vector<std::pair<std::string, std::string>> point) {
    if (base.priced.empty()) return std::nullopt;
    RunSummary s = base;
    s.point = std::move(point);
    for (const auto &[name, list] : kernel::kPricedKinds) {
        const std::string path = std::string(name) + std::string(kernel::kPricedMetricKey);
        if (auto e = reprice(base, path, f))
            set(s, *find_metric(path), int64_t{std::llround(e->lo)});
    }
    return s;
}

}  // namespace locksim::analysis
