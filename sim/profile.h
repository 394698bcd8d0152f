// A CPU profile: what a unit of security-server work and each kernel primitive cost on one
// machine, in nanoseconds. The `counted` cost model multiplies the core's work counts
// (util/work_meter.h) by `work_ns`; the simulator charges `primitive` costs inside lock, RCU,
// scheduling and allocation calls. Profiles are small TOML files in profiles/; each says how it
// was derived. `locksim calibrate` is meant to write the same format (with a [calibration]
// table recording host, date and fit) so a fitted host profile is used like a shipped one.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/cache_model.h"
#include "util/work_meter.h"

namespace locksim::sim {

using Time = int64_t;

// Costs of primitives, nanoseconds. Field names are the TOML keys of [primitive_ns].
struct PrimitiveCosts {
    Time spin_acquire = 10;  // uncontended lock or rwlock acquire (one atomic)
    Time spin_release = 5;
    Time sem_acquire = 20;  // uncontended rwsem or mutex acquire
    Time sem_release = 20;
    Time cacheline_transfer = 80;  // a lock's cache line moving from another CPU
    Time preempt_toggle = 1;       // preempt_disable / preempt_enable
    Time irq_toggle = 2;           // local_irq_disable, and again local_irq_enable
    Time rcu_read_lock = 1;        // both halves of a read section (PREEMPT_RCU nesting counter)
    Time context_switch = 1500;    // schedule() and the switch, charged to the incoming task
    Time wakeup = 400;             // try_to_wake_up on the waker's side
    Time ipi = 1500;               // a remote CPU's reaction to a reschedule or RCU IPI
    Time idle_exit = 1000;         // leaving the idle state
    Time timer_irq = 800;          // hrtimer interrupt that wakes a sleeping task
    Time kmalloc = 50;
    Time kfree = 30;
    Time vmalloc = 3000;
    Time vmalloc_page = 250;  // per 4 KiB page mapped
    Time rcu_callback = 50;   // invoking one call_rcu callback
    // synchronize_rcu_expedited (kernel/rcu/tree_exp.h): from the call to the IPIs going out
    // (the funnel lock and the hop to the rcu_gp workqueue's kworker), and one rcu_exp_handler
    // IPI's time on the CPU it interrupts (entry, the handler, exit).
    Time rcu_exp_setup = 20000;
    Time rcu_exp_handler = 1000;
    Time tick_irq = 1600;  // the scheduler tick's interrupt (see kTickPerTimerIrq)
};

// Work kinds added after profiles were first written may be absent from a profile file; the
// reader then derives them from the profile's own costs, so an older file keeps loading:
//   vfs_node = kVfsNodePerAlloc x alloc. Making or removing one selinuxfs file (new_inode,
//   d_alloc_name, the inode's security blob, d_add; or dput and iput) is a handful of slab
//   allocations plus initialisation and hashing; x86-modern estimates it at 1 us, 25 times its
//   40 ns allocation, and the same ratio is assumed elsewhere.
inline constexpr int64_t kVfsNodePerAlloc = 25;
//   cache_free = kCacheFreePerFreePct % of free. kmem_cache_free (SLUB, mm/slub.c) goes to
//   slab_free with the cache it is given; kfree first finds the object's page and its cache
//   (virt_to_head_page, the large-allocation check). The same fast path after that: an
//   estimate puts the named cache's free at 4/5 of a kfree.
inline constexpr int64_t kCacheFreePerFreePct = 80;
//   scan_entry = hash_probe. A SID table scan's step was counted as a hash probe (an entry
//   looked at) before it had a unit of its own; calibrate fits it to a timed scan.

//   tick_irq = kTickPerTimerIrq x timer_irq. The tick is the same local timer interrupt as an
//   hrtimer wake-up (entry, hrtimer_interrupt, exit) running tick_sched_timer, whose
//   update_process_times does the accounting, run_local_timers, rcu_sched_clock_irq and
//   scheduler_tick (v6.6 kernel/time/tick-sched.c, kernel/time/timer.c). An estimate puts that
//   work at as much again as the interrupt path; the kernel's own osnoise-tracer.rst example shows
//   local_timer:236 interrupts of 1.8 and 2.8 us on an x86 guest with tracing on, above
//   x86-modern's 1.6 us as a traced guest should be.
inline constexpr int64_t kTickPerTimerIrq = 2;

// The memory hierarchy ([memory]): sizes and the latencies a unit pays beyond its [work_ns] price
// (which is its price when its line is in the CPU's private cache). Absent: every unit costs its
// [work_ns] price, hot or cold.
struct MemoryProfile {
    int64_t line_bytes = 64;
    int64_t private_kib = 0;  // per CPU: the largest private level (L2)
    int64_t llc_kib = 0;      // shared by all CPUs
    // Optional: each CPU's first level (L1d) inside the private one, and what a line only the
    // private level holds adds to a unit priced as a first-level hit. 0: no first level, the
    // prices are private-level hits.
    int64_t l1_kib = 0;
    double l2_ns = 0;
    // false: the core records no lines (every unit costs its hot price) and only the lock
    // words' lines are modelled: the lock-line model alone, a peer for measuring the rest.
    bool core_lines = true;
    double llc_ns = 0;   // a private miss served by the last level
    double dram_ns = 0;  // a miss of both: load-to-use latency of memory
    // Memory-level parallelism: how many independent misses a core overlaps (sim/cache_model.h);
    // 1: none, each miss costs its full latency.
    double mlp = 1;
    static constexpr double kMaxMlp = 64;
    int64_t sample_one_in = 32;  // set sampling: one line in this many modelled (cache_model.h)
    // Optional: how long a line nobody in the simulation touches stays in a CPU's private levels
    // and in the last level (what the model does not run takes it: deep idle states, other
    // processes, a hypervisor's other guests). 0: until it is replaced.
    double private_lifetime_us = 0;
    double llc_lifetime_us = 0;
    MemoryLatency latency() const;
};

// A cluster of identical CPUs ([[cluster]]): CPUs are numbered cluster by cluster, in file
// order. `speed` divides the time of counted work (1.0: the [work_ns] prices; 0.5: twice
// as long); memory latencies and primitives are the machine's.
struct CpuCluster {
    std::string name;
    int cpus = 0;
    double speed = 1.0;
    int64_t private_kib = 0;  // its CPUs' private cache; 0: [memory]'s
    int first_cpu = 0;
};

// The families a profile's prices fall into, for stating and exploring how uncertain they are
// (`locksim robust`, a scenario's [prices]):
//   work          every [work_ns] price (and the measured model's scale);
//   memory        [memory]'s latencies beyond the price's level (l2_ns, llc_ns, dram_ns);
//   primitive     every [primitive_ns] price but the expedited grace period's;
//   grace_period  the expedited grace period's priced steps (rcu_exp_setup, rcu_exp_handler).
// A normal grace period's length is not a price: it comes from the simulated quiescent states
// and jiffy boundaries (sim/rcu.h), and no factor moves it.
enum class PriceFamily : uint8_t { Work, Memory, Primitive, GracePeriod, Count };
inline constexpr size_t kPriceFamilies = static_cast<size_t>(PriceFamily::Count);
inline constexpr std::array<std::string_view, kPriceFamilies> kPriceFamilyNames = {
    "work", "memory", "primitive", "grace_period"};
// Time that follows no price (waiting, spinning, a scenario's interrupt handler): no family.
inline constexpr PriceFamily kUnpriced = PriceFamily::Count;
// One factor per family; 1 everywhere: the profile's own prices.
using PriceFactors = std::array<double, kPriceFamilies>;
inline constexpr PriceFactors kNominalPrices = {1.0, 1.0, 1.0, 1.0};
// A factor is within [kMinPriceFactor, kMaxPriceFactor].
inline constexpr double kMinPriceFactor = 0.01;
inline constexpr double kMaxPriceFactor = 100.0;

// [uncertainty] of a profile: per family, the factor F >= 1 such that the true price is believed
// to lie within [price / F, price x F]; a family the file does not state gets its default below.
// The defaults: a hand-set profile's work prices are off by up to 1.5x on a host they were not
// fitted on (validate's read-section ratio was 0.60-0.71 on this project's VM), memory latencies
// by 1.5x (published load-to-use figures against a VM's), kernel primitives by 2x (typical
// figures, not measured: an IPI or a context switch varies 2x between bare metal and a guest),
// the expedited grace period's path by 3x (an estimate of a workqueue hop and a funnel lock).
inline constexpr PriceFactors kDefaultUncertainty = {1.5, 1.5, 2.0, 3.0};
struct PriceUncertainty {
    PriceFactors factor = kDefaultUncertainty;
    std::array<bool, kPriceFamilies> stated{};  // the file states it (not a default)
    std::string why;                            // the file's justification, if any
};

struct CpuProfile {
    std::string name;
    std::string description;
    std::string derivation;  // how the numbers were obtained
    std::string source;      // the file it was read from
    // Picoseconds per work unit (integer, so the counted model stays exact and deterministic).
    std::array<int64_t, kWorkKinds> work_ps{};
    PrimitiveCosts primitive;
    double measured_scale = 1.0;                     // `measured` model: host ns x scale
    std::map<std::string, std::string> calibration;  // written by calibrate, else empty
    MemoryProfile memory;
    std::vector<CpuCluster> clusters;  // empty: all CPUs alike
    // [published]: the published figures the numbers were derived from (clock_ghz, l2_cycles,
    // ...), kept so that a test can check the derivation; not used by the model.
    std::map<std::string, double> published;
    PriceUncertainty uncertainty;

    // Simulated nanoseconds for the counted work.
    Time cost(const WorkCounts &counts) const;
    int64_t cost_ps(const WorkCounts &counts) const;  // the same, picoseconds
    // The cluster of a CPU (nullptr without clusters or beyond them), and by name.
    const CpuCluster *cluster_of(int cpu) const;
    const CpuCluster *find_cluster(std::string_view name) const;
    int cluster_cpus() const;  // CPUs the clusters hold together
};

// The profile with each family's prices multiplied by its factor (integer prices rounded to
// the nearest; a factor of 1 leaves them exactly as they are).
CpuProfile with_prices(CpuProfile p, const PriceFactors &f);

// Parses a profile; errors are locksim::UserError naming `source`, line and column.
CpuProfile parse_profile(std::string_view text, const std::string &source);
CpuProfile load_profile_file(const std::filesystem::path &path);
// The directory of shipped profiles: $LOCKSIM_PROFILE_DIR, else the source tree's profiles/.
std::filesystem::path profile_dir();
// Names of the shipped profiles, sorted.
std::vector<std::string> list_profiles();
// A shipped profile by name, or a file path.
CpuProfile find_profile(const std::string &name_or_path);
// The profile text `calibrate` writes (and tests round-trip).
std::string format_profile(const CpuProfile &p);

}  // namespace locksim::sim
