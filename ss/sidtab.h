// The SID table (the kernel's sidtab.c): security identifiers for contexts.
//
//  - SIDs 1..kSecInitSidNum are the initial SIDs, set from the policy's `sid` statements;
//    dynamic SIDs follow, numbered in insertion order and never reused.
//  - SID -> context is an index into a chunked array (stable addresses, like the kernel's tree of
//    pages); context -> SID is a hash table of kSidtabHashBuckets chains (fixed, as in the
//    kernel), each entry keeping its context hash.
//  - The SID -> string cache keeps the text of up to `cache_size` contexts (LRU; 0 turns it
//    off), so sid_to_context of a context with many categories is a copy, not a rebuild.
//  - Live conversion for a policy load: convert() fills a new table with every entry converted
//    by a callback, keeping the SIDs, and mirrors later inserts into it until freeze(); after
//    freeze() an insert fails with -ESTALE (the caller retries against the new policy).
//
// Single-threaded; the strategies add the locking.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ss/context.h"

namespace locksim::ss {

inline constexpr uint32_t SECSID_NULL = 0;
inline constexpr uint32_t SECINITSID_KERNEL = 1;
inline constexpr uint32_t SECINITSID_UNLABELED = 3;
inline constexpr uint32_t kSecInitSidNum = 27;  // the kernel's initial SID count
inline constexpr uint32_t kSidtabHashBits = 9;
inline constexpr uint32_t kSidtabHashBuckets = 1u << kSidtabHashBits;
inline constexpr uint32_t kSidtabDefaultCacheSize = 256;

// The context hash the reverse table uses (the kernel's context_compute_hash: the string of an
// invalid context, else user/role/type and the MLS range).
uint32_t context_compute_hash(const Context &c);

class Sidtab {
  public:
    explicit Sidtab(uint32_t cache_size = kSidtabDefaultCacheSize);
    Sidtab(const Sidtab &) = delete;
    Sidtab &operator=(const Sidtab &) = delete;

    struct Entry;
    struct CacheItem {
        Entry *entry;
        std::string str;
    };
    struct Entry {
        uint32_t sid = 0;
        uint32_t hash = 0;
        Context context;
        bool used = false;       // an initial SID slot may be unset
        bool cached = false;     // `cache` is valid
        Entry *hnext = nullptr;  // reverse hash chain
        std::list<CacheItem>::iterator cache;
    };

    // Sets initial SID `sid` (1..kSecInitSidNum); -EINVAL when out of range or already set.
    int set_initial(uint32_t sid, const Context &c);

    // SID -> context as the kernel's sidtab_search: an unknown SID, or (unless `force`) one whose
    // context is invalid, gives the unlabeled initial SID's context; nullptr only when that is
    // unset too.
    const Context *search(uint32_t sid, bool force = false) const;
    // The same, returning the entry (for the string cache).
    Entry *search_entry(uint32_t sid, bool force = false);
    // The entry itself, nullptr when unknown.
    Entry *entry(uint32_t sid);
    const Entry *entry(uint32_t sid) const;

    // Context -> SID: finds the context or adds it with the next SID. -ESTALE when frozen.
    int context_to_sid(const Context &c, uint32_t *sid);
    // Reverse lookup only: SECSID_NULL when absent.
    uint32_t lookup(const Context &c, uint32_t hash) const;

    // The string cache (sidtab_sid2str_get / _put).
    bool sid2str_get(uint32_t sid, std::string &out);
    void sid2str_put(uint32_t sid, std::string_view str);
    uint32_t cache_size() const { return cache_size_; }
    uint32_t cache_used() const { return static_cast<uint32_t>(lru_.size()); }

    // Conversion for a policy load. `fn` converts a context to the new policy's values (it may
    // keep an invalid context by its string); it returns 0 or a negative errno, which aborts.
    using ConvertFn = std::function<int(const Context &oldc, Context &newc)>;
    int convert(Sidtab &target, ConvertFn fn);
    void cancel_convert();
    void freeze() { frozen_ = true; }
    bool frozen() const { return frozen_; }

    // Every used entry (initial SIDs first).
    template <class F>
    void for_each(F &&f) const {
        for (const Entry &e : entries_)
            if (e.used) f(e);
    }
    uint32_t count() const { return count_; }  // used entries
    uint32_t next_sid() const { return static_cast<uint32_t>(entries_.size()) + 1; }

  private:
    Entry &slot(uint32_t sid);  // grows the array up to sid
    Entry *insert_at(uint32_t sid, Context c, uint32_t hash);
    void hash_add(Entry *e);

    std::deque<Entry> entries_;  // entries_[sid - 1]
    std::vector<Entry *> buckets_;
    uint32_t count_ = 0;
    uint32_t cache_size_;
    std::list<CacheItem> lru_;  // most recent first
    Sidtab *convert_target_ = nullptr;
    ConvertFn convert_fn_;
    bool frozen_ = false;
};

}  // namespace locksim::ss
