// The engine's pending events in firing order: a 4-ary min-heap of 16-byte keys (time, then a
// unique order word), where
//  - a node's four children share one 64-byte cache line (the array is 64-byte aligned and
//    starts three entries early, so that children 4i+1..4i+4 begin on a line), and
//  - a key is compared as one unsigned 128-bit integer (time in the upper half; times are never
//    negative), so picking the smallest of four children is done with conditional moves, not
//    branches the host mispredicts.
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

    bool empty() const { return size() == 0; }
    size_t size() const { return heap_.size() - kOffset; }
    Key top() const { return unpack(heap_[kOffset]); }

    void push(Key k) {
        Word x = pack(k);
        heap_.push_back(x);
        Word *h = heap_.data() + kOffset;
        size_t i = size() - 1;
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
        const Word last = heap_.back();
        heap_.pop_back();
        const size_t n = size();
        if (n == 0) return;
        Word *h = heap_.data() + kOffset;
        size_t i = 0;
        for (;;) {
            const size_t first = kArity * i + 1;
            if (first >= n) break;
            size_t min = first;
            Word min_key = h[first];
            const size_t end = first + kArity <= n ? first + kArity : n;
            for (size_t c = first + 1; c < end; ++c) {
                const bool less = h[c] < min_key;
                min_key = less ? h[c] : min_key;
                min = less ? c : min;
            }
            if (!(min_key < last)) break;
            h[i] = min_key;
            i = min;
        }
        h[i] = last;
    }

    void clear() { heap_.resize(kOffset); }

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

    using Storage = std::vector<Word, boost::alignment::aligned_allocator<Word, 64>>;
    Storage heap_ = Storage(kOffset);
};

}  // namespace locksim::sim
