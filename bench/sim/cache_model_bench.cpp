// The cache model's own cost: pricing lines alone, counting a memo entry's distinct lines, and a
// simulation of compute spans that read an avtab-sized working set with the model on and off
// (the ratio is the model's share).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>

#include "sim/cache_model.h"
#include "sim/sim_platform.h"

namespace {

using namespace locksim;

// Lines of a 130k-node avtab read in a scattered but fixed order, as compute_av's searches do.
std::vector<uint64_t> working_set(uint64_t lines, uint64_t per_call, uint64_t call) {
    std::vector<uint64_t> v;
    uint64_t x = call * 0x9e3779b97f4a7c15ull + 1;
    for (uint64_t i = 0; i < per_call; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push_back(mem_line(MemRegion::AvtabNode, 1, x % lines));
    }
    return v;
}

void BM_CachePrice(benchmark::State &state) {
    sim::MemoryLatency lat{
        .private_lines = 4096, .llc_lines = 131072, .llc_ps = 11300, .dram_ps = 56200};
    sim::CacheHierarchy h(lat, {0, 0, 0, 0});
    std::vector<std::vector<uint64_t>> calls;
    for (uint64_t c = 0; c < 64; ++c)
        calls.push_back(working_set(static_cast<uint64_t>(state.range(0)), 1000, c));
    sim::MemoryTally t;
    size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(h.price(static_cast<int>(i % 4), calls[i % calls.size()], t));
        ++i;
    }
    state.SetItemsProcessed(static_cast<int64_t>(i) * 1000);
}
BENCHMARK(BM_CachePrice)->Arg(8192)->Arg(140000);

// A new memo entry's lines (a compute_av's searches, repeats included) reduced to the count of
// distinct lines and the sampled ones in tag order (1/32): by sorting them all (arg 0, the
// former way) or through keep_distinct_sampled (arg 1).
void BM_DistinctLines(benchmark::State &state) {
    std::vector<std::vector<uint64_t>> calls;
    for (uint64_t c = 0; c < 64; ++c)
        calls.push_back(working_set(8192, 3000, c));
    LineSet seen;
    std::vector<uint64_t> lines;
    size_t i = 0;
    for (auto _ : state) {
        const std::vector<uint64_t> &call = calls[i++ % calls.size()];
        lines.assign(call.begin(), call.end());
        uint64_t distinct;
        if (state.range(0)) {
            distinct = keep_distinct_sampled(lines, 5, seen);
        } else {
            std::sort(lines.begin(), lines.end());
            lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
            distinct = lines.size();
            std::erase_if(lines, [](uint64_t l) { return !line_sampled(l, 5); });
        }
        benchmark::DoNotOptimize(distinct);
        benchmark::DoNotOptimize(lines.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(i) * 3000);
}
BENCHMARK(BM_DistinctLines)->Arg(0)->Arg(1);

// Four CPUs making compute spans of 300 avtab-node reads each (a Fedora-sized compute_av's
// distinct lines: ~150 pairs x 2 searches), with the model (arg 1) or without (0).
void BM_SimSpans(benchmark::State &state) {
    for (auto _ : state) {
        sim::SimConfig cfg;
        cfg.cpus = 4;
        cfg.duration = 50 * kernel::kMsec;
        cfg.profile.work_ps[static_cast<size_t>(Work::AvtabNode)] = 4800;
        if (state.range(0)) {
            cfg.profile.memory.private_kib = 256;
            cfg.profile.memory.llc_kib = 8192;
            cfg.profile.memory.llc_ns = 11.3;
            cfg.profile.memory.dram_ns = 56.2;
        }
        sim::SimPlatform sim(cfg);
        for (int t = 0; t < 4; ++t)
            // fmt rather than "t" + std::to_string(t), on which GCC 12 warns (-Wrestrict, a
            // false positive).
            sim.create_task({fmt::format("t{}", t), kernel::Sched::Other, 0, t, false}, [t] {
                static const kernel::Label op("span");
                for (uint64_t c = static_cast<uint64_t>(t); !kernel::kthread_should_stop();
                     c += 4) {
                    kernel::compute(op, [c] {
                        for (uint64_t line : working_set(140000, 300, c % 8192)) {
                            count_work(Work::AvtabNode);
                            touch_line(line, Access::Dependent);
                        }
                    });
                    kernel::ndelay(20000);
                }
            });
        benchmark::DoNotOptimize(sim.run());
    }
}
BENCHMARK(BM_SimSpans)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
