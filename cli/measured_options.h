// The options that bring measured data (analysis/measured/) into a command: the files, the
// design name to give them, and which Chrome-trace slices stand for which metric.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "analysis/measured/import.h"
#include "util/error.h"

namespace locksim::cli {

struct MeasuredArgs {
    std::vector<std::string> files;
    std::string design;
    std::vector<std::string> slices;
};

// Adds --design and --slice (and, with `files_option`, the option that names the files).
inline void add_measured_options(CLI::App *cmd, MeasuredArgs &a, const char *files_option) {
    if (files_option)
        cmd->add_option(files_option, a.files,
                        "Measured files: cyclictest -h/--histfile or --json output, ftrace "
                        "latency traces, Chrome/Perfetto JSON traces");
    cmd->add_option("--design", a.design,
                    "Name of the measured series (one series of every file); default: one "
                    "series per file, named by the file");
    cmd->add_option("--slice", a.slices,
                    "METRIC=SLICE: the Chrome-trace slices named SLICE measure METRIC "
                    "(preempt-off, irqs-off, probe-wakeup, toggle, reader)");
}

inline analysis::measured::ImportOptions import_options(const MeasuredArgs &a) {
    analysis::measured::ImportOptions o;
    o.design = a.design;
    for (const std::string &s : a.slices)
        o.slices.push_back(analysis::measured::parse_slice_mapping("--slice", s));
    return o;
}

// The measured series the options name (no run when no file is given); a malformed file is a
// UserError naming its file:line.
inline analysis::ResultsFile import_measured_args(const MeasuredArgs &a) {
    if (a.files.empty()) {
        if (!a.design.empty() || !a.slices.empty())
            throw UserError("--design and --slice name measured files: give them with --measured");
        return {};
    }
    return analysis::measured::import_measured(a.files, import_options(a));
}

// The measured runs added to `results`.
inline void add_measured(analysis::ResultsFile &results, const MeasuredArgs &a) {
    analysis::measured::append_runs(results, import_measured_args(a));
}

}  // namespace locksim::cli
