// syscalls: what ordinary processes make the security server do. Each task is a process of one
// of the policy's domains; between two system calls it spends `think` in user space. The mix:
//   read_write: file_permission on an open file (one AVC check, almost always a hit), from
//               the LSM hook as core.file_hook says (strategies/file_hook.h);
//   open_stat:  path walk and open (search on the directory, getattr and open on the file);
//   socket:     socket creation: the new socket's SID (security_transition_sid with the
//               kernel's socket defaults, which validates the resulting context, MLS range
//               included) and the create check;
//   packet_recv: a packet arriving for the task's socket: the peer `recv` check, made from
//               softirq context (preemption off), as selinux_sock_rcv_skb does. A design whose
//               reader may sleep is caught here by the sleeping-in-atomic self-check.
// Each operation first charges `syscall_work` units of the profile's `syscall` cost (the part of
// the system call that is not SELinux's); `checks = false` leaves the checks out, as a kernel
// without SELinux would.
#include <fmt/core.h>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

namespace {

struct SyscallsSetup {
    std::vector<uint32_t> domain_sids, object_sids;
    uint32_t file = 0, dir = 0, sock = 0, peer = 0, fd = 0, fd_use = 0;
    uint32_t rw = 0, search = 0, getattr_open = 0, sock_create = 0, peer_recv = 0;
    int64_t w_rw = 0, w_open = 0, w_sock = 0, w_recv = 0;
    kernel::Time think = 0;
    size_t working_set = 1;
    int64_t syscall_work = 0;
    bool checks = true;
};

}  // namespace

static void spawn_syscalls(const WorkloadSpec &spec, WorkloadEnv &env) {
    const Params &p = spec.params;
    auto s = std::make_shared<SyscallsSetup>();
    const auto &domain_types = p.get_string_list("domain_types");
    const auto &object_types = p.get_string_list("object_types");
    s->domain_sids = domain_types.empty()
                         ? pick_sids(env, spec, env.facts.domains(), "domains", true)
                         : named_sids(env, domain_types, true, spec.label);
    s->object_sids = object_types.empty()
                         ? pick_sids(env, spec, env.facts.objects(), "objects", false)
                         : named_sids(env, object_types, false, spec.label);
    // File and directory checks; a policy without those classes checks stand-ins of its own
    // (PolicyFacts::check), so that its rules are what the checks search.
    const PolicyFacts::Check rw = env.facts.check("file", {"read", "write"}, 0);
    const PolicyFacts::Check search = env.facts.check("dir", {"search"}, 1);
    s->file = rw.tclass;
    s->dir = search.tclass;
    s->rw = rw.av;
    s->search = search.av;
    s->getattr_open = env.facts.check("file", {"getattr", "open"}, 0).av;
    s->sock = env.facts.class_value("tcp_socket");
    if (!s->sock) s->sock = env.facts.class_value("unix_stream_socket");
    s->fd = env.facts.class_value("fd");
    s->fd_use = s->fd ? env.facts.perms("fd", {"use"}) : 0;
    s->sock_create = env.facts.perms(s->sock ? "tcp_socket" : "unix_stream_socket", {"create"});
    // An operation without a class to check (a policy with no class but process) does not run.
    s->w_rw = s->file ? p.get_int("read_write") : 0;
    s->w_open = s->file && s->dir ? p.get_int("open_stat") : 0;
    s->w_sock = s->sock ? p.get_int("socket") : 0;
    s->peer = env.facts.class_value("peer");
    s->peer_recv = env.facts.perms("peer", {"recv"});
    s->w_recv = s->peer ? p.get_int("packet_recv") : 0;
    if (s->w_rw + s->w_open + s->w_sock + s->w_recv == 0)
        throw UserError(fmt::format(
            "workload '{}': every operation's weight is 0 (read_write and open_stat, which count "
            "only with a class other than process in the policy, socket with tcp_socket or "
            "unix_stream_socket, packet_recv with peer): its tasks would do nothing",
            spec.label));
    s->think = p.get_duration_ns("think");
    s->working_set = std::min(static_cast<size_t>(p.get_int("working_set")), s->object_sids.size());
    s->syscall_work = p.get_int("syscall_work");
    s->checks = p.get_bool("checks");
    spawn_tasks(spec, env, false, [s, &server = env.server](int index) {
        static const kernel::Label kRw("syscalls.read_write"), kOpen("syscalls.open_stat"),
            kSock("syscalls.socket"), kRecv("syscalls.packet_recv"), kBody("syscall_body");
        auto body = [&s] {
            if (s->syscall_work > 0)
                kernel::stand_in(kBody, [&s] {
                    count_work(Work::Syscall, static_cast<uint64_t>(s->syscall_work));
                });
            return s->checks;
        };
        const uint32_t self = s->domain_sids[static_cast<size_t>(index) % s->domain_sids.size()];
        const int64_t total = s->w_rw + s->w_open + s->w_sock + s->w_recv;
        while (!kernel::kthread_should_stop()) {
            kernel::sleep_for(s->think);
            if (kernel::kthread_should_stop()) break;  // no new work after the duration
            // The task's working set: a window of the objects that starts at its own offset.
            const size_t first = static_cast<size_t>(index) * 3;
            const uint32_t obj =
                s->object_sids[(first + draw(s->working_set)) % s->object_sids.size()];
            const int64_t r = static_cast<int64_t>(draw(static_cast<size_t>(total)));
            if (r < s->w_rw) {
                kernel::OpScope op(kRw);
                // The task opened the file itself: no descriptor check (core.file_hook).
                if (body())
                    server.file_permission({.tsid = self,
                                            .fsid = self,
                                            .isid = obj,
                                            .tclass = s->file,
                                            .av = s->rw,
                                            .fd_class = s->fd,
                                            .fd_use = s->fd_use});
            } else if (r < s->w_rw + s->w_open) {
                kernel::OpScope op(kOpen);
                if (body()) {
                    server.avc_has_perm(self, obj, s->dir, s->search);
                    server.avc_has_perm(self, obj, s->file, s->getattr_open);
                }
            } else if (r < s->w_rw + s->w_open + s->w_sock) {
                kernel::OpScope op(kSock);
                uint32_t newsid = 0;
                if (body() && server.transition_sid(self, self, s->sock, {}, &newsid) == 0)
                    server.avc_has_perm(self, newsid, s->sock, s->sock_create);
            } else {
                kernel::OpScope op(kRecv);
                const uint32_t from = s->domain_sids[draw(s->domain_sids.size())];
                kernel::local_bh_disable();  // softirq context
                if (body()) server.avc_has_perm(self, from, s->peer, s->peer_recv);
                kernel::local_bh_enable();
            }
        }
    });
}

namespace workloads {

WorkloadInfo syscalls_workload() {
    return {
        .name = "syscalls",
        .summary =
            "file read/write permission checks (mostly AVC hits), open/stat, and socket creation "
            "with its context validation; task SIDs drawn from the policy's real domains",
        .params =
            {dur("think", "user-space time between two system calls", 20 * us),
             count("read_write", "weight of read/write checks in the mix", 80, 0, 1000),
             count("open_stat", "weight of open/stat (lookup + several checks)", 15, 0, 1000),
             count("socket", "weight of socket creation (transition_sid + context validation)", 5,
                   0, 1000),
             count("packet_recv",
                   "weight of packet receipt: the peer check made from softirq context (preemption "
                   "off), where the security server must not sleep",
                   5, 0, 1000),
             count("domains", "distinct source domains drawn from the policy", 16, 1, 100000),
             count("objects", "distinct target object types drawn from the policy", 64, 1, 100000),
             count("working_set",
                   "objects each task touches (a window of `objects`): small windows mostly hit "
                   "the AVC, large ones miss",
                   8, 1, 100000),
             names("domain_types",
                   "types the tasks run as, task i as the i-th modulo their number (default: "
                   "`domains` of the policy's domains)"),
             names("object_types",
                   "types of the objects the tasks touch (default: `objects` of the policy's file "
                   "types)"),
             count("syscall_work",
                   "the rest of each system call besides its security checks (entry, fd lookup, "
                   "VFS, exit), in units of the CPU profile's `syscall` cost; 0 = only the checks "
                   "are charged",
                   0, 0, 1000),
             {.name = "checks",
              .type = ParamType::Bool,
              .doc = "make the permission checks; false runs the same system calls without them "
                     "(SELinux off), the baseline of an overhead figure",
              .default_value = true}},
        .spawn = spawn_syscalls};
}

}  // namespace workloads

}  // namespace locksim
