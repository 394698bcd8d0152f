// The names of the operations the security server and the workloads record, as they appear in
// a run's results ("ops" in results.json): one list, used by the code that records them
// (strategies/, workloads/) and by the code that reads them back (runner/, analysis/, cli/), so
// a summary never looks for a part under a name nobody records.
//
// The platforms attribute what happens inside an operation (preempt-off time, lock waits, grace
// periods, allocations) to the innermost operation open on the task. A boolean commit's parts
// are therefore found on kOpSetBools, the security server's own operation, not on the
// workload's kOpSetsebool that wraps it.
#pragma once

namespace locksim::kernel::op {

// --- recorded by the security server (strategies/) ---
// security_set_bools: a boolean commit, from the call to its return (every part of it: the
// copy, the locks, the notification path with its grace periods).
inline constexpr const char *kSetBools = "set_bools";
// security_load_policy with selinuxfs's rebuild of its directories (sel_write_load).
inline constexpr const char *kLoadPolicy = "load_policy";
// AVC misses: those that refill what a policy change flushed, and the others.
inline constexpr const char *kAvcRefill = "avc_refill";
inline constexpr const char *kAvcMiss = "avc_miss";

// --- recorded by the workloads ---
// setsebool's system call around set_bools (the commit's parts are on kSetBools).
inline constexpr const char *kSetsebool = "setsebool";
// The torture workload's read section (validate/torture.h), which `locksim validate` compares.
inline constexpr const char *kTortureRead = "torture_read";

}  // namespace locksim::kernel::op
