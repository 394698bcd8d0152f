// ftrace's latency format (kernel/trace/trace_output.c and trace.c, print_trace_header(), as in
// Documentation/trace/ftrace.rst of Linux 6.x, "latency trace v1.1.5"): the latency tracers
// keep one trace, that of the largest latency seen (tracing_max_latency), headed by
//   # tracer: irqsoff
//   # irqsoff latency trace v1.1.5 on 6.8.0
//   # latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)
//   #    | task: ps-6143 (uid:0 nice:0 policy:0 rt_prio:0)
//   #  => started at: __lock_task_sighand        (irqsoff, preemptoff, preemptirqsoff only)
//   #  => ended at:   _raw_spin_unlock_irqrestore
// then the column legend ('#' lines) and the function trace, one event per line:
//   "  <comm>-<pid>  <cpu><flags>  <time>us<mark>: <function> <-<caller>"
// with " => symbol" lines of a stack trace among them. The tracer says which latency it is:
// preemptoff and preemptirqsoff measure a section with preemption off, irqsoff one with IRQs
// off, wakeup, wakeup_rt and wakeup_dl the time from waking the highest-priority task to its
// running (what cyclictest's thread sees). One file is one sample, its worst case; several
// files of one design make a histogram.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "analysis/measured/measurement.h"
#include "util/error.h"

namespace locksim::analysis::measured {

namespace {

enum class Kind { None, PreemptOff, IrqsOff, Wakeup };

Kind kind_of(std::string tracer) {
    std::transform(tracer.begin(), tracer.end(), tracer.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (tracer == "preemptoff" || tracer == "preemptirqsoff") return Kind::PreemptOff;
    if (tracer == "irqsoff") return Kind::IrqsOff;
    if (tracer == "wakeup" || tracer == "wakeup_rt" || tracer == "wakeup_dl") return Kind::Wakeup;
    return Kind::None;
}

std::string_view trim(std::string_view s) {
    size_t b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    size_t e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
}

// The number at the start of `s` (after blanks); npos when there is none.
bool leading_number(std::string_view s, uint64_t &value, size_t &used) {
    size_t b = s.find_first_not_of(' ');
    if (b == std::string_view::npos) return false;
    auto [ptr, ec] = std::from_chars(s.data() + b, s.data() + s.size(), value);
    if (ec != std::errc()) return false;
    used = static_cast<size_t>(ptr - s.data());
    return true;
}

struct Event {
    std::string task;  // comm-pid
    int cpu = -1;
    uint64_t time_us = 0;
    std::string text;  // after the colon
};

// "<comm>-<pid>  <cpu><flags>  <time>us<mark>: <text>"; false when the line is not one.
bool parse_event(std::string_view line, Event &e) {
    // The time stamp: digits, "us", one optional mark, then ':'.
    for (size_t u = line.find("us"); u != std::string_view::npos; u = line.find("us", u + 1)) {
        size_t b = u;
        while (b > 0 && std::isdigit(static_cast<unsigned char>(line[b - 1])))
            --b;
        if (b == u || b == 0 || line[b - 1] != ' ') continue;
        size_t c = u + 2;
        if (c < line.size() && line[c] != ':') ++c;  // the delay mark: ' ', '+', '!', '#' ...
        if (c >= line.size() || line[c] != ':') continue;
        auto [ptr, ec] = std::from_chars(line.data() + b, line.data() + u, e.time_us);
        if (ec != std::errc()) return false;
        std::string_view head = trim(line.substr(0, b));
        size_t sp = head.find_last_of(" \t");
        if (sp == std::string_view::npos) return false;
        e.task = std::string(trim(head.substr(0, sp)));
        std::string_view cpu = head.substr(sp + 1);
        uint64_t n = 0;
        size_t used = 0;
        if (e.task.empty() || !leading_number(cpu, n, used) || n > 1 << 20) return false;
        e.cpu = static_cast<int>(n);
        e.text = std::string(trim(line.substr(c + 1)));
        return true;
    }
    return false;
}

// The function an event's text names: "func <-caller" gives func; other records as they are.
std::string function_of(const std::string &text) {
    size_t arrow = text.find(" <-");
    return arrow == std::string::npos ? text : text.substr(0, arrow);
}

}  // namespace

Measurement parse_ftrace_latency(std::string_view text, const std::string &file) {
    Measurement m;
    m.file = file;
    m.format = "ftrace";
    std::string tracer, kernel, model, task, started, ended;
    size_t tracer_line = 0, latency_line = 0;
    uint64_t latency_us = 0, entries = 0, cpu = 0;
    bool have_cpu = false;
    std::vector<Event> events;
    const std::vector<std::string_view> lines = detail::split_lines(text);
    for (size_t k = 0; k < lines.size(); ++k) {
        const size_t ln = k + 1;
        const std::string_view raw = lines[k];
        const std::string_view line = trim(raw);
        // Columns are 1-based positions in the raw line (trim returns views into it).
        auto column = [&](std::string_view part) {
            return static_cast<size_t>(part.data() - raw.data()) + 1;
        };
        if (line.empty() || line.starts_with("=>")) continue;  // blank, or a stack-trace frame
        if (line[0] != '#') {
            Event e;
            if (!parse_event(line, e))
                detail::fail(
                    file, ln, column(line),
                    "not a trace event ('<comm>-<pid> <cpu><flags> <time>us: <function>')");
            events.push_back(std::move(e));
            continue;
        }
        std::string_view body = trim(line.substr(1));
        const size_t body_col = column(body);
        if (body.starts_with("tracer:")) {
            tracer = std::string(trim(body.substr(7)));
            tracer_line = ln;
        } else if (size_t at = body.find(" latency trace v"); at != std::string_view::npos) {
            if (tracer.empty()) {
                tracer = std::string(body.substr(0, at));
                tracer_line = ln;
            }
            if (size_t on = body.find(" on "); on != std::string_view::npos)
                kernel = std::string(trim(body.substr(on + 4)));
        } else if (body.starts_with("latency:")) {
            // "latency: 259 us, #4/4, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)"
            std::string_view rest = body.substr(8);
            size_t used = 0;
            if (!leading_number(rest, latency_us, used) ||
                !trim(rest.substr(used)).starts_with("us"))
                detail::fail(file, ln, body_col + 8, "expected 'latency: <n> us'");
            if (latency_us > 3'600'000'000ULL)
                detail::fail(file, ln, body_col + 8, "a latency past one hour");
            latency_line = ln;
            if (size_t h = rest.find('#'); h != std::string_view::npos) {
                size_t u = 0;
                uint64_t shown = 0;
                if (leading_number(rest.substr(h + 1), shown, u)) {
                    std::string_view after = rest.substr(h + 1 + u);
                    if (after.starts_with("/")) leading_number(after.substr(1), entries, u);
                }
            }
            if (size_t c = rest.find("CPU#"); c != std::string_view::npos) {
                size_t u = 0;
                have_cpu = leading_number(rest.substr(c + 4), cpu, u) && cpu < (1u << 20);
            }
            if (size_t mm = rest.find("(M:"); mm != std::string_view::npos) {
                std::string_view v = rest.substr(mm + 3);
                model = std::string(v.substr(0, v.find_first_of(" ,)")));
            }
        } else if (body.starts_with("| task:")) {
            std::string_view v = trim(body.substr(7));
            task = std::string(trim(v.substr(0, v.find(" ("))));
        } else if (body.starts_with("=> started at:")) {
            started = std::string(trim(body.substr(14)));
        } else if (body.starts_with("=> ended at:")) {
            ended = std::string(trim(body.substr(12)));
        }
    }
    if (!latency_line)
        detail::fail(file, std::max<size_t>(lines.size(), 1), 0,
                     "no '# latency: <n> us' line: not an ftrace latency trace (or truncated)");
    if (tracer.empty())
        detail::fail(file, 1, 0, "no '# tracer:' line: which latency it is is unknown");
    const Kind kind = kind_of(tracer);
    if (kind == Kind::None)
        detail::fail(file, tracer_line, 0,
                     fmt::format("tracer '{}' is not a latency tracer (preemptoff, "
                                 "preemptirqsoff, irqsoff, wakeup, wakeup_rt, wakeup_dl)",
                                 tracer));
    TracedInterval t;
    t.length_ns = static_cast<int64_t>(latency_us) * 1000;
    t.cpu = have_cpu ? static_cast<int>(cpu) : -1;
    t.task = task;
    // The first and last function calls ("f <-caller"), and the call after which the trace
    // waited longest: where the latency went.
    std::vector<const Event *> calls;
    for (const Event &e : events)
        if (e.text.find(" <-") != std::string::npos) calls.push_back(&e);
    if (!calls.empty()) {
        t.start_site = function_of(calls.front()->text);
        t.end_site = function_of(calls.back()->text);
    }
    uint64_t gap = 0;
    for (size_t i = 0; i + 1 < events.size(); ++i)
        if (events[i + 1].time_us >= events[i].time_us &&
            events[i + 1].time_us - events[i].time_us > gap) {
            gap = events[i + 1].time_us - events[i].time_us;
            t.longest_gap = fmt::format("{} ({} us)", function_of(events[i].text), gap);
        }
    if (!started.empty()) t.start_site = started;
    if (!ended.empty()) t.end_site = ended;
    if (kind == Kind::Wakeup) {
        // The first event is the wake-up itself, logged by the task then on the CPU.
        if (!events.empty()) t.running = events.front().task;
        t.label = t.running.empty() ? "wake-up" : "woken while " + t.running + " ran";
        detail::record(m.wakeup[task.empty() ? std::string("woken task") : task], t.length_ns, 1,
                       fmt::format("{}:{}", file, latency_line));
        m.wakeup_traced.push_back(t);
    } else {
        t.label = t.start_site.empty() ? tracer : t.start_site;
        kernel::Histogram &h = kind == Kind::PreemptOff ? m.preempt_off : m.irqs_off;
        detail::record(h, t.length_ns, 1, fmt::format("{}:{}", file, latency_line));
        (kind == Kind::PreemptOff ? m.preempt_off_traced : m.irqs_off_traced).push_back(t);
    }
    m.facts["tracer"] = tracer;
    if (!kernel.empty()) m.facts["kernel"] = kernel;
    if (!model.empty()) m.facts["preemption_model"] = model;
    m.facts["events"] = events.size();
    if (entries) m.facts["entries_recorded"] = entries;
    return m;
}

}  // namespace locksim::analysis::measured
