// A scenario's [core] table: the core's runtime variants as typed values, each enumerated one
// with its one table of names (what a scenario file, `locksim list core` and results.json
// spell), and their conversion into the core's configuration on a design's kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ss/avc.h"
#include "ss/policydb.h"
#include "ss/sidtab.h"
#include "strategies/kernels.h"
#include "strategies/security_server.h"
#include "util/name_table.h"
#include "util/params.h"

namespace locksim {

// The seeds' optimisations, as runtime variants of the core (docs/design.md, "The core,
// faithful where it costs").
struct CoreVariants {
    ss::LevelCheck mls_level_isvalid = ss::LevelCheck::Contains;  // bit by bit: before 3.13
    ss::AvcAudit avc_audit = ss::AvcAudit::Needed;                // always: before 2007
    ss::AvcPath avc_slow_path = ss::AvcPath::Inline;              // avc_has_perm_noaudit inlined
    AvcLock avc_lock = AvcLock::Rcu;      // rcu | spinlock (2.6.9) | rwlock (KaiGai 2004)
    FileHook file_hook = FileHook::None;  // none | nested (2.6.22) | flat (Nakamura 2007)
    // SID -> context string cache entries; 0 = off; -1: the kernel's (256 from 5.6, none before)
    int64_t sid_string_cache = -1;
    // nullopt ("kernel"): the era of the design's kernel; else hash (5.8 on) | hash-string
    // (5.6 - 5.7) | linear (5.0 - 5.5) | legacy (up to 4.20)
    std::optional<ss::SidtabEra> sidtab;
    int64_t avc_slots = 512;  // a power of two
    int64_t avc_threshold = 512;
};

// The names of each enumerated [core] key's values.
const NameTable<ss::LevelCheck> &level_check_names();  // contains | bitwise
const NameTable<ss::AvcAudit> &avc_audit_names();      // needed | always
const NameTable<ss::AvcPath> &avc_path_names();        // inline | outline
const NameTable<AvcLock> &avc_lock_names();            // rcu | spinlock | rwlock
const NameTable<FileHook> &file_hook_names();          // none | nested | flat
// "kernel" (nullopt) and the SID table eras' names (ss::sidtab_era_names).
const NameTable<std::optional<ss::SidtabEra>> &sidtab_setting_names();

// The keys of a scenario's [core] table, as the loader checks them and `locksim list core`
// prints them: documentation, default (CoreVariants'), bounds or choices (the tables above).
const std::vector<ParamSpec> &core_params();
const ParamSpec &core_param(std::string_view name);

// Reads one [core] key's checked value into `c` (the loader's step for each key given).
void set_core_setting(CoreVariants &c, std::string_view key, const ParamValue &value);
// Every [core] key with its value (defaults included), as a scenario file writes it.
std::vector<std::pair<std::string, ParamValue>> core_settings(const CoreVariants &c);

// The core variants on a design's kernel, as the strategies take them: what the scenario
// leaves to the kernel (the SID table's era, its string cache) is the kernel's, and the IMA
// step is the kernel's where it is built with CONFIG_IMA (`config_ima`, machine.ima).
CoreConfig core_config(const CoreVariants &v, const KernelBehaviour &kernel, bool config_ima);

}  // namespace locksim
