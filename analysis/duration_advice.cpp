#include "analysis/duration_advice.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "analysis/table.h"

namespace locksim::analysis {

namespace {

// The next duration of the form 1, 2 or 5 times a power of ten nanoseconds, at least `ns`.
int64_t round_up(double ns) {
    double step = 1;
    while (step * 10 <= ns)
        step *= 10;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * step >= ns) return static_cast<int64_t>(m * step);
    return static_cast<int64_t>(10 * step);
}

}  // namespace

std::vector<std::string> duration_advice(const RunCounts &c) {
    std::vector<std::string> out;
    const double measured = static_cast<double>(c.duration_ns - c.warmup_ns);
    if (measured <= 0) return out;
    auto advise = [&](double needed_measured_ns) {
        const int64_t d = round_up(static_cast<double>(c.warmup_ns) + needed_measured_ns);
        return fmt::format("run for at least {} (duration = \"{}\")", human_ns(d),
                           exact_duration(d));
    };
    const std::string span = human_ns(static_cast<int64_t>(measured));
    const double runs = static_cast<double>(std::max<size_t>(1, c.runs));
    const std::string seeds = c.runs > 1 ? fmt::format(" x {} seeds", c.runs) : "";
    // `pooled`: the seeds' counts add up (a worst case over them); else each run needs `needed`
    // on its own (a tail estimate is fitted to one run's histogram).
    auto too_few = [&](const char *what, double per_run, double needed, const char *why,
                       bool pooled) {
        const double over = pooled ? runs : 1;
        if (per_run * over >= needed) return;
        const double rate = per_run / measured;  // per ns of one run
        const std::string advice =
            rate > 0 ? advise(needed / over / rate) : std::string("run longer");
        if (pooled)
            out.push_back(
                fmt::format("too few {}: {:.0f} in the measured {}{}; {} needs at least {:.0f}: {}",
                            what, per_run * over, span, seeds, why, needed, advice));
        else
            out.push_back(fmt::format(
                "too few {}: {:.0f} per run in the measured {}; {}, made per run, needs at least "
                "{:.0f}: {}",
                what, per_run, span, why, needed, advice));
    };
    if (c.commits) too_few("boolean commits", *c.commits, kMinCommits, "a worst commit", true);
    if (c.probe_wakeups && !c.held_stretches)
        too_few("probe wake-ups", *c.probe_wakeups, kMinWakeups, "the tail estimate", false);
    if (c.worst_open_at_end) {
        out.push_back(fmt::format(
            "the worst section or commit ({} so far) was still running when the run ended: {}",
            human_ns(c.worst_section_ns), advise(10.0 * static_cast<double>(c.worst_section_ns))));
    } else if (static_cast<double>(c.worst_section_ns) * 10 > measured) {
        out.push_back(fmt::format(
            "the worst section or commit ({}) is longer than a tenth of the measured {}: {}",
            human_ns(c.worst_section_ns), span,
            advise(10.0 * static_cast<double>(c.worst_section_ns))));
    }
    return out;
}

}  // namespace locksim::analysis
