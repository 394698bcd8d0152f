// One side of `locksim validate`: the torture workload of one strategy on a platform (the
// simulator or host threads), with the host's other load measured while it runs.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "kernel/platform.h"
#include "record/run_results.h"
#include "scenario/scenario.h"
#include "ss/policydb.h"
#include "strategies/security_server.h"
#include "validate/torture.h"

namespace locksim {

struct Side {
    kernel::RunResults results;
    TortureStats torture;
};

// The two-task workload on `platform` (current on this thread), for one strategy.
// Each run gets its own copy of the policy: in-place strategies change the conditional state.
// `hogs` CPU-bound tasks (nice 0) run beside them: the host's other load. They are created
// first, as the load was there before the run: the scheduler places each new task one slice
// (its share of the latency period among the tasks already there) after the CPU's least
// virtual runtime, so created last, the reader would wait for every one of them first (with
// ten on two CPUs, past a 40 ms run).
template <class P>
Side run_side(P &platform, const std::vector<uint8_t> &image, const StrategySpec &spec,
              const CoreConfig &core, const TortureConfig &tc, int hogs = 0) {
    kernel::PlatformScope scope(platform);
    auto server = make_security_server(spec.name, spec.options,
                                       make_policy_state(ss::policydb_read(image), core), core);
    for (int i = 0; i < hogs; ++i)
        kernel::create_task({fmt::format("host_load{}", i)}, [] {
            while (!kernel::kthread_should_stop())
                kernel::ndelay(100 * kernel::kUsec);
        });
    Torture t(*server, tc);
    t.create_tasks();
    Side side;
    side.results = platform.run();
    side.torture = t.finish(side.results);
    return side;
}

// Runnable tasks on the host now (/proc/stat's procs_running) less this process's own (its
// threads in state R); -1 when unreadable.
int others_runnable();
// Runs `f`, sampling the host's other runnable tasks every 2 ms meanwhile; their mean.
double others_runnable_during(const std::function<void()> &f);
// The time the hypervisor has run something else while this machine's CPUs wanted to run
// (/proc/stat's `cpu` steal, all CPUs), in ms since boot; -1 when unreadable.
double host_steal_ms();

}  // namespace locksim
