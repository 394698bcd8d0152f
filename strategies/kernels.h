// Kernel versions: one version selects every era-dependent behaviour of the security server at
// once (the SID table's era, its string cache, the freeze of the old SID table with the -ESTALE
// retry, the policy lock), so that a run is always a kernel that existed, or says that it is
// not. What each release does was read from its source; docs/kernel-eras.md has the table with
// the file and function read at each tag:
//   SID table    legacy up to 4.20 (v4.15.1 ss/sidtab.c); linear 5.0-5.5 (v5.0.1 sidtab.c,
//                ee1a84fdfeed); hashed context strings 5.6-5.7 (66f8e2f03c02); hashed fields
//                5.8 on (context_compute_hash, v5.8/v5.9.1/v5.10.13);
//   string cache the SID -> context string cache (CONFIG_SECURITY_SELINUX_SID2STR_CACHE_SIZE,
//                default 256) from 5.6, none before;
//   freeze       selinux_policy_commit's sidtab_freeze_begin/_end and the -ESTALE retry of the
//                readers: 5.10.30, 5.11.14 and 5.12 on ("selinux: fix race between old and new
//                sidtab", April 2021); 5.10.0-5.10.29 have neither;
//   policy lock  policy_rwlock up to 5.9 (read_lock / write_lock_irq); RCU with a duplicated
//                conditional policy from 5.10 (c7c556f1e81b, 1b8b31a2e612);
//   IMA step     selinux_notify_policy_change ends with the IMA measurement of the policy
//                (security_read_state_kernel: the whole policy written into a vmalloc buffer)
//                from 5.12 (v5.12.9 ima.c selinux_ima_measure_state; v5.11.14 has no such
//                step), and of the state string too from 5.13 (v6.6.0 ima.c
//                selinux_ima_measure_state_locked; 5.13 itself not read); compiled in only
//                with CONFIG_IMA (`machine.ima`);
//   xfrm lock    selinux_xfrm_notify_policyload (include/xfrm.h) walks the network namespaces
//                under rtnl_lock in v4.15.1, under down_read(&net_rwsem) in v4.20.1 and v5.0.1;
//                net_rwsem came with 4.17 (f0b07bb151b0, "net: Introduce net_rwsem to protect
//                net_namespace_list"; 4.16 not read).
// A version between two that were read takes the behaviours of the boundaries around it (the
// boundaries are where the source changed); versions before 4.15 are not modelled.
//
// Every strategy names the versions it existed in (StrategyInfo::kernels): the merged designs
// the releases that shipped them, the posted designs the base their series was written against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ss/sidtab.h"

namespace locksim {

// A release number: 4.15, 5.10.30 (patch 0 when not given).
struct KernelRelease {
    int major = 0, minor = 0, patch = 0;
    auto operator<=>(const KernelRelease &) const = default;
};
// "5.10" or "5.10.30"; nullopt for anything else.
std::optional<KernelRelease> parse_kernel_release(std::string_view text);
std::string kernel_release_name(KernelRelease r);  // "5.10", "5.10.30"

// What selinux_notify_policy_change measures through IMA at the end of every policy change, in
// a kernel built with CONFIG_IMA (security/selinux/ima.c).
enum class ImaMeasure : uint8_t {
    None,            // before 5.12, or a kernel without CONFIG_IMA
    Policy,          // 5.12: selinux_ima_measure_state, the policy only
    StateAndPolicy,  // 5.13 on: selinux_ima_measure_state_locked, the state string first
};
std::string_view ima_measure_name(ImaMeasure m);  // "none" | "policy" | "state+policy"

// What a release selects.
struct KernelBehaviour {
    KernelRelease release;
    ss::SidtabEra sidtab = ss::SidtabEra::Hash;
    uint32_t sid_string_cache = 0;  // entries; 0: no cache in this release
    bool sidtab_freeze = false;     // freeze the old SID table on commit, -ESTALE retries
    bool policy_rcu = false;        // the policy under RCU (5.10 on), else policy_rwlock
    bool xfrm_rtnl = false;         // the xfrm notification under rtnl_lock (before 4.17)
    // What the release's policy-change notification measures when CONFIG_IMA is set.
    ImaMeasure ima_step = ImaMeasure::None;
};
// Refuses (UserError naming `where`) versions before the first modelled one.
KernelBehaviour kernel_behaviour(KernelRelease r, std::string_view where = {});

// The releases `locksim list kernels` describes: each boundary read from source, and the
// current one.
struct KernelListing {
    std::string_view name;
    std::string_view read;  // the tree that was read, or what the row rests on
};
const std::vector<KernelListing> &kernel_listing();
// One line per behaviour, for `list kernels` and a run's detail.config.
std::string_view policy_lock_name(bool policy_rcu);  // "policy_rwlock" | "rcu"
std::string_view xfrm_lock_name(bool xfrm_rtnl);     // "rtnl_lock" | "net_rwsem"
std::string_view commit_path_text(const KernelBehaviour &b);

// The versions a strategy existed in: [first, last] (last empty: every later release), and the
// one it runs on when the scenario names none.
struct KernelRange {
    std::string_view first, last, preferred;
    bool contains(KernelRelease r) const;
    std::string text() const;  // "4.15 - 5.9", "5.10 on"
};

}  // namespace locksim
