// The security server's services (the kernel's services.c) over one policy state, with no
// globals: every read-side entry point takes the PolicyState it reads, every write-side one
// builds or changes a state the caller then publishes. Locking is the strategies' business.
//
// PolicyState is the kernel's struct selinux_policy: the policy database, the SID table and the
// sequence number of the latest granting (the AVC tags entries with it). Copying a PolicyState
// is the kernel's shallow kmemdup: the copy shares the policy base, the conditional state and
// the SID table until cond_policydb_dup (or a full copy) replaces a part.
//
// Classes and permissions are the policy's own values (class value, permission bit value - 1):
// no kernel class mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ss/context.h"
#include "ss/policydb.h"
#include "ss/sidtab.h"

namespace locksim::ss {

// Runtime variants of the read side.
struct ServiceConfig {
    LevelCheck level_check = LevelCheck::Contains;  // mls_level_isvalid: post- or pre-3.13
};

inline constexpr uint32_t AVD_FLAGS_PERMISSIVE = 0x0001;

// An access decision (struct av_decision).
struct AvDecision {
    uint32_t allowed = 0;
    uint32_t auditallow = 0;
    uint32_t auditdeny = 0xffffffff;
    uint32_t seqno = 0;
    uint32_t flags = 0;
};

struct PolicyState {
    Policydb db;
    std::shared_ptr<Sidtab> sidtab;
    uint32_t seqno = 0;  // latest_granting
    ServiceConfig config;

    const PolicyBase &p() const { return *db.base; }
};

// A state for a freshly read policy (the first load): a new SID table of the given cache size
// and era holding the policy's initial SIDs. Throws UserError when an initial SID has no context.
PolicyState policy_state_create(Policydb db, uint32_t sid_cache_size = kSidtabDefaultCacheSize,
                                ServiceConfig config = {}, SidtabEra era = SidtabEra::Hash);

// --- read side ------------------------------------------------------------------------------

// Text -> SID (security_context_to_sid): parse, validate, find or add. 0, -EINVAL, or -ESTALE
// when the SID table is frozen by a policy load (retry with the new state). With `force` an
// invalid context gets a SID holding its string (security_context_to_sid_force).
int context_to_sid(const PolicyState &st, std::string_view str, uint32_t *sid, bool force = false);
// SID -> text (security_sid_to_context), through the SID table's string cache. An unknown SID
// gives the unlabeled context, as the kernel does; an invalid context's string only with
// `force`. 0 or -EINVAL.
int sid_to_context(const PolicyState &st, uint32_t sid, std::string *out, bool force = false);

// The access decision for (ssid, tsid, tclass) (security_compute_av): TE rules over the
// attribute products of the unconditional and enabled conditional tables, constraints (MLS
// included), the role-transition check, type bounds; AVD_FLAGS_PERMISSIVE for a permissive
// source type; a class unknown to the policy is all-allowed under allow_unknown, else denied.
// 0, or -EINVAL when no context (not even unlabeled) exists for a SID.
int compute_av(const PolicyState &st, uint32_t ssid, uint32_t tsid, uint32_t tclass,
               AvDecision *avd);
// The same on contexts (context_struct_compute_av), without permissive and unknown handling.
void context_struct_compute_av(const Policydb &db, const Context &scontext, const Context &tcontext,
                               uint32_t tclass, AvDecision &avd);

// The SID of a new object or process (security_compute_sid): `specified` is AVTAB_TRANSITION
// (create / exec), AVTAB_MEMBER or AVTAB_CHANGE; `objname` non-empty adds the filename
// transitions; `sock` applies the kernel's socket-class defaults (the source's role, type and
// full range; libsepol has no such rule). 0, -EINVAL, -EACCES when the result is not a valid
// context, -ESTALE as for context_to_sid.
int compute_sid(const PolicyState &st, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                uint32_t specified, std::string_view objname, uint32_t *out_sid, bool sock = false);
inline int transition_sid(const PolicyState &st, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                          uint32_t *out_sid, std::string_view objname = {}) {
    return compute_sid(st, ssid, tsid, tclass, 0x0010 /* AVTAB_TRANSITION */, objname, out_sid);
}
// security_is_socket_class: "socket" and every "*_socket" class, for which the kernel's
// compute_sid applies the socket defaults (the `sock` argument above).
bool is_socket_class(const PolicyBase &p, uint32_t tclass);
// The context itself, without the SID table: 0, -EINVAL or -EACCES.
int compute_sid_context(const Policydb &db, const Context &scontext, const Context &tcontext,
                        uint32_t tclass, uint32_t specified, std::string_view objname, bool sock,
                        Context &newcontext, LevelCheck how = LevelCheck::Contains);

// The contexts `username` may reach from `fromsid` (security_get_user_sids). In two parts, as
// the kernel runs them: the candidates (each role of the user x each type of the role, the MLS
// range set up, context_to_sid; the long read-side section), then a process-transition check
// per candidate (the kernel does it through the AVC, outside the policy lock).
int get_user_sids_candidates(const PolicyState &st, uint32_t fromsid, std::string_view username,
                             std::vector<uint32_t> *sids);
// The transition permission bit of class process (0 when the policy has none).
uint32_t process_transition_perm(const PolicyBase &p);
// Both parts, the check done with compute_av.
int get_user_sids(const PolicyState &st, uint32_t fromsid, std::string_view username,
                  std::vector<uint32_t> *sids);

// --- booleans -------------------------------------------------------------------------------

// Current values, indexed by boolean value - 1.
std::vector<int> get_bools(const PolicyState &st);
// The boolean's value (1-based) by name, 0 when unknown.
uint32_t bool_value(const PolicyState &st, std::string_view name);

// Sets the states (values[i] for boolean i + 1) and re-evaluates the conditional nodes, flipping
// ENABLED where a node's result changed. -EINVAL when the count is not the policy's.
int cond_set_bools(CondPolicy &cond, std::span<const int> values);

// security_set_bools, three ways; each bumps the seqno (the caller flushes the AVC):
//  in place: changes st's conditional state (shared with every shallow copy!);
//  cond_dup: a shallow copy with cond_policydb_dup (what the kernel does since 5.10);
//  full_copy: a copy by policydb_write + policydb_read (the 2018 V3 series).
int set_bools_inplace(PolicyState &st, std::span<const int> values);
int set_bools_cond_dup(const PolicyState &old, std::span<const int> values, PolicyState *out);
int set_bools_full_copy(const PolicyState &old, std::span<const int> values, PolicyState *out);

// --- policy load ----------------------------------------------------------------------------

// security_load_policy with a policy already read: a new state whose booleans keep the old
// values by name, whose SID table is the old one converted (same SIDs, era and locking;
// contexts that are no longer valid kept as invalid strings, formerly invalid ones mapped when
// now valid). The old table mirrors later inserts into the new one until commit_load_policy
// freezes it. 0 or a negative errno; with `old` null, the first load.
int load_policy(const PolicyState *old, Policydb newdb, PolicyState *out);
// Reads the binary policy, then as above (UserError on a malformed file).
int load_policy(const PolicyState *old, std::span<const uint8_t> data, PolicyState *out);
// After publishing the new state: inserts into the old table now fail with -ESTALE.
void commit_load_policy(const PolicyState &old);

// The context conversion a policy load applies to each SID (convert_context).
int convert_context(const PolicyBase &oldp, const PolicyBase &newp, const Context &oldc,
                    Context &newc);

}  // namespace locksim::ss
