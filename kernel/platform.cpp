#include "kernel/platform.h"

#include <fmt/format.h>

#include <deque>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "util/name_table.h"

namespace locksim::kernel {
namespace {

// Process-wide label table; ids are never reused, names never move (deque).
struct LabelTable {
    std::mutex mu;
    std::deque<std::string> names{std::string()};
    std::unordered_map<std::string_view, uint32_t> ids{{std::string_view(), 0}};
};

LabelTable &labels() {
    static LabelTable table;
    return table;
}

}  // namespace

Label::Label(std::string_view name) {
    if (name.empty()) return;
    LabelTable &t = labels();
    std::lock_guard lock(t.mu);
    auto it = t.ids.find(name);
    if (it != t.ids.end()) {
        id_ = it->second;
        return;
    }
    t.names.emplace_back(name);
    id_ = static_cast<uint32_t>(t.names.size() - 1);
    t.ids.emplace(t.names.back(), id_);
}

std::string_view Label::name() const {
    return label_name(id_);
}

std::string_view label_name(uint32_t id) {
    LabelTable &t = labels();
    std::lock_guard lock(t.mu);
    return id < t.names.size() ? std::string_view(t.names[id]) : std::string_view();
}

std::string Site::str() const {
    std::string_view file = where.file_name();
    if (auto slash = file.rfind('/'); slash != std::string_view::npos)
        file.remove_prefix(slash + 1);
    if (file.empty()) return what;
    return fmt::format("{} @ {}:{}", what, file, where.line());
}

std::string_view lock_kind_name(LockKind k) {
    static const NameTable<LockKind> names = {{LockKind::Spinlock, "spinlock"},
                                              {LockKind::Rwlock, "rwlock"},
                                              {LockKind::Rwsem, "rwsem"},
                                              {LockKind::Mutex, "mutex"},
                                              {LockKind::RawSpinlock, "raw_spinlock"}};
    return names.name(k);
}

namespace detail {
void no_platform() {
    throw std::logic_error("kernel API used with no platform installed on this thread");
}
}  // namespace detail

PlatformScope::PlatformScope(Platform &p) : prev_(detail::tl_platform) {
    detail::tl_platform = &p;
}
PlatformScope::~PlatformScope() {
    detail::tl_platform = prev_;
}

}  // namespace locksim::kernel
