// The limits `pick` and `report` judge designs by, as command-line options.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "analysis/pick.h"

namespace locksim::cli {

struct LimitArgs {
    std::string preempt_off, irqs_off, probe, toggle, reader, memory;
};

// Adds --max-preempt-off ... --max-memory to `cmd`; values already in `a` are the defaults.
inline void add_limit_options(CLI::App *cmd, LimitArgs &a) {
    cmd->add_option("--max-preempt-off", a.preempt_off, "Worst preempt-off section, e.g. 100us")
        ->capture_default_str();
    cmd->add_option("--max-irqs-off", a.irqs_off, "Worst IRQs-off section")->capture_default_str();
    cmd->add_option("--max-probe-wakeup", a.probe, "Worst real-time probe wake-up latency")
        ->capture_default_str();
    cmd->add_option("--max-toggle", a.toggle, "Worst boolean commit (setsebool) latency, e.g. 10ms")
        ->capture_default_str();
    cmd->add_option("--max-reader-p99", a.reader, "99th percentile of read-side operations")
        ->capture_default_str();
    cmd->add_option("--max-memory", a.memory, "Peak memory, e.g. 512M")->capture_default_str();
}

// The limits given (an empty value is no limit); UserError naming the option on a bad value.
inline analysis::Limits parse_limits(const LimitArgs &a) {
    analysis::Limits limits;
    if (!a.preempt_off.empty())
        limits.max_preempt_off_ns = analysis::parse_limit_ns("--max-preempt-off", a.preempt_off);
    if (!a.irqs_off.empty())
        limits.max_irqs_off_ns = analysis::parse_limit_ns("--max-irqs-off", a.irqs_off);
    if (!a.probe.empty())
        limits.max_probe_wakeup_ns = analysis::parse_limit_ns("--max-probe-wakeup", a.probe);
    if (!a.toggle.empty())
        limits.max_toggle_ns = analysis::parse_limit_ns("--max-toggle", a.toggle);
    if (!a.reader.empty())
        limits.max_reader_p99_ns = analysis::parse_limit_ns("--max-reader-p99", a.reader);
    if (!a.memory.empty())
        limits.max_memory_bytes = analysis::parse_limit_bytes("--max-memory", a.memory);
    return limits;
}

}  // namespace locksim::cli
