// The SID table (the kernel's security/selinux/ss/sidtab.c): security identifiers for contexts.
// Modelled on the source as of v6.x (the hash table era, 5.8 on), with the earlier eras as a
// runtime option (SidtabEra), each from its own source as we read it (docs/kernel-eras.md):
//   hash        (5.8 on; v5.8.1 ss/context.c context_compute_hash): context -> SID through a
//               hash table of the context's fields; a load hashes every converted entry under
//               the old table's lock (sidtab_convert_hashtable);
//   hash-string (5.6 - 5.7; v5.6.4 and v5.7.14 services.c string_to_context_struct,
//               context_add_hash): the same table, keyed by the context's string: a parsed
//               context by the string it was parsed from (hashed before parsing), a context the
//               server made by its text, formatted for the purpose (a GFP_ATOMIC allocation,
//               the formatting, a free), outside the table's lock; a load hashes each
//               converted entry outside the lock and only links under it;
//   linear      (5.0 - 5.5, v5.0.1 sidtab.c): a scan over every entry in SID order after a
//               cache of the 3 latest hits (the "rcache"); the lock-free scan is re-run under
//               the lock only over the entries added meanwhile;
//   legacy      (up to 4.20; v4.15.1 services.c and sidtab.c): the cache of 3, then a scan over
//               every entry, and the scan again under the lock before an insert; a policy load
//               shuts the table down (inserts fail with -ENOMEM, as sidtab_shutdown made them)
//               until the new table replaces it, and clones the entries into the new table
//               without its lock.
// The linear era's steps were checked against the 5.3-5.5 sidtab.c (atomic count, rcache of 3,
// a cond_resched after each converted leaf), the hash era's against v5.10 and v6.x.
//
//  - SIDs 1..kSecInitSidNum are the initial SIDs, set from the policy's `sid` statements;
//    dynamic SIDs follow, numbered in insertion order and never reused.
//  - SID -> context is an index into a chunked array (stable addresses, like the kernel's tree of
//    pages) in the hash and linear eras; in the legacy era (v4.15.1 ss/sidtab.c,
//    sidtab_search_core) it walks the ascending chain of bucket sid & 127 over the same storage,
//    about N/128 nodes each priced as a probe, and for an unknown SID or an invalid context
//    walks the unlabeled SID's chain as well. Context -> SID as the era does it.
//  - The SID -> string cache keeps the text of up to `cache_size` contexts (LRU; 0 turns it
//    off), so sid_to_context of a context with many categories is a copy, not a rebuild.
//  - Live conversion for a policy load (hash and linear eras, sidtab_convert): under the lock the
//    table starts mirroring new inserts into the new table; outside it, the entries are
//    converted a leaf (kSidtabLeafEntries) at a time with a reschedule point between leaves;
//    then (hash eras) the new table's hash table is built under the lock, every entry's hash
//    computed there (5.8 on). After freeze_begin() an insert fails with -ESTALE (the caller
//    retries against the new policy, 5.10.30 on); without the freeze (5.10.0-5.10.29) the old
//    table keeps mirroring until it is freed.
//
// Concurrency, as the kernel's sidtab: lookups take no lock: entries live in fixed chunks that
// never move, and an entry and a hash chain head are published with release stores after they
// are complete. Every place the kernel takes s->lock or s->cache_lock (spin_lock_irqsave) calls
// the SidtabLocking the table was given: the layer above puts those sections on its platform
// (the core knows none); without one, host mutexes. Simplifications: one SidtabLocking (one
// pair of locks) serves a table and the tables converted from it; the string cache is read
// under cache_lock (the kernel reads it under RCU and takes the lock to bump the LRU).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ss/context.h"
#include "util/name_table.h"
#include "util/work_meter.h"

namespace locksim::ss {

inline constexpr uint32_t SECSID_NULL = 0;
inline constexpr uint32_t SECINITSID_KERNEL = 1;
inline constexpr uint32_t SECINITSID_UNLABELED = 3;
inline constexpr uint32_t kSecInitSidNum = 27;  // the kernel's initial SID count
inline constexpr uint32_t kSidtabHashBits = 9;
inline constexpr uint32_t kSidtabHashBuckets = 1u << kSidtabHashBits;
inline constexpr uint32_t kSidtabDefaultCacheSize = 256;
// Entries per leaf of the kernel's tree: a page of 104-byte struct sidtab_entry (x86-64); the
// live convert reschedules after each.
inline constexpr uint32_t kSidtabLeafEntries = 4096 / 104;
inline constexpr uint32_t kSidtabCacheLen = 3;         // the small reverse cache (linear, legacy)
inline constexpr uint32_t kSidtabLegacyBuckets = 128;  // SIDTAB_SIZE: SID-keyed chains (legacy)
// What "user:role:type" of a formatted context counts for (hash-string era): the length of
// system_u:system_r:init_t and its like in the reference policy.
inline constexpr size_t kContextNamesBytes = 24;

enum class SidtabEra : uint8_t { Hash, HashString, Linear, Legacy };
// "hash", "hash-string", "linear" and "legacy".
const NameTable<SidtabEra> &sidtab_era_names();
std::string_view sidtab_era_name(SidtabEra e);

// The context hash the reverse table uses (the kernel's context_compute_hash: the string of an
// invalid context, else user/role/type and the MLS range).
uint32_t context_compute_hash(const Context &c);

// The SID table's locks as the kernel takes them: s->lock (every section but Cache) and
// s->cache_lock (Cache), both with spin_lock_irqsave; and the reschedule point between two
// leaves of a conversion. Implemented by the layer that knows the platform.
class SidtabLocking {
  public:
    enum class Section : uint8_t {
        Insert,            // sidtab_context_to_sid: re-search, insert, live convert
        ConvertBegin,      // sidtab_convert: start mirroring
        ConvertHashtable,  // sidtab_convert: the new table's hash table (hash era)
        CancelConvert,     // sidtab_cancel_convert
        Freeze,            // sidtab_freeze_begin .. _end (5.10 on)
        Shutdown,          // sidtab_shutdown (legacy)
        Cache,             // sidtab_sid2str_put: the string cache's LRU
        Count
    };
    virtual ~SidtabLocking() = default;
    virtual void lock(Section s) = 0;
    virtual void unlock(Section s) = 0;
    virtual void resched() {}

    // Inserts an old table mirrored onto a SID the new table already held: only without the
    // freeze (5.10.0-5.10.29), once the new table was published and added SIDs of its own.
    // Kept here because one locking serves a table and every table converted from it.
    void count_mirror_collision() { mirror_collisions_.fetch_add(1, std::memory_order_relaxed); }
    uint64_t mirror_collisions() const {
        return mirror_collisions_.load(std::memory_order_relaxed);
    }

  private:
    std::atomic<uint64_t> mirror_collisions_{0};
};
std::string_view sidtab_section_name(SidtabLocking::Section s);  // "sidtab_insert", ...

class Sidtab {
  public:
    explicit Sidtab(uint32_t cache_size = kSidtabDefaultCacheSize, SidtabEra era = SidtabEra::Hash,
                    std::shared_ptr<SidtabLocking> locking = nullptr);
    ~Sidtab();
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
        // Before the context, so that a scan's look at an entry (is it used, which type) reads
        // one host cache line.
        std::atomic<bool> used{false};  // an initial SID slot may be unset; set last
        bool cached = false;            // `cache` is valid
        // Which of the lines a scan reads here the cache model's sampling keeps (ScanLines).
        mutable std::atomic<uint16_t> scan_lines{0};
        Context context;
        // The reverse hash chain (hash eras), or the chain of the SID's bucket in ascending SID
        // order (legacy: struct sidtab_node's `next`).
        std::atomic<Entry *> hnext{nullptr};
        std::list<CacheItem>::iterator cache;
    };

    // Sets initial SID `sid` (1..kSecInitSidNum); -EINVAL when out of range or already set.
    // At creation only (no lock, as sidtab_set_initial).
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

    // Context -> SID: finds the context or adds it with the next SID. -ESTALE when frozen,
    // -ENOMEM when shut down for a load (legacy), -EOVERFLOW when full.
    // `spelled`: the string the context was parsed from, where it was (5.6-5.7 hash it).
    int context_to_sid(const Context &c, uint32_t *sid, std::string_view spelled = {});
    // The era's lock-free reverse lookup: SECSID_NULL when absent. `hash` is the context's
    // (hash era only).
    uint32_t lookup(const Context &c, uint32_t hash) const;

    // The string cache (sidtab_sid2str_get / _put).
    bool sid2str_get(uint32_t sid, std::string &out);
    void sid2str_put(uint32_t sid, std::string_view str);
    uint32_t cache_size() const { return cache_size_; }
    uint32_t cache_used() const;
    // The same without cache_lock: only where no other thread can use the table (its destroy).
    uint32_t cache_used_unlocked() const { return static_cast<uint32_t>(lru_.size()); }

    SidtabEra era() const { return era_; }
    bool hashed_era() const { return era_ == SidtabEra::Hash || era_ == SidtabEra::HashString; }
    // The context's hash as the era makes it, with its cost (0 in the eras without a hash);
    // `spelled` as for context_to_sid.
    uint32_t era_hash(const Context &c, std::string_view spelled = {}) const;
    const std::shared_ptr<SidtabLocking> &locking() const { return locking_; }
    // Replaces the locking; only while no other thread or task uses the table (setup).
    void set_locking(std::shared_ptr<SidtabLocking> l) { locking_ = std::move(l); }

    // Conversion for a policy load. `fn` converts a context to the new policy's values (it may
    // keep an invalid context by its string); it returns 0 or a negative errno, which aborts.
    // -EBUSY when a conversion is already under way.
    using ConvertFn = std::function<int(const Context &oldc, Context &newc)>;
    int convert(Sidtab &target, ConvertFn fn);
    void cancel_convert();
    // sidtab_freeze_begin / _end: the lock is held from one to the other (the new policy is
    // published in between); inserts then fail with -ESTALE.
    void freeze_begin();
    void freeze_end();
    void freeze() {
        freeze_begin();
        freeze_end();
    }
    bool frozen() const { return frozen_.load(std::memory_order_relaxed); }

    // Every used entry (initial SIDs first). Not concurrently with inserts.
    template <class F>
    void for_each(F &&f) const {
        const uint32_t n = size_.load(std::memory_order_acquire);
        for (uint32_t i = 0; i < n; ++i)
            if (const Entry &e = at(i); e.used.load(std::memory_order_acquire)) f(e);
    }
    uint32_t count() const { return count_.load(std::memory_order_relaxed); }  // used entries
    uint32_t next_sid() const { return size_.load(std::memory_order_acquire) + 1; }

    static constexpr uint32_t kEntryBytes = 104;  // the kernel's struct sidtab_entry (x86-64)
    static constexpr uint32_t kChunkBits = 8;
    static constexpr uint32_t kChunk = 1u << kChunkBits;  // entries per chunk
    static constexpr uint32_t kMaxChunks = 1u << 12;      // at most 2^20 SIDs

  private:
    class Held;
    Entry &at(uint32_t i) const {  // i < size_
        return chunks_[i >> kChunkBits].load(std::memory_order_acquire)[i & (kChunk - 1)];
    }
    Entry *legacy_walk(uint32_t sid);  // the legacy era's chain walk (sidtab_search_core)
    Entry &slot(uint32_t sid);         // grows the array up to sid (lock held)
    Entry *insert_at(uint32_t sid, Context c, uint32_t hash, bool hashed = true);
    void hash_add(Entry *e);
    void legacy_link(Entry *e);  // into its bucket's chain (legacy)
    // A chain walk's step past node e: a probe, the node read through the one before.
    void legacy_pass(const Entry &e) const;
    // The first node of a legacy bucket's chain (s->htable[bucket]), its line read.
    const Entry *legacy_head(uint32_t bucket) const;
    // Records the read (or write) of bytes [from, to) of the entry of index i (SID i + 1) for
    // the cache model, in the era's layout: the kernel's struct sidtab_entry, 104 bytes, in
    // page-sized leaves of kSidtabLeafEntries (hash and linear eras), or a struct sidtab_node of
    // 88 bytes on its own (legacy, each node a separate allocation).
    void touch_entry(uint32_t i, uint32_t from, uint32_t to, Access access) const;
    template <class Sink>  // a LineRecorder, or anything with its touch(line, access)
    void touch_entry(Sink &rec, uint32_t i, uint32_t from, uint32_t to, Access access) const {
        uint64_t base;
        if (era_ == SidtabEra::Legacy) {
            base = uint64_t{i} * 2 * 64;
        } else {
            base = uint64_t{i / kSidtabLeafEntries} * 4096 +
                   uint64_t{i % kSidtabLeafEntries} * kEntryBytes;
        }
        for (uint64_t line = (base + from) / 64; line <= (base + to - 1) / 64; ++line)
            rec.touch(mem_line(MemRegion::SidtabEntry, name_, line), access);
    }
    // The same for a context just placed in entry i: its lines and its categories' nodes.
    void write_entry(Entry &e);
    // The string cache item of `sid` with `len` bytes of text: read through the entry, or written.
    void touch_string(uint32_t sid, size_t len, Access access) const;
    // The linear and legacy eras' scan over entries [from, to) (after the cache when `cached`).
    uint32_t scan(const Context &c, uint32_t from, uint32_t to, bool cached) const;
    // The lines a scan reads at entry e (index i): its look at the type, and the compare past
    // it; and what sampling with `shift` keeps of them (ScanLines, sidtab.cpp), worked out (the
    // scan keeps it in the entry).
    template <class Sink>
    void scan_look(Sink &rec, uint32_t i, Access type_access) const;
    template <class Sink>
    void scan_compare(Sink &rec, const Entry &e, uint32_t i) const;
    uint16_t scan_lines(const Entry &e, uint32_t i, int shift) const;
    void remember(uint32_t sid) const;  // a hit or an insert to the front of the small cache
    int convert_legacy(Sidtab &target, const ConvertFn &fn);

    SidtabEra era_;
    std::shared_ptr<SidtabLocking> locking_;
    std::unique_ptr<std::atomic<Entry *>[]> chunks_;  // entry sid is chunk (sid-1)/kChunk
    std::atomic<uint32_t> size_{0};                   // slots that exist
    std::unique_ptr<std::atomic<Entry *>[]> buckets_;
    std::atomic<uint32_t> count_{0};
    mutable std::atomic<uint32_t> recent_[kSidtabCacheLen] = {};  // SIDs, most recent first
    uint32_t cache_size_;
    std::list<CacheItem> lru_;  // most recent first (cache_lock)
    Sidtab *convert_target_ = nullptr;
    ConvertFn convert_fn_;
    std::atomic<bool> frozen_{false};
    bool shutdown_ = false;               // legacy: a load is under way
    uint32_t name_ = next_line_object();  // the table's lines' name for the cache model
};

}  // namespace locksim::ss
