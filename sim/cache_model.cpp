#include "sim/cache_model.h"

#include <algorithm>

namespace locksim::sim {
namespace {

inline uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

}  // namespace

bool TagCache::Gen::find(uint64_t tag) const {
    if (tags.empty()) return false;
    const uint64_t mask = tags.size() - 1;
    for (uint64_t i = mix(tag) & mask;; i = (i + 1) & mask) {
        if (epochs[i] != epoch) return false;
        if (tags[i] == tag) return true;
    }
}

void TagCache::Gen::insert(uint64_t tag) {
    if ((size + 1) * 2 > tags.size()) grow();
    const uint64_t mask = tags.size() - 1;
    uint64_t i = mix(tag) & mask;
    while (epochs[i] == epoch)
        i = (i + 1) & mask;
    tags[i] = tag;
    epochs[i] = epoch;
    ++size;
}

void TagCache::Gen::grow() {
    std::vector<uint64_t> old_tags = std::move(tags);
    std::vector<uint32_t> old_epochs = std::move(epochs);
    const size_t n = std::max<size_t>(1024, old_tags.size() * 2);
    tags.assign(n, 0);
    epochs.assign(n, 0);
    const uint32_t live = epoch;
    epoch = 1;
    size = 0;
    for (size_t i = 0; i < old_tags.size(); ++i)
        if (old_epochs[i] == live) insert(old_tags[i]);
}

TagCache::TagCache(uint64_t lines) : half_(std::max<uint64_t>(1, lines / 2)) {}

bool TagCache::touch(uint64_t tag) {
    Gen &cur = gens_[cur_];
    if (cur.find(tag)) return true;
    const bool held = gens_[1 - cur_].find(tag);
    if (cur.size >= half_) {
        // The current generation is full: it becomes the previous one, the oldest is dropped.
        cur_ = 1 - cur_;
        gens_[cur_].clear();
    }
    gens_[cur_].insert(tag);
    return held;
}

CacheHierarchy::CacheHierarchy(const MemoryLatency &lat, const std::vector<int64_t> &private_lines)
    : lat_(lat), llc_(static_cast<uint64_t>(std::max<int64_t>(1, lat.llc_lines))) {
    if (!enabled()) return;
    for (int64_t lines : private_lines)
        private_.emplace_back(static_cast<uint64_t>(lines > 0 ? lines : lat.private_lines));
}

int64_t CacheHierarchy::price(int cpu, std::span<const uint64_t> lines, MemoryTally &tally) {
    if (!enabled() || lines.empty()) return 0;
    TagCache &mine = private_[static_cast<size_t>(cpu)];
    int64_t stall = 0;
    for (uint64_t tag : lines) {
        if (mine.touch(tag)) continue;
        if (llc_.touch(tag)) {
            stall += lat_.llc_ps;
            ++tally.llc_hits;
        } else {
            stall += lat_.dram_ps;
            ++tally.dram;
        }
    }
    tally.touches += lines.size();
    tally.stall_ps += stall;
    return stall;
}

}  // namespace locksim::sim
