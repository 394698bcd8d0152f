#include "scenario/core_settings.h"

#include <functional>
#include <stdexcept>

#include "workloads/catalog.h"

namespace locksim {

const NameTable<ss::LevelCheck> &level_check_names() {
    static const NameTable<ss::LevelCheck> names = {{ss::LevelCheck::Contains, "contains"},
                                                    {ss::LevelCheck::BitByBit, "bitwise"}};
    return names;
}

const NameTable<ss::AvcAudit> &avc_audit_names() {
    static const NameTable<ss::AvcAudit> names = {{ss::AvcAudit::Needed, "needed"},
                                                  {ss::AvcAudit::Always, "always"}};
    return names;
}

const NameTable<ss::AvcPath> &avc_path_names() {
    static const NameTable<ss::AvcPath> names = {{ss::AvcPath::Inline, "inline"},
                                                 {ss::AvcPath::OutOfLine, "outline"}};
    return names;
}

const NameTable<AvcLock> &avc_lock_names() {
    static const NameTable<AvcLock> names = {
        {AvcLock::Rcu, "rcu"}, {AvcLock::Spinlock, "spinlock"}, {AvcLock::Rwlock, "rwlock"}};
    return names;
}

const NameTable<FileHook> &file_hook_names() {
    static const NameTable<FileHook> names = {
        {FileHook::None, "none"}, {FileHook::Nested, "nested"}, {FileHook::Flat, "flat"}};
    return names;
}

const NameTable<std::optional<ss::SidtabEra>> &sidtab_setting_names() {
    static const NameTable<std::optional<ss::SidtabEra>> names = [] {
        NameTable<std::optional<ss::SidtabEra>> t = {{std::nullopt, "kernel"}};
        for (const auto &[era, name] : ss::sidtab_era_names().entries())
            t.add(era, name);
        return t;
    }();
    return names;
}

namespace {

// One [core] key: its documentation, default and checks, and its place in CoreVariants.
struct CoreKey {
    ParamSpec spec;
    std::function<void(CoreVariants &, const ParamValue &)> set;
    std::function<ParamValue(const CoreVariants &)> get;
};

template <class E>
CoreKey choice_key(const char *name, const char *doc, const NameTable<E> &names,
                   E CoreVariants::*field) {
    return {
        workloads::text(name, doc, std::string(names.name(CoreVariants{}.*field)), names.names()),
        [&names, field, name](CoreVariants &c, const ParamValue &v) {
            const auto value = names.find(std::get<std::string>(v));
            if (!value) throw std::logic_error(std::string("unchecked core.") + name);
            c.*field = *value;
        },
        [&names, field](const CoreVariants &c) -> ParamValue {
            return std::string(names.name(c.*field));
        }};
}

CoreKey int_key(const char *name, const char *doc, int64_t min, int64_t max,
                int64_t CoreVariants::*field) {
    return {workloads::count(name, doc, CoreVariants{}.*field, min, max),
            [field](CoreVariants &c, const ParamValue &v) { c.*field = std::get<int64_t>(v); },
            [field](const CoreVariants &c) -> ParamValue { return c.*field; }};
}

const std::vector<CoreKey> &core_keys() {
    static const std::vector<CoreKey> keys = {
        choice_key("mls_level_isvalid",
                   "mls_level_isvalid: ebitmap_contains (3.13 on) or bit by bit",
                   level_check_names(), &CoreVariants::mls_level_isvalid),
        choice_key("avc_audit", "AVC audit path: only when needed, or on every check (before 2007)",
                   avc_audit_names(), &CoreVariants::avc_audit),
        choice_key("avc_slow_path", "avc_has_perm_noaudit inlined or out of line", avc_path_names(),
                   &CoreVariants::avc_slow_path),
        choice_key("avc_lock",
                   "AVC chains: RCU (2.6.10 on), one global spinlock (2.6.9), one rwlock",
                   avc_lock_names(), &CoreVariants::avc_lock),
        choice_key("file_hook",
                   "the read/write check from the LSM hook: none (avc_has_perm alone), nested "
                   "(2.6.22: file_has_perm -> inode_has_perm), flat (written out, Nakamura 2007)",
                   file_hook_names(), &CoreVariants::file_hook),
        int_key("sid_string_cache",
                "SID -> context string cache entries; 0 = off; -1 = the kernel's (256 from 5.6, "
                "none before)",
                -1, 1'000'000, &CoreVariants::sid_string_cache),
        choice_key("sidtab",
                   "SID table era: the design's kernel's, or one against it: a hash table of the "
                   "context's fields (5.8 on), of its string (5.6 - 5.7), a scan over every entry "
                   "(5.0 - 5.5), or the scan again under the lock and no new SID during a reload "
                   "(up to 4.20)",
                   sidtab_setting_names(), &CoreVariants::sidtab),
        int_key("avc_slots", "AVC hash slots (a power of two)", 1, 1 << 20,
                &CoreVariants::avc_slots),
        int_key("avc_threshold", "AVC entries before reclaim", 1, 1 << 24,
                &CoreVariants::avc_threshold),
    };
    return keys;
}

const CoreKey &core_key(std::string_view name) {
    for (const CoreKey &k : core_keys())
        if (k.spec.name == name) return k;
    throw std::logic_error("no [core] key " + std::string(name));
}

}  // namespace

const std::vector<ParamSpec> &core_params() {
    static const std::vector<ParamSpec> params = [] {
        std::vector<ParamSpec> out;
        for (const CoreKey &k : core_keys())
            out.push_back(k.spec);
        return out;
    }();
    return params;
}

const ParamSpec &core_param(std::string_view name) {
    return core_key(name).spec;
}

void set_core_setting(CoreVariants &c, std::string_view key, const ParamValue &value) {
    core_key(key).set(c, value);
}

std::vector<std::pair<std::string, ParamValue>> core_settings(const CoreVariants &c) {
    std::vector<std::pair<std::string, ParamValue>> out;
    for (const CoreKey &k : core_keys())
        out.emplace_back(k.spec.name, k.get(c));
    return out;
}

CoreConfig core_config(const CoreVariants &v, const KernelBehaviour &kernel, bool config_ima) {
    CoreConfig c;
    c.level_check = v.mls_level_isvalid;
    c.avc.audit = v.avc_audit;
    c.avc.path = v.avc_slow_path;
    c.avc_lock = v.avc_lock;
    c.file_hook = v.file_hook;
    c.avc_slots = static_cast<uint32_t>(v.avc_slots);
    c.avc_threshold = static_cast<uint32_t>(v.avc_threshold);
    c.sid_string_cache = v.sid_string_cache >= 0 ? static_cast<uint32_t>(v.sid_string_cache)
                                                 : kernel.sid_string_cache;
    c.sidtab = v.sidtab.value_or(kernel.sidtab);
    c.sidtab_freeze = kernel.sidtab_freeze;
    c.xfrm_rtnl = kernel.xfrm_rtnl;
    c.ima = config_ima ? kernel.ima_step : ImaMeasure::None;
    return c;
}

}  // namespace locksim
