// new_contexts: a long-lived system that keeps making new security contexts, as a container
// runtime or libvirt's sVirt does when it gives each new container or guest its own pair of MCS
// categories. Each new context is a context_to_sid of a string the SID table has not seen (a
// lookup that misses, then an insert under the table's lock: a new SID, never freed); with
// `lookups` > 0 a share of the operations asks again for a context made earlier (a lookup that
// hits). `preload` contexts are made at setup, so a run can start from a table of that size.
// Refused inserts (the legacy era's table shut down by a policy load) are counted as the
// operation "sidtab_insert_failed".
#include <fmt/core.h>

#include <atomic>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

namespace {

struct NewContexts {
    PolicyFacts::CategoryPairs pairs;
    int64_t limit = 0;              // contexts made in all, preload included
    std::atomic<int64_t> made{0};   // contexts made so far (the next pair's index)
    std::atomic<int64_t> known{0};  // of which have a SID (lookups draw below it)
    int64_t lookups = 0;            // percent of operations that look up a known context
};

}  // namespace

static void spawn_new_contexts(const WorkloadSpec &spec, WorkloadEnv &env) {
    const Params &p = spec.params;
    auto s = std::make_shared<NewContexts>();
    s->pairs = env.facts.container_pairs();
    const int64_t preload = p.get_int("preload");
    s->limit = preload + p.get_int("max_contexts");
    if (s->pairs.count() < static_cast<uint64_t>(s->limit))
        throw UserError(fmt::format(
            "workload '{}': the policy offers {} category pairs for new contexts, fewer than "
            "preload + max_contexts = {} (an MLS policy with categories is needed)",
            spec.label, s->pairs.count(), s->limit));
    s->lookups = p.get_int("lookups");
    for (int64_t i = 0; i < preload; ++i)
        setup_sid(env, s->pairs.context(static_cast<uint64_t>(i)), spec.label);
    s->made = preload;
    s->known = preload;
    spawn_tasks(spec, env, false, [s, spec, seed = env.seed, &server = env.server](int index) {
        static const kernel::Label kCreate("new_contexts.create"), kLookup("new_contexts.lookup"),
            kFailed("sidtab_insert_failed");
        PeriodicTimer timer(spec, seed, index);
        timer.start();
        uint32_t sid = 0;
        while (!kernel::kthread_should_stop()) {
            timer.wait();
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            const int64_t known = s->known.load(std::memory_order_relaxed);
            const bool lookup = known > 0 && static_cast<int64_t>(draw(100)) < s->lookups;
            if (lookup || s->made.load(std::memory_order_relaxed) >= s->limit) {
                if (known == 0) continue;
                // The string is made outside the operation: the process already has it.
                const std::string ctx = s->pairs.context(draw(static_cast<size_t>(known)));
                kernel::OpScope op(kLookup);
                server.context_to_sid(ctx, &sid);
                continue;
            }
            const int64_t i = s->made.fetch_add(1, std::memory_order_relaxed);
            if (i >= s->limit) continue;
            const std::string ctx = s->pairs.context(static_cast<uint64_t>(i));
            int rc;
            {
                kernel::OpScope op(kCreate);
                rc = server.context_to_sid(ctx, &sid);
            }
            if (rc) {
                kernel::OpScope failed(kFailed);
                continue;
            }
            s->known.fetch_add(1, std::memory_order_relaxed);
        }
    });
}

namespace workloads {

WorkloadInfo new_contexts_workload() {
    return {
        .name = "new_contexts",
        .summary =
            "a long-lived system making new contexts (new SIDs), as a container runtime or sVirt "
            "does with a new MCS category pair per container: the SID table grows; needs an MLS "
            "policy",
        .params = {count("rate", "new contexts per second per task", 1000, 1, 100000000),
                   count("max_contexts",
                         "new contexts the workload makes in the run (then it only looks up)",
                         20000, 0, 1000000),
                   count("preload",
                         "contexts made at setup, before the run (the table's starting size)", 0, 0,
                         1000000),
                   count("lookups", "percent of operations that look up a context made earlier", 0,
                         0, 100),
                   jitter()},
        .spawn = spawn_new_contexts,
        .period = rate_param};
}

}  // namespace workloads

}  // namespace locksim
