// The security server as workloads see it: the AVC in front of a locking strategy in front of
// the core's services. Every call runs on the current kernel::Platform (simulated or real), from
// a task: the strategy's read-side section or writer path decides what is held, the AVC's own
// kernel-style locking (RCU lookups, per-slot spinlocks, reclaim) is the same for every strategy.
//
// Workloads call only this interface. Setup-time lookups (which domains, users and booleans a
// policy has) go through `setup_state()`, outside any simulated section and before tasks run.
//
// Typical use on the simulator:
//
//     sim::SimPlatform sim(cfg);
//     kernel::PlatformScope scope(sim);  // the server creates its locks on this platform
//     auto server = make_security_server("rcu-cond-dup", options,
//                                        make_policy_state(ss::policydb_read_file(path), core),
//                                        core);
//     sim.create_task({"login"}, [&] { server->get_user_sids(sid, "user_u", &sids); });
//     kernel::RunResults r = sim.run();
//
// The server keeps the platform it was built on and may be destroyed after the run.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ss/avc.h"
#include "ss/services.h"
#include "strategies/kernels.h"
#include "util/params.h"

namespace locksim {

// How the AVC's hash chains are protected (strategies/avc.h).
enum class AvcLock : uint8_t {
    Rcu,       // RCU lookups, per-slot spinlocks for updates (2.6.10 on, what ships)
    Spinlock,  // one global spinlock, interrupts off, around lookup and update (2.6.9)
    Rwlock,    // one global rwlock: readers on lookup, the writer on update (KaiGai's 2004 variant)
};

// The read/write check from the LSM hook (strategies/file_hook.h). None: avc_has_perm alone (the
// hook's own work not modelled); Nested: 2.6.22's selinux_file_permission -> file_has_perm ->
// inode_has_perm -> avc_has_perm; Flat: the same checks written out in selinux_file_permission
// (Nakamura's 2007 tuning).
enum class FileHook : uint8_t { None, Nested, Flat };

// A read or write on an open file: the task's SID, the SID the file was opened with (its
// file_security_struct), the inode's SID and class, the permissions (file_mask_to_av), and the
// fd class and its `use` permission, checked when the file was opened by another domain.
struct FileCheck {
    uint32_t tsid = 0, fsid = 0, isid = 0, tclass = 0, av = 0;
    uint32_t fd_class = 0, fd_use = 0;
};

// The seed optimisations and AVC sizing a scenario selects (see scenario/core_settings.h).
struct CoreConfig {
    ss::LevelCheck level_check = ss::LevelCheck::Contains;
    ss::AvcConfig avc;
    AvcLock avc_lock = AvcLock::Rcu;
    FileHook file_hook = FileHook::None;
    uint32_t avc_slots = 512;  // a power of two (the Avc refuses another as misuse)
    uint32_t avc_threshold = 512;
    uint32_t sid_string_cache = 256;
    ss::SidtabEra sidtab = ss::SidtabEra::Hash;  // the SID table's era (ss/sidtab.h)
    // A load freezes the old SID table around the commit and readers retry on -ESTALE
    // (5.10.30, 5.11.14, 5.12 on); without it the old table mirrors its inserts into the new
    // one until it is freed (5.10.0-5.10.29), and no kernel with policy_rwlock needed it.
    bool sidtab_freeze = true;
    // The policy-load notification's xfrm step walks the network namespaces under rtnl_lock
    // (before 4.17) instead of down_read(&net_rwsem).
    bool xfrm_rtnl = false;
    // What each policy change measures through IMA (the release's step, with CONFIG_IMA set:
    // machine.ima); None without CONFIG_IMA or before 5.12.
    ImaMeasure ima = ImaMeasure::None;
};

// The state a server starts from: `db` with a SID table of core.sid_string_cache entries and
// era core.sidtab, and core.level_check.
ss::PolicyState make_policy_state(ss::Policydb db, const CoreConfig &core);

// A non-owning reference to a callable, for the read-side callbacks (no allocation per call).
template <class Sig>
class FunctionRef;
template <class R, class... A>
class FunctionRef<R(A...)> {
  public:
    template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
             std::is_invocable_r_v<R, F &, A...>)
        FunctionRef(F &&f)  // NOLINT: implicit from lambdas on purpose
        : obj_(const_cast<void *>(static_cast<const void *>(&f))), call_([](void *o, A... a) -> R {
              return (*static_cast<std::remove_reference_t<F> *>(o))(std::forward<A>(a)...);
          }) {}
    R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

  private:
    void *obj_;
    R (*call_)(void *, A...);
};

class SecurityServer {
  public:
    virtual ~SecurityServer() = default;

    virtual std::string_view name() const = 0;

    // --- read side (what hooks call) ---
    // avc_has_perm: an AVC hit costs the lookup; a miss runs compute_av in the strategy's read
    // section and inserts the decision. 0 or -EACCES; `avd` (optional) receives the decision
    // used, whose seqno says which policy version it came from.
    virtual int avc_has_perm(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested,
                             ss::AvDecision *avd = nullptr) = 0;
    virtual int compute_av(uint32_t ssid, uint32_t tsid, uint32_t tclass, ss::AvDecision *avd) = 0;
    // security_file_permission on a read or write: the hook CoreConfig::file_hook names, then
    // avc_has_perm. 0 or -EACCES.
    virtual int file_permission(const FileCheck &check) = 0;
    virtual int context_to_sid(std::string_view context, uint32_t *sid) = 0;
    virtual int sid_to_context(uint32_t sid, std::string *out) = 0;
    virtual int transition_sid(uint32_t ssid, uint32_t tsid, uint32_t tclass,
                               std::string_view objname, uint32_t *out_sid) = 0;
    // security_get_user_sids: the candidates in the read section, then a process transition
    // check per candidate through the AVC (AVC_STRICT), as the kernel does.
    virtual int get_user_sids(uint32_t fromsid, std::string_view username,
                              std::vector<uint32_t> *sids) = 0;

    // Runs `fn` on the current policy inside the strategy's read-side section, as every
    // read-side service above does (retried when it returns -ESTALE, the frozen SID table of a
    // policy being replaced; each retry is recorded as the operation "sidtab_estale_retry").
    // `fn` must charge its work with kernel::compute().
    using ReadFn = FunctionRef<int(const ss::PolicyState &)>;
    virtual int read_policy(ReadFn fn) = 0;

    // --- write side ---
    // security_set_bools: `values[i]` for boolean i + 1 (the whole vector, as selinuxfs
    // commits). Runs as the operation "set_bools". `seqno` (optional) receives the sequence
    // number of the committed policy.
    virtual int set_bools(std::span<const int> values, uint32_t *seqno = nullptr) = 0;
    // security_load_policy with a binary policy image, as the operation "load_policy".
    // -EINVAL for a malformed image.
    virtual int load_policy(std::span<const uint8_t> image, uint32_t *seqno = nullptr) = 0;

    // The state as it is now, for setup and for checks after a run; never from a running task.
    virtual const ss::PolicyState &setup_state() const = 0;
    // The AVC's counters (lookups, hits, misses, reclaims ...).
    virtual ss::AvcStats avc_stats() const = 0;
    // Inserts an old SID table mirrored onto a SID its successor already held (only without
    // the freeze: CoreConfig::sidtab_freeze), over the tables freed so far.
    virtual uint64_t sidtab_mirror_collisions() const = 0;
};

// Builds the named strategy (strategies/catalog.h) over a policy state, on the current platform.
// `options` are checked against the catalog (unknown names and bad values are UserErrors) and
// the catalog's defaults fill the rest. Throws UserError on an unknown name.
std::unique_ptr<SecurityServer> make_security_server(const std::string &strategy,
                                                     const Params &options, ss::PolicyState initial,
                                                     const CoreConfig &core);

}  // namespace locksim
