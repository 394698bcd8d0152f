#include "sim/allocations.h"

#include <new>

namespace locksim::sim {

namespace {
constexpr size_t kInitialBuckets = 1024;
}

AllocationTable::AllocationTable()
    : buckets_(kInitialBuckets), set_(Set::bucket_traits(buckets_.data(), buckets_.size())) {}

AllocationTable::~AllocationTable() {
    set_.clear_and_dispose([](Allocation *a) {
        a->~Allocation();
        ::operator delete(a);
    });
}

Allocation &AllocationTable::allocate(size_t bytes) {
    if (set_.size() >= buckets_.size()) {
        std::vector<Set::bucket_type> grown(buckets_.size() * 2);
        set_.rehash(Set::bucket_traits(grown.data(), grown.size()));
        buckets_.swap(grown);
    }
    auto *a = new (::operator new(sizeof(Allocation) + (bytes ? bytes : 1))) Allocation;
    set_.insert(*a);
    return *a;
}

Allocation *AllocationTable::find(const void *p) {
    auto it = set_.find(p);
    return it == set_.end() ? nullptr : &*it;
}

void AllocationTable::free(Allocation &a) {
    set_.erase(set_.iterator_to(a));
    a.~Allocation();
    ::operator delete(&a);
}

}  // namespace locksim::sim
