// The cause of a probe wake-up in words, for the table's companion lines, the results file's
// probe_wakeup.worst_cause and the report: what held the probe's CPU longest between its due time
// and the moment it ran (record/run_results.h, WakeupRecord).
#pragma once

#include <string>

#include "record/run_results.h"

namespace locksim::analysis {

// The worst wake-up of the run over all probes (ties: the probe first by name), or nullptr when
// the platform recorded none.
const kernel::WakeupRecord *worst_wakeup(const kernel::RunResults &r);

// "preempt-off section of avc_lookup, read_lock @ rwlock.cpp:57 (task syscalls-3, CPU 2, 163.8us
// long) held it 160.1us"; "on time: nothing held the CPU (the wake-up path's own cost)".
std::string describe_cause(const kernel::WakeupRecord &w);

// One line for the run's output: "probe-2 woke 163.8us late at 412.3ms on CPU 2: <cause>".
std::string describe_wakeup(const kernel::WakeupRecord &w);

}  // namespace locksim::analysis
