// The security server as workloads see it: the AVC in front of a locking strategy in front of
// the core's services. Every call runs on the current kernel::Platform (simulated or real), from
// a task: the strategy's read-side section or writer path decides what is held, the AVC's own
// kernel-style locking (RCU lookups, per-slot spinlocks, reclaim) is the same for every strategy.
//
// Workloads call only this interface. Setup-time lookups (which domains, users and booleans a
// policy has) go through `setup_state()`, outside any simulated section and before tasks run.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ss/avc.h"
#include "ss/services.h"
#include "util/params.h"

namespace locksim {

// The seed optimisations and AVC sizing a scenario selects (see workloads/scenario.h).
struct CoreConfig {
    ss::LevelCheck level_check = ss::LevelCheck::Contains;
    ss::AvcConfig avc;
    uint32_t avc_slots = 512;
    uint32_t avc_threshold = 512;
    uint32_t sid_string_cache = 256;
};

class SecurityServer {
  public:
    virtual ~SecurityServer() = default;

    // --- read side (what hooks call) ---
    // avc_has_perm: an AVC hit costs the lookup; a miss runs compute_av in the strategy's read
    // section and inserts the decision. 0 or -EACCES.
    virtual int avc_has_perm(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested) = 0;
    virtual int compute_av(uint32_t ssid, uint32_t tsid, uint32_t tclass, ss::AvDecision *avd) = 0;
    virtual int context_to_sid(std::string_view context, uint32_t *sid) = 0;
    virtual int sid_to_context(uint32_t sid, std::string *out) = 0;
    virtual int transition_sid(uint32_t ssid, uint32_t tsid, uint32_t tclass,
                               std::string_view objname, uint32_t *out_sid) = 0;
    virtual int get_user_sids(uint32_t fromsid, std::string_view username,
                              std::vector<uint32_t> *sids) = 0;

    // --- write side ---
    // security_set_bools: `values[i]` for boolean i + 1 (the whole vector, as selinuxfs commits).
    virtual int set_bools(std::span<const int> values) = 0;
    // security_load_policy with a binary policy image.
    virtual int load_policy(std::span<const uint8_t> image) = 0;

    // The state as it is now, for setup and for checks after a run; never from a running task.
    virtual const ss::PolicyState &setup_state() const = 0;
};

// Builds the named strategy (strategies/catalog.h) over a policy state, on the current platform.
// Throws UserError on an unknown name.
std::unique_ptr<SecurityServer> make_security_server(const std::string &strategy,
                                                     const Params &options, ss::PolicyState initial,
                                                     const CoreConfig &core);

}  // namespace locksim
