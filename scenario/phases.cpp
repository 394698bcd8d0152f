#include "scenario/phases.h"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "util/params.h"
#include "workloads/catalog.h"

namespace locksim {

std::vector<PeriodicSource> periodic_sources(const Scenario &s) {
    std::vector<PeriodicSource> out;
    for (const WorkloadSpec &w : s.workloads) {
        const WorkloadInfo *info = find_workload_info(w.kind);
        if (!info || !info->period) continue;
        if (const int64_t period = info->period(w.params); period > 0)
            out.push_back({w.label, period, timer_jitter(w), w.kind == "probe"});
    }
    for (const sim::IrqSource &irq : s.machine.irqs)
        out.push_back({"irq " + irq.kind, irq.period(), irq.jitter, false});
    return out;
}

PhaseCover phase_cover(const PeriodicSource &x, const PeriodicSource &y, int64_t span_ns) {
    const int64_t shorter = std::min(x.period_ns, y.period_ns);
    const int64_t longer = std::max(x.period_ns, y.period_ns);
    const int64_t jitter = x.jitter_ns + y.jitter_ns;
    PhaseCover c;
    // Bins of the shorter period no narrower than the jitters (a wake-up moves that much) and
    // at most 64 of them.
    c.bins = std::max<int64_t>(1, std::min<int64_t>(64, shorter / std::max<int64_t>(1, jitter)));
    const int64_t events = span_ns / longer;
    c.possible = std::min(events, c.bins);
    std::set<int64_t> bins;
    for (int64_t k = 0; k < events && static_cast<int64_t>(bins.size()) < c.bins; ++k) {
        // The k-th event of the longer period, as a phase of the shorter one; with its jitter
        // it reaches the bin that ends `jitter` later too.
        const __int128 phase = static_cast<__int128>(k) * longer % shorter;
        for (const __int128 at : {phase, (phase + jitter) % shorter})
            bins.insert(static_cast<int64_t>(at * c.bins / shorter));
    }
    c.visited = static_cast<int64_t>(bins.size());
    return c;
}

std::string phase_lock_note(const Scenario &s) {
    const std::vector<PeriodicSource> sources = periodic_sources(s);
    const int64_t span = s.duration_ns - s.warmup_ns;
    std::string locked;
    for (const PeriodicSource &probe : sources) {
        if (!probe.probe) continue;
        for (const PeriodicSource &other : sources) {
            if (other.probe) continue;
            const PhaseCover c = phase_cover(probe, other, span);
            if (c.possible < 2 || 2 * c.visited > c.possible) continue;
            locked += fmt::format("{}{} every {} and {} every {} meet at {} of {} relative phases",
                                  locked.empty() ? "" : "; ", other.name,
                                  format_duration_ns(other.period_ns), probe.name,
                                  format_duration_ns(probe.period_ns), c.visited, c.possible);
        }
    }
    if (locked.empty()) return "";
    return fmt::format(
        "periods in step over the run: {}; the seed draws where they meet: run several seeds "
        "to explore the alignments",
        locked);
}

std::vector<std::string> phase_lock_notes(const std::vector<Scenario> &points) {
    std::vector<std::string> notes;
    for (const Scenario &p : points)
        if (std::string note = phase_lock_note(p);
            !note.empty() && std::find(notes.begin(), notes.end(), note) == notes.end())
            notes.push_back(std::move(note));
    return notes;
}

}  // namespace locksim
