// The kernel's generic hash table: a fixed power-of-two number of buckets chosen at creation from
// a hint of the number of elements (no resizing), each bucket a singly linked chain kept sorted
// by the key order so that a search stops early. Used for symbol names, role transitions,
// filename transitions and range transitions. Each chain node examined counts one HashProbe.
//
// Traits supplies `static uint32_t hash(const K &)` and `static int cmp(const K &, const K &)`.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "util/work_meter.h"

namespace locksim::ss {

template <class K, class V, class Traits>
class Hashtab {
  public:
    struct Node {
        K key;
        V value;
        Node *next;
    };

    explicit Hashtab(uint32_t nel_hint = 0) { init(nel_hint); }
    ~Hashtab() { clear(); }
    Hashtab(const Hashtab &o) { copy_from(o); }
    Hashtab &operator=(const Hashtab &o) {
        if (this != &o) {
            clear();
            copy_from(o);
        }
        return *this;
    }
    Hashtab(Hashtab &&o) noexcept
        : buckets_(std::move(o.buckets_)), nel_(std::exchange(o.nel_, 0)) {}
    Hashtab &operator=(Hashtab &&o) noexcept {
        if (this != &o) {
            clear();
            buckets_ = std::move(o.buckets_);
            nel_ = std::exchange(o.nel_, 0);
        }
        return *this;
    }

    // Drops every element and sizes the table for about nel_hint elements
    // (the kernel's hashtab_init: the hint rounded up to a power of two).
    void init(uint32_t nel_hint) {
        clear();
        uint32_t size = nel_hint == 0 ? 0 : std::bit_ceil(nel_hint);
        buckets_.assign(size, nullptr);
    }

    // Inserts; returns nullptr when the key is already present (nothing changes).
    Node *insert(K key, V value) {
        if (buckets_.empty()) buckets_.assign(16, nullptr);
        Node **link = &buckets_[Traits::hash(key) & mask()];
        while (*link) {
            count_work(Work::HashProbe);
            int c = Traits::cmp(key, (*link)->key);
            if (c == 0) return nullptr;
            if (c < 0) break;
            link = &(*link)->next;
        }
        count_work(Work::Alloc);
        *link = new Node{std::move(key), std::move(value), *link};
        ++nel_;
        return *link;
    }

    const V *search(const K &key) const {
        if (buckets_.empty()) return nullptr;
        for (Node *n = buckets_[Traits::hash(key) & mask()]; n; n = n->next) {
            count_work(Work::HashProbe);
            int c = Traits::cmp(key, n->key);
            if (c == 0) return &n->value;
            if (c < 0) break;
        }
        return nullptr;
    }
    V *search(const K &key) {
        return const_cast<V *>(static_cast<const Hashtab *>(this)->search(key));
    }

    uint32_t nel() const { return nel_; }
    uint32_t size() const { return static_cast<uint32_t>(buckets_.size()); }

    // Visits every element in bucket order.
    template <class F>
    void for_each(F &&f) const {
        for (Node *head : buckets_)
            for (Node *n = head; n; n = n->next)
                f(n->key, n->value);
    }

    // Longest chain and number of used buckets (hashtab_stat).
    std::pair<uint32_t, uint32_t> chain_stats() const {
        uint32_t longest = 0, used = 0;
        for (Node *head : buckets_) {
            uint32_t len = 0;
            for (Node *n = head; n; n = n->next)
                ++len;
            used += len != 0;
            longest = std::max(longest, len);
        }
        return {longest, used};
    }

    void clear() {
        for (Node *&head : buckets_) {
            while (head) {
                Node *next = head->next;
                count_work(Work::Free);
                delete head;
                head = next;
            }
        }
        nel_ = 0;
    }

  private:
    uint32_t mask() const { return static_cast<uint32_t>(buckets_.size()) - 1; }
    void copy_from(const Hashtab &o) {
        buckets_.assign(o.buckets_.size(), nullptr);
        for (size_t i = 0; i < o.buckets_.size(); ++i) {
            Node **tail = &buckets_[i];
            for (Node *n = o.buckets_[i]; n; n = n->next) {
                count_work(Work::Alloc);
                *tail = new Node{n->key, n->value, nullptr};
                tail = &(*tail)->next;
            }
        }
        nel_ = o.nel_;
    }

    std::vector<Node *> buckets_;
    uint32_t nel_ = 0;
};

// The kernel's symbol-name hash (rotate left by 4, xor each byte).
inline uint32_t symhash(std::string_view s) {
    uint32_t val = 0;
    for (unsigned char c : s)
        val = ((val << 4) | (val >> 28)) ^ c;
    return val;
}

struct StringKeyTraits {
    static uint32_t hash(std::string_view k) { return symhash(k); }
    static int cmp(std::string_view a, std::string_view b) { return a.compare(b); }
};

}  // namespace locksim::ss
