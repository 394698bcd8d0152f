// The memory hierarchy of the counted cost model: each simulated CPU has a private cache, and
// all share a last level. A unit of core work costs its profile price when the line it reads is
// in the CPU's private cache, plus the last level's latency when only the last level holds it,
// plus the memory latency when neither does (CpuProfile::memory). A profile may also give each
// CPU a first level inside the private one ([memory] l1_kib): the price is then a first-level
// hit's, and a line only the private level (L2) holds adds l2_ns; the other latencies are still
// what the level adds over the price.
//
// The model is approximate, deterministic and cheap:
// - a cache is a set of line tags (mem_line: a line named by what it holds, so the result
//   does not depend on host addresses) with approximately LRU replacement: two generations of
//   half the capacity each; a touch hits in either, moves the line to the current one, and the
//   current generation becomes the previous one when full (so a line survives between half and
//   all of the capacity in distinct lines touched after it; true LRU keeps it for exactly all);
// - fully associative: no set conflicts;
// - a private hit does not touch the last level; a private miss fills both (an inclusive
//   hierarchy); a line another CPU stores to is taken from the others' caches only where the
//   store is recorded as one (Access::Modified, below; a lock word's transfers are priced by the
//   lock model, PrimitiveCosts);
// - a miss of a dependent read (a chain's next node: Access::Dependent) costs the level's latency;
//   an independent one (a hash slot) that latency over the profile's memory-level parallelism,
//   the misses a core keeps in flight at once ([memory] mlp, default 1: none overlap); a line
//   written where it was just allocated (Access::Written: a new node, a copy's destination)
//   enters every cache without a stall; with a first level, a line read just after the line
//   before it in the same object (kStreamedLine: an array walked in order, a stream) misses the
//   first level without a stall where the private level holds it (the prefetchers follow the
//   walk); misses beyond the private level are priced by their kind alone;
// - a store to a line where it already was (Access::Modified: a flag toggled in place) is free
//   where its CPU's caches hold the line, else an independent miss; unless its CPU holds the
//   line alone (no other CPU read it since its own last store), it makes a new version of the
//   line, held by the storing CPU alone: the copies other CPUs hold miss from then on (served by
//   the last level, as a line moving between two cores is);
// - optionally, lines age out ([memory] private_lifetime_us, llc_lifetime_us), taken by what
//   the model does not run (a deep idle state powering a core's caches down, the machine's other
//   processes, a hypervisor's other guests): a line leaves a CPU's private levels once the CPU
//   has idled that long since the line was last touched there (a CPU that never idles keeps
//   them), and the last level once nobody touched it for that long; calibrate measures both on
//   its host by reading a buffer again after sleeping. Each cache turns its generations every
//   half lifetime of its clock (the CPU's idle time, or simulated time) as well as when one
//   fills, so an untouched line leaves after between half its lifetime and all;
// - TLBs and bandwidth limits are not modelled.
// A call's lines are priced in the order it touched them, one touch per distinct line.
//
// Set sampling keeps the model's own cost small: with `sample` = N > 1 only the lines whose
// tag falls in a fixed 1/N of the tag space are modelled, in caches of 1/N the size, and a
// call's stall is its sampled lines' stall times (its lines / its sampled lines); a call with
// no sampled line pays the CPU's mean stall per line so far. The sample is a function of the
// tags only, so runs stay deterministic; the estimate's error shrinks with the lines a call
// reads (tests/sim/cache_model_test.cpp compares it with the exact model).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "util/line_set.h"

namespace locksim::sim {

// One cache: a set of line tags with two-generation LRU (each generation an LineSet).
class TagCache {
  public:
    // `lifetime_ns` > 0: a line nobody touched for that long has left (between half of it and
    // all of it: the generations also turn every half lifetime of simulated time).
    explicit TagCache(uint64_t lines, int64_t lifetime_ns = 0);
    // True when `tag` was held; it is held afterwards either way. `now_ns`: the simulated time
    // of the touch (never decreasing); it matters only with a lifetime.
    bool touch(uint64_t tag, int64_t now_ns = 0);
    uint64_t capacity() const { return half_ * 2; }

  private:
    LineSet gens_[2];
    int cur_ = 0;
    uint64_t half_;
    int64_t epoch_ns_ = 0;  // half the lifetime; 0: none
    int64_t epoch_ = 0;     // the half lifetime the current generation was opened in
};

struct MemoryLatency {
    int64_t private_lines = 0;  // 0: the model is off
    int64_t l1_lines = 0;       // each CPU's first level inside the private one; 0: none
    int64_t l2_ps = 0;          // added to a unit whose line the private level holds, not the first
    int64_t llc_lines = 0;
    int64_t llc_ps = 0;   // added to a unit whose line only the last level holds
    int64_t dram_ps = 0;  // added to a unit whose line no cache holds
    // Memory-level parallelism ([memory] mlp): an independent read's miss (Access::Independent)
    // costs the latency over it; 1: none overlap, every miss costs the full latency.
    double mlp = 1;
    int64_t sample = 1;  // model one line in `sample` (a power of two; 1: every line)
    // How long a line nobody in the simulation touches stays in each CPU's private levels and in
    // the last level ([memory] private_lifetime_us, llc_lifetime_us); 0: until it is replaced.
    int64_t private_lifetime_ns = 0;
    int64_t llc_lifetime_ns = 0;
};

struct MemoryTally {
    uint64_t touches = 0;
    uint64_t l2_hits = 0;   // first-level misses the private one served
    uint64_t llc_hits = 0;  // private misses the last level served
    uint64_t dram = 0;      // misses of both
    uint64_t l2_independent = 0, llc_independent = 0,
             dram_independent = 0;  // of those, independent reads
    int64_t stall_ps = 0;
};

// The hierarchy of one simulated machine.
class CacheHierarchy {
  public:
    // `private_lines`: each CPU's private cache, in lines (clusters may differ); the latency's
    // private_lines is the default.
    CacheHierarchy(const MemoryLatency &lat, const std::vector<int64_t> &private_lines);
    bool enabled() const { return lat_.private_lines > 0; }
    // The stall, picoseconds, of `cpu` reading `lines` (distinct tags, in order) at simulated
    // time `now_ns`, the CPU having idled `idle_ns` in all so far (the clock of its private
    // levels' lifetimes); adds to `tally`.
    int64_t price(int cpu, std::span<const uint64_t> lines, MemoryTally &tally, int64_t now_ns = 0,
                  int64_t idle_ns = 0);
    // The same for a call that read `touches` lines, of which `sampled` are those the model
    // samples (line_sampled with sample_shift()), in order: what WorkCounts records.
    int64_t price_sampled(int cpu, std::span<const uint64_t> sampled, uint64_t touches,
                          MemoryTally &tally, int64_t now_ns = 0, int64_t idle_ns = 0);
    int sample_shift() const { return shift_; }
    bool has_first_level() const { return !first_.empty(); }

  private:
    template <bool Filter>
    int64_t price_lines(int cpu, std::span<const uint64_t> lines, uint64_t touches,
                        MemoryTally &tally, int64_t now_ns, int64_t idle_ns);
    MemoryLatency lat_;
    // The latencies over the parallelism.
    int64_t l2_independent_ps_, llc_independent_ps_, dram_independent_ps_;
    int shift_ = 0;                          // log2(sample)
    std::vector<TagCache> first_, private_;  // per CPU; first_ empty without a first level
    TagCache llc_;
    // Per CPU: sampled lines priced and their stall, for calls without a sampled line.
    std::vector<std::pair<uint64_t, int64_t>> seen_;
    // Lines modified in place (Access::Modified): their version and the CPU holding the
    // current one exclusively (-1: read by another since).
    struct Owner {
        uint32_t version = 0;
        int cpu = -1;
    };
    LineSet ever_modified_;
    std::unordered_map<uint64_t, Owner> owners_;
};

}  // namespace locksim::sim
