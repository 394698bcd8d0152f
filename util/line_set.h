// A set of cache-line tags (mem_line, work_meter.h) for the counted cost model: the generations of
// the simulator's caches (sim/cache_model.h) and the distinct lines of a memoised search
// (ss/te_rules_memo.h).
//
// Open addressing with linear probing over a power-of-two table kept at most half full; a slot
// is live when its one-byte stamp equals the set's epoch, so clear() is O(1) (the epoch moves
// on; the stamps are wiped once in 255 clears) and the table is reused. The stamps sit apart from
// the tags, so a lookup of a line not held (the common case) reads one byte per slot probed:
// 64 slots to a host cache line. The table grows with its contents, so its memory follows the
// lines a run touches, not a cache's size.
#pragma once

#include <cstdint>
#include <vector>

namespace locksim {

class LineSet {
  public:
    bool contains(uint64_t tag) const {
        if (tags_.empty()) return false;
        const uint64_t mask = tags_.size() - 1;
        for (uint64_t i = mix(tag) & mask;; i = (i + 1) & mask) {
            if (stamps_[i] != epoch_) return false;
            if (tags_[i] == tag) return true;
        }
    }
    // Adds `tag`; true when it was not held.
    bool insert(uint64_t tag) {
        if ((size_ + 1) * 2 > tags_.size()) grow();
        const uint64_t mask = tags_.size() - 1;
        uint64_t i = mix(tag) & mask;
        for (; stamps_[i] == epoch_; i = (i + 1) & mask)
            if (tags_[i] == tag) return false;
        tags_[i] = tag;
        stamps_[i] = epoch_;
        ++size_;
        return true;
    }
    void clear();
    uint64_t size() const { return size_; }

  private:
    static uint64_t mix(uint64_t x) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        return x;
    }
    void grow();
    std::vector<uint64_t> tags_;
    std::vector<uint8_t> stamps_;
    uint8_t epoch_ = 1;
    uint64_t size_ = 0;
};

// Keeps in `lines` (every line a call read, in order, repeats included) one copy of each line
// that sampling with `shift` models (line_sampled), in tag order, and returns how many distinct
// lines `lines` held. Lines are told apart, sampled and ordered by their tags (line_tag: the
// access's kind is not part of the line). `seen` is scratch space.
uint64_t keep_distinct_sampled(std::vector<uint64_t> &lines, int shift, LineSet &seen);

}  // namespace locksim
