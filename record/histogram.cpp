#include "record/histogram.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace locksim::kernel {

int64_t Histogram::bucket_low(size_t index) {
    if (index < static_cast<size_t>(kSub)) return static_cast<int64_t>(index);
    size_t rel = index - kSub;
    int e = static_cast<int>(rel / kHalf) + 1;
    int64_t sub = static_cast<int64_t>(rel % kHalf) + kHalf;
    return sub << e;
}

int64_t Histogram::bucket_high(size_t index) {
    if (index < static_cast<size_t>(kSub)) return static_cast<int64_t>(index);
    int e = static_cast<int>((index - kSub) / kHalf) + 1;
    return bucket_low(index) + (int64_t{1} << e) - 1;
}

int64_t Histogram::bucket_mid(size_t index) {
    return bucket_low(index) + (bucket_high(index) - bucket_low(index)) / 2;
}

void Histogram::allocate() {
    counts_.assign(kBuckets, 0);
}

void Histogram::merge(const Histogram &o) {
    if (o.count_ == 0) return;
    if (counts_.empty()) counts_.assign(kBuckets, 0);
    for (size_t i = 0; i < kBuckets; ++i)
        counts_[i] += o.counts_[i];
    min_ = count_ ? std::min(min_, o.min_) : o.min_;
    max_ = std::max(max_, o.max_);
    count_ += o.count_;
    sum_ += o.sum_;
    sum_sq_ += o.sum_sq_;
}

void Histogram::clear() {
    *this = Histogram{};
}

double Histogram::stddev() const {
    if (count_ == 0) return 0;
    double m = mean();
    double var = sum_sq_ / static_cast<double>(count_) - m * m;
    return var > 0 ? std::sqrt(var) : 0;
}

int64_t Histogram::value_at_percentile(double percentile) const {
    if (count_ == 0) return 0;
    percentile = std::clamp(percentile, 0.0, 100.0);
    auto target =
        static_cast<uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(count_)));
    target = std::max<uint64_t>(target, 1);
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
        seen += counts_[i];
        if (seen >= target) return std::clamp(bucket_mid(i), min_, max_);
    }
    return max_;
}

std::string Histogram::percentile_table(double unit, int ticks_per_half) const {
    std::string out = fmt::format("{:>12} {:>14} {:>10} {:>14}\n\n", "Value", "Percentile",
                                  "TotalCount", "1/(1-Percentile)");
    if (count_ > 0) {
        // Percentile steps halve the remaining distance to 100 %, ticks_per_half per halving,
        // as HdrHistogram's outputPercentileDistribution does.
        double pct = 0;
        double half_distance = 50.0;
        for (int guard = 0; guard < 400; ++guard) {
            int64_t v = value_at_percentile(pct);
            uint64_t below = 0;
            for (size_t i = 0; i < kBuckets && bucket_low(i) <= v; ++i)
                below += counts_[i];
            double inv = pct < 100.0 ? 1.0 / (1.0 - pct / 100.0) : 0;
            out += fmt::format("{:12.3f} {:14.12f} {:10d} {:14.2f}\n",
                               static_cast<double>(v) / unit, pct / 100.0, below, inv);
            if (below >= count_ || pct >= 100.0) break;
            pct += half_distance / ticks_per_half;
            if (pct >= 100.0 - half_distance + 1e-12) half_distance /= 2;
        }
        int64_t vmax = max_;
        out += fmt::format("{:12.3f} {:14.12f} {:10d} {:>14}\n", static_cast<double>(vmax) / unit,
                           1.0, count_, "");
    }
    out += fmt::format("#[Mean    = {:12.3f}, StdDeviation   = {:12.3f}]\n", mean() / unit,
                       stddev() / unit);
    out += fmt::format("#[Max     = {:12.3f}, Total count    = {:12d}]\n",
                       static_cast<double>(max_) / unit, count_);
    out += fmt::format("#[Buckets = {:12d}, SubBuckets     = {:12d}]\n", kBuckets, kSub);
    return out;
}

bool Histogram::operator==(const Histogram &o) const {
    if (count_ != o.count_ || min() != o.min() || max_ != o.max_ || sum_ != o.sum_) return false;
    for (size_t i = 0; i < kBuckets; ++i) {
        uint64_t a = counts_.empty() ? 0 : counts_[i];
        uint64_t b = o.counts_.empty() ? 0 : o.counts_[i];
        if (a != b) return false;
    }
    return true;
}

void to_json(nlohmann::json &j, const Histogram &h) {
    j = nlohmann::json{{"count", h.count_},
                       {"min", h.min()},
                       {"max", h.max_},
                       {"mean", h.mean()},
                       {"sum", h.sum_},
                       {"p50", h.value_at_percentile(50)},
                       {"p90", h.value_at_percentile(90)},
                       {"p99", h.value_at_percentile(99)},
                       {"p99_9", h.value_at_percentile(99.9)},
                       {"p99_99", h.value_at_percentile(99.99)}};
    // Sparse buckets [index, count], so that results files can be merged exactly.
    auto buckets = nlohmann::json::array();
    for (size_t i = 0; i < h.counts_.size(); ++i)
        if (h.counts_[i]) buckets.push_back({i, h.counts_[i]});
    j["buckets"] = std::move(buckets);
    j["sum_sq"] = h.sum_sq_;
}

void from_json(const nlohmann::json &j, Histogram &h) {
    h.clear();
    for (const auto &b : j.at("buckets")) {
        auto i = b.at(0).get<size_t>();
        if (i >= Histogram::kBuckets)
            throw std::invalid_argument("histogram bucket index out of range");
        if (h.counts_.empty()) h.counts_.assign(Histogram::kBuckets, 0);
        h.counts_[i] += b.at(1).get<uint64_t>();
    }
    h.count_ = j.at("count").get<uint64_t>();
    h.min_ = j.at("min").get<int64_t>();
    h.max_ = j.at("max").get<int64_t>();
    h.sum_ = j.at("sum").get<int64_t>();
    h.sum_sq_ = j.value("sum_sq", 0.0);
}

}  // namespace locksim::kernel
