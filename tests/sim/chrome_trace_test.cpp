// The timeline export: a small simulated run with every kind of span, written as a Chrome
// trace-event file, read back, and checked for the format and for nesting on every track.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernel/rcu.h"
#include "kernel/rwlock.h"
#include "kernel/rwsem.h"
#include "kernel/spinlock.h"
#include "record/run_results.h"
#include "sim/chrome_trace.h"
#include "sim/sim_platform.h"
#include "tests/temp_dir.h"
#include "util/error.h"

using namespace locksim;
using namespace locksim::kernel;
using nlohmann::json;
using sim::SimConfig;
using sim::SimPlatform;
using sim::TraceOptions;

namespace {

struct Span {
    int pid, tid;
    Time start, end;
    std::string name, cat;
    json args;
};

SimConfig small_config() {
    SimConfig c;
    c.cpus = 4;
    c.duration = 20 * kMsec;
    c.hz = 1000;
    c.seed = 7;
    return c;  // default primitive costs: switches, wake-ups and IPIs take time
}

// Readers under an rwlock and an rwsem, a writer with write_lock_irq, an RCU updater with both
// grace-period kinds, and a FIFO probe: all finish well before the end of the run. Readers and
// writer run at once on their own CPUs, so they contend.
void add_tasks(SimPlatform &sim, RwLock &rw, RwSem &sem, Spinlock &spin) {
    for (int i = 0; i < 3; ++i)
        sim.create_task({"reader" + std::to_string(i), Sched::Other, 0, i, false}, [&] {
            for (int k = 0; k < 20; ++k) {
                OpScope op(Label("read_op"));
                read_lock(rw);
                ndelay(30 * kUsec);
                read_unlock(rw);
                down_read(sem);
                ndelay(20 * kUsec);
                up_read(sem);
                rcu_read_lock();
                ndelay(10 * kUsec);
                rcu_read_unlock();
                spin_lock(spin);
                ndelay(3 * kUsec);
                spin_unlock(spin);
            }
        });
    sim.create_task({"writer", Sched::Other, 0, 3, false}, [&] {
        for (int k = 0; k < 3; ++k) {
            OpScope op(Label("write_op"));
            write_lock_irq(rw);
            ndelay(80 * kUsec);
            write_unlock_irq(rw);
            down_write(sem);
            ndelay(50 * kUsec);
            up_write(sem);
            synchronize_rcu();
            synchronize_rcu_expedited();
        }
    });
    sim.create_task({"probe", Sched::Fifo, 90, -1, true}, [&] {
        for (Time t = 100 * kUsec; t < 8 * kMsec; t += 250 * kUsec)
            sleep_until(t);
    });
}

struct Traced {
    RunResults results;
    json trace;
    size_t dropped = 0;
};

Traced run_traced(const TraceOptions &opts) {
    SimPlatform sim(small_config());
    RwLock rw("policy_rwlock", sim);
    RwSem sem("policy_rwsem", sim);
    Spinlock spin("avc_slot", sim);
    add_tasks(sim, rw, sem, spin);
    auto rec = sim::enable_chrome_trace(sim, opts);
    Traced t;
    t.results = sim.run();
    // A directory of the test's own: ctest runs the tests of this file in parallel.
    const locksim::testing::TestTempDir dir;
    const auto path = dir / "trace.json";
    sim::write_chrome_trace(*rec, path.string());
    std::ifstream in(path);
    t.trace = json::parse(in);  // throws (fails the test) when the file is not JSON

    t.dropped = rec->dropped();
    return t;
}

Time ns(const json &us) {
    return static_cast<Time>(std::llround(us.get<double>() * 1000.0));
}

// Checks the trace-event format and returns the complete ("X") events.
std::vector<Span> spans_of(const json &trace) {
    EXPECT_TRUE(trace.is_object());
    EXPECT_TRUE(trace.at("traceEvents").is_array());
    EXPECT_EQ(trace.value("displayTimeUnit", ""), "ns");
    std::vector<Span> out;
    for (const json &e : trace.at("traceEvents")) {
        std::string ph = e.at("ph");
        EXPECT_TRUE(e.at("pid").is_number_integer());
        EXPECT_TRUE(e.at("tid").is_number_integer());
        EXPECT_TRUE(e.at("name").is_string());
        if (ph == "M") {
            EXPECT_TRUE(e.at("args").is_object());
            continue;
        }
        EXPECT_EQ(ph, "X");
        EXPECT_TRUE(e.at("ts").is_number());
        EXPECT_GE(e.at("dur").get<double>(), 0.0);
        Time s = ns(e.at("ts"));
        out.push_back({e["pid"], e["tid"], s, s + ns(e.at("dur")), e["name"], e.value("cat", ""),
                       e.value("args", json::object())});
    }
    return out;
}

// On every track, a span that starts inside another ends inside it too. Returns the number of
// violations and fills `parent` with each span's enclosing span on its track (or -1).
int check_nesting(const std::vector<Span> &spans, std::vector<int> *parent) {
    std::map<std::pair<int, int>, std::vector<int>> tracks;
    for (size_t i = 0; i < spans.size(); ++i)
        tracks[{spans[i].pid, spans[i].tid}].push_back(static_cast<int>(i));
    parent->assign(spans.size(), -1);
    int bad = 0;
    for (auto &[key, ids] : tracks) {
        std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
            return spans[a].start != spans[b].start ? spans[a].start < spans[b].start
                                                    : spans[a].end > spans[b].end;
        });
        std::vector<int> stack;
        for (int i : ids) {
            // Spans that ended before this one starts are closed (a zero-length span at the
            // very end of another may sit inside it).
            auto closed = [&](const Span &top) {
                return top.end < spans[i].start ||
                       (top.end == spans[i].start && spans[i].end > spans[i].start);
            };
            while (!stack.empty() && closed(spans[stack.back()]))
                stack.pop_back();
            if (!stack.empty()) {
                if (spans[i].end > spans[stack.back()].end) {
                    ADD_FAILURE() << "on track " << key.first << "/" << key.second << " '"
                                  << spans[i].name << "' [" << spans[i].start << ", "
                                  << spans[i].end << "] crosses '" << spans[stack.back()].name
                                  << "' [" << spans[stack.back()].start << ", "
                                  << spans[stack.back()].end << "]";
                    ++bad;
                    continue;
                }
                (*parent)[static_cast<size_t>(i)] = stack.back();
            }
            stack.push_back(i);
        }
    }
    return bad;
}

std::string track_name(const json &trace, int pid, int tid) {
    for (const json &e : trace["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid && e["tid"] == tid)
            return e["args"]["name"];
    return "";
}

}  // namespace

TEST(ChromeTrace, ValidEventsThatNestPerCpu) {
    Traced t = run_traced(TraceOptions{});
    ASSERT_TRUE(t.results.violations.empty()) << t.results.violations.front().message;
    std::vector<Span> spans = spans_of(t.trace);
    std::vector<int> parent;
    EXPECT_EQ(check_nesting(spans, &parent), 0);

    std::map<std::string, int> cats;
    Time preempt_total = 0, irqs_total = 0;
    size_t preempt_count = 0, irqs_count = 0, spin_waits = 0, sleep_waits = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
        const Span &s = spans[i];
        ++cats[s.cat];
        std::string track = track_name(t.trace, s.pid, s.tid);
        EXPECT_FALSE(track.empty()) << "no name for the track of " << s.name;
        if (s.cat == "preempt_off") {
            ++preempt_count;
            preempt_total += s.end - s.start;
            // A preempt-off section lies inside a slice of its own task on its CPU.
            ASSERT_GE(parent[i], 0) << s.name << " at " << s.start << " has no task slice";
            const Span &p = spans[static_cast<size_t>(parent[i])];
            EXPECT_EQ(p.cat, "sched");
            EXPECT_EQ(p.name, s.args.at("task").get<std::string>());
            EXPECT_EQ(track.rfind("CPU ", 0), 0u);
        } else if (s.cat == "irqs_off") {
            ++irqs_count;
            irqs_total += s.end - s.start;
            EXPECT_NE(track.find("irqs-off"), std::string::npos);
        } else if (s.cat == "lock_wait" && s.name.rfind("spin ", 0) == 0) {
            ++spin_waits;
            // A spinning waiter spins with preemption off.
            ASSERT_GE(parent[i], 0);
            EXPECT_EQ(spans[static_cast<size_t>(parent[i])].cat, "preempt_off");
        } else if (s.cat == "lock_wait") {
            ++sleep_waits;
            EXPECT_EQ(s.args.at("lock"), "policy_rwsem");
            EXPECT_EQ(track, s.args.at("task").get<std::string>());
        }
    }
    // Every section the platform measured is on the timeline, with the same total length.
    EXPECT_EQ(preempt_count, t.results.preempt_off.length.count());
    EXPECT_EQ(preempt_total, t.results.preempt_off.total);
    EXPECT_EQ(irqs_count, t.results.irqs_off.length.count());
    EXPECT_EQ(irqs_total, t.results.irqs_off.total);
    EXPECT_GT(cats["sched"], 0);
    EXPECT_GT(preempt_count, 0u);
    EXPECT_GT(irqs_count, 0u);
    EXPECT_GT(spin_waits, 0u);
    EXPECT_GT(sleep_waits, 0u);
    // Grace periods (normal and expedited) and the writer's waits for them.
    uint64_t gps = t.results.rcu.grace_periods + t.results.rcu.expedited_grace_periods;
    size_t gp_spans = 0, gp_waits = 0;
    for (const Span &s : spans) {
        if (s.cat == "rcu" && s.name.find("grace period") != std::string::npos) ++gp_spans;
        if (s.name == "synchronize_rcu") ++gp_waits;
    }
    EXPECT_EQ(gp_spans, gps);
    EXPECT_EQ(gp_waits, 6u);
    EXPECT_EQ(t.trace["otherData"]["dropped_events"], 0);
}

TEST(ChromeTrace, RecordingChangesNothing) {
    auto plain = [] {
        SimPlatform sim(small_config());
        RwLock rw("policy_rwlock", sim);
        RwSem sem("policy_rwsem", sim);
        Spinlock spin("avc_slot", sim);
        add_tasks(sim, rw, sem, spin);
        return json(sim.run()).dump();
    };
    Traced t = run_traced(TraceOptions{});
    EXPECT_EQ(json(t.results).dump(), plain());
}

TEST(ChromeTrace, WindowClipsAndCapBounds) {
    TraceOptions window;
    window.from = 1 * kMsec;
    window.to = 2 * kMsec;
    Traced w = run_traced(window);
    std::vector<Span> spans = spans_of(w.trace);
    ASSERT_FALSE(spans.empty());
    for (const Span &s : spans) {
        EXPECT_GE(s.start, window.from) << s.name;
        EXPECT_LE(s.end, window.to) << s.name;
    }
    std::vector<int> parent;
    EXPECT_EQ(check_nesting(spans, &parent), 0);

    TraceOptions cap;
    cap.max_events = 10;
    Traced c = run_traced(cap);
    EXPECT_EQ(spans_of(c.trace).size(), 10u);
    EXPECT_GT(c.dropped, 0u);
    EXPECT_EQ(c.trace["otherData"]["dropped_events"], c.dropped);
}

TEST(ChromeTrace, BadOptionsAreUserErrors) {
    SimPlatform sim(small_config());
    TraceOptions empty;
    empty.from = 5 * kMsec;
    empty.to = 5 * kMsec;
    EXPECT_THROW(sim::enable_chrome_trace(sim, empty), UserError);
    TraceOptions none;
    none.max_events = 0;
    EXPECT_THROW(sim::enable_chrome_trace(sim, none), UserError);
    sim::ChromeTraceRecorder rec(TraceOptions{}, 1);
    EXPECT_THROW(rec.write("/nonexistent-dir/trace.json"), UserError);
}

// The window around the worst probe wake-up is what a trace of that window alone holds: the
// recorder kept every slice a later wake-up could need, and started over at each new worst.
TEST(ChromeTrace, WorstWakeupWindowHoldsWhatATraceOfThatWindowHolds) {
    const Time margin = 300 * kUsec;
    TraceOptions worst;
    worst.worst_wakeup_margin = margin;
    Traced w = run_traced(worst);
    ASSERT_FALSE(w.results.wakeup_worst.empty());
    const WakeupRecord &top = w.results.wakeup_worst.front();
    const json &named = w.trace["otherData"]["worst_wakeup"];
    EXPECT_EQ(named["due_ns"], top.due);
    EXPECT_EQ(named["late_ns"], top.late);
    TraceOptions window;
    window.from = std::max<Time>(0, top.due - margin);
    window.to = top.due + top.late + margin;
    Traced f = run_traced(window);
    EXPECT_EQ(w.trace["traceEvents"], f.trace["traceEvents"]);
    // The wake-up itself, from due to run, with its cause.
    const std::vector<Span> spans = spans_of(w.trace);
    const auto it = std::find_if(spans.begin(), spans.end(), [&](const Span &s) {
        return s.cat == "wakeup" && s.start == top.due && s.end == top.due + top.late;
    });
    ASSERT_NE(it, spans.end());
    EXPECT_EQ(it->args.at("cause"), top.cause() ? top.cause()->kind : "on time");
    EXPECT_EQ(it->args.at("late_ns"), std::to_string(top.late));
    // Less than the whole run.
    EXPECT_LT(spans.size(), spans_of(run_traced(TraceOptions{}).trace).size());
}
