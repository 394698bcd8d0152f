// The limits `pick` and `report` judge designs by, as command-line options: one --max-... option
// per metric that pick can limit (analysis/metrics.h).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <tuple>

#include "analysis/metrics.h"
#include "analysis/pick.h"

namespace locksim::cli {

// The text given to each option, by metric path.
using LimitArgs = std::map<std::string, std::string>;

// Adds the --max-... options to `cmd`; values already in `a` are the defaults.
inline void add_limit_options(CLI::App *cmd, LimitArgs &a) {
    for (const analysis::Metric &m : analysis::metrics())
        if (m.pick.option)
            cmd->add_option(m.pick.option, a[m.path()], m.pick.help)->capture_default_str();
}

// The limits given (an empty value is no limit); UserError naming the option on a bad value.
inline analysis::Limits parse_limits(const LimitArgs &a) {
    analysis::Limits limits;
    for (const analysis::Metric &m : analysis::metrics()) {
        auto it = a.find(m.path());
        if (!m.pick.option || it == a.end() || it->second.empty()) continue;
        analysis::Limit &l = limits[m.path()];
        if (m.unit == analysis::Unit::Bytes)
            l.value = analysis::parse_limit_bytes(m.pick.option, it->second);
        else if (m.pick.per)
            std::tie(l.value, l.probability) =
                analysis::parse_tail_limit(m.pick.option, it->second);
        else
            l.value = analysis::parse_limit_ns(m.pick.option, it->second);
    }
    return limits;
}

}  // namespace locksim::cli
