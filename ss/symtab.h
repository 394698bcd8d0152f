// A symbol table: the datums of one kind (types, roles, ...) with lookup by name through the
// kernel-style hash table and by value through a vector indexed by value - 1 (the kernel's
// val_to_struct / sym_val_to_name arrays). Entries also keep the order they were added in
// (file order after a read), which is the order the writer emits.
//
// Datum must have `std::string name` and `uint32_t value`; aliases (types, sensitivities,
// categories) are entries that are not primary: found by name, never indexed by value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ss/hashtab.h"

namespace locksim::ss {

// Overridden for datums that can be aliases.
template <class Datum>
inline bool symtab_is_primary(const Datum &) {
    return true;
}

template <class Datum>
class Symtab {
  public:
    Symtab() = default;
    Symtab(Symtab &&) noexcept = default;
    Symtab &operator=(Symtab &&) noexcept = default;
    // Deep copy (used for the boolean table by cond_policydb_dup).
    Symtab(const Symtab &o) : nprim(o.nprim), table_(o.table_.size()) {
        entries_.reserve(o.entries_.size());
        for (const auto &d : o.entries_) {
            count_work(Work::Alloc);
            add(std::make_unique<Datum>(*d));
        }
        index();
    }
    Symtab &operator=(const Symtab &o) {
        if (this != &o) *this = Symtab(o);
        return *this;
    }

    // Number of values (primary entries) the policy declares.
    uint32_t nprim = 0;

    // Sizes the name hash for about nel entries (symtab_init).
    void init(uint32_t nel) {
        table_.init(nel);
        entries_.clear();
        entries_.reserve(nel);
        val_to_struct_.clear();
    }

    // Adds a datum; returns nullptr when the name is already taken.
    Datum *add(std::unique_ptr<Datum> d) {
        Datum *p = d.get();
        if (!table_.insert(std::string_view(p->name), p)) return nullptr;
        entries_.push_back(std::move(d));
        return p;
    }

    // Builds the by-value index from the primary entries; returns false when a primary value
    // is 0 or above nprim (the kernel's *_index callbacks reject those).
    bool index() {
        val_to_struct_.assign(nprim, nullptr);
        for (const auto &d : entries_) {
            if (!symtab_is_primary(*d)) continue;
            if (d->value == 0 || d->value > nprim) return false;
            val_to_struct_[d->value - 1] = d.get();
        }
        return true;
    }

    Datum *find(std::string_view name) const {
        auto *v = table_.search(name);
        return v ? *v : nullptr;
    }
    // By value (1-based); nullptr when out of range or a gap.
    Datum *by_value(uint32_t value) const {
        return value - 1 < val_to_struct_.size() ? val_to_struct_[value - 1] : nullptr;
    }
    // Name of a value; empty when unknown.
    std::string_view name_of(uint32_t value) const {
        Datum *d = by_value(value);
        return d ? std::string_view(d->name) : std::string_view();
    }

    uint32_t nel() const { return static_cast<uint32_t>(entries_.size()); }
    const std::vector<std::unique_ptr<Datum>> &entries() const { return entries_; }
    const std::vector<Datum *> &val_to_struct() const { return val_to_struct_; }
    const Hashtab<std::string_view, Datum *, StringKeyTraits> &table() const { return table_; }

  private:
    std::vector<std::unique_ptr<Datum>> entries_;
    std::vector<Datum *> val_to_struct_;
    Hashtab<std::string_view, Datum *, StringKeyTraits> table_;
};

}  // namespace locksim::ss
