// Extensible bitmap, laid out as the kernel lays it out: a sorted singly linked list of 64-byte
// nodes, each covering 384 bits (6 x u64) from its `startbit`, plus the highest bit boundary.
// Used for category sets, role/type sets, the type-attribute map, the permissive map, policy
// capabilities and filename-transition source types.
//
// Bit numbers are zero-based, as in the kernel (a value v is stored as bit v-1 by callers).
// Every operation counts its work (nodes visited, words read, allocations) on the work meter.
// An ebitmap whose lines are named (name_lines: one read from a policy, a SID table's context)
// also records the nodes it reads for the cache model (MemRegion::EbitmapNode, each a
// dependent read: a list); a copy of a named ebitmap gets a name of its own, its nodes written.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "util/work_meter.h"

namespace locksim::ss {

inline constexpr uint32_t kEbitmapUnitNumbers = 6;
inline constexpr uint32_t kEbitmapUnitSize = 64;  // bits per map word
inline constexpr uint32_t kEbitmapSize = kEbitmapUnitNumbers * kEbitmapUnitSize;  // bits per node

struct EbitmapNode {
    EbitmapNode *next = nullptr;
    uint64_t maps[kEbitmapUnitNumbers] = {};
    uint32_t startbit = 0;
    // In what is padding in the kernel's node: its place in the ebitmap_node slab cache
    // (next_ebitmap_node), which names its line for the cache model. Nodes allocated one after
    // another lie one after another, as the slab hands them out.
    uint32_t line = 0;
};
static_assert(sizeof(EbitmapNode) == 64, "an ebitmap node is one 64-byte cache line");

class Ebitmap {
  public:
    Ebitmap() = default;
    ~Ebitmap() { clear(); }
    Ebitmap(const Ebitmap &o) { copy_from(o); }  // ebitmap_cpy
    Ebitmap &operator=(const Ebitmap &o) {
        if (this != &o) {
            clear();
            copy_from(o);
        }
        return *this;
    }
    Ebitmap(Ebitmap &&o) noexcept : node_(o.node_), highbit_(o.highbit_), lines_(o.lines_) {
        o.node_ = nullptr;
        o.highbit_ = 0;
        o.lines_ = 0;
    }
    Ebitmap &operator=(Ebitmap &&o) noexcept {
        if (this != &o) {
            clear();
            node_ = o.node_;
            highbit_ = o.highbit_;
            lines_ = o.lines_;
            o.node_ = nullptr;
            o.highbit_ = 0;
            o.lines_ = 0;
        }
        return *this;
    }

    // One past the highest bit any node covers (a multiple of 384; 0 when empty).
    uint32_t highbit() const { return highbit_; }
    const EbitmapNode *first() const { return node_; }
    bool empty() const { return node_ == nullptr; }
    // Whether the ebitmap's reads are recorded for the cache model: a name from
    // next_line_object, or 0 (not named). Its nodes' lines are their places in the slab
    // (EbitmapNode::line).
    uint32_t lines() const { return lines_; }
    void name_lines(uint32_t object) { lines_ = object; }
    // Records the read of node `n` (the ebitmap's own) where the lines are named.
    void touch(const EbitmapNode *n) const { touch_node(lines_, n, Access::Dependent); }
    static void touch_node(uint32_t lines, const EbitmapNode *n, Access access) {
        if (lines) touch_line(node_line(n), access);
    }
    static uint64_t node_line(const EbitmapNode *n) {
        return mem_line(MemRegion::EbitmapNode, 0, n->line);
    }

    bool get_bit(uint32_t bit) const;        // walks the list from the start
    void set_bit(uint32_t bit, bool value);  // allocates or frees nodes as needed
    uint32_t cardinality() const;            // number of set bits
    uint32_t last_set_bit() const;           // highest set bit (0 when empty)
    void clear();                            // ebitmap_destroy
    size_t node_count() const;

    // Iteration over set bits in increasing order.
    class BitIterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = uint32_t;
        using difference_type = std::ptrdiff_t;
        using pointer = const uint32_t *;
        using reference = uint32_t;
        BitIterator() = default;
        explicit BitIterator(const EbitmapNode *n, uint32_t lines = 0) : node_(n), lines_(lines) {
            if (node_) touch_node(lines_, node_, Access::Dependent);
            seek(0);
        }
        uint32_t operator*() const { return node_->startbit + word_ * kEbitmapUnitSize + bit_; }
        BitIterator &operator++() {
            advance();
            return *this;
        }
        BitIterator operator++(int) {
            BitIterator old = *this;
            advance();
            return old;
        }
        bool operator==(const BitIterator &o) const {
            return node_ == o.node_ && (node_ == nullptr || (word_ == o.word_ && bit_ == o.bit_));
        }

      private:
        void seek(uint32_t from_word);
        void advance();
        const EbitmapNode *node_ = nullptr;
        uint32_t lines_ = 0;
        uint32_t word_ = 0;
        uint32_t bit_ = 0;
    };
    struct BitRange {
        const EbitmapNode *n;
        uint32_t lines;
        BitIterator begin() const { return BitIterator(n, lines); }
        BitIterator end() const { return BitIterator(); }
    };
    BitRange bits() const { return BitRange{node_, lines_}; }

    // Low-level building used by the policy reader: appends a zeroed node that must come after
    // every existing node (startbit strictly increasing, aligned to 384) and returns it. `tail`,
    // when given, must be the current last node (saves the walk).
    EbitmapNode *append_node(uint32_t startbit, EbitmapNode *tail = nullptr);
    void set_highbit(uint32_t highbit) { highbit_ = highbit; }

  private:
    void copy_from(const Ebitmap &o);
    EbitmapNode *node_ = nullptr;
    uint32_t highbit_ = 0;
    uint32_t lines_ = 0;  // in what was padding
};
static_assert(sizeof(Ebitmap) == 16, "an ebitmap is the kernel's: a node pointer and a high bit");

// Equal bit sets (ebitmap_cmp): true when equal.
bool ebitmap_cmp(const Ebitmap &e1, const Ebitmap &e2);
// dst = e1 & e2 (ebitmap_and) and dst = e1 | e2 (ebitmap_or).
Ebitmap ebitmap_and(const Ebitmap &e1, const Ebitmap &e2);
Ebitmap ebitmap_or(const Ebitmap &e1, const Ebitmap &e2);
// Every bit of e2 is in e1; when last_e2bit is non-zero, e2 may not have a bit above it
// (the kernel's node-and-word walk, the post-3.13 mls_level_isvalid).
bool ebitmap_contains(const Ebitmap &e1, const Ebitmap &e2, uint32_t last_e2bit = 0);
// The same answer, computed as the kernel did before 3.13: for every set bit of e2, check the
// bound and look the bit up in e1 with get_bit (a walk from the first node each time).
bool ebitmap_contains_bitwise(const Ebitmap &e1, const Ebitmap &e2, uint32_t last_e2bit = 0);

// Calls f(first, last) for each run of consecutive set bits of `e`, in order (a single bit is a
// run of one: first == last): how the kernel prints a category set ("c0.c1023", "c1,c5").
template <class F>
void ebitmap_for_each_run(const Ebitmap &e, F &&f) {
    int64_t head = -2, prev = -2;
    for (uint32_t bit : e.bits()) {
        const int64_t i = bit;
        if (i - prev > 1) {
            if (prev >= 0) f(static_cast<uint32_t>(head), static_cast<uint32_t>(prev));
            head = i;
        }
        prev = i;
    }
    if (prev >= 0) f(static_cast<uint32_t>(head), static_cast<uint32_t>(prev));
}

// --- inline iteration -------------------------------------------------------------------------

inline void Ebitmap::BitIterator::seek(uint32_t from_word) {
    while (node_) {
        for (uint32_t w = from_word; w < kEbitmapUnitNumbers; ++w) {
            count_work(Work::EbitmapWord);
            if (node_->maps[w]) {
                word_ = w;
                bit_ = static_cast<uint32_t>(std::countr_zero(node_->maps[w]));
                return;
            }
        }
        node_ = node_->next;
        count_work(Work::EbitmapNode);
        if (node_) touch_node(lines_, node_, Access::Dependent);
        from_word = 0;
    }
    word_ = bit_ = 0;
}

// A step to the next set bit: the kernel's ebitmap_next_positive (find_next_bit within the node,
// then the next nodes), one BitIteration per set bit a loop visits.
inline void Ebitmap::BitIterator::advance() {
    count_work(Work::BitIteration);
    uint64_t rest = bit_ + 1 < kEbitmapUnitSize ? node_->maps[word_] >> (bit_ + 1) : 0;
    if (rest) {
        bit_ += 1 + static_cast<uint32_t>(std::countr_zero(rest));
        return;
    }
    seek(word_ + 1);
}

}  // namespace locksim::ss
