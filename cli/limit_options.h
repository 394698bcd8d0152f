// The limits `pick` and `report` judge designs by, as command-line options.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <tuple>

#include "analysis/pick.h"

namespace locksim::cli {

struct LimitArgs {
    std::string preempt_off, irqs_off, probe, toggle, reader, memory;
};

// Adds --max-preempt-off ... --max-memory to `cmd`; values already in `a` are the defaults.
inline void add_limit_options(CLI::App *cmd, LimitArgs &a) {
    cmd->add_option("--max-preempt-off", a.preempt_off,
                    "Worst preempt-off section, e.g. 100us; 100us@1e-9: the tail estimate of the "
                    "length exceeded with that probability per section")
        ->capture_default_str();
    cmd->add_option("--max-irqs-off", a.irqs_off, "Worst IRQs-off section (also DURATION@P)")
        ->capture_default_str();
    cmd->add_option("--max-probe-wakeup", a.probe,
                    "Worst real-time probe wake-up latency (200us@1e-9: per wake-up)")
        ->capture_default_str();
    cmd->add_option("--max-toggle", a.toggle,
                    "Worst boolean commit (setsebool) latency, e.g. 10ms (also DURATION@P, per "
                    "commit)")
        ->capture_default_str();
    cmd->add_option("--max-reader-p99", a.reader, "99th percentile of read-side operations")
        ->capture_default_str();
    cmd->add_option("--max-memory", a.memory, "Peak memory, e.g. 512M")->capture_default_str();
}

// The limits given (an empty value is no limit); UserError naming the option on a bad value.
inline analysis::Limits parse_limits(const LimitArgs &a) {
    analysis::Limits limits;
    auto tail = [](const char *option, const std::string &text, std::optional<int64_t> &limit,
                   std::optional<double> &probability) {
        if (text.empty()) return;
        std::tie(limit, probability) = analysis::parse_tail_limit(option, text);
    };
    tail("--max-preempt-off", a.preempt_off, limits.max_preempt_off_ns,
         limits.preempt_off_probability);
    tail("--max-irqs-off", a.irqs_off, limits.max_irqs_off_ns, limits.irqs_off_probability);
    tail("--max-probe-wakeup", a.probe, limits.max_probe_wakeup_ns,
         limits.probe_wakeup_probability);
    tail("--max-toggle", a.toggle, limits.max_toggle_ns, limits.toggle_probability);
    if (!a.reader.empty())
        limits.max_reader_p99_ns = analysis::parse_limit_ns("--max-reader-p99", a.reader);
    if (!a.memory.empty())
        limits.max_memory_bytes = analysis::parse_limit_bytes("--max-memory", a.memory);
    return limits;
}

}  // namespace locksim::cli
