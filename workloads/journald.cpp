// journald: a logging daemon receiving messages with SO_PASSSEC. Each message costs the
// sender's SID -> context string (security_secid_to_secctx), for senders whose contexts carry
// many categories: the conversion the SID -> string cache exists for.
#include <fmt/core.h>

#include <algorithm>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

static void spawn_journald(const WorkloadSpec &spec, WorkloadEnv &env) {
    const Params &p = spec.params;
    auto senders = std::make_shared<std::vector<uint32_t>>();
    const auto &domains = env.facts.domains();
    const int64_t want = p.get_int("senders");
    const auto categories = static_cast<uint32_t>(p.get_int("categories"));
    // Senders whose contexts carry `categories` categories (every other one their user's range
    // allows, so that the string stays long: a range of 1024 gives 512). Domains spread over the
    // policy's first, then any other that carries them, until there are `senders`: a domain
    // whose user has fewer categories (user_u at s0 on debian-mls) is not a sender, so that
    // every message costs what the workload says.
    uint32_t most = 0;  // categories of the richest domain looked at
    pick_spread(domains.size(), static_cast<size_t>(want), [&](size_t i) {
        uint32_t carried = 0;
        std::string ctx =
            env.facts.domain_context_with_categories(domains[i], categories, &carried);
        if (ctx.empty()) return false;
        most = std::max(most, carried);
        if (carried < categories) return false;
        senders->push_back(setup_sid(env, ctx, spec.label));
        return true;
    });
    if (!senders->empty() && static_cast<int64_t>(senders->size()) < want)
        note_shortfall(env, spec, "senders", "senders", senders->size(),
                       categories ? fmt::format("the policy has no more domains whose "
                                                "contexts carry {} categories",
                                                categories)
                                  : "the policy has no more domains with a valid context");
    if (senders->empty() && most < categories)
        throw UserError(fmt::format(
            "workload '{}': its senders carry at most {} categories (every other one their "
            "users' ranges allow), fewer than categories = {}",
            spec.label, most, categories));
    if (senders->empty()) {
        note_shortfall(env, spec, "senders", "senders", 0,
                       "no domain has a valid context with its categories; a domain's context "
                       "stands in");
        senders->push_back(setup_sid(env, env.facts.some_domain_context({}), spec.label));
    }
    spawn_tasks(spec, env, false, [senders, spec, seed = env.seed, &server = env.server](int i) {
        static const kernel::Label kMsg("journald.message");
        PeriodicTimer timer(spec, seed, i);
        timer.start();
        std::string text;
        while (!kernel::kthread_should_stop()) {
            timer.wait();
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            kernel::OpScope op(kMsg);
            server.sid_to_context((*senders)[draw(senders->size())], &text);
        }
    });
}

namespace workloads {

WorkloadInfo journald_workload() {
    return {.name = "journald",
            .summary =
                "SO_PASSSEC: one SID -> context string per received message from senders with many "
                "categories",
            .params = {count("rate", "messages per second per task", 20000, 1, 100000000),
                       count("senders", "distinct sending contexts", 32, 1, 100000),
                       count("categories",
                             "categories in each sender's context: every other one its user's "
                             "range allows (512 of c0.c1023), so that its string stays long; a "
                             "domain whose user allows fewer is not a sender",
                             512, 0, 1024),
                       jitter()},
            .spawn = spawn_journald,
            .period = rate_param};
}

}  // namespace workloads

}  // namespace locksim
