#include "analysis/toggle_cost.h"

#include <fmt/format.h>

#include "record/op_names.h"
namespace locksim::analysis {

ToggleCost toggle_cost(const kernel::RunResults &r) {
    ToggleCost c;
    auto it = r.ops.find(kernel::op::kSetBools);
    if (it == r.ops.end() || it->second.completed == 0) return c;
    const kernel::OpStats &s = it->second;
    // Per commit: over the commits that completed (a commit still open at the end is left out).
    const auto n = static_cast<int64_t>(s.completed);
    c.toggles = s.completed;
    c.latency_ns = s.completed_mean();
    c.max_latency_ns = s.latency.max();
    c.compute_ns = s.compute_ns / n;
    c.caused_wait_ns = s.caused_wait_ns / n;
    c.writer_lock_wait_ns = s.lock_wait_ns / n;
    c.preempt_off_ns = s.preempt_off_ns / n;
    c.irqs_off_ns = s.irqs_off_ns / n;
    c.gp_wait_ns = s.gp_wait_ns / n;
    c.grace_periods = static_cast<double>(s.grace_periods) / static_cast<double>(n);
    c.bytes_allocated = s.bytes_allocated / n;
    c.peak_live_bytes = s.peak_live_bytes;
    if (auto rf = r.ops.find(kernel::op::kAvcRefill); rf != r.ops.end()) {
        c.refill_misses = rf->second.completed / s.completed;
        c.refill_ns = rf->second.latency.sum() / n;
    }
    return c;
}

std::string toggle_cost_table(const std::vector<std::pair<std::string, ToggleCost>> &rows) {
    auto us = [](Time ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1e3); };
    auto kib = [](int64_t b) { return fmt::format("{:.0f}", static_cast<double>(b) / 1024.0); };
    std::string out = fmt::format(
        "{:<34} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>4} {:>9} {:>10} {:>7} "
        "{:>9}\n",
        "strategy", "toggles", "lat_us", "max_us", "work_us", "caused_us", "wwait_us", "poff_us",
        "ioff_us", "gp_us", "gps", "alloc_KiB", "peak_KiB", "refill", "refill_us");
    for (const auto &[name, c] : rows)
        out += fmt::format(
            "{:<34} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>4.1f} {:>9} {:>10} "
            "{:>7} {:>9}\n",
            name, c.toggles, us(c.latency_ns), us(c.max_latency_ns), us(c.compute_ns),
            us(c.caused_wait_ns), us(c.writer_lock_wait_ns), us(c.preempt_off_ns),
            us(c.irqs_off_ns), us(c.gp_wait_ns), c.grace_periods, kib(c.bytes_allocated),
            kib(c.peak_live_bytes), c.refill_misses, us(c.refill_ns));
    return out;
}

}  // namespace locksim::analysis
