// The engine's pending events in firing order: a 4-ary min-heap of 16-byte keys (time, then a
// unique order word), where
//  - a node's four children share one 64-byte cache line (the array is 64-byte aligned and
//    starts three entries early, so that children 4i+1..4i+4 begin on a line),
//  - a key is compared as one unsigned 128-bit integer (time in the upper half; times are never
//    negative), so picking the smallest of four children is done with conditional moves, not
//    branches the host mispredicts, and
//  - the slots after the last key hold a key above every other, so that every node's children
//    are compared as a full group of four, in a fixed sequence of instructions.
// Keys are unique, so the order in which they come out is a function of the keys alone.
// bench/sim/engine_bench.cpp measures it against Boost.Heap's d_ary_heap of the same keys.
#pragma once

#include <boost/align/aligned_allocator.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace locksim::sim {

class EventQueue {
  public:
    struct Key {
        int64_t time;  // >= 0
        uint64_t order;
    };

    bool empty() const { return n_ == 0; }
    size_t size() const { return n_; }
    Key top() const { return unpack(heap_[kOffset]); }

    void push(Key k) {
        const Word x = pack(k);
        // The slots past the last key hold kNone, kArity of them at least, so that every node's
        // children can be read as a full group.
        if (heap_.size() < kOffset + n_ + 1 + kArity) heap_.push_back(kNone);
        Word *h = heap_.data() + kOffset;
        size_t i = n_++;
        while (i > 0) {
            const size_t parent = (i - 1) / kArity;
            if (!(x < h[parent])) break;
            h[i] = h[parent];
            i = parent;
        }
        h[i] = x;
    }

    // Removes top(); the queue must not be empty.
    void pop() {
        Word *h = heap_.data() + kOffset;
        const Word last = h[--n_];
        h[n_] = kNone;
        if (n_ == 0) return;
        size_t i = 0;
        for (;;) {
            const size_t first = kArity * i + 1;
            if (first >= n_) break;
            // The smallest of the four children (the slots past the last key are kNone), as a
            // tournament: two pairs, then their winners.
            const Word *c = h + first;
            const bool b_less = c[1] < c[0];
            const Word ab = b_less ? c[1] : c[0];
            const size_t ab_at = first + b_less;
            const bool d_less = c[3] < c[2];
            const Word cd = d_less ? c[3] : c[2];
            const size_t cd_at = first + 2 + d_less;
            const bool cd_less = cd < ab;
            const Word min_key = cd_less ? cd : ab;
            if (!(min_key < last)) break;
            h[i] = min_key;
            i = cd_less ? cd_at : ab_at;
        }
        h[i] = last;
    }

    void clear() {
        heap_.assign(kOffset + kArity, kNone);
        n_ = 0;
    }

  private:
    using Word = unsigned __int128;
    static constexpr size_t kArity = 4;
    static constexpr size_t kOffset = kArity - 1;

    static Word pack(Key k) {
        return (static_cast<Word>(static_cast<uint64_t>(k.time)) << 64) | k.order;
    }
    static Key unpack(Word w) {
        return Key{static_cast<int64_t>(static_cast<uint64_t>(w >> 64)), static_cast<uint64_t>(w)};
    }

    // Above every key (times are below 2^63).
    static constexpr Word kNone = ~Word{0};

    using Storage = std::vector<Word, boost::alignment::aligned_allocator<Word, 64>>;
    Storage heap_ = Storage(kOffset + kArity, kNone);
    size_t n_ = 0;
};

}  // namespace locksim::sim
