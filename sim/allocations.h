// The accounted allocations of a simulated run (kmalloc, vmalloc). Each object is allocated
// behind its record, in one host allocation, and the records are found by the object's address
// in an intrusive hash set (Boost.Intrusive; power-of-two buckets, doubled as it grows): no map
// node per allocation, and the record sits next to the object its caller has just used.
// A lookup never reads memory at an address it was given, so a pointer that is not an accounted
// allocation (a bad or double free) is told apart safely.
#pragma once

#include <boost/intrusive/unordered_set.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernel/platform.h"

namespace locksim::sim {

struct alignas(16) Allocation
    : boost::intrusive::unordered_set_base_hook<boost::intrusive::store_hash<true>> {
    int64_t bytes = 0;
    kernel::AllocKind kind{};
    // Its RCU publication, as RcuState keeps it (rcu.h); 0: never published.
    uint64_t rcu_publication = 0;

    void *object() { return reinterpret_cast<char *>(this) + sizeof(Allocation); }
    const void *object() const { return reinterpret_cast<const char *>(this) + sizeof(Allocation); }
};

class AllocationTable {
  public:
    AllocationTable();
    ~AllocationTable();  // frees the objects still allocated
    AllocationTable(const AllocationTable &) = delete;
    AllocationTable &operator=(const AllocationTable &) = delete;

    // A new object of `bytes` bytes (at least one is allocated) and its record.
    Allocation &allocate(size_t bytes);
    // The record of the object at `p`; nullptr when `p` is not an allocated object.
    Allocation *find(const void *p);
    void free(Allocation &a);

  private:
    struct ObjectOf {
        using type = const void *;
        type operator()(const Allocation &a) const { return a.object(); }
    };
    struct AddressHash {
        size_t operator()(const void *p) const {
            // The buckets take the low bits, and objects of one size sit at a regular stride:
            // a multiplication folded down spreads every bit of the address over them.
            const uint64_t x = (reinterpret_cast<uintptr_t>(p) >> 4) * 0x9e3779b97f4a7c15u;
            return static_cast<size_t>(x ^ (x >> 32));
        }
    };
    using Set = boost::intrusive::unordered_set<
        Allocation, boost::intrusive::key_of_value<ObjectOf>, boost::intrusive::hash<AddressHash>,
        boost::intrusive::power_2_buckets<true>, boost::intrusive::constant_time_size<true>>;

    std::vector<Set::bucket_type> buckets_;
    Set set_;
};

}  // namespace locksim::sim
