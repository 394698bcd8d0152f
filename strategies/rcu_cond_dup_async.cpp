// rcu-cond-dup-async: not merged anywhere; the 5.10 design (rcu_cond_dup.cpp) with the old
// conditional state freed by call_rcu instead of synchronize_rcu + free, as Peter Enderborg
// proposed on the list after 5.10 (a deferred-free struct queued by call_rcu in
// security_set_bools and selinux_policy_commit, synchronize_rcu kept only when its allocation
// fails); reviewed, not merged.
//
// Reader: as rcu-cond-dup (rcu_read_lock, rcu_dereference, -ESTALE retry).
// set_bools: under policy_mutex: shallow copy + cond_policydb_dup, audit_log per changed
//   boolean, new states, evaluate, rcu_assign_pointer, call_rcu(free old conditional state),
//   then selinux_notify_policy_change as 5.10 does (the proposal left it in place). The commit
//   no longer waits for its own grace period, but avc_ss_reset's network-cache callback still
//   ends in synchronize_net(): one grace period per commit instead of two. load_policy is
//   rcu-cond-dup's (it still waits: a policy load is rare).
// Trades: setsebool returns one grace period sooner, but each toggle's old conditional state
//   stays allocated until its callback runs, so a burst of toggles holds one copy per toggle in
//   flight (peak memory grows with the burst), and the frees run in softirq-like callback
//   context.
// Checked against: v5.10.13 selinuxfs.c (Rtoax/linux-5.10.13 3ef831be), the 5.10 RCU patch as
//   merged, current services.c (torvalds 002903e1); docs/kernel-eras.md.
#include "strategies/rcu_cond_dup.h"

namespace locksim::strategies {
namespace {

class RcuCondDupAsyncServer final : public RcuCondDupServer {
  public:
    RcuCondDupAsyncServer(ss::PolicyState st, const CoreConfig &core)
        : RcuCondDupServer("rcu-cond-dup-async", std::move(st), core, false) {}

  protected:
    void retire_bools(PolicyVersion *old) override { free_version_rcu(old); }
};

}  // namespace

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo rcu_cond_dup_async_strategy() {
    return {.name = "rcu-cond-dup-async",
            .summary =
                "as rcu-cond-dup, but the old state is freed by call_rcu: setsebool "
                "returns before the grace period ends, at the price of memory held until "
                "it does",
            .models = "unmerged: call_rcu instead of synchronize_rcu",
            .options = {},
            .kernels = {"5.10", "", "6.6"},
            .make = make_without_options<RcuCondDupAsyncServer>};
}

}  // namespace locksim::strategies
