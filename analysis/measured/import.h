// Measured data as results-file runs (analysis/results_file.h): each design's measurements
// (one or several files) become one run with "platform": "measured" and "strategy": "measured",
// so that the table, pick and the report's histograms and spectra show the measured kernel
// beside simulated designs.
//
// What each format fills: a cyclictest histogram or --json fills probe_wakeup (one histogram per
// cyclictest thread); an ftrace trace adds its latency to preempt_off, irqs_off or probe_wakeup
// by tracer, with the section's task, CPU and sites; a Chrome trace's slices go to detail.ops
// by name, and a slice named in `slice_metrics` also fills that metric. What a file does not
// measure stays empty (count 0).
#pragma once

#include <string>
#include <vector>

#include "analysis/measured/measurement.h"
#include "analysis/results_file.h"

namespace locksim::analysis::measured {

// The metrics a slice name can stand for.
enum class SliceMetric { PreemptOff, IrqsOff, ProbeWakeup, Toggle, Reader };

struct SliceMapping {
    SliceMetric metric;
    std::string slice;
};

// "preempt-off=NAME", "irqs-off=NAME", "probe-wakeup=NAME", "toggle=NAME", "reader=NAME";
// UserError naming `option` otherwise.
SliceMapping parse_slice_mapping(const std::string &option, const std::string &text);

struct ImportOptions {
    std::string design;  // every file as one series of this name; empty: one series per file,
                         // named by design_of (by the file name where two share a stem)
    std::vector<SliceMapping> slices;
};

// One run (summary keys, "index" and "detail") from measurements of one design.
nlohmann::json measured_run(const std::vector<Measurement> &ms, const std::string &design,
                            size_t index, const std::vector<SliceMapping> &slices);

// Reads every file (parse_measured) and makes its runs; the scenario names the files.
ResultsFile import_measured(const std::vector<std::string> &paths, const ImportOptions &options);

// Appends `measured`'s runs to `results` (indices continue after the last run), so that a
// report or pick sees both; the scenario keeps the simulated one and lists the measured files.
void append_runs(ResultsFile &results, const ResultsFile &measured);

// The design name a file gives by default: its name without the directory and extension.
std::string design_of(const std::string &path);

}  // namespace locksim::analysis::measured
