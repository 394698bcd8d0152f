#include "ss/ebitmap.h"

#include <cstring>

namespace locksim::ss {
namespace {

EbitmapNode *alloc_node(uint32_t startbit) {
    count_work(Work::Alloc);
    auto *n = new EbitmapNode;
    n->startbit = startbit;
    n->line = next_ebitmap_node();
    return n;
}

bool node_get_bit(const EbitmapNode *n, uint32_t bit) {
    uint32_t off = bit - n->startbit;
    count_work(Work::EbitmapWord);
    return (n->maps[off / kEbitmapUnitSize] >> (off % kEbitmapUnitSize)) & 1;
}

bool node_empty(const EbitmapNode *n) {
    for (uint64_t m : n->maps)
        if (m) return false;
    return true;
}

}  // namespace

void Ebitmap::clear() {
    EbitmapNode *n = node_;
    while (n) {
        EbitmapNode *next = n->next;
        count_work(Work::Free);
        delete n;
        n = next;
    }
    node_ = nullptr;
    highbit_ = 0;
}

void Ebitmap::copy_from(const Ebitmap &o) {
    EbitmapNode **tail = &node_;
    lines_ = o.lines_ ? next_line_object() : 0;
    for (const EbitmapNode *n = o.node_; n; n = n->next) {
        o.touch(n);
        EbitmapNode *c = alloc_node(n->startbit);
        touch_node(lines_, c, Access::Written);
        std::memcpy(c->maps, n->maps, sizeof(c->maps));
        count_work(Work::BytesCopied, sizeof(EbitmapNode));
        *tail = c;
        tail = &c->next;
    }
    highbit_ = o.highbit_;
}

bool Ebitmap::get_bit(uint32_t bit) const {
    if (highbit_ < bit) return false;
    for (const EbitmapNode *n = node_; n && n->startbit <= bit; n = n->next) {
        count_work(Work::EbitmapNode);
        touch(n);
        if (n->startbit + kEbitmapSize > bit) return node_get_bit(n, bit);
    }
    return false;
}

void Ebitmap::set_bit(uint32_t bit, bool value) {
    EbitmapNode *prev = nullptr;
    EbitmapNode *n = node_;
    while (n && n->startbit <= bit) {
        count_work(Work::EbitmapNode);
        touch(n);
        if (n->startbit + kEbitmapSize > bit) {
            uint32_t off = bit - n->startbit;
            uint64_t mask = uint64_t{1} << (off % kEbitmapUnitSize);
            if (value) {
                n->maps[off / kEbitmapUnitSize] |= mask;
                return;
            }
            n->maps[off / kEbitmapUnitSize] &= ~mask;
            if (!node_empty(n)) return;
            // The node became empty: unlink it.
            if (!n->next) highbit_ = prev ? prev->startbit + kEbitmapSize : 0;
            (prev ? prev->next : node_) = n->next;
            count_work(Work::Free);
            delete n;
            return;
        }
        prev = n;
        n = n->next;
    }
    if (!value) return;
    EbitmapNode *nn = alloc_node(bit - bit % kEbitmapSize);
    touch_node(lines_, nn, Access::Written);
    uint32_t off = bit - nn->startbit;
    nn->maps[off / kEbitmapUnitSize] |= uint64_t{1} << (off % kEbitmapUnitSize);
    if (!n) highbit_ = nn->startbit + kEbitmapSize;
    nn->next = n;
    (prev ? prev->next : node_) = nn;
}

uint32_t Ebitmap::cardinality() const {
    uint32_t c = 0;
    for (const EbitmapNode *n = node_; n; n = n->next) {
        touch(n);
        for (uint64_t m : n->maps)
            c += static_cast<uint32_t>(std::popcount(m));
    }
    return c;
}

uint32_t Ebitmap::last_set_bit() const {
    const EbitmapNode *last = node_;
    if (!last) return 0;
    touch(last);
    while (last->next)
        touch(last = last->next);
    for (int i = kEbitmapUnitNumbers - 1; i >= 0; --i)
        if (last->maps[i])
            return last->startbit + i * kEbitmapUnitSize +
                   (63 - static_cast<uint32_t>(std::countl_zero(last->maps[i])));
    return 0;
}

size_t Ebitmap::node_count() const {
    size_t c = 0;
    for (const EbitmapNode *n = node_; n; n = n->next)
        ++c;
    return c;
}

EbitmapNode *Ebitmap::append_node(uint32_t startbit, EbitmapNode *tail) {
    EbitmapNode *n = alloc_node(startbit);
    if (!tail && node_) {
        tail = node_;
        while (tail->next)
            tail = tail->next;
    }
    (tail ? tail->next : node_) = n;
    highbit_ = startbit + kEbitmapSize;
    return n;
}

bool ebitmap_cmp(const Ebitmap &e1, const Ebitmap &e2) {
    // Out of line in every era (ss/ebitmap.c, v4.15 to v6.x): its callers (mls_level_eq, inline)
    // call it even where the high bits differ and it returns at once, as most of a SID-table
    // scan's compares of contexts that differ only in their categories do.
    count_work(Work::Call);
    if (e1.highbit() != e2.highbit()) return false;
    const EbitmapNode *n1 = e1.first(), *n2 = e2.first();
    auto touch = [&] {
        if (n1 && n2) {
            e1.touch(n1);
            e2.touch(n2);
        }
    };
    touch();
    // Each pair of nodes at the same start is compared whole (a memcmp of the maps), the pair
    // that differs included.
    while (n1 && n2 && n1->startbit == n2->startbit) {
        count_work(Work::EbitmapNode);
        count_work(Work::EbitmapWord, kEbitmapUnitNumbers);
        if (std::memcmp(n1->maps, n2->maps, sizeof(n1->maps)) != 0) return false;
        n1 = n1->next;
        n2 = n2->next;
        touch();
    }
    return !n1 && !n2;
}

// Both combine node by node (lists are sorted by startbit), so they cost one pass.
namespace {
template <class Op>
Ebitmap combine(const Ebitmap &e1, const Ebitmap &e2, bool keep_unmatched, Op op) {
    Ebitmap dst;
    EbitmapNode *tail = nullptr;
    const EbitmapNode *n1 = e1.first(), *n2 = e2.first();
    const EbitmapNode *read1 = nullptr, *read2 = nullptr;
    while (n1 || n2) {
        if (n1 && n1 != read1) e1.touch(read1 = n1);
        if (n2 && n2 != read2) e2.touch(read2 = n2);
        uint64_t maps[kEbitmapUnitNumbers];
        uint32_t start;
        if (n1 && n2 && n1->startbit == n2->startbit) {
            start = n1->startbit;
            for (uint32_t i = 0; i < kEbitmapUnitNumbers; ++i)
                maps[i] = op(n1->maps[i], n2->maps[i]);
            n1 = n1->next;
            n2 = n2->next;
        } else {
            const EbitmapNode *&lo = (!n2 || (n1 && n1->startbit < n2->startbit)) ? n1 : n2;
            start = lo->startbit;
            std::memcpy(maps, lo->maps, sizeof(maps));
            lo = lo->next;
            if (!keep_unmatched) continue;
        }
        count_work(Work::EbitmapWord, kEbitmapUnitNumbers);
        bool any = false;
        for (uint64_t m : maps)
            any |= m != 0;
        if (!any) continue;
        tail = dst.append_node(start, tail);
        std::memcpy(tail->maps, maps, sizeof(maps));
    }
    return dst;
}
}  // namespace

Ebitmap ebitmap_and(const Ebitmap &e1, const Ebitmap &e2) {
    return combine(e1, e2, false, [](uint64_t a, uint64_t b) { return a & b; });
}

Ebitmap ebitmap_or(const Ebitmap &e1, const Ebitmap &e2) {
    return combine(e1, e2, true, [](uint64_t a, uint64_t b) { return a | b; });
}

bool ebitmap_contains(const Ebitmap &e1, const Ebitmap &e2, uint32_t last_e2bit) {
    count_work(Work::Call);
    if (e1.highbit() < e2.highbit()) return false;
    const EbitmapNode *n1 = e1.first(), *n2 = e2.first();
    const EbitmapNode *read2 = nullptr;
    while (n1 && n2 && n1->startbit <= n2->startbit) {
        count_work(Work::EbitmapNode);
        e1.touch(n1);
        if (n2 != read2) e2.touch(read2 = n2);
        if (n1->startbit < n2->startbit) {
            n1 = n1->next;
            continue;
        }
        int i = kEbitmapUnitNumbers - 1;
        while (i >= 0 && !n2->maps[i]) {
            count_work(Work::EbitmapWord);
            --i;
        }
        if (last_e2bit && i >= 0) {
            uint32_t last = n2->startbit + i * kEbitmapUnitSize +
                            (63 - static_cast<uint32_t>(std::countl_zero(n2->maps[i])));
            if (last > last_e2bit) return false;
        }
        for (; i >= 0; --i) {
            count_work(Work::EbitmapWord);
            if ((n1->maps[i] & n2->maps[i]) != n2->maps[i]) return false;
        }
        n1 = n1->next;
        n2 = n2->next;
    }
    return n2 == nullptr;
}

bool ebitmap_contains_bitwise(const Ebitmap &e1, const Ebitmap &e2, uint32_t last_e2bit) {
    count_work(Work::Call);
    for (uint32_t bit : e2.bits()) {  // a BitIteration per bit, counted by the iterator
        if (last_e2bit && bit > last_e2bit) return false;
        count_work(Work::Call);
        if (!e1.get_bit(bit)) return false;
    }
    return true;
}

}  // namespace locksim::ss
