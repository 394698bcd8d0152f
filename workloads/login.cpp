// login: a login program asking which contexts a user may reach (security_get_user_sids, via
// /sys/fs/selinux/user) every `period`, from the login program's own domain. For a user with
// many roles and types this is the longest read-side section of the security server.
#include <fmt/core.h>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

static void spawn_login(const WorkloadSpec &spec, WorkloadEnv &env) {
    auto users = std::make_shared<std::vector<std::string>>(spec.params.get_string_list("users"));
    const auto known = env.facts.login_users();
    for (const auto &u : *users)
        if (std::find(known.begin(), known.end(), u) == known.end())
            throw UserError(fmt::format("workload '{}': the policy has no user '{}' with a role",
                                        spec.label, u));
    if (users->empty()) *users = known;
    if (users->empty())
        throw UserError(fmt::format("workload '{}': the policy has no user to log in", spec.label));
    const uint32_t from = setup_sid(
        env, env.facts.some_domain_context({"local_login_t", "sshd_t", "init_t", "unconfined_t"}),
        spec.label);
    spawn_tasks(spec, env, false, [=, seed = env.seed, &server = env.server](int index) {
        static const kernel::Label kOp("login.get_user_sids");
        PeriodicTimer timer(spec, seed, index);
        timer.start();
        size_t i = static_cast<size_t>(index);
        std::vector<uint32_t> sids;
        while (!kernel::kthread_should_stop()) {
            timer.wait();
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            kernel::OpScope op(kOp);
            server.get_user_sids(from, (*users)[i++ % users->size()], &sids);
        }
    });
}

namespace workloads {

WorkloadInfo login_workload() {
    return {.name = "login",
            .summary = "security_get_user_sids for chosen users (the long read-side section)",
            .params = {dur("period", "time between logins per task", 10 * ms, 1 * us),
                       names("users",
                             "users to log in (default: every user of the policy with a role)"),
                       jitter()},
            .spawn = spawn_login,
            .period = period_param};
}

}  // namespace workloads

}  // namespace locksim
