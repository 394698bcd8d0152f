// The work meter: the security-server core counts abstract units of work as it runs, at
// well-defined points (an avtab node visited, a hash probe, an ebitmap word compared, ...).
// A platform turns the counts into time with a CPU profile (docs/design.md, decision 4), so the
// simulated duration of a core call follows what the call really did.
//
// The meter is per thread and off unless a platform installs a WorkCounts with WorkMeterScope:
// counting is one thread-local load and a predictable branch when off, an add when on.
// Building with -DLOCKSIM_NO_WORK_METER compiles every count away (to measure the overhead).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "util/thread_slot.h"

namespace locksim {

enum class Work : uint8_t {
    AvtabNode,        // an avtab (or conditional avtab) chain node examined by a search
    HashProbe,        // a hash table bucket entry examined (symtab, sidtab, AVC, role trans ...),
                      // or an avtab search's hash and slot load (before any chain node)
    EbitmapWord,      // one 64-bit ebitmap word read or compared
    EbitmapNode,      // one ebitmap node visited
    ConstraintNode,   // one constraint or conditional (boolean) expression node evaluated
    BitIteration,     // one step of a bit-by-bit loop (ebitmap_get_bit, a positive bit's step)
    BytesCopied,      // bytes copied in memory (duplication)
    BytesSerialized,  // bytes written or read by policydb_write / policydb_read
    Alloc,            // one allocation
    Free,             // one deallocation
    Call,             // one out-of-line call on a hot path (for profiles where calls are costly)
    StringByte,       // one byte of a context string produced or parsed
    AuditCall,        // the audit path's work for one record (the call itself is a Call)
    AvtabToggle,      // one conditional avtab node enabled or disabled by a boolean change
    Syscall,          // the rest of one simple system call (entry, fd lookup, VFS, exit): counted
                      // by workloads that model the system call around the security checks
    VfsNode,          // one in-memory file or directory made (inode, dentry, name) or removed:
                      // counted by the security server for selinuxfs's rebuild after a load
    CacheFree,        // one kmem_cache_free (an avtab, ebitmap or hashtab node), where the
                      // security server charges the kernel's frees of a policy or SID table;
                      // Free is then one kfree
    ScanEntry,        // one SID table entry a context search looks at (the linear and legacy
                      // eras' scans): the step to it and the start of its compare
    Count
};

inline constexpr size_t kWorkKinds = static_cast<size_t>(Work::Count);

inline constexpr std::array<std::string_view, kWorkKinds> kWorkNames = {
    "avtab_node",    "hash_probe",   "ebitmap_word",     "ebitmap_node", "constraint_node",
    "bit_iteration", "bytes_copied", "bytes_serialized", "alloc",        "free",
    "call",          "string_byte",  "audit_call",       "avtab_toggle", "syscall",
    "vfs_node",      "cache_free",   "scan_entry"};

// The memory a unit of work reads, for a platform that models caches (sim/cache_model.h): a
// cache line named by what it holds, not by its host address, so that a run's cache behaviour
// does not depend on where the host's allocator put things. A line is (region, object, index):
// the object is a structure's name (next_line_object: an avtab's generation, a SID table, an
// ebitmap), the index the line within it.
enum class MemRegion : uint8_t {
    AvtabSlots,    // an avtab's bucket array: 8 slot pointers to a 64-byte line
    AvtabNode,     // an avtab node (24 bytes; taken as one line: a chain's nodes are scattered)
    SidtabEntry,   // a SID table's entries: its leaves' lines (104-byte entries), or a chain node
    SidtabSlots,   // a SID table's hash buckets (8 heads to a line) and its small reverse cache
    SidtabString,  // the SID table's string cache: an item and its text
    EbitmapNode,   // the ebitmap_node slab: a node's line is its allocation number
    Constraint,    // a constraint's or a conditional's expression nodes
    CondNode,      // a conditional node and its rule lists
    AvcSlots,      // the AVC's slot heads (8 to a line)
    AvcNode,       // one AVC node
    Stream,        // a policy copied or serialised: the source or the destination, in order
};

inline uint64_t mem_line(MemRegion r, uint64_t object, uint64_t index) {
    // Distinct (region, object, index) triples give distinct tags (an object below 2^22, an index
    // below 2^35: names wrap past them); only equality of tags matters to the cache model, and
    // that the lines of one object are numbered in address order (a stream: kStreamedLine).
    // Regions take bits 58-61: the top two bits are the access's kind (kDependentLine,
    // kWrittenLine); bit 35 marks a streamed line.
    return (uint64_t{static_cast<uint8_t>(r)} << 58) | ((object & 0x3fffff) << 36) |
           (index & 0x7ffffffff);
}

// How a line is used: read with its address known ahead (a hash slot, the next element of an
// array: the core may overlap its miss with others), read through the read before it (a chain's
// next node: its miss waits for the previous one), or written where it was just allocated (a new
// node, a copy's destination: it takes the line into the caches without a stall, a store not
// waiting for its line), or modified where it already was (a flag toggled in place: the line is
// taken from every other CPU's caches, which then miss it). Recorded in a line's top bits, which
// neither the sampling nor the caches see (line_tag strips them); the cache model prices an
// independent miss at its latency over the profile's memory-level parallelism ([memory] mlp).
// RunAhead: a chain's next node, read through the node before while the core still compares
// that one (a search that predicts its compare fails, and whose compare's work covers the
// private level's latency): recorded as a dependent read and as streamed (kStreamedLine,
// where the recording marks streams), so that with a first level its latency from the private
// level costs nothing, and beyond the private level it is a dependent miss.
enum class Access : uint8_t { Independent, Dependent, Written, Modified, RunAhead };
inline constexpr uint64_t kDependentLine = uint64_t{1} << 63;
inline constexpr uint64_t kWrittenLine = uint64_t{1} << 62;
inline constexpr uint64_t kModifiedLine = kDependentLine | kWrittenLine;  // both bits
// A line a little ahead (at most 2 KiB: WorkCounts::kStreamReach lines) of one of the last few
// lines read in the same object: an array walked in order, a stream read or written, nodes
// handed out one after another by a slab and read in that order. The hardware's prefetchers
// follow such walks (a stride prefetcher's reach is 2 KiB, within a page), so a first level
// ([memory] l1_kib) misses it without a stall where the private level holds it. Set by the
// recording, whatever the access's kind.
inline constexpr uint64_t kStreamedLine = uint64_t{1} << 35;
inline uint64_t line_tag(uint64_t recorded) {
    return recorded & ~(kDependentLine | kWrittenLine | kStreamedLine);
}
inline constexpr uint64_t kAccessBits[] = {0, kDependentLine, kWrittenLine, kModifiedLine,
                                           kDependentLine};
inline bool line_streamed(uint64_t recorded) {
    return (recorded & kStreamedLine) != 0;
}
inline bool line_dependent(uint64_t recorded) {
    return (recorded & kModifiedLine) == kDependentLine;
}
inline bool line_written(uint64_t recorded) {
    return (recorded & kModifiedLine) == kWrittenLine;
}
inline bool line_modified(uint64_t recorded) {
    return (recorded & kModifiedLine) == kModifiedLine;
}
inline MemRegion line_region(uint64_t recorded) {
    return static_cast<MemRegion>((line_tag(recorded) >> 58) & 0xf);
}

// A new object name for mem_line, numbered per host thread from 1 in each outermost
// LineObjectScope (so that a job's names are a function of the job alone).
uint32_t next_line_object();
// The next node of the kernel's ebitmap_node slab cache (64-byte objects, one to a line, handed
// out in order), numbered as next_line_object's names are.
uint32_t next_ebitmap_node();
// Opened for one simulation job on its thread: the objects made inside are numbered from 1. A
// scope opened inside another goes on with the outer one's numbers (its objects are alive).
class LineObjectScope {
  public:
    LineObjectScope();
    ~LineObjectScope();
    LineObjectScope(const LineObjectScope &) = delete;
    LineObjectScope &operator=(const LineObjectScope &) = delete;

  private:
    uint32_t saved_, saved_nodes_;
    bool outermost_;
};

// Whether the cache model, sampling one line in 2^shift, models line `tag` (a fixed function of
// the tag, so the sample and the runs are deterministic).
inline bool line_sampled(uint64_t tag, int shift) {
    return shift == 0 || (tag * 0x9e3779b97f4a7c15ull) >> (64 - shift) == 0;
}

struct WorkCounts {
    std::array<uint64_t, kWorkKinds> n;
    // Lines, when the platform models caches (line_shift >= 0, its sampling): every line touched
    // is counted in line_touches, and the sampled ones are listed in `lines`, in order.
    int line_shift = -1;
    // Counts of kernel code the core does not execute (kernel::stand_in): on host threads
    // nothing ran for them.
    bool stand_in = false;
    // Whether the recording marks streams (kStreamedLine): only a model with a first level
    // prices them.
    bool streams = false;
    uint64_t line_touches = 0;
    std::vector<uint64_t> lines;
    // The tags of the lines touched last (sampled or not), the newest at recent_at: the
    // streams a prefetcher follows at once (kStreamedLine).
    static constexpr size_t kStreams = 4;
    std::array<uint64_t, kStreams> recent{};
    uint32_t recent_at = 0;
    // Whether `line` follows one of the recent lines (up to kStreamReach lines on in the same
    // object); it becomes the newest.
    static constexpr uint64_t kStreamReach = 32;
    bool follows_recent(uint64_t line) {
        bool follows = false;
        for (uint64_t r : recent)
            follows |= line - r - 1 < kStreamReach;
        recent_at = (recent_at + 1) % kStreams;
        recent[recent_at] = line;
        return follows;
    }

    WorkCounts() { clear_counts(); }

    // Zeroes n four at a time: GCC compiles a zeroing of the whole array (n.fill(0), n{}) to a
    // `rep stos`, slow to start for 128 bytes, and a compute() span zeroes its counts each time.
    void clear_counts() {
        size_t i = 0;
        for (; i + 4 <= kWorkKinds; i += 4) {
            n[i] = 0;
            n[i + 1] = 0;
            n[i + 2] = 0;
            n[i + 3] = 0;
        }
        for (; i < kWorkKinds; ++i)
            n[i] = 0;
    }
    bool records_lines() const { return line_shift >= 0; }
    uint64_t operator[](Work w) const { return n[static_cast<size_t>(w)]; }
    WorkCounts &operator+=(const WorkCounts &o) {
        for (size_t i = 0; i < kWorkKinds; ++i)
            n[i] += o.n[i];
        if (records_lines()) {
            line_touches += o.line_touches;
            lines.insert(lines.end(), o.lines.begin(), o.lines.end());
        }
        return *this;
    }
    void clear() {
        clear_counts();
        line_touches = 0;
        lines.clear();
        recent.fill(0);
        recent_at = 0;
    }
};

inline void count_work([[maybe_unused]] Work w, [[maybe_unused]] uint64_t units = 1) {
#ifndef LOCKSIM_NO_WORK_METER
    if (WorkCounts *c = ThreadSlot<WorkCounts>::current) [[unlikely]]
        c->n[static_cast<size_t>(w)] += units;
#endif
}

// Records that the work being counted reads `line` (mem_line), where lines are recorded.
// The thread's line recording, looked up once: for a loop that records a line per step (a SID
// table's scan), so that each step costs the record alone. False where lines are not recorded.
// The sampling and the stream marking are read once, and the touches are counted here and added
// to the thread's count when the recorder goes: a step that records no line touches only the
// recorder, not the thread's counts.
class LineRecorder {
  public:
    LineRecorder() {
#ifndef LOCKSIM_NO_WORK_METER
        if (WorkCounts *c = ThreadSlot<WorkCounts>::current) [[unlikely]]
            if (c->records_lines()) {
                c_ = c;
                shift_ = c->line_shift;
                streams_ = c->streams;
            }
#endif
    }
    ~LineRecorder() {
        if (c_) c_->line_touches += touches_;
    }
    LineRecorder(const LineRecorder &) = delete;
    LineRecorder &operator=(const LineRecorder &) = delete;
    explicit operator bool() const {
        return c_ != nullptr;
    }
    // Only when true.
    int shift() const {
        return shift_;
    }
    bool streams() const {
        return streams_;
    }
    // Counts `n` touches of lines the sampling does not model, where no stream is marked: what
    // recording them would do.
    void skip(uint64_t n) const {
        touches_ += n;
    }
    void touch(uint64_t line, Access access) const {
        ++touches_;
        const bool streamed = streams_ && (c_->follows_recent(line) || access == Access::RunAhead);
        if (line_sampled(line, shift_)) [[unlikely]]
            c_->lines.push_back(line | kAccessBits[static_cast<size_t>(access)] |
                                (streamed ? kStreamedLine : 0));
    }

  private:
    WorkCounts *c_ = nullptr;
    int shift_ = 0;
    bool streams_ = false;
    mutable uint64_t touches_ = 0;
};

inline void touch_line([[maybe_unused]] uint64_t line, [[maybe_unused]] Access access) {
    if (const LineRecorder rec; rec) [[unlikely]]
        rec.touch(line, access);
}

// Records that the work reads (or writes) `bytes` from byte `offset` of object `object`'s stream
// lines (MemRegion::Stream): a policy copied or serialised, read or written in order.
void touch_stream(uint32_t object, uint64_t offset, uint64_t bytes, Access access);

// A stream read or written in order (a policy image): which of its bytes reach lines not reached
// before, so that each line is recorded once. Whether lines are recorded is looked up once, when
// the stream is opened: a reader or writer that records nothing costs a flag test per access.
class StreamCursor {
  public:
    StreamCursor() : on_(static_cast<bool>(LineRecorder())) {}
    // Of bytes [at, at + n), those from the first line not reached before: (from, length), the
    // length 0 where there are none or lines are not recorded.
    std::pair<uint64_t, uint64_t> reach(uint64_t at, uint64_t n) {
        if (!on_ || n == 0 || (at + n - 1) / 64 < next_line_) return {at, 0};
        const uint64_t from = std::max(at, next_line_ * 64);
        next_line_ = (at + n - 1) / 64 + 1;
        return {from, at + n - from};
    }

  private:
    bool on_;
    uint64_t next_line_ = 0;
};

// Installs a WorkCounts as this thread's meter for the scope's lifetime (nesting restores).
using WorkMeterScope = ThreadSlotScope<WorkCounts>;

}  // namespace locksim
