// Workloads: named, parametrised task bodies (workloads/catalog.h lists them with their
// parameters). spawn_workload creates a workload's tasks on the current kernel::Platform; each task
// calls the security server the way a kernel hook or selinuxfs write would, inside an operation
// scope whose label the results report (see kLabel* below).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernel/primitives.h"
#include "record/op_names.h"
#include "strategies/security_server.h"
#include "workloads/catalog.h"
#include "workloads/policy_facts.h"

namespace locksim {

// Operation labels are in record/op_names.h. Operations of the write side, and the read-side
// operations workloads record: each labelled "<workload kind>.<operation>"
// (syscalls.read_write, login.get_user_sids, ...). Labels the security server records inside
// them (avc_miss, set_bools, ...) are neither, except load_policy, which the security server
// records and the load_policy workload leaves as its only operation.
bool is_writer_op(std::string_view label);
bool is_reader_op(std::string_view label);

struct WorkloadEnv {
    SecurityServer &server;
    const PolicyFacts &facts;
    int cpus = 1;
    // The policy as a binary image, for load_policy (built on first use).
    std::function<std::vector<uint8_t>()> policy_image;
    // Boolean values as committed so far, shared by every setsebool task.
    std::shared_ptr<std::vector<int>> bools;
    // The CPU profile's clusters: name -> its CPUs on this machine (the `cluster` parameter).
    std::map<std::string, std::vector<int64_t>> clusters;
    // What the workloads' setups got short of what they asked (RunResults::workload_notes).
    std::vector<std::string> notes;
    uint64_t seed = 1;  // the run's: periodic tasks draw their phases from it (PeriodicTimer)
};

// Throws UserError when the spec names things the policy lacks (an unknown boolean or user).
void spawn_workload(const WorkloadSpec &spec, WorkloadEnv &env);

// --- shared by the workload files ---

// Creates spec.tasks tasks (0: one per CPU) named "<label>/<i>", applying the common
// parameters (sched, prio, cpus, pin, start); body(i) runs each after `start`.
void spawn_tasks(const WorkloadSpec &spec, WorkloadEnv &env, bool probe,
                 std::function<void(int index)> body);
// A SID for a context string, made at setup; throws UserError naming the workload on failure.
uint32_t setup_sid(WorkloadEnv &env, const std::string &context, const std::string &workload);
// Takes up to n of `count` candidates: spread over them first (every count/n-th), then any
// other in order until n are taken. take(i) tries candidate i and says whether it was taken.
// Returns how many were.
size_t pick_spread(size_t count, size_t n, const std::function<bool(size_t)> &take);
// Notes in env.notes that the workload got `got` of the distinct `what` its parameter `param`
// asks for, and why; only where the scenario sets `param` (a default the policy cannot give is
// the tool's choice, not the user's).
void note_shortfall(WorkloadEnv &env, const WorkloadSpec &spec, std::string_view what,
                    const std::string &param, size_t got, std::string_view why);
// Up to `param` (the spec's "domains" or "objects") SIDs of the given types (domains or
// objects), spread over the list, each with a valid context (at least one: an unconfined
// domain's); fewer (the types with a valid context run out) is noted (note_shortfall).
std::vector<uint32_t> pick_sids(WorkloadEnv &env, const WorkloadSpec &spec,
                                const std::vector<uint32_t> &types, const std::string &param,
                                bool domains);
// The SIDs of the named types, each with a valid context; UserError naming the workload when a
// name is not a type or has no valid context.
std::vector<uint32_t> named_sids(WorkloadEnv &env, const std::vector<std::string> &types,
                                 bool domains, const std::string &label);
// The timer of a periodic workload's task (WorkloadInfo::period): expiries every `period` from
// a phase in [0, period) after the task starts, each wake-up late by a draw in [0, jitter]. The
// phase and the jitter come from a stream of the run's seed, the workload's label and `source`
// (the task's index), not from the task's own: adding a workload or a draw elsewhere moves no
// other source, and each seed puts the sources at other relative phases.
class PeriodicTimer {
  public:
    PeriodicTimer(const WorkloadSpec &spec, uint64_t seed, int source);
    // The expiries start now (in the task), at the drawn phase; or at `phase` instead.
    void start() { start_at(phase_); }
    void start_at(kernel::Time phase);
    // Sleeps until the next expiry, then its jitter.
    void wait();
    // Sleeps until `expiry` (a time the task chose), then the jitter.
    void wait_until(kernel::Time expiry);
    kernel::Time period() const { return period_; }
    kernel::Time phase() const { return phase_; }

  private:
    std::mt19937_64 rng_;
    kernel::Time period_ = 0, jitter_ = 0, phase_ = 0, next_ = 0;
};

// Draws from [0, n) on the calling task's random stream.
inline size_t draw(size_t n) {
    return static_cast<size_t>(kernel::get_random_below(n));
}

}  // namespace locksim
