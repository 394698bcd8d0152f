// The access vector table (the kernel's avtab): a chained hash table of TE rules keyed by
// (source type, target type, target class, rule kind). Slots: a power of two from the number of
// rules (shift = 1 + bit length of nrules/8, at most 2^16); hash: MurmurHash3-style mixing of
// class, target and source. Chains are kept sorted by key, so a search stops early. Nodes are
// 24 bytes like the kernel's and come from a per-table pool (the kernel's kmem_cache).
//
// The conditional table (te_cond_avtab) holds several nodes per key (insert_nonunique); a node
// applies only while its ENABLED bit is set (the conditional code flips it).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "util/work_meter.h"

namespace locksim::ss {

// key.specified
inline constexpr uint16_t AVTAB_ALLOWED = 0x0001;
inline constexpr uint16_t AVTAB_AUDITALLOW = 0x0002;
inline constexpr uint16_t AVTAB_AUDITDENY = 0x0004;
inline constexpr uint16_t AVTAB_AV = AVTAB_ALLOWED | AVTAB_AUDITALLOW | AVTAB_AUDITDENY;
inline constexpr uint16_t AVTAB_TRANSITION = 0x0010;
inline constexpr uint16_t AVTAB_MEMBER = 0x0020;
inline constexpr uint16_t AVTAB_CHANGE = 0x0040;
inline constexpr uint16_t AVTAB_TYPE = AVTAB_TRANSITION | AVTAB_MEMBER | AVTAB_CHANGE;
inline constexpr uint16_t AVTAB_XPERMS_ALLOWED = 0x0100;
inline constexpr uint16_t AVTAB_XPERMS_AUDITALLOW = 0x0200;
inline constexpr uint16_t AVTAB_XPERMS_DONTAUDIT = 0x0400;
inline constexpr uint16_t AVTAB_XPERMS =
    AVTAB_XPERMS_ALLOWED | AVTAB_XPERMS_AUDITALLOW | AVTAB_XPERMS_DONTAUDIT;
inline constexpr uint16_t AVTAB_ENABLED_OLD = 0x8000;  // in the pre-v20 32-bit word: 0x80000000
inline constexpr uint16_t AVTAB_ENABLED = 0x8000;      // conditional rule currently in force

inline constexpr uint32_t kAvtabMaxHashBits = 16;
inline constexpr uint32_t kAvtabMaxHashBuckets = 1u << kAvtabMaxHashBits;

struct AvtabKey {
    uint16_t source_type = 0;  // type values (1-based)
    uint16_t target_type = 0;
    uint16_t target_class = 0;  // class value (1-based)
    uint16_t specified = 0;     // one AVTAB_* kind, plus AVTAB_ENABLED in the conditional table
};

// xperms.specified
inline constexpr uint8_t AVTAB_XPERMS_IOCTLFUNCTION = 0x01;
inline constexpr uint8_t AVTAB_XPERMS_IOCTLDRIVER = 0x02;

struct AvtabExtendedPerms {
    uint8_t specified = 0;  // AVTAB_XPERMS_IOCTL*
    uint8_t driver = 0;
    std::array<uint32_t, 8> perms{};  // 256 bits
};

// For AV kinds `data` is the permission mask (for AUDITDENY the complement of the dontaudit
// set); for TYPE kinds the new type value; for XPERMS kinds `xperms` points into the table.
struct AvtabDatum {
    union {
        uint32_t data;
        AvtabExtendedPerms *xperms;
    } u{};
};

struct AvtabNode {
    AvtabKey key;
    AvtabDatum datum;
    AvtabNode *next;
};
static_assert(sizeof(AvtabNode) == 24, "the kernel's avtab node is 24 bytes");
// A chunk of nodes is freed as raw memory (Avtab::ChunkFree), without the nodes' destructors.
static_assert(std::is_trivially_destructible_v<AvtabNode>);

uint32_t avtab_hash(const AvtabKey &key, uint32_t mask);

class Avtab {
  public:
    Avtab() = default;
    ~Avtab();
    Avtab(const Avtab &) = delete;
    Avtab &operator=(const Avtab &) = delete;
    Avtab(Avtab &&o) noexcept;
    Avtab &operator=(Avtab &&o) noexcept;

    // Sizes the slots for nrules (avtab_alloc); drops any content.
    void alloc(uint32_t nrules);
    // Same slot count as `orig`, empty (avtab_alloc_dup, used by cond_policydb_dup).
    void alloc_dup(const Avtab &orig);
    void clear();

    // Inserts a rule; nullptr when a rule with the same key (kind included) exists.
    // An XPERMS datum's extended permissions are copied into the table.
    AvtabNode *insert(const AvtabKey &key, const AvtabDatum &datum);
    // Inserts even when the key exists (the conditional table), before equal keys.
    AvtabNode *insert_nonunique(const AvtabKey &key, const AvtabDatum &datum);

    // First node whose key matches (source, target, class) and shares a kind bit with
    // key.specified (ENABLED ignored); the caller checks ENABLED in the conditional table.
    AvtabNode *search_node(const AvtabKey &key) const;
    // Next node after `node` with the same (source, target, class) and a kind in `specified`.
    static AvtabNode *search_node_next(const AvtabNode *node, uint16_t specified);
    // The datum of search_node, or nullptr.
    const AvtabDatum *search(const AvtabKey &key) const {
        AvtabNode *n = search_node(key);
        return n ? &n->datum : nullptr;
    }

    uint32_t nel() const { return nel_; }
    // Changes whenever the table's nodes or slots change; a host-side memo of searches
    // (TeRulesMemo) is valid while it stays the same, and the cache model names the table's
    // lines by it. Numbered per host thread (32 bits so that the table keeps its size: a memo
    // lives for one run, far fewer changes than 2^32), from 1 again in each outermost
    // GenerationScope: unique among the tables one thread makes inside one scope, not across
    // threads (nothing compares generations made on different threads).
    uint32_t generation() const { return gen_; }
    // Names the table's layout for the host's memo: the generation of the table whose slots,
    // chains and rules (ENABLED bits aside) this one repeats node for node, its own generation
    // otherwise. A search counts the same work in two tables of one layout, and finds nodes at
    // the same (slot, depth) positions.
    uint32_t layout() const { return layout_; }
    // Takes `orig`'s layout name when this table repeats it (same slot count, and in every slot
    // the same keys and data in the same order); returns whether it does. Host bookkeeping only:
    // nothing is counted, and the tables are not changed.
    bool adopt_layout(const Avtab &orig) const;
    // Where a node of this table sits: its slot and its depth in the slot's chain.
    struct Position {
        uint32_t slot = 0;
        uint32_t depth = 0;
    };
    Position position_of(const AvtabNode &n) const;
    // The line of node `n` of this table for the cache model: nodes are named in the order they
    // were allocated, 24 bytes each, as the kernel's slab cache lays a policy's rules out (read
    // in order, two or three to a line; a chain's nodes are far apart, a rule list's near).
    uint64_t node_line(const AvtabNode &n) const;
    // Records the read (or write) of node `n` (nothing where lines are not recorded).
    void touch_node(const AvtabNode &n, Access access) const;
    // The node at `pos` (one that position_of gave for a table of this layout).
    const AvtabNode *node_at(Position pos) const;

    uint32_t nslot() const { return nslot_; }
    uint32_t mask() const { return mask_; }
    AvtabNode *slot(uint32_t i) const { return htable_[i]; }

    // Every node in slot order.
    template <class F>
    void for_each(F &&f) const {
        for (uint32_t i = 0; i < nslot_; ++i)
            for (AvtabNode *n = htable_[i]; n; n = n->next)
                f(*n);
    }

    // Longest chain and used slots (avtab_hash_eval).
    struct ChainStats {
        uint32_t used_slots = 0;
        uint32_t max_chain = 0;
    };
    ChainStats chain_stats() const;

    // Opened for one simulation job on its thread: the tables (and every other named object,
    // next_line_object) made inside are numbered from 1.
    using GenerationScope = LineObjectScope;

  private:
    AvtabNode *new_node(const AvtabKey &key, const AvtabDatum &datum, AvtabNode *next);
    static uint32_t next_generation();

    std::unique_ptr<AvtabNode *[]> htable_;
    uint32_t nel_ = 0;
    uint32_t nslot_ = 0;
    uint32_t mask_ = 0;
    uint32_t gen_ = next_generation();  // in what was padding
    mutable uint32_t layout_ = gen_;    // host bookkeeping (adopt_layout)
    // Node pool: chunks of nodes, and the extended-permission blocks. A chunk is one block
    // aligned to its own size (a power of two), whose first line holds the chunk's order among
    // the table's chunks and the rest its nodes: a node's allocation index (node_line) follows
    // from its address alone.
    struct ChunkFree {
        std::size_t align;
        void operator()(void *p) const { ::operator delete (p, std::align_val_t{align}); }
    };
    using Chunk = std::unique_ptr<void, ChunkFree>;
    static constexpr std::size_t kChunkHeader = 64;
    AvtabNode *chunk_nodes(const Chunk &c) const {
        return reinterpret_cast<AvtabNode *>(static_cast<char *>(c.get()) + kChunkHeader);
    }
    std::vector<Chunk> chunks_;
    uint32_t chunk_used_ = 0;
    uint32_t chunk_size_ = 0;
    std::size_t chunk_align_ = 0;  // the chunks' block size and alignment
    std::vector<std::unique_ptr<AvtabExtendedPerms>> xperms_;
};

}  // namespace locksim::ss
