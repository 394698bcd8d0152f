// `locksim report`: pictures of a results file and one index.html that shows them with the
// comparison table and pick's verdict.
//
// The C++ side decides what is drawn and decodes every histogram (the log-linear buckets of
// record/histogram.h), so the plotting script only draws series it is given: figures.json in the
// output directory lists each figure with its kind, file stem, pixel size and data, and
// analysis/plots.py (matplotlib, run by /usr/bin/python3) writes <stem>.png and <stem>.svg for
// each. Figures:
//   run-<i>-preempt-off, run-<i>-probe   per run (a sweep's only with per_run): latency
//                                        histograms, linear microseconds on x, log count on y,
//                                        the worst case marked (cyclictest style); none for a
//                                        measured series that did not measure it
//   preempt-off-<k>, probe-<k>           per sweep point: the same histograms, one step line per
//                                        design (seeds merged) on a shared axis
//   spectrum-reader[-<k>], spectrum-toggle[-<k>]
//                                        per sweep point k (none without a sweep): latency by
//                                        percentile, x = 1/(1-p) on a log axis, one line per
//                                        design (seeds merged)
//   toggle-cost[-<k>]                    per sweep point: the parts of a boolean commit, per design
//                                        (time per commit; the caption gives grace periods waited)
//   toggle-alloc[-<k>]                   per sweep point: bytes a boolean commit allocates
//   margin-<key>                         with a margin.json: each limited figure against the key,
//                                        one line per design, the limit and the crossovers
//   robust-shares                        with a robust.json: per limit (and every limit), each
//                                        design's share of worlds meeting it, with its interval
//   robust-sensitivity                   with a robust.json: a tornado per fitted figure, each
//                                        family's range moving it, the limit and its flip factor
//   scaling-<axis>                       per swept axis: worst preempt-off, worst toggle, reader
//                                        p99 and throughput against the axis, one line per design
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/pick.h"
#include "analysis/results_file.h"
#include "record/op_names.h"

namespace locksim::analysis {

struct ReportOptions {
    Limits limits;          // for pick's verdict
    std::string reader_op;  // read-side operation; empty: the most frequent non-writer op
    std::string toggle_op = kernel::op::kSetBools;
    std::string python;        // empty: $LOCKSIM_PYTHON, else /usr/bin/python3
    std::string plots_script;  // empty: $LOCKSIM_PLOTS, else found by default_plots_script()
    bool per_run = false;      // a sweep: each run's histograms too, not only each point's
    int threads = 0;           // plotting processes at once; 0: one per core
    nlohmann::json margin;     // margin.json of `locksim margin` (null: none): its figure
    nlohmann::json robust;     // robust.json of `locksim robust` (null: none): its figures
};

// Operations on the write side of the policy; never chosen as the read-side operation.
inline const std::vector<std::string> kWriterOps = {kernel::op::kSetBools, kernel::op::kLoadPolicy};

// The figures (see above) as plots.py reads them. `where` names the results file in errors.
nlohmann::json report_figures(const ResultsFile &results, const std::string &where,
                              const ReportOptions &options);

// index.html for `figures` (images referenced by relative file name; no script, no network).
std::string report_html(const ResultsFile &results, const std::string &where,
                        const nlohmann::json &figures, const ReportOptions &options);

struct ReportOutput {
    std::string index;               // path of index.html
    std::vector<std::string> files;  // every file written, index.html included
};

// Writes figures.json, the images and index.html into `out_dir` (created if needed), the images
// by `threads` plots.py processes at once; on a terminal it counts the figures drawn on stderr.
// Errors (bad results, no python, no matplotlib, a failed plot) are UserErrors with the reason.
ReportOutput write_report(const ResultsFile &results, const std::string &where,
                          const std::string &out_dir, const ReportOptions &options);

// $LOCKSIM_PYTHON, else /usr/bin/python3 (Debian's python3-matplotlib lives there).
std::string default_python();
// $LOCKSIM_PLOTS, else plots.py next to the executable or in ../share/locksim, else the source
// tree's analysis/plots.py.
std::string default_plots_script();

}  // namespace locksim::analysis
