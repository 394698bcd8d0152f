#include "workloads/workload.h"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include "util/error.h"
#include "util/seed_stream.h"
#include "workloads/catalog.h"

namespace locksim {

bool is_writer_op(std::string_view label) {
    return label == kernel::op::kSetsebool || label == kernel::op::kLoadPolicy;
}

bool is_reader_op(std::string_view label) {
    size_t dot = label.find('.');
    if (dot == std::string_view::npos) return false;
    std::string_view kind = label.substr(0, dot);
    return kind != "setsebool" && kind != "load_policy" && kind != "probe" &&
           find_workload_info(kind) != nullptr;
}

void spawn_tasks(const WorkloadSpec &spec, WorkloadEnv &env, bool probe,
                 std::function<void(int index)> body) {
    const Params &p = spec.params;
    int tasks = static_cast<int>(spec.tasks == 0 ? env.cpus : spec.tasks);
    std::vector<int64_t> cpus = p.get_int_list("cpus");
    for (int64_t c : cpus)
        if (c >= env.cpus)
            throw UserError(fmt::format("workload '{}': cpu {} does not exist (the machine has {})",
                                        spec.label, c, env.cpus));
    bool pin = p.get_bool("pin");
    if (const std::string &cluster = p.get_string("cluster"); !cluster.empty()) {
        // Placement on a cluster: pinned round the cluster's CPUs (the scheduler pins to one CPU).
        auto it = env.clusters.find(cluster);
        if (it == env.clusters.end() || it->second.empty()) {
            std::string known;
            for (const auto &[name, list] : env.clusters)
                if (!list.empty()) known += (known.empty() ? "" : ", ") + name;
            throw UserError(fmt::format(
                "workload '{}': no cluster '{}' on this machine ({})", spec.label, cluster,
                known.empty() ? "its CPU profile has no [[cluster]]" : "clusters: " + known));
        }
        if (!cpus.empty())
            throw UserError(
                fmt::format("workload '{}': give 'cpus' or 'cluster', not both", spec.label));
        cpus = it->second;
        pin = true;
    }
    const kernel::Time start = p.get_duration_ns("start");
    for (int i = 0; i < tasks; ++i) {
        kernel::TaskParams tp;
        tp.name = fmt::format("{}/{}", spec.label, i);
        const std::string &sched = p.get_string("sched");
        tp.policy = sched == "fifo" ? kernel::Sched::Fifo
                    : sched == "rr" ? kernel::Sched::Rr
                                    : kernel::Sched::Other;
        tp.priority = static_cast<int>(p.get_int("prio"));
        tp.nice = static_cast<int>(p.get_int("nice"));
        if (pin) {
            tp.cpu = cpus.empty() ? i % env.cpus : static_cast<int>(cpus[i % cpus.size()]);
        } else if (cpus.size() == 1) {
            tp.cpu = static_cast<int>(cpus[0]);
        } else {
            tp.cpus.assign(cpus.begin(), cpus.end());  // the affinity mask
        }
        tp.probe = probe;
        kernel::create_task(std::move(tp), [body, i, start] {
            if (start > 0) kernel::sleep_until(start);
            body(i);
        });
    }
}

PeriodicTimer::PeriodicTimer(const WorkloadSpec &spec, uint64_t seed, int source)
    : rng_(seed_stream(seed, spec.label, static_cast<uint64_t>(source))) {
    const WorkloadInfo *info = find_workload_info(spec.kind);
    if (!info || !info->period)
        throw std::logic_error("workload '" + spec.kind + "' is not periodic");
    period_ = info->period(spec.params);
    jitter_ = timer_jitter(spec);
    phase_ = draw_upto(rng_, period_ - 1);
}

void PeriodicTimer::start_at(kernel::Time phase) {
    next_ = kernel::now() + phase;
}

void PeriodicTimer::wait() {
    wait_until(next_);
    next_ += period_;
}

void PeriodicTimer::wait_until(kernel::Time expiry) {
    kernel::sleep_until(expiry + draw_upto(rng_, jitter_));
}

uint32_t setup_sid(WorkloadEnv &env, const std::string &context, const std::string &workload) {
    uint32_t sid = 0;
    if (context.empty() || ss::context_to_sid(env.server.setup_state(), context, &sid) != 0)
        throw UserError(
            fmt::format("workload '{}': the policy has no valid context '{}'", workload, context));
    return sid;
}

size_t pick_spread(size_t count, size_t n, const std::function<bool(size_t)> &take) {
    size_t taken = 0;
    std::vector<bool> tried(count, false);
    const size_t step = std::max<size_t>(1, count / std::max<size_t>(n, 1));
    for (size_t i = 0; i < count && taken < n; i += step) {
        tried[i] = true;
        taken += take(i);
    }
    for (size_t i = 0; i < count && taken < n; ++i)
        if (!tried[i]) taken += take(i);
    return taken;
}

void note_shortfall(WorkloadEnv &env, const WorkloadSpec &spec, std::string_view what,
                    const std::string &param, size_t got, std::string_view why) {
    if (!spec.given.count(param)) return;
    const int64_t asked = spec.params.get_int(param);
    env.notes.push_back(fmt::format("workload '{}': {} distinct {}, not the {} asked ({} = {}): {}",
                                    spec.label, got, what, asked, param, asked, why));
}

std::vector<uint32_t> pick_sids(WorkloadEnv &env, const WorkloadSpec &spec,
                                const std::vector<uint32_t> &types, const std::string &param,
                                bool domains) {
    const std::string &label = spec.label;
    const int64_t n = spec.params.get_int(param);
    std::vector<uint32_t> sids;
    pick_spread(types.size(), static_cast<size_t>(n), [&](size_t i) {
        std::string ctx =
            domains ? env.facts.domain_context(types[i]) : env.facts.object_context(types[i]);
        if (ctx.empty()) return false;
        sids.push_back(setup_sid(env, ctx, label));
        return true;
    });
    if (sids.size() < static_cast<size_t>(n))
        note_shortfall(env, spec, domains ? "domains" : "object types", param, sids.size(),
                       sids.empty() ? "the policy has none with a valid context; an unconfined "
                                      "domain's context stands in"
                                    : "the policy has no more with a valid context");
    if (sids.empty())
        sids.push_back(setup_sid(env, env.facts.some_domain_context({"unconfined_t"}), label));
    return sids;
}

std::vector<uint32_t> named_sids(WorkloadEnv &env, const std::vector<std::string> &types,
                                 bool domains, const std::string &label) {
    std::vector<uint32_t> sids;
    for (const auto &name : types) {
        const ss::TypeDatum *t = env.facts.state().p().types.find(name);
        if (!t || t->attribute)
            throw UserError(fmt::format("workload '{}': the policy has no type '{}'", label, name));
        std::string ctx =
            domains ? env.facts.domain_context(t->value) : env.facts.object_context(t->value);
        if (ctx.empty())
            throw UserError(
                fmt::format("workload '{}': no valid context for type '{}'", label, name));
        sids.push_back(setup_sid(env, ctx, label));
    }
    return sids;
}

void spawn_workload(const WorkloadSpec &spec, WorkloadEnv &env) {
    const WorkloadInfo *info = find_workload_info(spec.kind);
    if (!info) throw UserError(fmt::format("unknown workload '{}'", spec.kind));
    // What the policy or the machine refuses is found only now: the message names the
    // workload's table in the scenario.
    at_place(spec.at, [&] { info->spawn(spec, env); });
}

}  // namespace locksim
