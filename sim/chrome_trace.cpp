#include "sim/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/sim_platform.h"
#include "util/error.h"

namespace locksim::sim {

namespace {

constexpr int kCpuPid = 1;
constexpr int kTaskPid = 2;
constexpr int kRcuPid = 3;

// The format's unit is the microsecond; nanoseconds become three decimals.
double micros(kernel::Time ns) {
    return static_cast<double>(ns) / 1000.0;
}

nlohmann::json metadata(const char *what, int pid, int tid, nlohmann::json args) {
    return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

ChromeTraceRecorder::ChromeTraceRecorder(TraceOptions options, int cpus)
    : opts_(options), running_(static_cast<size_t>(std::max(cpus, 0))) {
    if (opts_.to <= opts_.from)
        throw UserError(fmt::format("trace window: the end ({} ns) must be after the start ({} ns)",
                                    opts_.to, opts_.from));
    if (opts_.max_events == 0) throw UserError("trace: the event cap must be at least 1");
}

void ChromeTraceRecorder::add(Slice s) {
    if (opts_.worst_wakeup_margin > 0) {
        recent_.push_back(s);
        if (worst_.late < 0) return;  // no window yet
    }
    keep(std::move(s));
}

void ChromeTraceRecorder::keep(Slice s) {
    if (s.end < opts_.from || s.start > opts_.to) return;
    s.start = std::max(s.start, opts_.from);
    s.end = std::min(s.end, opts_.to);
    if (slices_.size() >= opts_.max_events) {
        ++dropped_;
        return;
    }
    slices_.push_back(std::move(s));
}

int ChromeTraceRecorder::task_track(int task_id, std::string_view task) {
    auto i = static_cast<size_t>(task_id);
    if (i >= task_names_.size()) task_names_.resize(i + 1);
    if (task_names_[i].empty()) task_names_[i] = std::string(task);
    return task_id;
}

void ChromeTraceRecorder::cpu_switch(int cpu, kernel::Time at, int task_id, std::string_view task) {
    Running &r = running_.at(static_cast<size_t>(cpu));
    if (r.task == task_id && task_id >= 0) return;
    if (r.task >= 0 && at > r.since) add(Slice{kCpuPid, 2 * cpu, r.since, at, r.name, "sched", {}});
    r.task = task_id;
    r.since = at;
    r.name = task_id >= 0 ? std::string(task) : std::string();
}

void ChromeTraceRecorder::atomic_section(int cpu, bool irqs, kernel::Time start, kernel::Time end,
                                         std::string_view task, std::string_view label,
                                         std::string_view start_site, std::string_view end_site) {
    std::string name = irqs ? "irqs-off" : "preempt-off";
    if (!label.empty()) name += fmt::format(" {}", label);
    add(Slice{kCpuPid,
              2 * cpu + (irqs ? 1 : 0),
              start,
              end,
              std::move(name),
              irqs ? "irqs_off" : "preempt_off",
              {{"task", std::string(task)},
               {"operation", std::string(label)},
               {"from", std::string(start_site)},
               {"to", std::string(end_site)},
               {"length_ns", std::to_string(end - start)}}});
}

void ChromeTraceRecorder::lock_wait(int cpu, int task_id, std::string_view task,
                                    std::string_view lock, bool exclusive, kernel::Time start,
                                    kernel::Time end) {
    bool spinning = cpu >= 0;
    int pid = spinning ? kCpuPid : kTaskPid;
    int tid = spinning ? 2 * cpu : task_track(task_id, task);
    add(Slice{pid,
              tid,
              start,
              end,
              fmt::format("{} {}", spinning ? "spin" : "wait", lock),
              "lock_wait",
              {{"task", std::string(task)},
               {"lock", std::string(lock)},
               {"mode", exclusive ? "exclusive" : "shared"},
               {"wait_ns", std::to_string(end - start)}}});
}

void ChromeTraceRecorder::grace_period(uint64_t id, bool expedited, kernel::Time start,
                                       kernel::Time end) {
    int tid = 0;
    if (expedited) {
        // Completions arrive in time order, so a lane whose last period ended by `start` is free.
        size_t lane = 0;
        while (lane < exp_lanes_.size() && exp_lanes_[lane] > start)
            ++lane;
        if (lane == exp_lanes_.size()) exp_lanes_.push_back(end);
        exp_lanes_[lane] = end;
        tid = 1 + static_cast<int>(lane);
    } else {
        normal_gps_ = true;
    }
    add(Slice{kRcuPid,
              tid,
              start,
              end,
              fmt::format("{}grace period {}", expedited ? "expedited " : "", id),
              "rcu",
              {{"length_ns", std::to_string(end - start)}}});
}

void ChromeTraceRecorder::gp_wait(int task_id, std::string_view task, kernel::Time start,
                                  kernel::Time end) {
    add(Slice{kTaskPid,
              task_track(task_id, task),
              start,
              end,
              "synchronize_rcu",
              "rcu",
              {{"task", std::string(task)}, {"wait_ns", std::to_string(end - start)}}});
}

void ChromeTraceRecorder::probe_wakeup(int task_id, const kernel::WakeupRecord &w,
                                       kernel::Time horizon) {
    const kernel::Time ran = w.due + w.late;
    const kernel::Time margin = opts_.worst_wakeup_margin;
    if (margin > 0 && w.late > worst_.late) {
        worst_ = w;
        opts_.from = std::max<kernel::Time>(0, w.due - margin);
        opts_.to = ran + margin;
        slices_.clear();
        dropped_ = 0;
        for (const Slice &s : recent_)
            keep(s);
    }
    std::vector<std::pair<const char *, std::string>> args = {{"late_ns", std::to_string(w.late)},
                                                              {"cpu", std::to_string(w.cpu)}};
    if (const kernel::WakeupDelay *d = w.cause()) {
        args.insert(args.end(), {{"cause", d->kind},
                                 {"held_by", d->task},
                                 {"operation", d->label},
                                 {"site", d->site},
                                 {"delayed_ns", std::to_string(d->delayed_ns)}});
    } else {
        args.emplace_back("cause", "on time");
    }
    add(Slice{kTaskPid, task_track(task_id, w.probe), w.due, ran,
              fmt::format("wake-up {} ns late", w.late), "wakeup", std::move(args)});
    // A later wake-up's window starts no earlier than the margin before the horizon.
    while (margin > 0 && !recent_.empty() && recent_.front().end < horizon - margin)
        recent_.pop_front();
}

void ChromeTraceRecorder::finish(kernel::Time at) {
    for (size_t c = 0; c < running_.size(); ++c)
        cpu_switch(static_cast<int>(c), at, -1, {});
}

nlohmann::json ChromeTraceRecorder::to_json() const {
    using nlohmann::json;
    json events = json::array();
    auto process = [&](int pid, const char *name) {
        events.push_back(metadata("process_name", pid, 0, {{"name", name}}));
        events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", pid}}));
    };
    auto thread = [&](int pid, int tid, const std::string &name) {
        events.push_back(metadata("thread_name", pid, tid, {{"name", name}}));
        events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    };
    process(kCpuPid, "CPUs");
    for (size_t c = 0; c < running_.size(); ++c) {
        thread(kCpuPid, static_cast<int>(2 * c), fmt::format("CPU {}", c));
        thread(kCpuPid, static_cast<int>(2 * c + 1), fmt::format("CPU {} irqs-off", c));
    }
    process(kTaskPid, "tasks");
    for (size_t t = 0; t < task_names_.size(); ++t)
        if (!task_names_[t].empty()) thread(kTaskPid, static_cast<int>(t), task_names_[t]);
    process(kRcuPid, "RCU");
    if (normal_gps_) thread(kRcuPid, 0, "grace periods");
    for (size_t l = 0; l < exp_lanes_.size(); ++l)
        thread(kRcuPid, static_cast<int>(l + 1), fmt::format("expedited grace periods {}", l));

    // Sorted by start, longer first at equal starts, so that parents precede their children.
    std::vector<const Slice *> order;
    order.reserve(slices_.size());
    for (const Slice &s : slices_)
        order.push_back(&s);
    std::stable_sort(order.begin(), order.end(), [](const Slice *a, const Slice *b) {
        return a->start != b->start ? a->start < b->start : a->end > b->end;
    });
    for (const Slice *s : order) {
        json args = json::object();
        for (const auto &[k, v] : s->args)
            args[k] = v;
        events.push_back({{"ph", "X"},
                          {"pid", s->pid},
                          {"tid", s->tid},
                          {"ts", micros(s->start)},
                          {"dur", micros(s->end - s->start)},
                          {"name", s->name},
                          {"cat", s->cat},
                          {"args", std::move(args)}});
    }
    json other = {{"generator", "locksim"},       {"cpus", running_.size()},
                  {"window_from_ns", opts_.from}, {"events", slices_.size()},
                  {"dropped_events", dropped_},   {"max_events", opts_.max_events}};
    if (opts_.to != std::numeric_limits<kernel::Time>::max()) other["window_to_ns"] = opts_.to;
    if (opts_.worst_wakeup_margin > 0)
        other["worst_wakeup"] = worst_.late < 0 ? json(nullptr)
                                                : json{{"probe", worst_.probe},
                                                       {"due_ns", worst_.due},
                                                       {"late_ns", worst_.late},
                                                       {"margin_ns", opts_.worst_wakeup_margin}};
    return {{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ns"},
            {"otherData", std::move(other)}};
}

void ChromeTraceRecorder::write(const std::string &path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("{}: cannot write the trace file", path));
    // One event per line: small enough to read, and every viewer parses it.
    nlohmann::json j = to_json();
    out << "{\"traceEvents\": [\n";
    const auto &ev = j["traceEvents"];
    for (size_t i = 0; i < ev.size(); ++i)
        out << ev[i].dump() << (i + 1 < ev.size() ? ",\n" : "\n");
    out << "],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": " << j["otherData"].dump() << "}\n";
    if (!out) throw UserError(fmt::format("{}: write failed", path));
}

std::unique_ptr<ChromeTraceRecorder> enable_chrome_trace(SimPlatform &sim,
                                                         const TraceOptions &options) {
    auto rec = std::make_unique<ChromeTraceRecorder>(options, sim.config().cpus);
    sim.set_trace_recorder(rec.get());
    return rec;
}

void write_chrome_trace(const ChromeTraceRecorder &recorder, const std::string &path) {
    recorder.write(path);
}

}  // namespace locksim::sim
