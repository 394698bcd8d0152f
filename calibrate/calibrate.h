// `locksim calibrate`: a CPU profile fitted to this host. The security-server core runs a set of
// operations on a real policy (access decisions, context parsing with both level checks, SID to
// string, get_user_sids, the three ways of setting booleans, a policy read); each is counted by
// the work meter once and timed on the host several times. The cost per work unit is the
// non-negative least-squares fit of the counts to the times (relative errors, with a weak pull
// towards a base profile for kinds the operations cannot tell apart). Primitive costs are timed
// through kernel/ on the real-thread platform, so that a simulation with the profile predicts a
// run on host threads (`locksim validate`). The result is a profile file like the shipped ones,
// with a [calibration] table recording host, date, fit and each operation's residual.
//
// Locality: every operation is timed hot (repeated, caches warm) and cold (a buffer larger than
// the last-level cache written between calls), and the host's memory latencies are measured by
// pointer chasing (a random cyclic permutation of cache lines) in buffers sized for the private
// cache, the last level and memory. They become the profile's [memory] table, so the simulator's
// cache model (sim/cache_model.h) prices a unit's line as this host would: the fit takes each
// operation's hot time less the stall the model gives its lines when warm; the last level's
// latency is fitted to the hot times and memory's to the cold ones, each at most the chased
// latency (a chase's misses do not overlap; the core's partly do). The
// operations include what `validate`'s reader and writer do (four of 256 boolean-dependent
// decisions; every boolean flipped).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.h"
#include "sim/cache_model.h"
#include "sim/profile.h"
#include "util/work_meter.h"

namespace locksim {

// One timed operation: its work counts and host time per run.
struct CalibrationSample {
    std::string name;
    // Whether the fit uses it; an operation timed only to be shown beside the model is not
    // (`validate --pool 4`'s four decisions, whose branches the host's predictors learn).
    bool fitted = true;
    locksim::WorkCounts counts;
    double host_ns = 0;
    double predicted_ns = 0;      // counts x fitted costs + the model's warm stall (calibrate())
    std::vector<uint64_t> lines;  // the lines it reads (locksim::mem_line), in order
    double host_cold_ns = 0;      // host time of one call after the caches were evicted
    // Each time's largest over its smallest among the passes (CalibrateOptions::passes).
    double host_spread = 1, host_cold_spread = 1;
    double stall_hot_ns = 0;   // the cache model's stall for `lines`, called repeatedly
    double stall_cold_ns = 0;  // ... and from empty caches
    double predicted_cold_ns = 0;
    // Where the model serves the lines from (the private level past the first, the last level,
    // memory), cold and hot, and of them the independent reads (locksim::Access), whose misses
    // overlap by [memory] mlp.
    sim::MemoryTally cold, hot;
};

// Misses as full latencies: `n` of which `independent` overlap `mlp` at a time.
inline double effective_misses(uint64_t n, uint64_t independent, double mlp) {
    return static_cast<double>(n - independent) + static_cast<double>(independent) / mlp;
}

// Pointer chases through buffers of a few sizes (the private cache's, the last level's,
// memory's), ns per load: what a calibration records ([calibration] host_chase) and `validate`
// times again before and after its rounds, to tell how far the host has moved since.
struct ChasePoint {
    std::string level;  // "private", "llc", "memory"
    int64_t kib = 0;    // the buffer
    double ns = 0;      // per load, the fastest round
};
using ChaseSet = std::vector<ChasePoint>;

// The [calibration] key holding a ChaseSet.
inline constexpr const char *kHostChaseKey = "host_chase";

// "private 7.1 ns in 1024 KiB; llc 41.1 ns in 32768 KiB; memory 98.0 ns in 1048576 KiB".
std::string chase_record(const ChaseSet &set);
// The inverse; a UserError naming the part it cannot read.
ChaseSet parse_chase_record(const std::string &text);
// The same chases timed now (`steps` loads a round, the fastest of `rounds`).
ChaseSet chase_again(const ChaseSet &set, int64_t steps, int rounds);
// The largest factor between a point of `now` and the same level's in `then`, either way (1:
// none moved; 0: no level in common).
double largest_move(const ChaseSet &then, const ChaseSet &now);

// The host's caches and load-to-use latencies (pointer chasing), as `calibrate` measured them.
struct MemoryMeasure {
    int64_t l1_kib = 0;  // the first level (L1d); 0: not known, the model gets none
    int64_t private_kib = 0, llc_kib = 0;
    std::string sizes_from;  // where the sizes were read
    double l1_ns = 0;        // a chase within the first level (with l1_kib)
    double private_ns = 0;   // a chase within the private cache
    double llc_ns = 0;       // ... within the last level (larger than the private cache)
    double dram_ns = 0;      // ... over a buffer far larger than the last level
    // Loads of the same buffer at addresses known ahead (a random order read from an array):
    // their misses overlap, and dram_ns / independent_ns is the memory-level parallelism.
    double independent_ns = 0;
    double mlp = 1;  // that ratio, within [1, MemoryProfile::kMaxMlp]
    // How long lines stay while the CPU sleeps: a chase through a buffer of a quarter of the
    // private cache, ns per load, after sleeping each of idle_us (idle_ns), and the same chase
    // at once (idle_hot_ns), after the private cache is evicted (idle_llc_ns) and after every
    // level is (idle_cold_ns).
    std::vector<double> idle_us, idle_ns;
    double idle_hot_ns = 0, idle_llc_ns = 0, idle_cold_ns = 0;
    ChaseSet chases;  // private_ns, llc_ns (where measured) and dram_ns with their buffers
};

// The lines' lifetimes ([memory] private_lifetime_us, llc_lifetime_us) from `m`'s idle chases:
// for each level, the shortest sleep after which, and after every longer one, the chase is
// slower than the geometric mean of that level's time and the next one's (the private level:
// hot and evicted; the last level: evicted and cold, the coldest chase seen, evicted or after a
// sleep). 0: not seen to leave (or the references do not tell the levels apart: each under 1.5x
// the one before).
std::pair<double, double> idle_lifetimes_us(const MemoryMeasure &m);

// Nanoseconds per load of `bytes` / 64 lines read in a random order whose addresses are known
// ahead (independent loads: their misses overlap).
double independent_loads_ns(size_t bytes, int64_t steps, int rounds);

// Sattolo's algorithm: a random permutation of 0..n-1 that is a single cycle (following it from
// any index visits all n before coming back).
std::vector<uint32_t> cyclic_permutation(size_t n, uint64_t seed);

// Nanoseconds per load of a chase through a random cyclic permutation of `bytes` / 64 cache
// lines (every line visited once per cycle): the load-to-use latency of the level holding them.
double pointer_chase_ns(size_t bytes, int64_t steps, int rounds);

// Minimises sum_i ((counts_i . w - t_i) / t_i)^2 + prior_weight * sum_k ((w_k - prior_k) /
// prior_k)^2 over w >= 0 (ns per unit), by cyclic coordinate descent on the convex quadratic.
// Kinds in `fixed` keep their prior. Costs in ns.
std::array<double, locksim::kWorkKinds> fit_work_costs(
    const std::vector<CalibrationSample> &samples,
    const std::array<double, locksim::kWorkKinds> &prior, double prior_weight,
    const std::array<bool, locksim::kWorkKinds> &fixed);

// A fitted price and the range of prices this host's timings allow: the values at which, with
// the others refitted, the fit's squared relative residuals grow by no more than 3.84 times
// their variance (a 95% profile-likelihood interval; the variance is the residuals' over the
// degrees of freedom, at least (1%)^2). `identified`: the range excludes zero, so the timings
// tell the unit apart from the others; a unit no operation counts, or one that another can
// stand in for (counted in the same proportions), is not.
struct PriceInterval {
    double fitted = 0;        // ns per unit
    double low = 0;           // ns per unit
    double high = 0;          // ns per unit; infinity when no price makes the fit worse
    bool fixed = false;       // kept from the base profile, not fitted
    bool counted = false;     // some operation counts it
    bool identified = false;  // low > 0
};

// "1.250 ns, 95% interval 1.1 - 1.4 ns", with "not identified by this host's timings" where
// the range includes zero.
std::string price_text(const PriceInterval &p);

// The interval of every kind around `fitted` (the result of fit_work_costs with the same
// arguments).
std::array<PriceInterval, locksim::kWorkKinds> price_intervals(
    const std::vector<CalibrationSample> &samples,
    const std::array<double, locksim::kWorkKinds> &prior, double prior_weight,
    const std::array<bool, locksim::kWorkKinds> &fixed,
    const std::array<double, locksim::kWorkKinds> &fitted);

// The policy `calibrate --policy NAME` times ([calibration] policy): "default" and "mls" are the
// built Debian policies, anything else a binary policy file.
PolicySpec calibration_policy(const std::string &name);

struct CalibrateOptions {
    std::vector<uint8_t> policy_image;
    std::string policy_name;
    sim::CpuProfile base;       // the prior, and the costs user space cannot measure
    std::string name = "host";  // of the written profile
    // Timed batches per operation, the median kept. Short batches: on a shared host a batch
    // that another task's turn interrupted is then an outlier rather than part of every batch.
    int rounds = 15;
    // Every operation is timed once per pass, the passes one after the other; the median is kept.
    int passes = 3;
    double batch_ms = 1;  // target length of one batch
    // The largest buffer for the memory chase and for evicting the caches (the last level's
    // size decides, within 16 MiB and this).
    size_t max_buffer_bytes = size_t{256} << 20;
    double prior_weight = 0.01;                         // see fit_work_costs
    std::function<void(const std::string &)> progress;  // one line per step
};

// Loads per round of a calibration's pointer chases.
int64_t chase_steps(const CalibrateOptions &o);

struct PrimitiveSample {
    std::string name;  // [primitive_ns] key, or what the figure is
    double host_ns = 0;
    std::string how;
};

struct Calibration {
    sim::CpuProfile profile;
    std::array<PriceInterval, locksim::kWorkKinds> prices;  // [work_ns], with their intervals
    std::vector<CalibrationSample> samples;
    std::vector<PrimitiveSample> primitives;
    MemoryMeasure memory;
};

Calibration calibrate(const CalibrateOptions &options);

// The [calibration] key holding liburcu's grace period on this host, in ns: what `validate`
// gives the simulator's user-space RCU model.
inline constexpr const char *kUrcuGracePeriodKey = "urcu_grace_period_ns";

// The grace period beside a thread busy on another CPU is only that when the thread had that
// CPU: with another process there, liburcu's membarrier has less or nothing to interrupt. One
// timing, and the share of its time the busy thread ran.
struct BesideBusy {
    double ns = 0;
    double busy_share = 0;
};
// Times it with `time_once` until the busy thread ran at least 90% of a timing, at most
// `attempts` times; returns that timing, or the last one with `*had_cpu` false.
template <class F>
double time_beside_busy(F &&time_once, int attempts, bool *had_cpu) {
    BesideBusy t;
    for (int i = 0; i < attempts; ++i) {
        t = time_once();
        if (t.busy_share >= 0.9) {
            *had_cpu = true;
            return t.ns;
        }
    }
    *had_cpu = false;
    return t.ns;
}

// The [calibration] keys of liburcu's wait for a reader still inside when its grace period
// flips (src/urcu.c, wait_for_readers): how long it polls before it sleeps on a futex, and how
// long after such a reader's unlock the grace period ends. validate gives them to the
// simulator's user-space RCU model (sim::SimConfig::userspace_rcu_spin, userspace_rcu_sleep).
inline constexpr const char *kUrcuSpinKey = "urcu_reader_spin_ns";
inline constexpr const char *kUrcuSleepKey = "urcu_reader_sleep_ns";

// The [calibration] key holding what the real-thread platform spends queuing one call_rcu
// callback as the strategies queue them (strategies::RcuReclaimer, liburcu's call_rcu), in ns:
// what `validate`'s simulator charges every call_rcu.
inline constexpr const char *kCallRcuKey = "call_rcu_ns";

// The [calibration] key holding what the real-thread platform spends around one compute() span
// with no work in it (its clock reads, the charge), in ns: what `validate`'s simulator charges
// every span, so that both sides pay for the real platform's own bookkeeping. The primitives'
// prices include theirs already (they are timed through the real platform); the work units'
// do not (calibrate times the core without spans).
inline constexpr const char *kComputeSpanKey = "compute_span_ns";

// The host's speed against its calibration's, for `validate`: the calibration's operation that
// does what validate's reader does with a [validate] read (64 sections of four access decisions
// drawn from 256 boolean-dependent ones; 64 context lookups), built on the same policy and timed
// as calibrate times it. Its time now over the time the profile records ([calibration] 'op:
// NAME' = "host N ns, ...") is how much slower the host is than when it was calibrated: the
// profile's prices are that host's.
class HostSpeedProbe {
  public:
    // `o`: the calibration's policy (policy_image, policy_name), its timing (rounds, batch_ms)
    // and its base profile's memory (the private cache's size, where the host does not say).
    // UserError when the policy has no such operation.
    HostSpeedProbe(const CalibrateOptions &o, ValidateRead read);
    ~HostSpeedProbe();
    HostSpeedProbe(const HostSpeedProbe &) = delete;
    HostSpeedProbe &operator=(const HostSpeedProbe &) = delete;
    const std::string &op() const;  // the operation's name, as [calibration] keys it
    double time_ns();               // one hot time per call, as calibrate times it

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The host time a profile's [calibration] records for an operation ("op: NAME" = "host N ns,
// ..."); 0 when it records none. UserError when the record cannot be read.
double calibrated_host_ns(const sim::CpuProfile &profile, const std::string &op);

// A time in ns that a profile's [calibration] records under `key` (kUrcuGracePeriodKey,
// kComputeSpanKey); nullopt when it records none. UserError when the value is not a number of
// nanoseconds.
std::optional<double> calibrated_ns(const sim::CpuProfile &profile, const char *key);

}  // namespace locksim
