// Internal to real/: the state of a RealPlatform, shared by the files that implement it, one per
// topic as in sim/: the platform's life and the run (real_platform.cpp), tasks on host threads
// (tasks.cpp), would-be-atomic sections and operations (accounting.cpp), locks (locks.cpp), RCU
// (rcu.cpp), accounted memory and the quarantine (memory.cpp), the results (run_results.cpp).
#pragma once

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <boost/lockfree/spsc_queue.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>  // before Boost.Asio (Boost 1.74 with GCC 12 in C++20 mode)
#include <vector>

#include <tbb/enumerable_thread_specific.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "real/locks.h"
#include "real/real_platform.h"
#include "real/urcu.h"

namespace locksim::real {

using kernel::AllocKind;
using kernel::Label;
using kernel::LockKind;
using kernel::LockMode;
using kernel::Site;

inline constexpr uint64_t kStillPublished = std::numeric_limits<uint64_t>::max();
inline constexpr uint32_t kAllocMagic = 0x6c6b736d;  // "lksm"
inline constexpr uint32_t kFreedMagic = 0x66726565;

inline std::atomic<uint64_t> g_platform_gen{0};

// The header in front of every accounted allocation.
struct alignas(16) AllocHeader {
    uint32_t magic;
    uint8_t kind;
    std::atomic<int64_t> bytes;
};
static_assert(sizeof(AllocHeader) == 16);

// Objects kept intact by mem_quarantine; their memory is released with the platform, when no
// thread of the run can use them any more (their destructors never run).
struct Quarantine {
    std::mutex mu;
    std::vector<AllocHeader *> held;
    ~Quarantine() {
        for (AllocHeader *h : held) {
            h->bytes.~atomic();
            ::operator delete(h);
        }
    }
};

// A section that ended, on its way to the collector.
struct Sample {
    bool irq = false;
    int cpu = 0;
    int task = 0;
    uint32_t label = 0;
    Time start = 0;
    Time length = 0;
    Site start_site;
    Site end_site;
};

struct Section {
    Time start = 0;
    int cpu = 0;
    Site site;
    Label label;
};

struct Held {
    kernel::LockObject *lock;
    LockMode mode;
    Time since;
};

// The calling thread as the host counts it: the CPU time it ran, and its context switches, those
// it asked for (it slept) and those the scheduler imposed (another thread took its CPU).
struct HostClock {
    Time cpu_ns = 0;
    uint64_t voluntary_switches = 0;
    uint64_t involuntary_switches = 0;
    bool read = false;  // false: not measured
    static HostClock now();
};

struct OpFrame {
    Label label;
    Time start;
    int64_t peak_live;
    HostClock host{};  // at the start, for RealConfig::host_clock_ops
};

// Statistics of one thread, merged after the run.
struct ThreadStats {
    std::vector<kernel::OpStats> ops;  // by label id
    std::vector<uint8_t> op_used;
    std::vector<Time> compute_ns;          // by label id
    std::vector<kernel::LockStats> locks;  // by lock class
    std::vector<kernel::CpuStats> cpus;
    // Sections: lengths, totals and those open when the run ended (the collector keeps the
    // longest).
    kernel::IntervalStats preempt_off, irqs_off;
    std::map<std::string, kernel::Histogram> wakeup;
    std::map<std::string, Time> wakeup_open;
    kernel::RcuStats rcu;
    kernel::MemStats memory;  // allocations and frees (live and peak bytes are the platform's)
    uint64_t samples_dropped = 0;

    kernel::OpStats &op(Label l) {
        size_t i = l.id();
        if (i >= ops.size()) {
            ops.resize(i + 1);
            op_used.resize(i + 1, 0);
        }
        op_used[i] = 1;
        return ops[i];
    }
    kernel::LockStats &lock(int cls) {
        if (static_cast<size_t>(cls) >= locks.size()) locks.resize(static_cast<size_t>(cls) + 1);
        return locks[static_cast<size_t>(cls)];
    }
    kernel::CpuStats &cpu(int c) {
        if (static_cast<size_t>(c) >= cpus.size()) cpus.resize(static_cast<size_t>(c) + 1);
        return cpus[static_cast<size_t>(c)];
    }
};

struct RealLock : kernel::LockObject {
    RealLock(LockKind k, std::string_view n, int c) : LockObject(k, n), cls(c) {}
    int cls;
    TicketSpinlock spin;
    QueuedRwLock rw;
    std::unique_ptr<SleepingRwSem> sem;  // only for the sleeping kinds
    std::unique_ptr<SleepingMutex> mutex;
};

// A node of the RCU publication table (checks only).
struct PubNode {
    cds_lfht_node node;
    const void *key;
    std::atomic<uint64_t> cutoff;
    rcu_head rh;
};

inline unsigned long pub_hash(const void *p) {
    auto v = reinterpret_cast<uintptr_t>(p);
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    return static_cast<unsigned long>(v);
}

inline int pub_match(cds_lfht_node *node, const void *key) {
    PubNode *n = caa_container_of(node, PubNode, node);
    tsan_acquire(n);  // published by cds_lfht_add_unique (not instrumented)
    return n->key == key;
}

inline void pub_free(rcu_head *head) {
    tsan_rcu_gp_end();
    delete caa_container_of(head, PubNode, rh);
}

// A liburcu read section around the publication table.
struct PubReader {
    PubReader() { urcu_memb_read_lock(); }
    ~PubReader() {
        urcu_memb_read_unlock();
        tsan_rcu_reader_exit();
    }
    PubReader(const PubReader &) = delete;
    PubReader &operator=(const PubReader &) = delete;
};

struct TaskState {
    int id = 0;
    std::string name;
    kernel::TaskParams params;
    std::function<void()> body;
    std::thread thread;
    bool external = false;  // a thread the platform did not start (main, liburcu's callbacks)
    ThreadStats *stats = nullptr;
    // This thread's accounted bytes not yet in State::live_bytes, and the highest live count it
    // saw since it last folded them in (State::account_bytes). Written by this thread only;
    // atomic for the collector's read at the end.
    std::atomic<int64_t> mem_unflushed{0};
    std::atomic<int64_t> mem_peak_seen{0};
    int preempt_count = 0;
    bool irqs_off = false;
    Section poff, ioff;
    int rcu_nesting = 0;
    // Read by other threads' free checks (checks mode).
    std::atomic<int> rcu_active{0};
    std::atomic<uint64_t> rcu_start_seq{0};
    std::vector<Held> held;
    std::vector<OpFrame> ops;
    std::mt19937_64 rng;
    boost::lockfree::spsc_queue<Sample, boost::lockfree::capacity<1024>> samples;
    std::unique_ptr<boost::asio::io_context> io;  // probe tasks
    std::unique_ptr<boost::asio::steady_timer> timer;
    Time cpu_time = 0;
    uint64_t switches = 0;
    int last_cpu = 0;

    bool atomic() const { return preempt_count > 0 || irqs_off; }
    Label label() const { return ops.empty() ? Label{} : ops.back().label; }
};

struct ThreadCtx {
    uint64_t gen = 0;
    TaskState *task = nullptr;
};
inline thread_local ThreadCtx tl_ctx;
inline thread_local bool tl_in_callback_thread = false;

struct RealPlatform::State {
    RealPlatform &p;
    const RealConfig &cfg;
    uint64_t gen = ++g_platform_gen;
    std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
    std::mutex mu;  // tasks, lock classes, violations
    std::deque<std::unique_ptr<TaskState>> tasks;
    std::vector<TaskState *> pending_start;
    bool started = false;
    std::vector<std::unique_ptr<RealLock>> locks;
    std::vector<std::pair<std::string, LockKind>> classes;
    std::unordered_map<std::string, int> class_ids;
    std::vector<kernel::Violation> violations;
    std::set<std::string> violation_keys;
    std::string fifo_note;

    tbb::enumerable_thread_specific<ThreadStats> stats;

    std::mutex sleep_mu;
    std::condition_variable sleep_cv;

    std::atomic<int64_t> live_bytes{0};
    std::atomic<int64_t> peak_bytes{0};
    std::atomic<Time> keep_threshold{0};
    kernel::IntervalStats kept_poff, kept_ioff;  // the collector's
    uint64_t samples_seen = 0;

    cds_lfht *pub = nullptr;  // RCU publication table (checks)
    Quarantine quarantine;    // objects whose free was unsafe (checks)
    std::atomic<uint64_t> rcu_seq{0};

    State(RealPlatform &owner, const RealConfig &c) : p(owner), cfg(c) {}

    Time now() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - epoch)
            .count();
    }
    // Recording lasts until the end of the drain: the work in flight at the stop is recorded
    // in full.
    bool recording() const { return !ended.load(std::memory_order_relaxed); }
    std::atomic<Time> stop_at{-1};  // when the stop was asked for (set with stop_)
    std::atomic<Time> end_at{-1};   // when the drain ended (set with ended)
    std::atomic<bool> ended{false};
    // The part of something begun at `start` that elapsed before the end of the drain, when it
    // ends after it (it was open then and is counted as censored); nullopt otherwise.
    std::optional<Time> open_part(Time start) const {
        if (!ended.load(std::memory_order_acquire)) return std::nullopt;
        const Time end = end_at.load(std::memory_order_relaxed);
        if (start >= end) return std::nullopt;
        return end - start;
    }
    void end_recording() {
        end_at.store(now(), std::memory_order_relaxed);
        ended.store(true, std::memory_order_release);  // end_at is visible once ended is
    }
    int cpu_now() const {
        int c = sched_getcpu();
        return c < 0 ? 0 : c % p.ncpus_;
    }

    TaskState *new_task(kernel::TaskParams params) {  // with mu held
        auto t = std::make_unique<TaskState>();
        t->id = static_cast<int>(tasks.size());
        t->name = params.name.empty() ? fmt::format("task{}", t->id) : params.name;
        t->params = std::move(params);
        t->rng.seed(cfg.seed ^ (0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(t->id + 1)));
        tasks.push_back(std::move(t));
        return tasks.back().get();
    }

    // Accounted memory. Each thread keeps its own allocations and frees off the shared counters
    // until an operation of its ends, it ends, they reach kMemBatch either way, or the run ends:
    // one shared count written on every kmalloc moved its line between the CPUs each time (291
    // audit records' allocations took 90 us beside another allocating thread against 20 us
    // alone), where a kernel's per-CPU slabs share nothing. The peak is the highest live count
    // a thread saw (the shared count as last folded plus its own): exact for one thread, and low
    // by at most kMemBatch per other thread allocating at once.
    static constexpr int64_t kMemBatch = 64 * 1024;
    // Adds `delta` to `t`'s bytes; returns the live count as `t` sees it.
    int64_t account_bytes(TaskState &t, int64_t delta) {
        const int64_t mine = t.mem_unflushed.load(std::memory_order_relaxed) + delta;
        t.mem_unflushed.store(mine, std::memory_order_relaxed);
        const int64_t live = live_bytes.load(std::memory_order_relaxed) + mine;
        if (live > t.mem_peak_seen.load(std::memory_order_relaxed))
            t.mem_peak_seen.store(live, std::memory_order_relaxed);
        if (mine >= kMemBatch || mine <= -kMemBatch) fold_bytes(t);
        return live;
    }
    // Folds `t`'s bytes and the peak it saw into the shared counts (only what changed).
    void fold_bytes(TaskState &t) {
        const int64_t mine = t.mem_unflushed.exchange(0, std::memory_order_relaxed);
        const int64_t live = mine != 0 ? live_bytes.fetch_add(mine) + mine : live_bytes.load();
        const int64_t peak = std::max(live, t.mem_peak_seen.exchange(0, std::memory_order_relaxed));
        for (int64_t p = peak_bytes.load(std::memory_order_relaxed); peak > p;)
            if (peak_bytes.compare_exchange_weak(p, peak)) break;
    }
    // Whether `t` has something to fold in.
    bool bytes_to_fold(const TaskState &t) const {
        return t.mem_unflushed.load(std::memory_order_relaxed) != 0 ||
               t.mem_peak_seen.load(std::memory_order_relaxed) >
                   peak_bytes.load(std::memory_order_relaxed);
    }

    // The calling thread's state; threads the platform did not start (the main thread,
    // liburcu's callback thread) get one on first use.
    TaskState &me() {
        if (tl_ctx.gen == gen) [[likely]]
            return *tl_ctx.task;
        urcu_thread_register();
        TaskState *t;
        {
            std::lock_guard g(mu);
            kernel::TaskParams params;
            params.name =
                tl_in_callback_thread ? "rcu_callbacks" : fmt::format("thread{}", tasks.size());
            t = new_task(std::move(params));
            t->external = true;
        }
        t->stats = &stats.local();
        tl_ctx = {gen, t};
        return *t;
    }

    void violation(TaskState *t, std::string_view kind, std::string message) {
        std::lock_guard g(mu);
        if (!violation_keys.insert(fmt::format("{}\n{}", kind, message)).second) return;
        if (cfg.report_violations) fmt::print(stderr, "locksim: {}: {}\n", kind, message);
        violations.push_back(kernel::Violation{std::string(kind), now(), t ? cpu_now() : -1,
                                               t ? t->name : std::string(), std::move(message)});
    }

    void check_sleep(TaskState &t, const Site &site) {
        if (t.atomic())
            violation(&t, "sleep_in_atomic",
                      fmt::format("sleeping function called from invalid context: {} in {} "
                                  "(preempt count {}, irqs {})",
                                  site.str(), t.name, t.preempt_count, t.irqs_off ? "off" : "on"));
    }

    void start_thread(TaskState *t);
    void thread_main(TaskState *t);

    // --- would-be-atomic sections (accounting.cpp)
    void open_section(TaskState &t, Section &s, const Site &site, Time at);
    void close_section(TaskState &t, Section &s, bool irq, const Site &end, Time at);
    void preempt_inc(TaskState &t, const Site &site, Time at);
    void preempt_dec(TaskState &t, const Site &site, Time at);

    // --- the collector's side of the sample queues (accounting.cpp)
    void drain();

    // --- the results (run_results.cpp)
    kernel::RunResults collect(Time duration);
};

}  // namespace locksim::real
