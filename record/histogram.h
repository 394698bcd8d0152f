// A log-linear histogram of non-negative integer values (nanoseconds, bytes), in the manner of
// HdrHistogram: values below 256 are counted exactly; above, each power-of-two range is split
// into 128 equal buckets, so any value is reported within 1/256 (0.4 %) of the truth when the
// bucket's midpoint is used. Memory is fixed (at most kBuckets counters, allocated on the first
// record); two histograms merge by adding counters, so per-CPU or per-run histograms combine
// exactly. Values above kMaxValue are clamped into the last bucket (max() stays exact).
#pragma once

#include <bit>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace locksim::kernel {

class Histogram {
  public:
    static constexpr int kSubBits = 8;  // 256 linear sub-buckets
    static constexpr int64_t kSub = int64_t{1} << kSubBits;
    static constexpr int64_t kHalf = kSub / 2;
    static constexpr int kMaxExponent = 37;  // values below 2^45 (about 9.8 h in ns)
    static constexpr int64_t kMaxValue = (int64_t{1} << (kSubBits + kMaxExponent)) - 1;
    static constexpr size_t kBuckets = kSub + kMaxExponent * kHalf;

    void record(int64_t value, uint64_t count = 1) {  // inline: on every section's close
        if (count == 0) return;
        if (value < 0) value = 0;
        if (counts_.empty()) allocate();
        counts_[bucket_of(value)] += count;
        if (count_ == 0 || value < min_) min_ = value;
        if (value > max_) max_ = value;
        count_ += count;
        sum_ += value * static_cast<int64_t>(count);
        const auto v = static_cast<double>(value);
        sum_sq_ += v * v * static_cast<double>(count);
    }
    void merge(const Histogram &other);
    void clear();

    uint64_t count() const { return count_; }
    int64_t min() const { return count_ ? min_ : 0; }
    int64_t max() const { return max_; }
    double mean() const {
        return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0;
    }
    // Sum of all recorded values (saturating is not needed below 2^63 ns of total time).
    int64_t sum() const { return sum_; }
    double stddev() const;
    // The value at or below which `percentile` (0..100) of the recorded values lie, reported as
    // the midpoint of its bucket (exact below 256), never above max() nor below min().
    int64_t value_at_percentile(double percentile) const;

    // HdrHistogram-style percentile table (the .hgrm text format), values divided by `unit`
    // (e.g. 1000 to print microseconds from nanoseconds).
    std::string percentile_table(double unit = 1.0, int ticks_per_half = 5) const;

    // Bucket arithmetic, public for tests.
    static size_t bucket_of(int64_t value) {
        if (value < 0) value = 0;
        if (value > kMaxValue) value = kMaxValue;
        if (value < kSub) return static_cast<size_t>(value);
        // exponent e >= 1 such that value >> e lies in [kHalf, kSub)
        const int e = std::bit_width(static_cast<uint64_t>(value)) - kSubBits;
        const int64_t sub = value >> e;  // in [kHalf, kSub)
        return static_cast<size_t>(kSub + (e - 1) * kHalf + (sub - kHalf));
    }
    static int64_t bucket_low(size_t index);
    static int64_t bucket_high(size_t index);  // inclusive
    static int64_t bucket_mid(size_t index);
    // How many recorded values fall in bucket `index`.
    uint64_t count_at(size_t index) const { return index < counts_.size() ? counts_[index] : 0; }

    bool operator==(const Histogram &o) const;

    friend void to_json(nlohmann::json &j, const Histogram &h);
    friend void from_json(const nlohmann::json &j, Histogram &h);

  private:
    void allocate();                // the counters, at the first record
    std::vector<uint64_t> counts_;  // empty until the first record, then kBuckets long
    uint64_t count_ = 0;
    int64_t min_ = 0;
    int64_t max_ = 0;
    int64_t sum_ = 0;
    double sum_sq_ = 0;
};

}  // namespace locksim::kernel
