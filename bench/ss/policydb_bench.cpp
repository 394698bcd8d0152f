// Policy database costs on the Debian default policy:
//   Load/ours vs Load/libsepol   policydb_read of the same bytes, including freeing the result
//   FullCopy                     policydb_write + policydb_read (the rcu-full-copy toggle cost)
//   LevelIsvalid/{BitByBit,Contains}  mls_level_isvalid on a level with 1024 categories
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sepol_counts.h"
#include "ss/policydb.h"

namespace {

using namespace locksim::ss;
using locksim::Work;
using locksim::WorkCounts;
using locksim::WorkMeterScope;

const std::vector<uint8_t> &default_policy() {
    static const std::vector<uint8_t> bytes = [] {
        std::ifstream in(std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33", std::ios::binary);
        return std::vector<uint8_t>(std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>());
    }();
    return bytes;
}

void BM_LoadOurs(benchmark::State &state) {
    const auto &bytes = default_policy();
    for (auto _ : state) {
        Policydb db = policydb_read(bytes, "default");
        benchmark::DoNotOptimize(db.base.get());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_LoadOurs)->Name("Load/ours")->Unit(benchmark::kMillisecond);

void BM_LoadLibsepol(benchmark::State &state) {
    const auto &bytes = default_policy();
    for (auto _ : state) {
        void *p = sepol_policy_load(bytes.data(), bytes.size());
        if (!p) {
            state.SkipWithError("libsepol refused the policy");
            break;
        }
        sepol_policy_free(p);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}
BENCHMARK(BM_LoadLibsepol)->Name("Load/libsepol")->Unit(benchmark::kMillisecond);

void BM_Write(benchmark::State &state) {
    Policydb db = policydb_read(default_policy(), "default");
    for (auto _ : state) {
        std::vector<uint8_t> out = policydb_write(db);
        benchmark::DoNotOptimize(out.data());
    }
}
BENCHMARK(BM_Write)->Name("Write")->Unit(benchmark::kMillisecond);

void BM_FullCopy(benchmark::State &state) {
    Policydb db = policydb_read(default_policy(), "default");
    WorkCounts work;
    for (auto _ : state) {
        WorkMeterScope meter(&work);
        Policydb copy = policydb_read(policydb_write(db), "copy");
        benchmark::DoNotOptimize(copy.base.get());
    }
    state.counters["bytes_serialized/iter"] =
        static_cast<double>(work[Work::BytesSerialized]) / static_cast<double>(state.iterations());
    state.counters["allocs/iter"] =
        static_cast<double>(work[Work::Alloc]) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_FullCopy)->Name("FullCopy")->Unit(benchmark::kMillisecond);

void BM_LevelIsvalid(benchmark::State &state) {
    static const Policydb db = policydb_read(default_policy(), "default");
    const PolicyBase &p = db.b();
    MlsLevel level;
    level.sens = 1;
    for (uint32_t c = 0; c < 1024; ++c)
        level.cat.set_bit(c, true);
    auto how = state.range(0) ? LevelCheck::Contains : LevelCheck::BitByBit;
    for (auto _ : state) {
        bool ok = mls_level_isvalid(p, level, how);
        benchmark::DoNotOptimize(ok);
    }
}
BENCHMARK(BM_LevelIsvalid)->Name("LevelIsvalid/BitByBit")->Arg(0);
BENCHMARK(BM_LevelIsvalid)->Name("LevelIsvalid/Contains")->Arg(1);

}  // namespace

BENCHMARK_MAIN();
