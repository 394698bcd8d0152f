// aim7: an AIM7 high_systime-like mix. `users` simulated users are spread over the tasks; each
// operation picks the next user of its task and does one of: create a file in a directory (the
// new file's SID by type_transition with its name, then the checks), create a socket (the SID
// with the socket defaults, validating the full MLS range of the user's context: the hot path
// of mls_level_isvalid on multi-category contexts), exec a program (process transition check),
// or read and write a file. The users' processes run with their user's whole MLS range.
#include <fmt/core.h>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

namespace {

struct Aim7Setup {
    std::vector<uint32_t> user_sids;  // one per simulated user (domains repeat)
    std::vector<uint32_t> object_sids;
    uint32_t file = 0, dir = 0, sock = 0, process = 0;
    uint32_t file_create = 0, dir_add = 0, sock_create = 0, transition = 0, rw = 0;
    kernel::Time think = 0;
    std::vector<int> ops;  // the operations the policy's classes allow
};

}  // namespace

static void spawn_aim7(const WorkloadSpec &spec, WorkloadEnv &env) {
    const Params &p = spec.params;
    auto s = std::make_shared<Aim7Setup>();
    const auto &domains = env.facts.domains();
    std::vector<uint32_t> domain_sids;
    for (size_t i = 0; i < domains.size() && domain_sids.size() < 64;
         i += std::max<size_t>(1, domains.size() / 64)) {
        std::string ctx = env.facts.domain_context(domains[i]);
        if (!ctx.empty()) domain_sids.push_back(setup_sid(env, ctx, spec.label));
    }
    if (domain_sids.empty())
        domain_sids.push_back(setup_sid(env, env.facts.some_domain_context({}), spec.label));
    const int64_t users = p.get_int("users");
    for (int64_t u = 0; u < users; ++u)
        s->user_sids.push_back(domain_sids[u % domain_sids.size()]);
    const auto &objects = env.facts.objects();
    for (size_t i = 0; i < objects.size() && s->object_sids.size() < 64;
         i += std::max<size_t>(1, objects.size() / 64)) {
        std::string ctx = env.facts.object_context(objects[i]);
        if (!ctx.empty()) s->object_sids.push_back(setup_sid(env, ctx, spec.label));
    }
    if (s->object_sids.empty()) s->object_sids = domain_sids;
    // File and directory checks, or stand-ins on a policy without those classes
    // (PolicyFacts::check).
    const PolicyFacts::Check file_create = env.facts.check("file", {"create", "write"}, 0);
    const PolicyFacts::Check dir_add = env.facts.check("dir", {"add_name", "write", "search"}, 1);
    s->file = file_create.tclass;
    s->dir = dir_add.tclass;
    s->file_create = file_create.av;
    s->dir_add = dir_add.av;
    s->rw = env.facts.check("file", {"read", "write"}, 0).av;
    // A socket class of the policy (as syscalls picks it); without one, no socket creation.
    const char *sock_class =
        env.facts.class_value("tcp_socket") ? "tcp_socket" : "unix_stream_socket";
    s->sock = env.facts.class_value(sock_class);
    s->process = env.facts.class_value("process");
    s->sock_create = env.facts.perms(sock_class, {"create"});
    s->transition = env.facts.perms("process", {"transition"});
    s->think = p.get_duration_ns("think");
    // The operations the policy has classes for, by number (the switch below): a file creation
    // (dir and file), a socket, an exec (process), a read or write (file).
    if (s->file && s->dir) s->ops.push_back(0);
    if (s->sock) s->ops.push_back(1);
    if (s->process) s->ops.push_back(2);
    if (s->file) s->ops.push_back(3);
    if (s->ops.empty())
        throw UserError(fmt::format(
            "workload '{}': the policy has no class aim7 can check (process, tcp_socket or "
            "unix_stream_socket, or any other for its file operations): its tasks would do "
            "nothing",
            spec.label));
    const int tasks = static_cast<int>(spec.tasks == 0 ? env.cpus : spec.tasks);
    spawn_tasks(spec, env, false, [s, tasks, &server = env.server](int index) {
        static const kernel::Label kCreat("aim7.creat"), kSock("aim7.socket"), kExec("aim7.exec"),
            kRw("aim7.read_write");
        size_t next_user = static_cast<size_t>(index);
        while (!kernel::kthread_should_stop()) {
            kernel::sleep_for(s->think);
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            const uint32_t self = s->user_sids[next_user % s->user_sids.size()];
            next_user += static_cast<size_t>(tasks);
            const uint32_t obj = s->object_sids[draw(s->object_sids.size())];
            uint32_t newsid = 0;
            switch (s->ops[draw(s->ops.size())]) {
                case 0: {
                    kernel::OpScope op(kCreat);
                    server.avc_has_perm(self, obj, s->dir, s->dir_add);
                    if (server.transition_sid(self, obj, s->file, "aim7.tmp", &newsid) == 0)
                        server.avc_has_perm(self, newsid, s->file, s->file_create);
                    break;
                }
                case 1: {
                    kernel::OpScope op(kSock);
                    if (server.transition_sid(self, self, s->sock, {}, &newsid) == 0)
                        server.avc_has_perm(self, newsid, s->sock, s->sock_create);
                    break;
                }
                case 2: {
                    kernel::OpScope op(kExec);
                    if (server.transition_sid(self, obj, s->process, {}, &newsid) == 0)
                        server.avc_has_perm(self, newsid, s->process, s->transition);
                    break;
                }
                default: {
                    kernel::OpScope op(kRw);
                    server.avc_has_perm(self, obj, s->file, s->rw);
                }
            }
        }
    });
}

namespace workloads {

WorkloadInfo aim7_workload() {
    return {
        .name = "aim7",
        .summary =
            "AIM7 high_systime-like mix over many users: process creation, file and socket churn",
        .params = {count("users", "simulated AIM7 users, spread over the tasks", 1500, 1, 1000000),
                   dur("think", "user-space time between two operations", 50 * us)},
        .spawn = spawn_aim7};
}

}  // namespace workloads

}  // namespace locksim
