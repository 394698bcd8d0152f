// avc_pressure: permission checks cycling through `triples` distinct (source, target, class)
// triples, more than the AVC holds, so that it misses, computes and reclaims continually.
#include <fmt/core.h>

#include <algorithm>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

namespace {
struct Triple {
    uint32_t ssid, tsid, tclass, perms;
};
}  // namespace

static void spawn_avc_pressure(const WorkloadSpec &spec, WorkloadEnv &env) {
    auto sids = std::make_shared<std::vector<uint32_t>>();
    const auto &domains = env.facts.domains();
    for (size_t i = 0; i < domains.size() && sids->size() < 128;
         i += std::max<size_t>(1, domains.size() / 128)) {
        std::string ctx = env.facts.domain_context(domains[i]);
        if (!ctx.empty()) sids->push_back(setup_sid(env, ctx, spec.label));
    }
    const auto &objects = env.facts.objects();
    for (size_t i = 0; i < objects.size() && sids->size() < 512;
         i += std::max<size_t>(1, objects.size() / 384)) {
        std::string ctx = env.facts.object_context(objects[i]);
        if (!ctx.empty()) sids->push_back(setup_sid(env, ctx, spec.label));
    }
    std::vector<uint32_t> classes;
    for (const char *c :
         {"file", "dir", "lnk_file", "chr_file", "sock_file", "fifo_file", "process"})
        if (uint32_t v = env.facts.class_value(c)) classes.push_back(v);
    if (classes.empty()) classes.push_back(1);
    // A domain's and an object's context may be the same (a small policy): each SID once, in
    // the order first met.
    std::vector<uint32_t> distinct;
    for (uint32_t sid : *sids)
        if (std::find(distinct.begin(), distinct.end(), sid) == distinct.end())
            distinct.push_back(sid);
    *sids = std::move(distinct);
    // Distinct triples in a fixed order: source major, then target, then class.
    auto triples = std::make_shared<std::vector<Triple>>();
    const auto want = static_cast<size_t>(spec.params.get_int("triples"));
    const size_t offered = sids->size() * sids->size() * classes.size();
    if (offered < want)
        throw UserError(fmt::format(
            "workload '{}': the policy offers {} distinct (source, target, class) triples ({} "
            "contexts, {} classes), fewer than triples = {}",
            spec.label, offered, sids->size(), classes.size(), want));
    for (size_t k = 0; triples->size() < want && k < sids->size() * sids->size() * classes.size();
         ++k) {
        size_t c = k % classes.size(), t = (k / classes.size()) % sids->size(),
               s = k / (classes.size() * sids->size());
        triples->push_back({(*sids)[s], (*sids)[t], classes[c], 1u});
    }
    const kernel::Time think = spec.params.get_duration_ns("think");
    spawn_tasks(spec, env, false, [=, &server = env.server](int index) {
        static const kernel::Label kOp("avc_pressure.check");
        size_t i = static_cast<size_t>(index) * 7919;
        while (!kernel::kthread_should_stop()) {
            kernel::sleep_for(think);
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            const Triple &t = (*triples)[i++ % triples->size()];
            kernel::OpScope op(kOp);
            server.avc_has_perm(t.ssid, t.tsid, t.tclass, t.perms);
        }
    });
}

namespace workloads {

WorkloadInfo avc_pressure_workload() {
    return {
        .name = "avc_pressure",
        .summary = "many distinct (source, target, class) triples to force AVC misses and reclaim",
        .params = {count("triples", "distinct triples cycled through", 4096, 1, 10000000),
                   dur("think", "time between two checks", 5 * us)},
        .spawn = spawn_avc_pressure};
}

}  // namespace workloads

}  // namespace locksim
