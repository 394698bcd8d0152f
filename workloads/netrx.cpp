// netrx: packets received through the network interrupt's NET_RX softirq work, where the
// kernel checks them. For each packet, selinux_sock_rcv_skb (v6.12, security/selinux/hooks.c)
// checks the receiving socket's SID against the sender's peer label:
// avc_has_perm(sk_sid, peer_sid, SECCLASS_PEER, PEER__RECV). It runs in the context the kernel
// runs NET_RX in: softirq context on the CPU the interrupt hit (preemption off; a design whose
// reader may sleep is caught by the sleeping-in-atomic self-check), or under PREEMPT_RT the
// interrupt's thread. The workload has no tasks: `packets` packets arrive with each interrupt
// of the scenario's [[machine.irq]] sources of kind "network".
// Simplified: the socket and the peer are drawn from the policy's domains; the netif and node
// checks of labelled networking (selinux_inet_sys_rcv_skb) and the secmark check are left out.
#include <fmt/core.h>

#include <memory>

#include "util/error.h"
#include "workloads/workload.h"

namespace locksim {

namespace {

struct NetrxSetup {
    std::vector<uint32_t> sids;
    uint32_t peer = 0, recv = 0;
    int64_t packets = 1;
};

}  // namespace

static void spawn_netrx(const WorkloadSpec &spec, WorkloadEnv &env) {
    const Params &p = spec.params;
    auto s = std::make_shared<NetrxSetup>();
    s->peer = env.facts.class_value("peer");
    if (!s->peer)
        throw UserError(fmt::format("workload '{}': the policy has no 'peer' class", spec.label));
    s->recv = env.facts.perms("peer", {"recv"});
    const auto &types = p.get_string_list("domain_types");
    s->sids = types.empty() ? pick_sids(env, spec, env.facts.domains(), "domains", true)
                            : named_sids(env, types, true, spec.label);
    s->packets = p.get_int("packets");
    const bool opened = kernel::open_softirq("network", [s, &server = env.server] {
        static const kernel::Label kRecv("netrx.peer_recv");
        for (int64_t i = 0; i < s->packets; ++i) {
            kernel::OpScope op(kRecv);
            const uint32_t sk = s->sids[draw(s->sids.size())];
            const uint32_t peer = s->sids[draw(s->sids.size())];
            server.avc_has_perm(sk, peer, s->peer, s->recv);
        }
    });
    if (!opened)
        throw UserError(fmt::format(
            "workload '{}' runs in the network interrupts' softirq work: it needs the simulator's "
            "[[machine.irq]] of kind \"network\" (the real-thread platform has no interrupts)",
            spec.label));
}

namespace workloads {

WorkloadInfo netrx_workload() {
    return {.name = "netrx",
            .summary =
                "packets received in the network interrupts' softirq work (softirq context, "
                "or the interrupt's thread under PREEMPT_RT): the peer recv check of each",
            .params = {count("packets", "packets each network interrupt delivers", 4, 1, 1024),
                       count("domains", "distinct socket and peer domains drawn from the policy",
                             16, 1, 100000),
                       names("domain_types",
                             "types the sockets and peers are labelled with (default: `domains` of "
                             "the policy's domains)")},
            .spawn = spawn_netrx,
            .irq_kind = "network"};
}

}  // namespace workloads

}  // namespace locksim
