#include "ss/sidtab.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "ss/context_string.h"
#include "util/work_meter.h"

namespace locksim::ss {
namespace {

inline uint32_t mix(uint32_t h, uint32_t v) {
    v *= 0xcc9e2d51u;
    v = (v << 15) | (v >> 17);
    v *= 0x1b873593u;
    h ^= v;
    h = (h << 13) | (h >> 19);
    return h * 5 + 0xe6546b64u;
}

inline uint32_t finish(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

// Where the kernel's entry keeps what the model reads (x86-64 struct sidtab_entry of v5.x: sid,
// hash, then struct context: user, role, type, len, the range's two levels, str; then the
// string cache pointer and the hash list node). The legacy struct sidtab_node is the SID, the
// context and `next`.
constexpr uint32_t kEntryBytes = Sidtab::kEntryBytes, kLegacyNodeBytes = 88;
constexpr uint32_t kOffHash = 4, kOffType = 16, kOffContext = 8, kOffContextEnd = 72;
constexpr uint32_t kOffCache = 80, kOffHnext = 88, kOffLegacyNext = 80;
// The SID table's slot lines: its 512 bucket heads (8 to a line), then the small reverse cache
// and the tree's root.
constexpr uint64_t kRecentLine = kSidtabHashBuckets / 8, kRootLine = kRecentLine + 1;
// Lines of one string cache item: its header and up to this many of text.
constexpr uint32_t kStringItemHeader = 44, kStringLineBits = 16;

// An entry's scan_lines: the sampling shift it was worked out for (plus one; 0: not yet), the
// touches of a scan's look at the entry and of a compare past its type, and whether the
// sampling keeps any line of each (those are then recorded; the others only counted).
struct ScanLines {
    static constexpr uint16_t kShiftMask = 0xf, kLookSampled = 1 << 4, kCompareSampled = 1 << 5;
    static constexpr uint16_t kAll = kLookSampled | kCompareSampled;
    static uint16_t make(int shift, uint32_t look_n, bool look_sampled, uint32_t compare_n,
                         bool compare_sampled) {
        assert(shift + 1 <= kShiftMask && look_n < 8 && compare_n < 8);  // the fields' widths
        return static_cast<uint16_t>((shift + 1) | (look_sampled ? kLookSampled : 0) |
                                     (compare_sampled ? kCompareSampled : 0) | look_n << 6 |
                                     compare_n << 9);
    }
    static uint32_t look(uint16_t plan) { return plan >> 6 & 7; }
    static uint32_t compare(uint16_t plan) { return plan >> 9 & 7; }
};

uint32_t level_hash(const MlsLevel &l, uint32_t h) {
    h = mix(h, l.sens);
    for (const EbitmapNode *n = l.cat.first(); n; n = n->next) {
        count_work(Work::EbitmapNode);
        l.cat.touch(n);
        h = mix(h, n->startbit);
        for (uint64_t w : n->maps) {
            count_work(Work::EbitmapWord);
            h = mix(h, static_cast<uint32_t>(w));
            h = mix(h, static_cast<uint32_t>(w >> 32));
        }
    }
    return h;
}

}  // namespace

uint32_t context_compute_hash(const Context &c) {
    if (c.is_invalid()) {
        uint32_t h = 0;
        for (unsigned char ch : c.str)
            h = mix(h, ch);
        count_work(Work::StringByte, c.str.size());
        return finish(h);
    }
    uint32_t h = mix(mix(mix(0, c.user), c.role), c.type);
    h = level_hash(c.range.level[0], h);
    h = level_hash(c.range.level[1], h);
    return finish(h);
}

namespace {

// full_name_hash (fs/namei.c with word-at-a-time access, as x86-64 builds it): eight bytes a
// step. A step counts as a string byte (a load and a mix).
uint32_t full_name_hash(std::string_view s) {
    uint64_t h = 0;
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    }
    uint64_t tail = 0;
    if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);
    h = (h ^ tail) * 0x9e3779b97f4a7c15ull;
    count_work(Work::StringByte, (s.size() + 7) / 8);
    return static_cast<uint32_t>(h >> 32);
}

// The text 5.6-5.7's context_add_hash hashes for a context the server made (v5.6.4 services.c:
// context_struct_to_string into a GFP_ATOMIC buffer, then kfree). The table holds no policy to
// spell the names with: user:role:type are kContextNamesBytes of their numbers, a sensitivity
// "s<N>", a category "c<N>", as the reference policy names them.
std::string made_context_text(const Context &c) {
    auto number = [](char letter, uint32_t v) {
        char buf[12] = {letter};
        const auto end = std::to_chars(buf + 1, buf + sizeof buf, v).ptr;
        return std::string(buf, end);
    };
    auto sens = [&](uint32_t s) { return number('s', s ? s - 1 : 0); };
    auto cat = [&](uint32_t bit) { return number('c', bit); };
    const size_t len = kContextNamesBytes + mls_text_length(c.range, sens, cat);
    std::string text;
    text.reserve(len);
    count_work(Work::Alloc);
    for (const std::string &part : {number('u', c.user), number('r', c.role), number('t', c.type)})
        (text += part) += ':';
    text.resize(kContextNamesBytes, '_');
    append_mls_text(c.range, sens, cat, text);
    count_work(Work::StringByte, text.size());
    return text;
}

}  // namespace

uint32_t Sidtab::era_hash(const Context &c, std::string_view spelled) const {
    switch (era_) {
        case SidtabEra::Hash:
            return context_compute_hash(c);
        case SidtabEra::HashString: {
            // v5.6.4: string_to_context_struct hashes the string it parses (context_compute_hash,
            // full_name_hash over it); a context the server made (a transition, a user's
            // context, a converted one) has no string, and context_add_hash writes its text to
            // hash it, then frees it. An invalid context hashes its string.
            if (c.is_invalid()) return context_compute_hash(c);
            uint32_t h = 0;
            if (!spelled.empty()) {
                h = full_name_hash(spelled);
            } else {
                h = full_name_hash(made_context_text(c));
                count_work(Work::Free);
            }
            asm volatile("" : : "r"(h));
            // The bucket is the fields' hash (uncounted: the kernel's bucket is the string's),
            // so that a context parsed and the same context made share an entry, as they do in
            // 5.6 when the string is the canonical spelling (5.6 gave another spelling of an
            // existing context a second SID: not modelled).
            const WorkMeterScope unmetered(nullptr);
            return context_compute_hash(c);
        }
        case SidtabEra::Linear:
        case SidtabEra::Legacy:
            break;
    }
    return 0;
}

const NameTable<SidtabEra> &sidtab_era_names() {
    static const NameTable<SidtabEra> names = {{SidtabEra::Hash, "hash"},
                                               {SidtabEra::HashString, "hash-string"},
                                               {SidtabEra::Linear, "linear"},
                                               {SidtabEra::Legacy, "legacy"}};
    return names;
}

std::string_view sidtab_era_name(SidtabEra e) {
    return sidtab_era_names().name(e);
}

std::string_view sidtab_section_name(SidtabLocking::Section s) {
    static constexpr std::string_view kNames[] = {
        "sidtab_insert",         "sidtab_convert_begin", "sidtab_convert_hashtable",
        "sidtab_cancel_convert", "sidtab_freeze",        "sidtab_shutdown",
        "sidtab_cache"};
    static_assert(std::size(kNames) == static_cast<size_t>(SidtabLocking::Section::Count));
    return kNames[static_cast<size_t>(s)];
}

namespace {

// Without a platform: host mutexes, s->lock and s->cache_lock.
class HostSidtabLocking final : public SidtabLocking {
  public:
    void lock(Section s) override { (s == Section::Cache ? cache_ : table_).lock(); }
    void unlock(Section s) override { (s == Section::Cache ? cache_ : table_).unlock(); }

  private:
    std::mutex table_, cache_;
};

}  // namespace

// One locked section, as the kernel's spin_lock_irqsave .. spin_unlock_irqrestore.
class Sidtab::Held {
  public:
    Held(const Sidtab &t, SidtabLocking::Section s) : l_(*t.locking_), s_(s) { l_.lock(s_); }
    ~Held() { l_.unlock(s_); }
    Held(const Held &) = delete;
    Held &operator=(const Held &) = delete;

  private:
    SidtabLocking &l_;
    SidtabLocking::Section s_;
};

using Section = SidtabLocking::Section;

Sidtab::Sidtab(uint32_t cache_size, SidtabEra era, std::shared_ptr<SidtabLocking> locking)
    : era_(era),
      locking_(locking ? std::move(locking) : std::make_shared<HostSidtabLocking>()),
      chunks_(new std::atomic<Entry *>[kMaxChunks]),
      buckets_(new std::atomic<Entry *>[kSidtabHashBuckets]),
      cache_size_(cache_size) {
    for (uint32_t i = 0; i < kMaxChunks; ++i)
        chunks_[i].store(nullptr, std::memory_order_relaxed);
    for (uint32_t i = 0; i < kSidtabHashBuckets; ++i)
        buckets_[i].store(nullptr, std::memory_order_relaxed);
    slot(kSecInitSidNum);
}

Sidtab::~Sidtab() {
    for (uint32_t i = 0; i < kMaxChunks; ++i)
        delete[] chunks_[i].load(std::memory_order_relaxed);
}

Sidtab::Entry &Sidtab::slot(uint32_t sid) {
    if (sid > kMaxChunks * kChunk) throw std::length_error("SID table full");
    for (uint32_t n = size_.load(std::memory_order_relaxed); n < sid; ++n) {
        std::atomic<Entry *> &chunk = chunks_[n >> kChunkBits];
        if (!chunk.load(std::memory_order_relaxed)) {
            count_work(Work::Alloc);
            chunk.store(new Entry[kChunk], std::memory_order_release);
        }
        at(n).sid = n + 1;
        size_.store(n + 1, std::memory_order_release);
    }
    return at(sid - 1);
}

void Sidtab::hash_add(Entry *e) {
    const uint32_t bucket = e->hash & (kSidtabHashBuckets - 1);
    touch_line(mem_line(MemRegion::SidtabSlots, name_, bucket / 8), Access::Independent);
    touch_entry(e->sid - 1, kOffHnext, kEntryBytes, Access::Written);
    std::atomic<Entry *> &head = buckets_[bucket];
    e->hnext.store(head.load(std::memory_order_relaxed), std::memory_order_relaxed);
    head.store(e, std::memory_order_release);
}

// sidtab_insert (v4.15.1 ss/sidtab.c): the node goes into its bucket's chain (the first
// kSidtabLegacyBuckets heads of buckets_), before the first node of a higher SID. A reader may
// be walking the chain: the node is complete before the link to it is published.
// Each node passed is a probe, read through the one before.
void Sidtab::legacy_link(Entry *e) {
    const uint32_t bucket = e->sid & (kSidtabLegacyBuckets - 1);
    touch_line(mem_line(MemRegion::SidtabSlots, name_, bucket / 8), Access::Independent);
    std::atomic<Entry *> *link = &buckets_[bucket];
    Entry *cur;
    while ((cur = link->load(std::memory_order_relaxed)) && cur->sid < e->sid) {
        legacy_pass(*cur);
        link = &cur->hnext;
    }
    e->hnext.store(cur, std::memory_order_relaxed);
    link->store(e, std::memory_order_release);
}

void Sidtab::legacy_pass(const Entry &e) const {
    count_work(Work::HashProbe);
    touch_entry(e.sid - 1, 0, 4, Access::Dependent);  // the node, through the one before
    touch_entry(e.sid - 1, kOffLegacyNext, kLegacyNodeBytes, Access::Independent);  // its `next`
}

const Sidtab::Entry *Sidtab::legacy_head(uint32_t bucket) const {
    touch_line(mem_line(MemRegion::SidtabSlots, name_, bucket / 8), Access::Independent);
    return buckets_[bucket].load(std::memory_order_acquire);
}

void Sidtab::touch_entry(uint32_t i, uint32_t from, uint32_t to, Access access) const {
    if (const LineRecorder rec; rec) touch_entry(rec, i, from, to, access);
}

void Sidtab::write_entry(Entry &e) {
    touch_entry(e.sid - 1, 0, era_ == SidtabEra::Legacy ? kLegacyNodeBytes : kEntryBytes,
                Access::Written);
    for (MlsLevel &l : e.context.range.level) {
        // context_cpy: the categories are copied into nodes of the entry's own.
        l.cat.name_lines(next_line_object());
        for (const EbitmapNode *n = l.cat.first(); n; n = n->next)
            Ebitmap::touch_node(l.cat.lines(), n, Access::Written);
    }
}

Sidtab::Entry *Sidtab::insert_at(uint32_t sid, Context c, uint32_t hash, bool hashed) {
    Entry &e = slot(sid);
    count_work(Work::Alloc);  // context_cpy
    e.context = std::move(c);
    write_entry(e);
    e.hash = hash;
    e.used.store(true, std::memory_order_release);
    count_.fetch_add(1, std::memory_order_relaxed);
    if (hashed_era() && hashed) hash_add(&e);
    if (era_ == SidtabEra::Legacy) legacy_link(&e);
    return &e;
}

int Sidtab::set_initial(uint32_t sid, const Context &c) {
    if (sid == SECSID_NULL || sid > kSecInitSidNum) return -EINVAL;
    if (at(sid - 1).used.load(std::memory_order_relaxed)) return -EINVAL;
    insert_at(sid, c, era_hash(c));
    return 0;
}

Sidtab::Entry *Sidtab::entry(uint32_t sid) {
    if (sid == SECSID_NULL || sid > size_.load(std::memory_order_acquire)) return nullptr;
    Entry &e = at(sid - 1);
    return e.used.load(std::memory_order_acquire) ? &e : nullptr;
}

const Sidtab::Entry *Sidtab::entry(uint32_t sid) const {
    return const_cast<Sidtab *>(this)->entry(sid);
}

// The legacy era's SID -> entry (v4.15.1 ss/sidtab.c sidtab_search_core): the chain of bucket
// sid & (SIDTAB_SIZE - 1) holds that bucket's SIDs in ascending order and is walked until a SID
// not below `sid`; every node visited is a dependent load, priced as a probe. nullptr when the
// walk ends without `sid`.
Sidtab::Entry *Sidtab::legacy_walk(uint32_t sid) {
    // The bucket's head (s->htable[hvalue]), then its chain, each node through the one before.
    for (const Entry *e = legacy_head(sid & (kSidtabLegacyBuckets - 1)); e;
         e = e->hnext.load(std::memory_order_acquire)) {
        legacy_pass(*e);
        if (e->sid >= sid) return e->sid == sid ? const_cast<Entry *>(e) : nullptr;
    }
    return nullptr;
}

Sidtab::Entry *Sidtab::search_entry(uint32_t sid, bool force) {
    if (era_ == SidtabEra::Legacy) {
        // An unknown SID or (unless forced) an invalid context: the unlabeled SID's chain next.
        Entry *e = sid == SECSID_NULL ? nullptr : legacy_walk(sid);
        if (e && (force || !e->context.is_invalid())) return e;
        return legacy_walk(SECINITSID_UNLABELED);
    }
    count_work(Work::HashProbe);
    // The tree's root, then the leaf's entry (sidtab_lookup: a dependent load).
    touch_line(mem_line(MemRegion::SidtabSlots, name_, kRootLine), Access::Independent);
    Entry *e = entry(sid);
    if (e) touch_entry(sid - 1, kOffContext, kOffContextEnd, Access::Dependent);
    if (e && (force || !e->context.is_invalid())) return e;
    touch_entry(SECINITSID_UNLABELED - 1, kOffContext, kOffContextEnd, Access::Dependent);
    return entry(SECINITSID_UNLABELED);
}

const Context *Sidtab::search(uint32_t sid, bool force) const {
    const Entry *e = const_cast<Sidtab *>(this)->search_entry(sid, force);
    return e ? &e->context : nullptr;
}

void Sidtab::remember(uint32_t sid) const {
    // Racy without a lock, as the kernel's cache updates are: a lost update costs a scan.
    uint32_t carry = sid;
    for (auto &slot : recent_) {
        uint32_t prev = slot.load(std::memory_order_relaxed);
        slot.store(carry, std::memory_order_relaxed);
        if (prev == sid) return;
        carry = prev;
    }
}

template <class Sink>
void Sidtab::scan_look(Sink &rec, uint32_t i, Access type_access) const {
    touch_entry(rec, i, kOffType, kOffType + 4, type_access);
    if (era_ == SidtabEra::Legacy)
        touch_entry(rec, i, kOffLegacyNext, kLegacyNodeBytes, Access::Independent);
}

// The rest of the entry's context: the entry's own lines (known ahead); and the first node of
// each level's categories, read through the entry but not waited for by the walk to the next
// entry, which a core runs ahead of the compare (predicting that it fails, as it does for all
// but one entry): those misses overlap the walk's.
template <class Sink>
void Sidtab::scan_compare(Sink &rec, const Entry &e, uint32_t i) const {
    touch_entry(rec, i, kOffContext, kOffContextEnd, Access::Independent);
    for (const MlsLevel &l : e.context.range.level)
        if (l.cat.lines() && l.cat.first())
            rec.touch(Ebitmap::node_line(l.cat.first()), Access::Independent);
}

uint16_t Sidtab::scan_lines(const Entry &e, uint32_t i, int shift) const {
    struct Probe {  // counts the touches, and whether the sampling keeps any
        int shift;
        uint32_t n = 0;
        bool sampled = false;
        void touch(uint64_t line, Access) {
            ++n;
            sampled |= line_sampled(line, shift);
        }
    } look{shift}, compare{shift};
    scan_look(look, i, Access::Dependent);
    scan_compare(compare, e, i);
    const uint16_t plan = ScanLines::make(shift, look.n, look.sampled, compare.n, compare.sampled);
    // Racy as the entry's readers are: every writer stores the same value.
    e.scan_lines.store(plan, std::memory_order_relaxed);
    return plan;
}

uint32_t Sidtab::scan(const Context &c, uint32_t from, uint32_t to, bool cached) const {
    const bool legacy = era_ == SidtabEra::Legacy;
    if (cached) {
        touch_line(mem_line(MemRegion::SidtabSlots, name_, kRecentLine), Access::Independent);
        for (const auto &slot : recent_) {
            const uint32_t sid = slot.load(std::memory_order_relaxed);
            count_work(Work::HashProbe);
            const Entry *e = entry(sid);
            if (!e) continue;
            touch_entry(sid - 1, kOffContext, kOffContextEnd, Access::Dependent);
            if (context_equal(e->context, c)) {
                remember(sid);
                return sid;
            }
        }
    }
    // One scan_entry per entry looked at, counted once for the whole scan (nothing between the
    // entries is charged). A context of fields (not a string) equals no entry of another type:
    // the type is compared first, as the most selective field.
    const bool by_fields = c.str.empty();
    const LineRecorder rec;  // looked up once: the scan records a line or two per entry
    // Where no stream is marked, an entry none of whose lines the sampling keeps only counts
    // its touches (the entry's ScanLines), which is most entries: the scan then costs the host
    // little more than without the model.
    const bool planned = rec && !rec.streams();
    uint32_t looked = 0;
    uint64_t skipped = 0;  // touches counted, not recorded
    // Legacy: whether the compare of the node before went past the type (the range and its
    // categories), work that covers the private level's latency of the node after, which the
    // core loads meanwhile (Access::RunAhead); a compare that stops at the type does not.
    bool covered = false;
    // Entry i, looked at: whether it holds the context.
    auto holds = [&](const Entry &e, uint32_t i) {
        const bool after_deep = std::exchange(covered, false);
        if (!e.used.load(std::memory_order_acquire)) return false;
        ++looked;
        uint16_t plan = ScanLines::kAll;
        if (planned) {
            plan = e.scan_lines.load(std::memory_order_relaxed);
            if ((plan & ScanLines::kShiftMask) != rec.shift() + 1) [[unlikely]]
                plan = scan_lines(e, i, rec.shift());
        }
        // The entry's type (a leaf's array: its address known ahead; legacy: a chain node
        // and its `next`, each through the one before).
        if (rec) {
            if (plan & ScanLines::kLookSampled)
                scan_look(rec, i,
                          !legacy      ? Access::Independent
                          : after_deep ? Access::RunAhead
                                       : Access::Dependent);
            else
                skipped += ScanLines::look(plan);
        }
        if (by_fields && e.context.type != c.type) return false;
        covered = true;
        if (rec) {
            if (plan & ScanLines::kCompareSampled)
                scan_compare(rec, e, i);
            else
                skipped += ScanLines::compare(plan);
        }
        return context_equal(e.context, c);
    };
    auto found = [&](const Entry &e) {
        count_work(Work::ScanEntry, looked);
        if (skipped) rec.skip(skipped);
        remember(e.sid);
        return e.sid;
    };
    if (legacy) {
        // sidtab_search_context (v4.15.1 ss/sidtab.c): bucket after bucket, each chain node
        // through the one before, in rising SID order (kSidtabLegacyBuckets SIDs apart).
        for (uint32_t b = 0; b < kSidtabLegacyBuckets; ++b) {
            covered = false;  // a chain's first node: through the bucket's head
            for (const Entry *e = legacy_head(b); e; e = e->hnext.load(std::memory_order_acquire))
                if (e->sid > from && e->sid <= to && holds(*e, e->sid - 1)) return found(*e);
        }
    } else {
        for (uint32_t i = from; i < to;) {
            const Entry *chunk = chunks_[i >> kChunkBits].load(std::memory_order_acquire);
            for (const uint32_t end = std::min(to, (i | (kChunk - 1)) + 1); i < end; ++i)
                if (holds(chunk[i & (kChunk - 1)], i)) return found(chunk[i & (kChunk - 1)]);
        }
    }
    count_work(Work::ScanEntry, looked);
    if (skipped) rec.skip(skipped);
    return SECSID_NULL;
}

uint32_t Sidtab::lookup(const Context &c, uint32_t hash) const {
    if (!hashed_era()) return scan(c, 0, size_.load(std::memory_order_acquire), true);
    const uint32_t bucket = hash & (kSidtabHashBuckets - 1);
    touch_line(mem_line(MemRegion::SidtabSlots, name_, bucket / 8), Access::Independent);
    for (const Entry *e = buckets_[bucket].load(std::memory_order_acquire); e;
         e = e->hnext.load(std::memory_order_acquire)) {
        count_work(Work::HashProbe);
        touch_entry(e->sid - 1, 0, kOffHash + 4, Access::Dependent);
        touch_entry(e->sid - 1, kOffHnext, kEntryBytes, Access::Independent);  // same node
        if (e->hash != hash) continue;
        touch_entry(e->sid - 1, kOffContext, kOffContextEnd, Access::Dependent);
        if (context_equal(e->context, c)) return e->sid;
    }
    return SECSID_NULL;
}

int Sidtab::context_to_sid(const Context &c, uint32_t *sid, std::string_view spelled) {
    // Only the hash eras hash the context (5.6-5.7 through its string), outside the lock.
    const uint32_t hash = era_hash(c, spelled);
    const uint32_t scanned = size_.load(std::memory_order_acquire);
    if (uint32_t found = lookup(c, hash)) {
        *sid = found;
        return 0;
    }
    Held g(*this, Section::Insert);
    // Added while we took the lock? The hash era searches its chain again, the linear era the
    // entries added since its scan, the legacy era everything again.
    const uint32_t now = size_.load(std::memory_order_relaxed);
    uint32_t found = hashed_era()                ? lookup(c, hash)
                     : era_ == SidtabEra::Linear ? scan(c, scanned, now, false)
                                                 : scan(c, 0, now, true);
    if (found) {
        *sid = found;
        return 0;
    }
    if (frozen_.load(std::memory_order_relaxed)) return -ESTALE;
    if (shutdown_) return -ENOMEM;
    if (now >= kMaxChunks * kChunk) return -EOVERFLOW;
    const uint32_t newsid = now + 1;
    if (convert_target_) {
        // A conversion is under way: the new table gets the entry under the same SID.
        Context converted;
        if (int rc = convert_fn_(c, converted)) return rc;
        const uint32_t h2 = era_hash(converted);
        // Without the freeze (5.10.0-5.10.29) the old table goes on mirroring after the new
        // one was published and has added SIDs of its own: the kernel then overwrites the new
        // table's entry under that SID (the race the freeze fixed). locksim keeps the new
        // table's entry and counts the collision.
        if (convert_target_->entry(newsid))
            locking_->count_mirror_collision();
        else
            convert_target_->insert_at(newsid, std::move(converted), h2);
    }
    insert_at(newsid, c, hash);  // legacy: sidtab_insert walks the SID's chain (legacy_link)
    if (era_ == SidtabEra::Linear) remember(newsid);
    *sid = newsid;
    return 0;
}

void Sidtab::touch_string(uint32_t sid, size_t len, Access access) const {
    // The item through the entry's pointer, then its text in order.
    const uint64_t base = uint64_t{sid} << kStringLineBits;
    const uint64_t lines =
        std::min<uint64_t>((kStringItemHeader + len + 63) / 64, uint64_t{1} << kStringLineBits);
    for (uint64_t k = 0; k < lines; ++k)
        touch_line(mem_line(MemRegion::SidtabString, name_, base + k),
                   k == 0 && access == Access::Dependent ? Access::Dependent
                   : access == Access::Written           ? Access::Written
                                                         : Access::Independent);
}

uint32_t Sidtab::cache_used() const {
    Held g(*this, Section::Cache);
    return static_cast<uint32_t>(lru_.size());
}

bool Sidtab::sid2str_get(uint32_t sid, std::string &out) {
    Entry *e = entry(sid);
    if (!e || cache_size_ == 0 || e->context.is_invalid()) return false;
    Held g(*this, Section::Cache);
    touch_entry(sid - 1, kOffCache, kOffCache + 8, Access::Dependent);
    if (!e->cached) return false;
    if (e->cache != lru_.begin()) lru_.splice(lru_.begin(), lru_, e->cache);
    out.assign(e->cache->str);
    count_work(Work::BytesCopied, out.size());
    touch_string(sid, out.size(), Access::Dependent);
    return true;
}

void Sidtab::sid2str_put(uint32_t sid, std::string_view str) {
    if (cache_size_ == 0) return;
    Entry *e = entry(sid);
    // Invalid contexts are not cached (their string is at hand anyway).
    if (!e || e->context.is_invalid()) return;
    Held g(*this, Section::Cache);
    if (e->cached) return;
    if (lru_.size() >= cache_size_) {
        CacheItem &victim = lru_.back();
        victim.entry->cached = false;
        lru_.pop_back();
        count_work(Work::Free);
    }
    count_work(Work::Alloc);
    count_work(Work::BytesCopied, str.size());
    touch_string(sid, str.size(), Access::Written);
    lru_.push_front(CacheItem{e, std::string(str)});
    e->cache = lru_.begin();
    e->cached = true;
}

// sidtab_convert (5.1 on): mirroring starts under the lock; the entries that exist are
// converted outside it, a leaf at a time; the hash era then builds the new table's hash table
// under the lock (inserts wait, interrupts off, for every entry's hash).
int Sidtab::convert(Sidtab &target, ConvertFn fn) {
    if (era_ == SidtabEra::Legacy) return convert_legacy(target, fn);
    uint32_t n;
    {
        Held g(*this, Section::ConvertBegin);
        if (convert_target_) return -EBUSY;
        n = size_.load(std::memory_order_relaxed);
        // The last leaf of the new table first (to avoid a race with the live convert); the
        // next dynamic SID is then the same in both tables.
        target.slot(n);
        convert_target_ = &target;
        convert_fn_ = fn;
    }
    for (uint32_t i = kSecInitSidNum; i < n; ++i) {
        Entry &e = at(i);
        if (e.used.load(std::memory_order_acquire)) {
            touch_entry(i, kOffContext, kOffContextEnd, Access::Independent);
            Context converted;
            if (int rc = fn(e.context, converted)) {
                cancel_convert();
                return rc;
            }
            // 5.6-5.7's convert_context hashes the new context's string here, outside the
            // lock; 5.8 on hashes under it below.
            const uint32_t h = era_ == SidtabEra::HashString ? era_hash(converted) : 0;
            target.insert_at(e.sid, std::move(converted), h, false);
        }
        if ((i + 1 - kSecInitSidNum) % kSidtabLeafEntries == 0) locking_->resched();
    }
    if (hashed_era()) {
        Held g(*this, Section::ConvertHashtable);
        for (uint32_t i = kSecInitSidNum; i < n; ++i) {
            Entry &e = target.at(i);
            if (!e.used.load(std::memory_order_relaxed)) continue;
            target.touch_entry(i, kOffContext, kOffContextEnd, Access::Independent);
            if (era_ == SidtabEra::Hash) e.hash = context_compute_hash(e.context);
            target.hash_add(&e);
        }
    }
    return 0;
}

// Before 5.1 (sidtab_convert of v5.0, the same steps inline in security_load_policy of v4.15):
// sidtab_shutdown under the lock, then sidtab_map(clone_sid) inserts every dynamic entry into
// the new table with sidtab_insert, which takes no lock (the new table is private until it is
// installed), then sidtab_map converts the new table's entries, outside any lock and without a
// reschedule point. The old table takes no new entries until it is replaced.
int Sidtab::convert_legacy(Sidtab &target, const ConvertFn &fn) {
    {
        Held g(*this, Section::Shutdown);
        shutdown_ = true;
    }
    const uint32_t n = size_.load(std::memory_order_acquire);
    for (uint32_t i = kSecInitSidNum; i < n; ++i) {
        const Entry &e = at(i);
        if (!e.used.load(std::memory_order_acquire)) continue;
        touch_entry(i, 0, kLegacyNodeBytes, Access::Dependent);
        count_work(Work::HashProbe, target.count() / kSidtabLegacyBuckets);
        target.insert_at(e.sid, e.context, 0);
    }
    target.slot(n);
    for (uint32_t i = kSecInitSidNum; i < n; ++i) {
        Entry &e = target.at(i);
        if (!e.used.load(std::memory_order_relaxed)) continue;
        target.touch_entry(i, 0, kLegacyNodeBytes, Access::Dependent);
        Context converted;
        if (int rc = fn(e.context, converted)) {
            cancel_convert();
            return rc;
        }
        e.context = std::move(converted);
        target.write_entry(e);
    }
    return 0;
}

void Sidtab::cancel_convert() {
    Held g(*this, Section::CancelConvert);
    convert_target_ = nullptr;
    convert_fn_ = nullptr;
    shutdown_ = false;  // the kernel before 5.0 left the table shut down; we reopen it
}

void Sidtab::freeze_begin() {
    locking_->lock(Section::Freeze);
    frozen_.store(true, std::memory_order_relaxed);
    convert_target_ = nullptr;
    convert_fn_ = nullptr;
}

void Sidtab::freeze_end() {
    locking_->unlock(Section::Freeze);
}

}  // namespace locksim::ss
