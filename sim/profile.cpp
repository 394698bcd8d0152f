#include "sim/profile.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/read_file.h"

#ifndef LOCKSIM_PROFILE_DIR_DEFAULT
#define LOCKSIM_PROFILE_DIR_DEFAULT "profiles"
#endif

namespace locksim::sim {
namespace {

// The [primitive_ns] keys and their fields, in file order.
struct PrimField {
    const char *key;
    Time PrimitiveCosts::*field;
};
constexpr PrimField kPrimFields[] = {
    {"spin_acquire", &PrimitiveCosts::spin_acquire},
    {"spin_release", &PrimitiveCosts::spin_release},
    {"sem_acquire", &PrimitiveCosts::sem_acquire},
    {"sem_release", &PrimitiveCosts::sem_release},
    {"cacheline_transfer", &PrimitiveCosts::cacheline_transfer},
    {"preempt_toggle", &PrimitiveCosts::preempt_toggle},
    {"irq_toggle", &PrimitiveCosts::irq_toggle},
    {"rcu_read_lock", &PrimitiveCosts::rcu_read_lock},
    {"context_switch", &PrimitiveCosts::context_switch},
    {"wakeup", &PrimitiveCosts::wakeup},
    {"ipi", &PrimitiveCosts::ipi},
    {"idle_exit", &PrimitiveCosts::idle_exit},
    {"timer_irq", &PrimitiveCosts::timer_irq},
    {"kmalloc", &PrimitiveCosts::kmalloc},
    {"kfree", &PrimitiveCosts::kfree},
    {"vmalloc", &PrimitiveCosts::vmalloc},
    {"vmalloc_page", &PrimitiveCosts::vmalloc_page},
    {"rcu_callback", &PrimitiveCosts::rcu_callback},
};

[[noreturn]] void fail(const std::string &source, const toml::source_region &where,
                       const std::string &msg) {
    throw UserError(fmt::format("{}:{}:{}: {}", source, where.begin.line, where.begin.column, msg));
}

double number(const std::string &source, const toml::node &n, std::string_view key) {
    if (auto v = n.value<double>(); v && *v >= 0 && std::isfinite(*v)) return *v;
    fail(source, n.source(), fmt::format("'{}' must be a non-negative number", key));
}

std::string text(const toml::table &t, std::string_view key) {
    if (auto v = t[key].value<std::string>()) return *v;
    return {};
}

}  // namespace

Time CpuProfile::cost(const ss::WorkCounts &counts) const {
    int64_t ps = 0;
    for (size_t i = 0; i < ss::kWorkKinds; ++i)
        ps += static_cast<int64_t>(counts.n[i]) * work_ps[i];
    return (ps + 500) / 1000;
}

CpuProfile parse_profile(std::string_view body, const std::string &source) {
    toml::table root;
    try {
        root = toml::parse(body, source);
    } catch (const toml::parse_error &e) {
        fail(source, e.source(), std::string(e.description()));
    }
    CpuProfile p;
    p.source = source;
    static const char *const kTop[] = {"name",         "description", "derivation", "work_ns",
                                       "primitive_ns", "measured",    "calibration"};
    for (auto &&[k, v] : root)
        if (std::find_if(std::begin(kTop), std::end(kTop),
                         [&](const char *s) { return k.str() == s; }) == std::end(kTop))
            fail(source, v.source(), fmt::format("unknown key '{}'", k.str()));
    p.name = text(root, "name");
    if (p.name.empty()) fail(source, root.source(), "missing 'name'");
    p.description = text(root, "description");
    p.derivation = text(root, "derivation");
    if (p.derivation.empty())
        fail(source, root.source(), "missing 'derivation' (say how the numbers were obtained)");

    const toml::table *work = root["work_ns"].as_table();
    if (!work) fail(source, root.source(), "missing table [work_ns]");
    for (auto &&[k, v] : *work) {
        auto it = std::find(ss::kWorkNames.begin(), ss::kWorkNames.end(), k.str());
        if (it == ss::kWorkNames.end())
            fail(source, v.source(), fmt::format("unknown work kind '{}'", k.str()));
        p.work_ps[static_cast<size_t>(it - ss::kWorkNames.begin())] =
            std::llround(number(source, v, k.str()) * 1000.0);
    }
    for (size_t i = 0; i < ss::kWorkKinds; ++i) {
        if (work->contains(ss::kWorkNames[i])) continue;
        const auto w = static_cast<ss::Work>(i);
        if (w != ss::Work::VfsNode)
            fail(source, work->source(), fmt::format("[work_ns] lacks '{}'", ss::kWorkNames[i]));
        p.work_ps[i] = kVfsNodePerAlloc * p.work_ps[static_cast<size_t>(ss::Work::Alloc)];
    }

    if (const toml::table *prim = root["primitive_ns"].as_table()) {
        for (auto &&[k, v] : *prim) {
            auto it = std::find_if(std::begin(kPrimFields), std::end(kPrimFields),
                                   [&](const PrimField &f) { return k.str() == f.key; });
            if (it == std::end(kPrimFields))
                fail(source, v.source(), fmt::format("unknown primitive '{}'", k.str()));
            p.primitive.*(it->field) = std::llround(number(source, v, k.str()));
        }
    }
    if (const toml::table *m = root["measured"].as_table()) {
        if (auto *s = m->get("scale")) p.measured_scale = number(source, *s, "scale");
    }
    if (const toml::table *c = root["calibration"].as_table()) {
        for (auto &&[k, v] : *c) {
            std::string value;
            if (auto s = v.value<std::string>())
                value = *s;
            else
                v.visit([&](const auto &x) {
                    std::ostringstream os;
                    os << x;
                    value = os.str();
                });
            p.calibration[std::string(k.str())] = value;
        }
    }
    return p;
}

CpuProfile load_profile_file(const std::filesystem::path &path) {
    return parse_profile(read_whole_file(path.string(), "profile"), path.string());
}

std::filesystem::path profile_dir() {
    if (const char *env = std::getenv("LOCKSIM_PROFILE_DIR"); env && *env) return env;
    return LOCKSIM_PROFILE_DIR_DEFAULT;
}

std::vector<std::string> list_profiles() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator(profile_dir(), ec))
        if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

CpuProfile find_profile(const std::string &name_or_path) {
    std::filesystem::path shipped = profile_dir() / (name_or_path + ".toml");
    if (std::filesystem::exists(shipped)) return load_profile_file(shipped);
    if (names_a_file(name_or_path, ".toml")) return load_profile_file(name_or_path);
    std::string known;
    for (const auto &n : list_profiles())
        known += (known.empty() ? "" : ", ") + n;
    throw UserError(
        fmt::format("unknown CPU profile '{}' (known: {}){}", name_or_path, known,
                    name_or_path == "host" ? "; 'locksim calibrate' writes the host profile" : ""));
}

std::string format_profile(const CpuProfile &p) {
    auto quoted = [](const std::string &s) {
        std::ostringstream os;
        os << toml::value<std::string>(s);
        return os.str();
    };
    std::string out;
    out += fmt::format("name = {}\n", quoted(p.name));
    out += fmt::format("description = {}\n", quoted(p.description));
    out += fmt::format("derivation = {}\n\n[work_ns]\n", quoted(p.derivation));
    for (size_t i = 0; i < ss::kWorkKinds; ++i)
        out +=
            fmt::format("{} = {}\n", ss::kWorkNames[i], static_cast<double>(p.work_ps[i]) / 1000.0);
    out += "\n[primitive_ns]\n";
    for (const auto &f : kPrimFields)
        out += fmt::format("{} = {}\n", f.key, p.primitive.*(f.field));
    out += fmt::format("\n[measured]\nscale = {}\n", p.measured_scale);
    if (!p.calibration.empty()) {
        out += "\n[calibration]\n";
        for (const auto &[k, v] : p.calibration)
            out += fmt::format("{} = {}\n", quoted(k), quoted(v));
    }
    return out;
}

}  // namespace locksim::sim
