// Sequence counters and sequential locks (include/linux/seqlock.h, Linux v6.6), with the
// memory barriers they are built on (smp_rmb, smp_wmb: include/asm-generic/barrier.h).
//
// Seqcount: the writer makes the sequence odd while it writes and even again after;
// a reader samples an even sequence, reads, and retries when the sequence moved.
//   read_seqcount_begin   the sequence, spinning (cpu_relax) while it is odd; then smp_rmb, so
//                         the reads of the section come after it;
//   read_seqcount_retry   smp_rmb, so the section's reads come before it; then the sequence
//                         compared with the one begin returned;
//   write_seqcount_begin  sequence + 1 (odd); then smp_wmb, so the section's writes come
//                         after it;
//   write_seqcount_end    smp_wmb, so the section's writes come before it; sequence + 1.
// Seqlock: a seqcount with a spinlock serialising the writers (seqlock_t):
//   write_seqlock / write_sequnlock take and release the spinlock around the write section;
//   read_seqbegin / read_seqretry are the seqcount's; read_seqlock_excl /
//   read_sequnlock_excl are the locking reader, which takes the writers' spinlock.
//
// Barriers. On host threads smp_rmb is an acquire fence and smp_wmb a release fence (the
// sequence itself is read and written with relaxed atomics, as READ_ONCE and the plain
// increment under the writers' lock are in the kernel). ThreadSanitizer does not model a fence
// on its own (GCC warns that it ignores them): built with it, the sequence's own loads and
// stores carry the acquire and release ordering instead, which is stronger.
// In the simulator the barriers cost no time, and this is the kernel's cost on every shipped
// profile: x86 is TSO, and its smp_rmb and smp_wmb are compiler barriers; the two embedded
// profiles (XScale, SH-4) are uniprocessor parts, where every smp_* barrier is barrier(). A
// profile of a weakly ordered SMP part (arm64's dmb ishld / dmb ishst) would need a cost here.
// Simplified: no lockdep annotations, no KCSAN region marking, no seqcount_LOCKNAME_t variants
// (the writers' lock is the seqlock's own spinlock), and the sequence is 64 bits.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "kernel/platform.h"
#include "kernel/spinlock.h"
#include "util/sanitizers.h"

namespace locksim::kernel {

#if LOCKSIM_TSAN
inline constexpr std::memory_order kSeqLoadOrder = std::memory_order_acquire;
inline constexpr std::memory_order kSeqStoreOrder = std::memory_order_release;
inline void smp_rmb() {}
inline void smp_wmb() {}
#else
inline constexpr std::memory_order kSeqLoadOrder = std::memory_order_relaxed;
inline constexpr std::memory_order kSeqStoreOrder = std::memory_order_relaxed;
// Loads before it are ordered before loads after it.
inline void smp_rmb() {
    std::atomic_thread_fence(std::memory_order_acquire);
}
// Stores before it are ordered before stores after it.
inline void smp_wmb() {
    std::atomic_thread_fence(std::memory_order_release);
}
#endif

// One cpu_relax round of a reader waiting for an odd sequence to become even.
inline constexpr Time kSeqcountSpin = 200;

struct Seqcount {
    std::atomic<uint64_t> sequence{0};
};

inline uint64_t read_seqcount_begin(const Seqcount &s) {
    static const Label kSpin("read_seqbegin");
    uint64_t seq;
    while ((seq = s.sequence.load(kSeqLoadOrder)) & 1)
        ndelay(kSeqcountSpin, kSpin);  // cpu_relax
    smp_rmb();
    return seq;
}

// True when a writer began or ended since read_seqcount_begin returned `start`.
inline bool read_seqcount_retry(const Seqcount &s, uint64_t start) {
    smp_rmb();
    return s.sequence.load(kSeqLoadOrder) != start;
}

// The caller serialises writers.
inline void write_seqcount_begin(Seqcount &s) {
    s.sequence.store(s.sequence.load(std::memory_order_relaxed) + 1, kSeqStoreOrder);
    smp_wmb();
}

inline void write_seqcount_end(Seqcount &s) {
    smp_wmb();
    s.sequence.store(s.sequence.load(std::memory_order_relaxed) + 1, kSeqStoreOrder);
}

class Seqlock {
  public:
    explicit Seqlock(std::string_view name, Platform &p = current()) : lock(name, p) {}

    Seqcount seqcount;
    Spinlock lock;
};

// The sites are the caller's: a write section is reported as `spin_lock @ <caller>`.
inline void write_seqlock(Seqlock &sl, Loc loc = Loc::current()) {
    spin_lock(sl.lock, loc);
    write_seqcount_begin(sl.seqcount);
}

inline void write_sequnlock(Seqlock &sl, Loc loc = Loc::current()) {
    write_seqcount_end(sl.seqcount);
    spin_unlock(sl.lock, loc);
}

inline uint64_t read_seqbegin(const Seqlock &sl) {
    return read_seqcount_begin(sl.seqcount);
}

inline bool read_seqretry(const Seqlock &sl, uint64_t start) {
    return read_seqcount_retry(sl.seqcount, start);
}

inline void read_seqlock_excl(Seqlock &sl, Loc loc = Loc::current()) {
    spin_lock(sl.lock, loc);
}

inline void read_sequnlock_excl(Seqlock &sl, Loc loc = Loc::current()) {
    spin_unlock(sl.lock, loc);
}

}  // namespace locksim::kernel
