#include "ss/sidtab.h"

#include <cerrno>

#include "ss/work_meter.h"

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

uint32_t level_hash(const MlsLevel &l, uint32_t h) {
    h = mix(h, l.sens);
    for (const EbitmapNode *n = l.cat.first(); n; n = n->next) {
        count_work(Work::EbitmapNode);
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

Sidtab::Sidtab(uint32_t cache_size)
    : buckets_(kSidtabHashBuckets, nullptr), cache_size_(cache_size) {
    entries_.resize(kSecInitSidNum);
    for (uint32_t i = 0; i < kSecInitSidNum; ++i)
        entries_[i].sid = i + 1;
}

Sidtab::Entry &Sidtab::slot(uint32_t sid) {
    while (entries_.size() < sid) {
        entries_.emplace_back();
        entries_.back().sid = static_cast<uint32_t>(entries_.size());
    }
    return entries_[sid - 1];
}

void Sidtab::hash_add(Entry *e) {
    Entry **head = &buckets_[e->hash & (kSidtabHashBuckets - 1)];
    e->hnext = *head;
    *head = e;
}

Sidtab::Entry *Sidtab::insert_at(uint32_t sid, Context c, uint32_t hash) {
    Entry &e = slot(sid);
    count_work(Work::Alloc);
    e.context = std::move(c);
    e.hash = hash;
    e.used = true;
    ++count_;
    hash_add(&e);
    return &e;
}

int Sidtab::set_initial(uint32_t sid, const Context &c) {
    if (sid == SECSID_NULL || sid > kSecInitSidNum) return -EINVAL;
    if (entries_[sid - 1].used) return -EINVAL;
    insert_at(sid, c, context_compute_hash(c));
    return 0;
}

Sidtab::Entry *Sidtab::entry(uint32_t sid) {
    if (sid == SECSID_NULL || sid > entries_.size()) return nullptr;
    Entry &e = entries_[sid - 1];
    return e.used ? &e : nullptr;
}

const Sidtab::Entry *Sidtab::entry(uint32_t sid) const {
    return const_cast<Sidtab *>(this)->entry(sid);
}

Sidtab::Entry *Sidtab::search_entry(uint32_t sid, bool force) {
    count_work(Work::HashProbe);
    Entry *e = entry(sid);
    if (e && (force || !e->context.is_invalid())) return e;
    return entry(SECINITSID_UNLABELED);
}

const Context *Sidtab::search(uint32_t sid, bool force) const {
    const Entry *e = const_cast<Sidtab *>(this)->search_entry(sid, force);
    return e ? &e->context : nullptr;
}

uint32_t Sidtab::lookup(const Context &c, uint32_t hash) const {
    for (const Entry *e = buckets_[hash & (kSidtabHashBuckets - 1)]; e; e = e->hnext) {
        count_work(Work::HashProbe);
        if (e->hash == hash && context_equal(e->context, c)) return e->sid;
    }
    return SECSID_NULL;
}

int Sidtab::context_to_sid(const Context &c, uint32_t *sid) {
    uint32_t hash = context_compute_hash(c);
    if (uint32_t found = lookup(c, hash)) {
        *sid = found;
        return 0;
    }
    if (frozen_) return -ESTALE;
    uint32_t newsid = next_sid();
    if (convert_target_) {
        // A conversion is under way: the new table gets the entry under the same SID.
        Context converted;
        if (int rc = convert_fn_(c, converted)) return rc;
        uint32_t h2 = context_compute_hash(converted);
        convert_target_->insert_at(newsid, std::move(converted), h2);
    }
    insert_at(newsid, c, hash);
    *sid = newsid;
    return 0;
}

bool Sidtab::sid2str_get(uint32_t sid, std::string &out) {
    Entry *e = entry(sid);
    if (!e || !e->cached) return false;
    if (e->cache != lru_.begin()) lru_.splice(lru_.begin(), lru_, e->cache);
    out.assign(e->cache->str);
    count_work(Work::BytesCopied, out.size());
    return true;
}

void Sidtab::sid2str_put(uint32_t sid, std::string_view str) {
    if (cache_size_ == 0) return;
    Entry *e = entry(sid);
    // Invalid contexts are not cached (their string is at hand anyway).
    if (!e || e->cached || e->context.is_invalid()) return;
    if (lru_.size() >= cache_size_) {
        CacheItem &victim = lru_.back();
        victim.entry->cached = false;
        lru_.pop_back();
        count_work(Work::Free);
    }
    count_work(Work::Alloc);
    count_work(Work::BytesCopied, str.size());
    lru_.push_front(CacheItem{e, std::string(str)});
    e->cache = lru_.begin();
    e->cached = true;
}

int Sidtab::convert(Sidtab &target, ConvertFn fn) {
    for (Entry &e : entries_) {
        if (!e.used || e.sid <= kSecInitSidNum) continue;
        Context converted;
        if (int rc = fn(e.context, converted)) return rc;
        uint32_t h = context_compute_hash(converted);
        target.insert_at(e.sid, std::move(converted), h);
    }
    // Keep the numbering: the next dynamic SID is the same in both tables.
    target.slot(next_sid() - 1);
    convert_target_ = &target;
    convert_fn_ = std::move(fn);
    return 0;
}

void Sidtab::cancel_convert() {
    convert_target_ = nullptr;
    convert_fn_ = nullptr;
}

}  // namespace locksim::ss
