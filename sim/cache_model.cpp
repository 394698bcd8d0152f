#include "sim/cache_model.h"

#include <algorithm>
#include <cmath>

#include "util/work_meter.h"

namespace locksim::sim {
TagCache::TagCache(uint64_t lines) : half_(std::max<uint64_t>(1, lines / 2)) {}

bool TagCache::touch(uint64_t tag) {
    LineSet &cur = gens_[cur_];
    if (cur.contains(tag)) return true;
    const bool held = gens_[1 - cur_].contains(tag);
    if (cur.size() >= half_) {
        // The current generation is full: it becomes the previous one, the oldest is dropped.
        cur_ = 1 - cur_;
        gens_[cur_].clear();
    }
    gens_[cur_].insert(tag);
    return held;
}

namespace {

int log2_of(int64_t n) {
    int s = 0;
    while ((int64_t{1} << (s + 1)) <= n)
        ++s;
    return s;
}

}  // namespace

CacheHierarchy::CacheHierarchy(const MemoryLatency &lat, const std::vector<int64_t> &private_lines)
    : lat_(lat),
      llc_independent_ps_(std::llround(static_cast<double>(lat.llc_ps) / std::max(1.0, lat.mlp))),
      dram_independent_ps_(std::llround(static_cast<double>(lat.dram_ps) / std::max(1.0, lat.mlp))),
      shift_(log2_of(std::max<int64_t>(1, lat.sample))),
      llc_(static_cast<uint64_t>(std::max<int64_t>(1, lat.llc_lines >> shift_))) {
    if (!enabled()) return;
    for (int64_t lines : private_lines)
        private_.emplace_back(static_cast<uint64_t>(
            std::max<int64_t>(2, (lines > 0 ? lines : lat.private_lines) >> shift_)));
    seen_.assign(private_lines.size(), {0, 0});
}

int64_t CacheHierarchy::price(int cpu, std::span<const uint64_t> lines, MemoryTally &tally) {
    return price_lines<true>(cpu, lines, lines.size(), tally);
}

int64_t CacheHierarchy::price_sampled(int cpu, std::span<const uint64_t> sampled, uint64_t touches,
                                      MemoryTally &tally) {
    return price_lines<false>(cpu, sampled, touches, tally);
}

template <bool Filter>
int64_t CacheHierarchy::price_lines(int cpu, std::span<const uint64_t> lines, uint64_t touches,
                                    MemoryTally &tally) {
    if (!enabled() || touches == 0) return 0;
    const auto c = static_cast<size_t>(cpu);
    TagCache &mine = private_[c];
    int64_t stall = 0;
    uint64_t n = 0, llc = 0, dram = 0, llc_ind = 0, dram_ind = 0;
    for (uint64_t recorded : lines) {
        const uint64_t tag = line_tag(recorded);
        if (Filter && !line_sampled(tag, shift_)) continue;
        ++n;
        if (mine.touch(tag)) continue;
        if (line_written(recorded)) {
            llc_.touch(tag);  // a new line written: taken into both caches, no stall
            continue;
        }
        const bool dependent = line_dependent(recorded);
        if (llc_.touch(tag)) {
            stall += dependent ? lat_.llc_ps : llc_independent_ps_;
            ++llc;
            llc_ind += !dependent;
        } else {
            stall += dependent ? lat_.dram_ps : dram_independent_ps_;
            ++dram;
            dram_ind += !dependent;
        }
    }
    auto &[seen_lines, seen_stall] = seen_[c];
    seen_lines += n;
    seen_stall += stall;
    const uint64_t all = touches;
    if (n == 0) {
        // No sampled line: the CPU's mean so far.
        stall = seen_lines ? static_cast<int64_t>(static_cast<__int128>(seen_stall) * all /
                                                  static_cast<int64_t>(seen_lines))
                           : 0;
    } else if (n < all) {
        stall = static_cast<int64_t>(static_cast<__int128>(stall) * all / n);
        llc = llc * all / n;
        dram = dram * all / n;
        llc_ind = llc_ind * all / n;
        dram_ind = dram_ind * all / n;
    }
    tally.touches += all;
    tally.llc_hits += llc;
    tally.dram += dram;
    tally.llc_independent += llc_ind;
    tally.dram_independent += dram_ind;
    tally.stall_ps += stall;
    return stall;
}

}  // namespace locksim::sim
