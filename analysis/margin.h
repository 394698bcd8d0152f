// `locksim margin`: along one scenario key, where each design stops meeting each of pick's limits,
// and the values where the pick changes.
//
// The search: first a coarse scan (`steps` values from A to B, ends included) runs every design;
// then, per design and limit, the met / not-met pattern along the scan is monotone (one change)
// or not. A single change is narrowed by bisection between the two scan values around it (an
// integer key to adjacent integers, a real or duration key until the interval is within the
// relative tolerance); several changes are reported as scanned ("not monotone"), not bisected;
// a list key (kernel releases, names) is scanned only. The pick (pick's first design meeting every
// limit, among every design) is known at each value where every design ran; where it differs
// between two scan values, bisection with every design finds where it changes. Bisections run in
// rounds, each round's runs together; a (value, design) is run once, whatever asks for it.
//
// A design is judged at a value as pick judges a sweep point: by its worst run over the seeds.
// This file holds the search and its report; running a value is the caller's (MarginRunner).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/pick.h"
#include "analysis/results_file.h"

namespace locksim::analysis {

// How the key's values are ordered and written.
enum class KeyKind {
    Integer,   // a TOML integer: cpus, counts
    Real,      // a TOML float: rates
    Duration,  // a duration string ("20ms"), searched in nanoseconds
    List,      // an ordered list of TOML values, scanned only
};

// One value of the key: its place on the axis (the number, or the list position), its TOML text
// and its text in a run's point (without quotes).
struct KeyValue {
    double x = 0;
    std::string toml;
    std::string shown;
};

struct MarginAxis {
    std::string key;
    KeyKind kind = KeyKind::Integer;
    double lo = 0, hi = 0;                // Integer, Real, Duration (ns): the range, lo < hi
    std::vector<std::string> list;        // List: the TOML texts in order
    std::vector<std::string> list_shown;  // List: as a run's point shows them
    int steps = 5;                        // values of the coarse scan, ends included
    double tolerance = 0.02;              // Real, Duration: relative width where bisection stops

    KeyValue value(double x) const;
    std::vector<double> scan() const;
    // A value strictly between lo and hi to try next; nullopt when the interval is narrow
    // enough (adjacent integers or list entries, or within the tolerance).
    std::optional<double> middle(double lo, double hi) const;
};

// Runs each (value, design label) asked for, every seed of the scenario, and returns the runs
// (results-file runs whose point names the key at the value's shown text).
struct MarginRun {
    KeyValue value;
    std::string label;
};
using MarginRunner = std::function<std::vector<nlohmann::json>(const std::vector<MarginRun> &)>;

// A change of a verdict between two values run: `lo` < `hi` on the axis, nothing run between.
struct MarginChange {
    KeyValue lo, hi;
    bool met_lo = false;                  // for a limit: whether it is met at lo (not at hi)
    double figure_lo = 0, figure_hi = 0;  // the limited figure at each side (ns or bytes)
    std::string from, to;                 // for the pick: the design picked at lo and at hi
};

struct Crossover {
    std::string label;  // the design
    std::string limit;  // the metric's path ("preempt_off.max_ns")
    enum class Kind { Meets, MeetsNowhere, Changes } kind = Kind::Meets;
    std::string method;  // "bisection" (one change, narrowed), "scan" (not monotone, or a list)
    bool monotone = true;
    std::vector<MarginChange> changes;
};

// A design's judgement at one value.
struct MarginCell {
    bool ran = false;
    bool meets_all = false;
    std::vector<bool> met;       // per limit, in the order of Limits
    std::vector<double> figure;  // per limit: the judged figure (infinite: none to compare)
    uint64_t violations = 0;
};

struct Margin {
    MarginAxis axis;
    Limits limits;
    std::vector<std::string> labels;             // the designs, in the scenario's order
    std::vector<KeyValue> values;                // every value run, in key order
    std::vector<std::vector<MarginCell>> cells;  // [value][design]
    std::vector<Crossover> crossovers;           // per design, per limit
    std::vector<std::string> pick_at;            // per value: the pick ("" where not every design
                                                 // ran, "none" where none meets every limit)
    std::vector<MarginChange> pick_changes;
    std::string pick_method;  // how the pick changes were found
    ResultsFile results;      // every run, as one results file
};

// The search described above. `results` carries the scenario's record (its runs are added);
// `labels` the designs. No limit given is a UserError (nothing to search for).
Margin find_margin(const MarginAxis &axis, const Limits &limits,
                   const std::vector<std::string> &labels, ResultsFile results,
                   const MarginRunner &run);

// The table: design x limit -> crossover, then the pick's changes.
std::string format_margin(const Margin &m);
// margin.json: the axis, the limits, each value's figures per design, the crossovers with their
// method, the pick per value and its changes, and the results file's name.
nlohmann::json margin_json(const Margin &m, const std::string &results_name);

}  // namespace locksim::analysis
