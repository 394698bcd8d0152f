#include "record/run_results.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace locksim::kernel {

bool IntervalStats::worth_keeping(Time len) const {
    return keep > 0 && (longest.size() < keep || len > longest.back().length);
}

void IntervalStats::add(AtomicInterval iv) {
    length.record(iv.length);
    total += iv.length;
    keep_if_longest(std::move(iv));
}

void IntervalStats::keep_if_longest(AtomicInterval iv) {
    if (!worth_keeping(iv.length)) return;
    auto pos = std::upper_bound(longest.begin(), longest.end(), iv.length,
                                [](Time len, const AtomicInterval &e) { return len > e.length; });
    longest.insert(pos, std::move(iv));
    if (longest.size() > keep) longest.pop_back();
}

void IntervalStats::record(Time len, const std::function<AtomicInterval()> &describe) {
    if (worth_keeping(len)) {
        add(describe());
    } else {
        length.record(len);
        total += len;
    }
}

void IntervalStats::record_open(Time len, const std::function<AtomicInterval()> &describe) {
    open_at_end.push_back(len);
    record(len, describe);
}

const PricedTop *PricedRecord::of(std::string_view metric_path) const {
    for (const auto &[name, list] : kPricedKinds)
        if (metric_path.starts_with(name) &&
            metric_path.substr(std::string_view(name).size()) == kPricedMetricKey)
            return &(this->*list);
    return nullptr;
}

void PricedTop::keep(const PricedItem &item) {
    // Longest first; among equals the earlier stays ahead.
    auto at = std::upper_bound(items.begin(), items.end(), item.len,
                               [](Time len, const PricedItem &i) { return len > i.len; });
    items.insert(at, item);
    if (items.size() > kKeep) items.pop_back();
}

namespace {
void append(std::vector<Time> &into, const std::vector<Time> &part) {
    into.insert(into.end(), part.begin(), part.end());
}
}  // namespace

void IntervalStats::merge(const IntervalStats &part) {
    length.merge(part.length);
    total += part.total;
    for (const AtomicInterval &iv : part.longest)
        keep_if_longest(iv);
    append(open_at_end, part.open_at_end);
}

void OpStats::merge(const OpStats &part) {
    completed += part.completed;
    latency.merge(part.latency);
    *this += static_cast<const OpParts &>(part);
    caused_wait_ns += part.caused_wait_ns;
    peak_live_bytes = std::max(peak_live_bytes, part.peak_live_bytes);
    append(open_at_end, part.open_at_end);
}

void LockStats::merge(const LockStats &part) {
    for (int m = 0; m < 2; ++m) {
        acquisitions[m] += part.acquisitions[m];
        contended[m] += part.contended[m];
        wait[m].merge(part.wait[m]);
        hold[m].merge(part.hold[m]);
        append(wait_open_at_end[m], part.wait_open_at_end[m]);
    }
}

void RcuStats::merge(const RcuStats &part) {
    grace_periods += part.grace_periods;
    expedited_grace_periods += part.expedited_grace_periods;
    callbacks_invoked += part.callbacks_invoked;
    grace_period_ns.merge(part.grace_period_ns);
    expedited_grace_period_ns.merge(part.expedited_grace_period_ns);
}

void MemStats::merge(const MemStats &part) {
    live_bytes += part.live_bytes;
    peak_bytes = std::max(peak_bytes, part.peak_bytes);
    allocs_atomic += part.allocs_atomic;
    allocs_sleeping += part.allocs_sleeping;
    bytes_atomic += part.bytes_atomic;
    bytes_sleeping += part.bytes_sleeping;
    frees += part.frees;
}

void CpuStats::merge(const CpuStats &part) {
    busy_ns += part.busy_ns;
    context_switches += part.context_switches;
    preempt_off_ns += part.preempt_off_ns;
    irqs_off_ns += part.irqs_off_ns;
    irq_ns += part.irq_ns;
    softirq_ns += part.softirq_ns;
}

size_t RunResults::count_violations(std::string_view kind) const {
    return static_cast<size_t>(std::count_if(violations.begin(), violations.end(),
                                             [&](const Violation &v) { return v.kind == kind; }));
}

void to_json(nlohmann::json &j, const AtomicInterval &v) {
    j = {{"cpu", v.cpu},          {"start_ns", v.start}, {"length_ns", v.length},
         {"task", v.task},        {"label", v.label},    {"start_site", v.start_site},
         {"end_site", v.end_site}};
}

void to_json(nlohmann::json &j, const IntervalStats &v) {
    j = {{"length_ns", v.length},
         {"total_ns", v.total},
         {"longest", v.longest},
         {"open_at_end_ns", v.open_at_end}};
}

void to_json(nlohmann::json &j, const OpStats &v) {
    j = {{"completed", v.completed},
         {"latency_ns", v.latency},
         {"compute_ns", v.compute_ns},
         {"preempt_off_ns", v.preempt_off_ns},
         {"irqs_off_ns", v.irqs_off_ns},
         {"lock_wait_ns", v.lock_wait_ns},
         {"caused_wait_ns", v.caused_wait_ns},
         {"gp_wait_ns", v.gp_wait_ns},
         {"grace_periods", v.grace_periods},
         {"bytes_allocated", v.bytes_allocated},
         {"peak_live_bytes", v.peak_live_bytes},
         {"open_at_end_ns", v.open_at_end}};
    if (v.host_cpu_ns || v.host_preemptions) {  // measured on the host only
        j["host_cpu_ns"] = v.host_cpu_ns;
        j["host_preemptions"] = v.host_preemptions;
    }
}

void to_json(nlohmann::json &j, const LockStats &v) {
    auto side = [&](int i) {
        return nlohmann::json{{"acquisitions", v.acquisitions[i]},
                              {"contended", v.contended[i]},
                              {"wait_ns", v.wait[i]},
                              {"hold_ns", v.hold[i]},
                              {"wait_open_at_end_ns", v.wait_open_at_end[i]}};
    };
    j = {{"kind", v.kind}, {"exclusive", side(0)}, {"shared", side(1)}};
}

void to_json(nlohmann::json &j, const RcuStats &v) {
    j = {{"grace_periods", v.grace_periods},
         {"expedited_grace_periods", v.expedited_grace_periods},
         {"callbacks_invoked", v.callbacks_invoked},
         {"grace_period_ns", v.grace_period_ns},
         {"expedited_grace_period_ns", v.expedited_grace_period_ns}};
}

void to_json(nlohmann::json &j, const MemStats &v) {
    j = {{"live_bytes", v.live_bytes},
         {"peak_bytes", v.peak_bytes},
         {"allocs_atomic", v.allocs_atomic},
         {"allocs_sleeping", v.allocs_sleeping},
         {"bytes_atomic", v.bytes_atomic},
         {"bytes_sleeping", v.bytes_sleeping},
         {"frees", v.frees}};
}

void to_json(nlohmann::json &j, const CpuStats &v) {
    j = {{"busy_ns", v.busy_ns},
         {"context_switches", v.context_switches},
         {"preempt_off_ns", v.preempt_off_ns},
         {"irqs_off_ns", v.irqs_off_ns}};
    // Only runs with an interrupt load have these (other results keep their form).
    if (v.irq_ns > 0 || v.softirq_ns > 0) {
        j["irq_ns"] = v.irq_ns;
        j["softirq_ns"] = v.softirq_ns;
    }
}

const WakeupDelay *WakeupRecord::cause() const {
    const WakeupDelay *best = nullptr;
    for (const WakeupDelay &d : delays)
        if (!best || d.delayed_ns > best->delayed_ns) best = &d;
    return best;
}

void to_json(nlohmann::json &j, const WakeupDelay &v) {
    j = {{"kind", v.kind},        {"cpu", v.cpu},
         {"task", v.task},        {"label", v.label},
         {"site", v.site},        {"start_ns", v.start},
         {"length_ns", v.length}, {"delayed_ns", v.delayed_ns}};
    if (!v.via.empty()) j["via"] = v.via;
}

void to_json(nlohmann::json &j, const WakeupRecord &v) {
    j = {{"probe", v.probe},
         {"cpu", v.cpu},
         {"due_ns", v.due},
         {"late_ns", v.late},
         {"open_at_end", v.open_at_end},
         {"delays", v.delays}};
}

void from_json(const nlohmann::json &j, WakeupDelay &v) {
    j.at("kind").get_to(v.kind);
    j.at("cpu").get_to(v.cpu);
    j.at("task").get_to(v.task);
    j.at("label").get_to(v.label);
    j.at("site").get_to(v.site);
    j.at("start_ns").get_to(v.start);
    j.at("length_ns").get_to(v.length);
    j.at("delayed_ns").get_to(v.delayed_ns);
    v.via = j.value("via", std::string());
}

void from_json(const nlohmann::json &j, WakeupRecord &v) {
    j.at("probe").get_to(v.probe);
    j.at("cpu").get_to(v.cpu);
    j.at("due_ns").get_to(v.due);
    j.at("late_ns").get_to(v.late);
    j.at("open_at_end").get_to(v.open_at_end);
    j.at("delays").get_to(v.delays);
}

void to_json(nlohmann::json &j, const Violation &v) {
    j = {{"kind", v.kind},
         {"time_ns", v.time},
         {"cpu", v.cpu},
         {"task", v.task},
         {"message", v.message}};
}

void to_json(nlohmann::json &j, const MemoryStall &v) {
    j = {{"lines", v.lines}, {"llc_hits", v.llc_hits}, {"dram", v.dram}, {"stall_ns", v.stall_ns}};
    if (v.l2_hits) j["l2_hits"] = v.l2_hits;  // a profile with a first level
}

void to_json(nlohmann::json &j, const RunResults &v) {
    j = {{"schema_version", v.schema_version},
         {"platform", v.platform},
         {"config", v.config},
         {"duration_ns", v.duration_ns},
         {"seed", v.seed},
         {"events", v.events},
         {"ops", v.ops},
         {"wakeup_latency_ns", v.wakeup_latency},
         {"wakeup_open_at_end_ns", v.wakeup_open_at_end},
         {"preempt_off", v.preempt_off},
         {"irqs_off", v.irqs_off},
         {"locks", v.locks},
         {"rcu", v.rcu},
         {"memory", v.memory},
         {"cpus", v.cpus},
         {"compute_ns", v.compute_ns},
         {"violations", v.violations}};
    if (v.wakeup_causes_absent.empty())
        j["wakeup_worst"] = v.wakeup_worst;
    else
        j["wakeup_worst_absent"] = v.wakeup_causes_absent;
    if (v.cpu_held_absent.empty())
        j["cpu_held"] = {{"length_ns", v.cpu_held}, {"open_at_end_ns", v.cpu_held_open_at_end}};
    else
        j["cpu_held_absent"] = v.cpu_held_absent;
    if (!v.memory_stall.empty()) j["memory_stall"] = v.memory_stall;
    if (!v.workload_notes.empty()) j["workload_notes"] = v.workload_notes;
    if (!v.early_stop.metric.empty())
        j["early_stop"] = {{"metric", v.early_stop.metric},
                           {"value_ns", v.early_stop.value},
                           {"limit_ns", v.early_stop.limit},
                           {"at_ns", v.early_stop.at_ns}};
}

}  // namespace locksim::kernel
