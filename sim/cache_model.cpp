#include "sim/cache_model.h"

#include <algorithm>
#include <cmath>

#include "util/work_meter.h"

namespace locksim::sim {
TagCache::TagCache(uint64_t lines, int64_t lifetime_ns)
    : half_(std::max<uint64_t>(1, lines / 2)),
      epoch_ns_(lifetime_ns > 0 ? std::max<int64_t>(1, lifetime_ns / 2) : 0) {}

bool TagCache::touch(uint64_t tag, int64_t now_ns) {
    if (epoch_ns_ > 0) {
        // A line touched in one half lifetime is held through the next and gone after it.
        const int64_t e = now_ns / epoch_ns_;
        if (e >= epoch_ + 2) {
            gens_[0].clear();
            gens_[1].clear();
        } else if (e == epoch_ + 1) {
            cur_ = 1 - cur_;
            gens_[cur_].clear();
        }
        epoch_ = std::max(epoch_, e);
    }
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

// The name of version `v` of line `tag` (version 0: the line itself): another name in the same
// region, so that no cache holds it before its store.
uint64_t version(uint64_t tag, uint32_t v) {
    return v == 0 ? tag : tag ^ ((uint64_t{v} * 0x9e3779b97f4a7c15ull) & ((uint64_t{1} << 58) - 1));
}

int64_t over_parallelism(int64_t ps, double mlp) {
    return std::llround(static_cast<double>(ps) / std::max(1.0, mlp));
}

}  // namespace

CacheHierarchy::CacheHierarchy(const MemoryLatency &lat, const std::vector<int64_t> &private_lines)
    : lat_(lat),
      l2_independent_ps_(over_parallelism(lat.l2_ps, lat.mlp)),
      llc_independent_ps_(over_parallelism(lat.llc_ps, lat.mlp)),
      dram_independent_ps_(over_parallelism(lat.dram_ps, lat.mlp)),
      shift_(log2_of(std::max<int64_t>(1, lat.sample))),
      llc_(static_cast<uint64_t>(std::max<int64_t>(1, lat.llc_lines >> shift_)),
           lat.llc_lifetime_ns) {
    if (!enabled()) return;
    auto sampled = [this](int64_t lines) {
        return static_cast<uint64_t>(std::max<int64_t>(2, lines >> shift_));
    };
    for (int64_t lines : private_lines) {
        private_.emplace_back(sampled(lines > 0 ? lines : lat.private_lines),
                              lat.private_lifetime_ns);
        if (lat.l1_lines > 0) first_.emplace_back(sampled(lat.l1_lines), lat.private_lifetime_ns);
    }
    seen_.assign(private_lines.size(), {0, 0});
}

int64_t CacheHierarchy::price(int cpu, std::span<const uint64_t> lines, MemoryTally &tally,
                              int64_t now_ns, int64_t idle_ns) {
    return price_lines<true>(cpu, lines, lines.size(), tally, now_ns, idle_ns);
}

int64_t CacheHierarchy::price_sampled(int cpu, std::span<const uint64_t> sampled, uint64_t touches,
                                      MemoryTally &tally, int64_t now_ns, int64_t idle_ns) {
    return price_lines<false>(cpu, sampled, touches, tally, now_ns, idle_ns);
}

template <bool Filter>
int64_t CacheHierarchy::price_lines(int cpu, std::span<const uint64_t> lines, uint64_t touches,
                                    MemoryTally &tally, int64_t now_ns, int64_t idle_ns) {
    if (!enabled() || touches == 0) return 0;
    const auto c = static_cast<size_t>(cpu);
    TagCache &mine = private_[c];
    TagCache *first = first_.empty() ? nullptr : &first_[c];
    int64_t stall = 0;
    uint64_t n = 0, l2 = 0, llc = 0, dram = 0, l2_ind = 0, llc_ind = 0, dram_ind = 0;
    // A line neither private level holds: the last level's latency, or memory's.
    auto beyond = [&](uint64_t tag, bool dependent) {
        if (llc_.touch(tag, now_ns)) {
            stall += dependent ? lat_.llc_ps : llc_independent_ps_;
            ++llc;
            llc_ind += !dependent;
        } else {
            stall += dependent ? lat_.dram_ps : dram_independent_ps_;
            ++dram;
            dram_ind += !dependent;
        }
    };
    for (uint64_t recorded : lines) {
        uint64_t tag = line_tag(recorded);
        if (Filter && !line_sampled(tag, shift_)) continue;
        ++n;
        // A line modified in place is named by its version: the copies other CPUs hold of an
        // older one miss from then on.
        const bool modified = line_modified(recorded);
        if (modified || ever_modified_.contains(tag)) {
            if (modified) ever_modified_.insert(tag);
            const uint64_t base = tag;
            Owner &own = owners_[base];
            tag = version(base, own.version);
            if (!modified) {
                if (own.cpu != cpu) own.cpu = -1;  // read here: no longer held alone
            } else {
                // A store: free where this CPU's caches hold the line, else an independent miss
                // (a store does not wait for its line). Where another CPU may hold a copy (it
                // read the line since this CPU's last store), the line becomes a new version,
                // held here alone.
                if (!((first && first->touch(tag, idle_ns)) || mine.touch(tag, idle_ns)))
                    beyond(tag, false);
                if (own.cpu != cpu) {
                    own = {own.version + 1, cpu};
                    tag = version(base, own.version);
                    if (first) first->touch(tag, idle_ns);
                    mine.touch(tag, idle_ns);
                    llc_.touch(tag, now_ns);
                }
                continue;
            }
        }
        if (first && first->touch(tag, idle_ns)) continue;
        const bool written = line_written(recorded), dependent = line_dependent(recorded);
        if (mine.touch(tag, idle_ns)) {
            // Written, or a stream's next line, which the prefetchers bring to the first level.
            if (!first || written || line_streamed(recorded)) continue;
            stall += dependent ? lat_.l2_ps : l2_independent_ps_;
            ++l2;
            l2_ind += !dependent;
            continue;
        }
        if (written) {
            llc_.touch(tag, now_ns);  // a new line written: taken into every cache, no stall
            continue;
        }
        beyond(tag, dependent);
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
        l2 = l2 * all / n;
        l2_ind = l2_ind * all / n;
        llc = llc * all / n;
        dram = dram * all / n;
        llc_ind = llc_ind * all / n;
        dram_ind = dram_ind * all / n;
    }
    tally.touches += all;
    tally.l2_hits += l2;
    tally.l2_independent += l2_ind;
    tally.llc_hits += llc;
    tally.dram += dram;
    tally.llc_independent += llc_ind;
    tally.dram_independent += dram_ind;
    tally.stall_ps += stall;
    return stall;
}

}  // namespace locksim::sim
