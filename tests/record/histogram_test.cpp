#include "record/histogram.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

using locksim::kernel::Histogram;

TEST(Histogram, BucketsCoverEveryValueWithinOnePercent) {
    for (int64_t v :
         {0L, 1L, 255L, 256L, 257L, 511L, 512L, 1000L, 123456L, 999999937L, Histogram::kMaxValue}) {
        size_t b = Histogram::bucket_of(v);
        ASSERT_LT(b, Histogram::kBuckets);
        EXPECT_LE(Histogram::bucket_low(b), v);
        EXPECT_GE(Histogram::bucket_high(b), v);
        double err = std::abs(static_cast<double>(Histogram::bucket_mid(b) - v)) /
                     static_cast<double>(std::max<int64_t>(v, 1));
        EXPECT_LE(err, 0.01) << v;
    }
    // Buckets tile the value range without gaps.
    for (size_t b = 1; b < Histogram::kBuckets; ++b)
        ASSERT_EQ(Histogram::bucket_low(b), Histogram::bucket_high(b - 1) + 1) << b;
}

TEST(Histogram, PercentilesOfUniformValues) {
    Histogram h;
    for (int64_t v = 1; v <= 100000; ++v)
        h.record(v * 10);
    EXPECT_EQ(h.count(), 100000u);
    EXPECT_EQ(h.min(), 10);
    EXPECT_EQ(h.max(), 1000000);
    EXPECT_NEAR(static_cast<double>(h.value_at_percentile(50)), 500000, 5000);
    EXPECT_NEAR(static_cast<double>(h.value_at_percentile(99)), 990000, 9900);
    EXPECT_EQ(h.value_at_percentile(100), 1000000);
    EXPECT_NEAR(h.mean(), 500005, 1);
}

TEST(Histogram, MergeEqualsRecordingEverything) {
    std::mt19937_64 rng(7);
    std::exponential_distribution<double> d(1e-5);
    Histogram a, b, all;
    for (int i = 0; i < 10000; ++i) {
        auto v = static_cast<int64_t>(d(rng));
        (i % 2 ? a : b).record(v);
        all.record(v);
    }
    a.merge(b);
    EXPECT_TRUE(a == all);
    EXPECT_EQ(a.value_at_percentile(99.9), all.value_at_percentile(99.9));
}

TEST(Histogram, JsonRoundTripAndPercentileTable) {
    Histogram h;
    for (int64_t v : {5, 50, 500, 5000, 50000})
        h.record(v, 3);
    nlohmann::json j = h;
    Histogram back = j.get<Histogram>();
    EXPECT_TRUE(back == h);
    std::string table = h.percentile_table(1000.0);
    EXPECT_NE(table.find("Percentile"), std::string::npos);
    EXPECT_NE(table.find("#[Max     ="), std::string::npos);
    EXPECT_NE(table.find("Total count    =           15"), std::string::npos);
}

TEST(Histogram, EmptyHistogramIsHarmless) {
    Histogram h;
    EXPECT_EQ(h.value_at_percentile(99), 0);
    EXPECT_EQ(h.mean(), 0);
    Histogram other;
    other.merge(h);
    EXPECT_EQ(other.count(), 0u);
    EXPECT_NO_THROW((void)h.percentile_table());
}
