#include "ss/avtab.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <iterator>
#include <utility>

namespace locksim::ss {

uint32_t avtab_hash(const AvtabKey &key, uint32_t mask) {
    // MurmurHash3-style mixing of the three 16-bit key fields, then the finaliser.
    constexpr uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593, m = 5, n = 0xe6546b64;
    uint32_t h = 0;
    auto mix = [&](uint32_t v) {
        v *= c1;
        v = (v << 15) | (v >> 17);
        v *= c2;
        h ^= v;
        h = (h << 13) | (h >> 19);
        h = h * m + n;
    };
    mix(key.target_class);
    mix(key.target_type);
    mix(key.source_type);
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h & mask;
}

namespace {

// Key order used to keep chains sorted: source, target, class, then kind.
int key_cmp(const AvtabKey &a, const AvtabKey &b) {
    if (a.source_type != b.source_type) return a.source_type < b.source_type ? -1 : 1;
    if (a.target_type != b.target_type) return a.target_type < b.target_type ? -1 : 1;
    if (a.target_class != b.target_class) return a.target_class < b.target_class ? -1 : 1;
    return 0;
}

constexpr uint16_t kKindMask = static_cast<uint16_t>(~(AVTAB_ENABLED | AVTAB_ENABLED_OLD));

}  // namespace

uint32_t Avtab::next_generation() {
    return next_line_object();
}

Avtab::~Avtab() {
    clear();
}

Avtab::Avtab(Avtab &&o) noexcept {
    *this = std::move(o);
}

Avtab &Avtab::operator=(Avtab &&o) noexcept {
    if (this != &o) {
        htable_ = std::move(o.htable_);
        chunks_ = std::move(o.chunks_);
        chunk_align_ = std::exchange(o.chunk_align_, 0);
        xperms_ = std::move(o.xperms_);
        nel_ = std::exchange(o.nel_, 0);
        nslot_ = std::exchange(o.nslot_, 0);
        mask_ = std::exchange(o.mask_, 0);
        chunk_used_ = std::exchange(o.chunk_used_, 0);
        chunk_size_ = std::exchange(o.chunk_size_, 0);
        gen_ = std::exchange(o.gen_, next_generation());
        layout_ = std::exchange(o.layout_, o.gen_);
    }
    return *this;
}

void Avtab::clear() {
    if (nel_) count_work(Work::Free, nel_);
    htable_.reset();
    chunks_.clear();
    xperms_.clear();
    nel_ = nslot_ = mask_ = chunk_used_ = chunk_size_ = 0;
    chunk_align_ = 0;
    layout_ = gen_ = next_generation();
}

void Avtab::alloc(uint32_t nrules) {
    clear();
    uint32_t nslot = 0;
    if (nrules) {
        uint32_t shift = 0;
        for (uint32_t work = nrules; work; work >>= 1)
            ++shift;
        if (shift > 2) shift -= 2;
        nslot = std::min(uint32_t{1} << shift, kAvtabMaxHashBuckets);
    }
    nslot_ = nslot;
    mask_ = nslot ? nslot - 1 : 0;
    if (nslot) {
        htable_ = std::make_unique<AvtabNode *[]>(nslot);
        count_work(Work::Alloc);
    }
    // Pool chunks sized from the expected number of rules.
    chunk_size_ = std::clamp<uint32_t>(nrules, 64, 4096);
}

void Avtab::alloc_dup(const Avtab &orig) {
    clear();
    nslot_ = orig.nslot_;
    mask_ = orig.mask_;
    if (nslot_) {
        htable_ = std::make_unique<AvtabNode *[]>(nslot_);
        count_work(Work::Alloc);
    }
    chunk_size_ = std::clamp<uint32_t>(orig.nel_, 64, 4096);
}

AvtabNode *Avtab::new_node(const AvtabKey &key, const AvtabDatum &datum, AvtabNode *next) {
    if (chunks_.empty() || chunk_used_ == chunk_size_) {
        if (chunk_size_ == 0) chunk_size_ = 64;
        if (!chunk_align_)
            chunk_align_ = std::bit_ceil(kChunkHeader + chunk_size_ * sizeof(AvtabNode));
        chunks_.emplace_back(::operator new (chunk_align_, std::align_val_t{chunk_align_}),
                             ChunkFree{chunk_align_});
        *static_cast<uint32_t *>(chunks_.back().get()) = static_cast<uint32_t>(chunks_.size() - 1);
        chunk_used_ = 0;
    }
    count_work(Work::Alloc);
    AvtabNode *n = new (chunk_nodes(chunks_.back()) + chunk_used_++) AvtabNode{};
    n->key = key;
    n->next = next;
    if (key.specified & AVTAB_XPERMS) {
        count_work(Work::Alloc);
        xperms_.push_back(std::make_unique<AvtabExtendedPerms>(*datum.u.xperms));
        n->datum.u.xperms = xperms_.back().get();
    } else {
        n->datum.u.data = datum.u.data;
    }
    ++nel_;
    layout_ = gen_ = next_generation();
    return n;
}

AvtabNode *Avtab::insert(const AvtabKey &key, const AvtabDatum &datum) {
    if (!nslot_) return nullptr;
    uint16_t kind = key.specified & kKindMask;
    AvtabNode *prev = nullptr;
    AvtabNode *cur = htable_[avtab_hash(key, mask_)];
    // The insertion walk is not counted as avtab_node (a search through a table out of the
    // cache): building a table is charged by bytes read and allocations.
    for (; cur; prev = cur, cur = cur->next) {
        int c = key_cmp(key, cur->key);
        if (c == 0 && (kind & cur->key.specified)) {
            if (kind & AVTAB_XPERMS) break;  // extended permissions may repeat a key
            return nullptr;                  // duplicate
        }
        if (c < 0) break;
    }
    AvtabNode *n = new_node(key, datum, cur);
    (prev ? prev->next : htable_[avtab_hash(key, mask_)]) = n;
    return n;
}

AvtabNode *Avtab::insert_nonunique(const AvtabKey &key, const AvtabDatum &datum) {
    if (!nslot_) return nullptr;
    uint16_t kind = key.specified & kKindMask;
    uint32_t h = avtab_hash(key, mask_);
    AvtabNode *prev = nullptr;
    AvtabNode *cur = htable_[h];
    for (; cur; prev = cur, cur = cur->next) {  // not counted, as in insert()
        int c = key_cmp(key, cur->key);
        if (c == 0 && (kind & cur->key.specified)) break;
        if (c < 0) break;
    }
    AvtabNode *n = new_node(key, datum, cur);
    (prev ? prev->next : htable_[h]) = n;
    return n;
}

AvtabNode *Avtab::search_node(const AvtabKey &key) const {
    if (!nslot_) return nullptr;
    uint16_t kind = key.specified & kKindMask;
    // The key's hash and the slot's load: a search that finds an empty slot costs this alone.
    count_work(Work::HashProbe);
    const uint32_t h = avtab_hash(key, mask_);
    const LineRecorder rec;
    if (rec) rec.touch(mem_line(MemRegion::AvtabSlots, gen_, h / 8), Access::Independent);
    for (AvtabNode *cur = htable_[h]; cur; cur = cur->next) {
        count_work(Work::AvtabNode);
        if (rec) rec.touch(node_line(*cur), Access::Dependent);
        int c = key_cmp(key, cur->key);
        if (c == 0 && (kind & cur->key.specified)) return cur;
        if (c < 0) break;
    }
    return nullptr;
}

AvtabNode *Avtab::search_node_next(const AvtabNode *node, uint16_t specified) {
    if (!node) return nullptr;
    uint16_t kind = specified & kKindMask;
    for (AvtabNode *cur = node->next; cur; cur = cur->next) {
        count_work(Work::AvtabNode);
        int c = key_cmp(node->key, cur->key);
        if (c == 0 && (kind & cur->key.specified)) return cur;
        if (c < 0) break;
    }
    return nullptr;
}

bool Avtab::adopt_layout(const Avtab &orig) const {
    if (nslot_ != orig.nslot_ || nel_ != orig.nel_) return false;
    auto same_rule = [](const AvtabNode &a, const AvtabNode &b) {
        if (key_cmp(a.key, b.key) != 0 ||
            (a.key.specified & kKindMask) != (b.key.specified & kKindMask))
            return false;
        if (a.key.specified & AVTAB_XPERMS)
            return a.datum.u.xperms->specified == b.datum.u.xperms->specified &&
                   a.datum.u.xperms->driver == b.datum.u.xperms->driver &&
                   a.datum.u.xperms->perms == b.datum.u.xperms->perms;
        return a.datum.u.data == b.datum.u.data;
    };
    for (uint32_t i = 0; i < nslot_; ++i) {
        const AvtabNode *a = htable_[i], *b = orig.htable_[i];
        for (; a && b; a = a->next, b = b->next)
            if (!same_rule(*a, *b)) return false;
        if (a || b) return false;
    }
    layout_ = orig.layout_;
    return true;
}

Avtab::Position Avtab::position_of(const AvtabNode &n) const {
    Position pos{avtab_hash(n.key, mask_), 0};
    for (const AvtabNode *cur = htable_[pos.slot]; cur && cur != &n; cur = cur->next)
        ++pos.depth;
    return pos;
}

uint64_t Avtab::node_line(const AvtabNode &n) const {
    // The chunk holding n: the block of chunk_align_ bytes its address falls in.
    const auto at = reinterpret_cast<std::uintptr_t>(&n);
    const auto *block = reinterpret_cast<const char *>(at & ~(chunk_align_ - 1));
    const uint32_t order = *reinterpret_cast<const uint32_t *>(block);
    const uint64_t index =
        uint64_t{order} * chunk_size_ +
        static_cast<uint64_t>(&n - reinterpret_cast<const AvtabNode *>(block + kChunkHeader));
    return mem_line(MemRegion::AvtabNode, gen_, index * sizeof(AvtabNode) / 64);
}

void Avtab::touch_node(const AvtabNode &n, Access access) const {
    if (const LineRecorder rec; rec) rec.touch(node_line(n), access);
}

const AvtabNode *Avtab::node_at(Position pos) const {
    const AvtabNode *n = pos.slot < nslot_ ? htable_[pos.slot] : nullptr;
    for (uint32_t d = 0; n && d < pos.depth; ++d)
        n = n->next;
    return n;
}

Avtab::ChainStats Avtab::chain_stats() const {
    ChainStats s;
    for (uint32_t i = 0; i < nslot_; ++i) {
        uint32_t len = 0;
        for (AvtabNode *n = htable_[i]; n; n = n->next)
            ++len;
        s.used_slots += len != 0;
        s.max_chain = std::max(s.max_chain, len);
    }
    return s;
}

}  // namespace locksim::ss
