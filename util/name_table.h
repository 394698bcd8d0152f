// One table per enumerated setting: each value with the name files, the command line and the
// results spell it with, read in both directions, so that a name and its value are written
// once (`machine.preemption`, `core.sidtab`, a lock's kind ...).
#pragma once

#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace locksim {

template <class E>
class NameTable {
  public:
    NameTable(std::initializer_list<std::pair<E, std::string_view>> entries) : entries_(entries) {}

    // The value's name; a value the table lacks is a programming error.
    std::string_view name(E value) const {
        for (const auto &[v, n] : entries_)
            if (v == value) return n;
        throw std::logic_error("a value without a name in its table");
    }
    // The value of a name, nullopt for a name the table lacks.
    std::optional<E> find(std::string_view name) const {
        for (const auto &[v, n] : entries_)
            if (n == name) return v;
        return std::nullopt;
    }
    // The names in the table's order (a setting's choices).
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto &entry : entries_)
            out.emplace_back(entry.second);
        return out;
    }
    const std::vector<std::pair<E, std::string_view>> &entries() const { return entries_; }
    // A table built from another's entries (a setting with a value of its own besides them).
    void add(E value, std::string_view name) { entries_.emplace_back(value, name); }

  private:
    std::vector<std::pair<E, std::string_view>> entries_;
};

}  // namespace locksim
