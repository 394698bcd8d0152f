#include "sim/profile.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/params.h"
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
    {"rcu_exp_setup", &PrimitiveCosts::rcu_exp_setup},
    {"rcu_exp_handler", &PrimitiveCosts::rcu_exp_handler},
    {"tick_irq", &PrimitiveCosts::tick_irq},
};

[[noreturn]] void fail(const std::string &source, const toml::source_region &where,
                       const std::string &msg) {
    throw UserError(fmt::format("{}:{}:{}: {}", source, where.begin.line, where.begin.column, msg));
}

double number(const std::string &source, const toml::node &n, std::string_view key) {
    if (auto v = n.value<double>(); v && *v >= 0 && std::isfinite(*v)) return *v;
    fail(source, n.source(), fmt::format("'{}' must be a non-negative number", key));
}

// A cost in nanoseconds: at most a millisecond for one unit of work or one primitive, which
// keeps every cost the engine sums (in picoseconds, in 64 bits) far from overflowing.
constexpr double kMaxCostNs = 1e6;
// The measured model's factor on host time, bounded alike.
constexpr double kMaxScale = 1e6;

double cost_ns(const std::string &source, const toml::node &n, std::string_view key) {
    double v = number(source, n, key);
    if (v > kMaxCostNs)
        fail(source, n.source(),
             fmt::format("'{}' must be a number of nanoseconds from 0 to {:.0f}", key, kMaxCostNs));
    return v;
}

std::string text(const toml::table &t, std::string_view key) {
    if (auto v = t[key].value<std::string>()) return *v;
    return {};
}

}  // namespace

int64_t CpuProfile::cost_ps(const WorkCounts &counts) const {
    int64_t ps = 0;
    for (size_t i = 0; i < kWorkKinds; ++i)
        ps += static_cast<int64_t>(counts.n[i]) * work_ps[i];
    return ps;
}

Time CpuProfile::cost(const WorkCounts &counts) const {
    return (cost_ps(counts) + 500) / 1000;
}

MemoryLatency MemoryProfile::latency() const {
    MemoryLatency l;
    if (private_kib <= 0) return l;
    l.private_lines = private_kib * 1024 / line_bytes;
    l.l1_lines = l1_kib * 1024 / line_bytes;
    l.l2_ps = std::llround(l2_ns * 1000.0);
    l.llc_lines = llc_kib * 1024 / line_bytes;
    l.llc_ps = std::llround(llc_ns * 1000.0);
    l.dram_ps = std::llround(dram_ns * 1000.0);
    l.mlp = mlp;
    l.sample = sample_one_in;
    l.private_lifetime_ns = std::llround(private_lifetime_us * 1000.0);
    l.llc_lifetime_ns = std::llround(llc_lifetime_us * 1000.0);
    return l;
}

const CpuCluster *CpuProfile::cluster_of(int cpu) const {
    for (const CpuCluster &c : clusters)
        if (cpu >= c.first_cpu && cpu < c.first_cpu + c.cpus) return &c;
    return nullptr;
}

const CpuCluster *CpuProfile::find_cluster(std::string_view n) const {
    for (const CpuCluster &c : clusters)
        if (c.name == n) return &c;
    return nullptr;
}

int CpuProfile::cluster_cpus() const {
    return clusters.empty() ? 0 : clusters.back().first_cpu + clusters.back().cpus;
}

namespace {

void parse_memory(const std::string &source, const toml::table &m, MemoryProfile &out) {
    struct Key {
        const char *name;
        bool required;
    };
    static const Key kKeys[] = {{"line_bytes", false},
                                {"private_kib", true},
                                {"llc_kib", true},
                                {"llc_ns", true},
                                {"dram_ns", true},
                                {"sample_one_in", false},
                                {"mlp", false},
                                {"l1_kib", false},
                                {"l2_ns", false},
                                {"core_lines", false},
                                {"private_lifetime_us", false},
                                {"llc_lifetime_us", false}};
    for (auto &&[k, v] : m)
        if (std::none_of(std::begin(kKeys), std::end(kKeys),
                         [&name = k](const Key &key) { return name.str() == key.name; }))
            fail(source, v.source(), fmt::format("unknown key '{}' in [memory]", k.str()));
    for (const Key &key : kKeys)
        if (key.required && !m.contains(key.name))
            fail(source, m.source(), fmt::format("[memory] lacks '{}'", key.name));
    auto whole = [&](const char *key, int64_t lo) {
        const toml::node &n = *m.get(key);
        double v = number(source, n, key);
        if (v < static_cast<double>(lo) || v != std::floor(v) || v > 1e9)
            fail(source, n.source(),
                 fmt::format("'{}' must be a whole number of at least {}", key, lo));
        return static_cast<int64_t>(v);
    };
    if (m.contains("line_bytes")) out.line_bytes = whole("line_bytes", 8);
    if (m.contains("sample_one_in")) {
        out.sample_one_in = whole("sample_one_in", 1);
        if ((out.sample_one_in & (out.sample_one_in - 1)) != 0 || out.sample_one_in > 1024)
            fail(source, m.get("sample_one_in")->source(),
                 "'sample_one_in' must be a power of two up to 1024");
    }
    out.private_kib = whole("private_kib", 1);
    out.llc_kib = whole("llc_kib", 1);
    out.llc_ns = cost_ns(source, *m.get("llc_ns"), "llc_ns");
    out.dram_ns = cost_ns(source, *m.get("dram_ns"), "dram_ns");
    if (const toml::node *n = m.get("core_lines")) {
        if (!n->is_boolean()) fail(source, n->source(), "'core_lines' must be true or false");
        out.core_lines = *n->value<bool>();
    }
    if (m.contains("l1_kib") != m.contains("l2_ns"))
        fail(source, m.source(),
             "[memory] needs both 'l1_kib' (the first level) and 'l2_ns' (what a line only the "
             "private level holds adds), or neither");
    if (m.contains("l1_kib")) {
        out.l1_kib = whole("l1_kib", 1);
        if (out.l1_kib >= out.private_kib)
            fail(source, m.get("l1_kib")->source(),
                 fmt::format("'l1_kib' ({}) must be smaller than 'private_kib' ({}): the first "
                             "level is inside the private one",
                             out.l1_kib, out.private_kib));
        out.l2_ns = cost_ns(source, *m.get("l2_ns"), "l2_ns");
    }
    for (auto [key, field] : {std::pair{"private_lifetime_us", &MemoryProfile::private_lifetime_us},
                              std::pair{"llc_lifetime_us", &MemoryProfile::llc_lifetime_us}})
        if (const toml::node *n = m.get(key)) {
            const double v = number(source, *n, key);
            if (!(v > 0 && v <= 3.6e9))
                fail(source, n->source(),
                     fmt::format("'{}' must be a time in microseconds above 0 (leave it out: "
                                 "lines stay until they are replaced)",
                                 key));
            out.*field = v;
        }
    if (const toml::node *n = m.get("mlp")) {
        out.mlp = number(source, *n, "mlp");
        if (!(out.mlp >= 1 && out.mlp <= MemoryProfile::kMaxMlp))
            fail(source, n->source(),
                 fmt::format("'mlp' must be from 1 (no misses overlap) to {}",
                             MemoryProfile::kMaxMlp));
    }
}

void parse_clusters(const std::string &source, const toml::array &a, std::vector<CpuCluster> &out) {
    int next = 0;
    for (const toml::node &n : a) {
        const toml::table *t = n.as_table();
        if (!t) fail(source, n.source(), "each [[cluster]] must be a table");
        CpuCluster c;
        for (auto &&[k, v] : *t)
            if (k.str() != "name" && k.str() != "cpus" && k.str() != "speed" &&
                k.str() != "private_kib")
                fail(source, v.source(), fmt::format("unknown key '{}' in [[cluster]]", k.str()));
        auto name = (*t)["name"].value<std::string>();
        auto cpus = (*t)["cpus"].value<int64_t>();
        if (!name || name->empty()) fail(source, t->source(), "[[cluster]] needs a 'name'");
        if (!cpus || *cpus < 1 || *cpus > 4096)
            fail(source, t->source(), "[[cluster]] needs 'cpus' between 1 and 4096");
        for (const CpuCluster &o : out)
            if (o.name == *name)
                fail(source, t->source(), fmt::format("cluster '{}' named twice", *name));
        c.name = *name;
        c.cpus = static_cast<int>(*cpus);
        if (const toml::node *sp = t->get("speed")) {
            c.speed = number(source, *sp, "speed");
            if (c.speed < 1e-3 || c.speed > 1e3)
                fail(source, sp->source(), "'speed' must be from 0.001 to 1000");
        }
        if (const toml::node *pk = t->get("private_kib")) {
            double v = number(source, *pk, "private_kib");
            if (v < 1 || v != std::floor(v) || v > 1e9)
                fail(source, pk->source(), "'private_kib' must be a whole number of at least 1");
            c.private_kib = static_cast<int64_t>(v);
        }
        c.first_cpu = next;
        next += c.cpus;
        out.push_back(std::move(c));
    }
}

// [uncertainty]: a factor per price family (kPriceFamilyNames) and `why`.
void parse_uncertainty(const std::string &source, const toml::table &t, PriceUncertainty &u) {
    for (auto &&[k, v] : t) {
        if (k.str() == "why") {
            auto s = v.value<std::string>();
            if (!s) fail(source, v.source(), "'why' must be a string");
            u.why = *s;
            continue;
        }
        auto it = std::find(kPriceFamilyNames.begin(), kPriceFamilyNames.end(), k.str());
        if (it == kPriceFamilyNames.end())
            fail(source, v.source(),
                 fmt::format("unknown price family '{}' in [uncertainty] (known: work, memory, "
                             "primitive, grace_period, and 'why')",
                             k.str()));
        const double f = number(source, v, k.str());
        if (f < 1 || f > kMaxPriceFactor)
            fail(source, v.source(),
                 fmt::format("'{}' must be a factor from 1 (certain) to {:.0f}: the price is "
                             "believed within [price / factor, price x factor]",
                             k.str(), kMaxPriceFactor));
        const auto i = static_cast<size_t>(it - kPriceFamilyNames.begin());
        u.factor[i] = f;
        u.stated[i] = true;
    }
}

}  // namespace

CpuProfile with_prices(CpuProfile p, const PriceFactors &f) {
    auto scaled = [](int64_t v, double x) {
        return x == 1.0 ? v : std::llround(static_cast<double>(v) * x);
    };
    const double work = f[static_cast<size_t>(PriceFamily::Work)];
    for (int64_t &ps : p.work_ps)
        ps = scaled(ps, work);
    p.measured_scale *= work;
    const double memory = f[static_cast<size_t>(PriceFamily::Memory)];
    p.memory.l2_ns *= memory;
    p.memory.llc_ns *= memory;
    p.memory.dram_ns *= memory;
    const double primitive = f[static_cast<size_t>(PriceFamily::Primitive)];
    const double gp = f[static_cast<size_t>(PriceFamily::GracePeriod)];
    for (const PrimField &pf : kPrimFields) {
        const bool exp_gp = pf.field == &PrimitiveCosts::rcu_exp_setup ||
                            pf.field == &PrimitiveCosts::rcu_exp_handler;
        p.primitive.*(pf.field) = scaled(p.primitive.*(pf.field), exp_gp ? gp : primitive);
    }
    return p;
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
    static const char *const kTop[] = {"name",         "description", "derivation",  "work_ns",
                                       "primitive_ns", "measured",    "calibration", "memory",
                                       "cluster",      "published",   "uncertainty"};
    for (auto &&[k, v] : root)
        if (std::find_if(std::begin(kTop), std::end(kTop),
                         [&name = k](const char *s) { return name.str() == s; }) == std::end(kTop))
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
        auto it = std::find(kWorkNames.begin(), kWorkNames.end(), k.str());
        if (it == kWorkNames.end())
            fail(source, v.source(), fmt::format("unknown work kind '{}'", k.str()));
        p.work_ps[static_cast<size_t>(it - kWorkNames.begin())] =
            std::llround(cost_ns(source, v, k.str()) * 1000.0);
    }
    for (size_t i = 0; i < kWorkKinds; ++i) {
        if (work->contains(kWorkNames[i])) continue;
        const auto w = static_cast<Work>(i);
        if (w == Work::VfsNode)
            p.work_ps[i] = kVfsNodePerAlloc * p.work_ps[static_cast<size_t>(Work::Alloc)];
        else if (w == Work::CacheFree)
            p.work_ps[i] = kCacheFreePerFreePct * p.work_ps[static_cast<size_t>(Work::Free)] / 100;
        else if (w == Work::ScanEntry)
            p.work_ps[i] = p.work_ps[static_cast<size_t>(Work::HashProbe)];
        else
            fail(source, work->source(), fmt::format("[work_ns] lacks '{}'", kWorkNames[i]));
    }

    const toml::table *prim = root["primitive_ns"].as_table();
    if (prim) {
        for (auto &&[k, v] : *prim) {
            auto it = std::find_if(std::begin(kPrimFields), std::end(kPrimFields),
                                   [&name = k](const PrimField &f) { return name.str() == f.key; });
            if (it == std::end(kPrimFields))
                fail(source, v.source(), fmt::format("unknown primitive '{}'", k.str()));
            p.primitive.*(it->field) = std::llround(cost_ns(source, v, k.str()));
        }
    }
    if (!prim || !prim->contains("tick_irq"))
        p.primitive.tick_irq = kTickPerTimerIrq * p.primitive.timer_irq;
    if (const toml::table *m = root["measured"].as_table()) {
        if (auto *s = m->get("scale")) {
            p.measured_scale = number(source, *s, "scale");
            if (p.measured_scale > kMaxScale)
                fail(source, s->source(),
                     fmt::format("'scale' must be from 0 to {:.0f}", kMaxScale));
        }
    }
    if (const toml::node *m = root.get("memory")) {
        if (!m->is_table()) fail(source, m->source(), "'memory' must be a table");
        parse_memory(source, *m->as_table(), p.memory);
    }
    if (const toml::node *c = root.get("cluster")) {
        if (!c->is_array()) fail(source, c->source(), "'cluster' must be an array of tables");
        parse_clusters(source, *c->as_array(), p.clusters);
        for (const CpuCluster &cl : p.clusters)
            if (cl.private_kib > 0 && cl.private_kib <= p.memory.l1_kib)
                fail(source, c->source(),
                     fmt::format("cluster '{}': 'private_kib' ({}) must be larger than [memory] "
                                 "'l1_kib' ({})",
                                 cl.name, cl.private_kib, p.memory.l1_kib));
    }
    if (const toml::node *pub = root.get("published")) {
        if (!pub->is_table()) fail(source, pub->source(), "'published' must be a table");
        for (auto &&[k, v] : *pub->as_table())
            p.published[std::string(k.str())] = number(source, v, k.str());
    }
    if (const toml::node *u = root.get("uncertainty")) {
        if (!u->is_table()) fail(source, u->source(), "'uncertainty' must be a table");
        parse_uncertainty(source, *u->as_table(), p.uncertainty);
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
    const std::vector<std::string> names = list_profiles();
    std::string known;
    for (const auto &n : names)
        known += (known.empty() ? "" : ", ") + n;
    throw UserError(
        fmt::format("unknown CPU profile '{}' (known: {}){}{}", name_or_path, known,
                    did_you_mean(name_or_path, names),
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
    for (size_t i = 0; i < kWorkKinds; ++i)
        out += fmt::format("{} = {}\n", kWorkNames[i], static_cast<double>(p.work_ps[i]) / 1000.0);
    out += "\n[primitive_ns]\n";
    for (const auto &f : kPrimFields)
        out += fmt::format("{} = {}\n", f.key, p.primitive.*(f.field));
    out += fmt::format("\n[measured]\nscale = {}\n", p.measured_scale);
    if (p.memory.private_kib > 0)
        out += fmt::format(
            "\n[memory]\nline_bytes = {}\nprivate_kib = {}\nllc_kib = {}\nllc_ns = {}\ndram_ns = "
            "{}\nsample_one_in = {}\n{}{}",
            p.memory.line_bytes, p.memory.private_kib, p.memory.llc_kib, p.memory.llc_ns,
            p.memory.dram_ns, p.memory.sample_one_in,
            p.memory.mlp != 1 ? fmt::format("mlp = {}\n", p.memory.mlp) : "",
            p.memory.l1_kib > 0
                ? fmt::format("l1_kib = {}\nl2_ns = {}\n", p.memory.l1_kib, p.memory.l2_ns)
                : "");
    if (p.memory.private_kib > 0 && p.memory.private_lifetime_us > 0)
        out += fmt::format("private_lifetime_us = {}\n", p.memory.private_lifetime_us);
    if (p.memory.private_kib > 0 && p.memory.llc_lifetime_us > 0)
        out += fmt::format("llc_lifetime_us = {}\n", p.memory.llc_lifetime_us);
    if (p.memory.private_kib > 0 && !p.memory.core_lines) out += "core_lines = false\n";
    for (const CpuCluster &c : p.clusters)
        out += fmt::format("\n[[cluster]]\nname = {}\ncpus = {}\nspeed = {}\n{}", quoted(c.name),
                           c.cpus, c.speed,
                           c.private_kib ? fmt::format("private_kib = {}\n", c.private_kib) : "");
    if (!p.published.empty()) {
        out += "\n[published]\n";
        for (const auto &[k, v] : p.published)
            out += fmt::format("{} = {}\n", k, v);
    }
    bool any_stated = false;
    for (bool b : p.uncertainty.stated)
        any_stated = any_stated || b;
    if (any_stated || !p.uncertainty.why.empty()) {
        out += "\n[uncertainty]\n";
        for (size_t i = 0; i < kPriceFamilies; ++i)
            if (p.uncertainty.stated[i])
                out += fmt::format("{} = {}\n", kPriceFamilyNames[i], p.uncertainty.factor[i]);
        if (!p.uncertainty.why.empty()) out += fmt::format("why = {}\n", quoted(p.uncertainty.why));
    }
    if (!p.calibration.empty()) {
        out += "\n[calibration]\n";
        for (const auto &[k, v] : p.calibration)
            out += fmt::format("{} = {}\n", quoted(k), quoted(v));
    }
    return out;
}

}  // namespace locksim::sim
