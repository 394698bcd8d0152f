#include "analysis/pick.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "analysis/table.h"
#include "util/error.h"
#include "util/params.h"

namespace locksim::analysis {

namespace {

// The worst figures of one design over all its runs.
struct Worst {
    int64_t preempt_off = 0, irqs_off = 0, probe = 0, toggle = 0, reader_p99 = 0, memory = 0;
    double ops_per_sec = -1;
    uint64_t violations = 0;
};

struct Check {
    const char *what;
    std::optional<int64_t> limit;
    int64_t value;
    bool bytes;
};

}  // namespace

Pick pick(const std::vector<RunSummary> &runs, const Limits &limits) {
    std::map<std::string, Worst> worst;
    std::vector<std::string> order;
    for (const auto &r : runs) {
        if (!worst.count(r.label)) order.push_back(r.label);
        Worst &w = worst[r.label];
        w.preempt_off = std::max(w.preempt_off, r.preempt_off_max_ns);
        w.irqs_off = std::max(w.irqs_off, r.irqs_off_max_ns);
        w.probe = std::max(w.probe, r.probe_max_ns);
        w.toggle = std::max(w.toggle, r.toggle_max_ns);
        w.reader_p99 = std::max(w.reader_p99, r.reader_p99_ns);
        w.memory = std::max(w.memory, r.peak_memory_bytes);
        w.ops_per_sec = w.ops_per_sec < 0 ? r.ops_per_sec : std::min(w.ops_per_sec, r.ops_per_sec);
        w.violations += r.violations;
    }
    Pick p;
    for (const auto &label : order) {
        const Worst &w = worst[label];
        Verdict v{label, true, 0, std::max(0.0, w.ops_per_sec), {}, w.violations};
        const Check checks[] = {
            {"preempt-off", limits.max_preempt_off_ns, w.preempt_off, false},
            {"irqs-off", limits.max_irqs_off_ns, w.irqs_off, false},
            {"probe wake-up", limits.max_probe_wakeup_ns, w.probe, false},
            {"toggle", limits.max_toggle_ns, w.toggle, false},
            {"reader p99", limits.max_reader_p99_ns, w.reader_p99, false},
            {"memory", limits.max_memory_bytes, w.memory, true},
        };
        for (const auto &c : checks) {
            if (!c.limit) continue;
            double ratio = *c.limit > 0
                               ? static_cast<double>(c.value) / static_cast<double>(*c.limit)
                               : (c.value > 0 ? 1e9 : 0);
            v.worst_ratio = std::max(v.worst_ratio, ratio);
            auto show = [&](int64_t x) { return c.bytes ? human_bytes(x) : human_ns(x); };
            bool over = c.value > *c.limit;
            v.meets = v.meets && !over;
            v.why.push_back(fmt::format("{} {} {} {} ({:.2f}x of the limit)", c.what, show(c.value),
                                        over ? ">" : "<=", show(*c.limit), ratio));
        }
        if (w.violations) {
            v.meets = false;
            v.why.push_back(fmt::format("{} self-check violation{} (a broken design)", w.violations,
                                        w.violations == 1 ? "" : "s"));
        }
        p.ranked.push_back(std::move(v));
    }
    std::stable_sort(p.ranked.begin(), p.ranked.end(), [](const Verdict &a, const Verdict &b) {
        if (a.meets != b.meets) return a.meets;
        if ((a.violations == 0) != (b.violations == 0)) return a.violations == 0;
        if (a.worst_ratio != b.worst_ratio) return a.worst_ratio < b.worst_ratio;
        return a.ops_per_sec > b.ops_per_sec;
    });
    return p;
}

std::string format_pick(const Pick &p, const Limits &limits) {
    std::vector<std::string> given;
    if (limits.max_preempt_off_ns)
        given.push_back("preempt-off <= " + human_ns(*limits.max_preempt_off_ns));
    if (limits.max_irqs_off_ns) given.push_back("irqs-off <= " + human_ns(*limits.max_irqs_off_ns));
    if (limits.max_probe_wakeup_ns)
        given.push_back("probe wake-up <= " + human_ns(*limits.max_probe_wakeup_ns));
    if (limits.max_toggle_ns) given.push_back("toggle <= " + human_ns(*limits.max_toggle_ns));
    if (limits.max_reader_p99_ns)
        given.push_back("reader p99 <= " + human_ns(*limits.max_reader_p99_ns));
    if (limits.max_memory_bytes)
        given.push_back("memory <= " + human_bytes(*limits.max_memory_bytes));
    std::string out = "limits: ";
    for (size_t i = 0; i < given.size(); ++i)
        out += (i ? ", " : "") + given[i];
    if (given.empty()) out += "(none: ranked by self-checks, then throughput)";
    out += "\n";
    if (p.ranked.empty()) return out + "no runs to judge\n";
    if (p.any_meets()) {
        out += fmt::format("pick: {}\n", p.ranked.front().label);
    } else {
        const Verdict *closest = nullptr;
        for (const auto &v : p.ranked)
            if (v.violations == 0) {
                closest = &v;
                break;
            }
        out += "pick: none of the designs meets every limit";
        out += closest ? fmt::format("; the closest is {}\n", closest->label) : "\n";
    }
    int rank = 1;
    for (const auto &v : p.ranked) {
        out += fmt::format("{:>2}. {:<24} {}  {:.0f} ops/s\n", rank++, v.label,
                           v.meets ? "meets the limits" : "over a limit    ", v.ops_per_sec);
        for (const auto &why : v.why)
            out += "      " + why + "\n";
    }
    return out;
}

int64_t parse_limit_ns(const std::string &option, const std::string &text) {
    std::string why;
    auto ns = parse_duration_ns(text, &why);
    if (!ns)
        throw UserError(fmt::format("{}: '{}' is {} (like 100us, 10ms, 1s)", option, text, why));
    return *ns;
}

int64_t parse_limit_bytes(const std::string &option, const std::string &text) {
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    std::string unit(ptr, text.data() + text.size());
    double scale = unit.empty() || unit == "B"    ? 1
                   : unit == "K" || unit == "KiB" ? 1024.0
                   : unit == "M" || unit == "MiB" ? 1024.0 * 1024
                   : unit == "G" || unit == "GiB" ? 1024.0 * 1024 * 1024
                                                  : -1;
    if (ec != std::errc() || ptr == text.data() || scale < 0 || number < 0)
        throw UserError(fmt::format("{}: '{}' is not a size (like 512M, 2G, 4096)", option, text));
    return static_cast<int64_t>(number * scale);
}

}  // namespace locksim::analysis
