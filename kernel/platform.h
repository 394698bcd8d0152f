// The kernel-like API that lock strategies and workloads are written against: the platform
// interface and what every caller shares (tasks, time, charged work, memory, operations). Each
// primitive has a header of its own, as the kernel's kernel/locking/ does: preempt.h (preemption
// and interrupt state), spinlock.h, rwlock.h, rwsem.h, mutex.h (over lock_handle.h), rcu.h,
// seqlock.h, percpu_rwsem.h.
//
// Code written against this header reads like kernel code and runs unchanged on either platform:
// the discrete-event simulator (sim/, simulated CPUs and time) or host threads (real/). Each
// platform implements the small virtual interface `Platform`; everything else here is inline
// glue with kernel names, so a strategy says `read_lock(policy_rwlock)` and
// `rcu_dereference(policy)` exactly where the kernel patch it models does.
//
// Execution model. A task is ordinary blocking C++ code. Between two calls into this API it runs
// on the host in zero platform time; time passes only inside the calls: `compute()` (real core
// work, charged by the platform's cost model), `ndelay()`, lock waits, sleeps and the primitive
// costs of the calls themselves. On the simulator preemption happens inside those calls, exactly
// where the preempt count is zero and interrupts are on.
//
// The current platform is a thread-local pointer installed with PlatformScope; the simulator
// installs it around a run, the real platform on each of its threads. Lock objects keep the
// platform they were created on and may be members of strategy objects.
//
// Sites: every call that opens or closes an atomic section takes the caller's source location by
// default, so the preempt-off report names `read_lock @ rwlock.cpp:57` as ftrace would.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include "util/source_location.h"
#include "util/time.h"

#include "util/work_meter.h"

namespace locksim::kernel {

using locksim::kMsec;
using locksim::kNsec;
using locksim::kSec;
using locksim::kUsec;
using locksim::Time;

// An interned name for operations and compute spans ("compute_av", "set_bools"). Interning is
// process-wide and thread-safe; keep hot-path labels in `static const Label` objects.
class Label {
  public:
    Label() = default;
    Label(std::string_view name);  // NOLINT: implicit from string literals on purpose
    Label(const char *name) : Label(std::string_view(name)) {}
    uint32_t id() const { return id_; }
    std::string_view name() const;
    bool empty() const { return id_ == 0; }
    friend bool operator==(Label a, Label b) { return a.id_ == b.id_; }

  private:
    uint32_t id_ = 0;  // 0 is the empty label
};

// The name of a label id (Label::name() of the label with that id).
std::string_view label_name(uint32_t id);

// Where an atomic section or lock operation was opened or closed.
struct Site {
    const char *what = "";
    SourceLocation where{};
    std::string str() const;  // "read_lock @ rwlock.cpp:57"
};

// SCHED_OTHER (the fair class), SCHED_FIFO and SCHED_RR (the real-time class).
enum class Sched : uint8_t { Other, Fifo, Rr };

struct TaskParams {
    std::string name;
    Sched policy = Sched::Other;
    int priority = 0;       // SCHED_FIFO / SCHED_RR priority 1..99 (higher runs first)
    int cpu = -1;           // pinned to this CPU, or -1 for any
    bool probe = false;     // a latency probe: the lateness of each sleep_until wake-up is recorded
    int nice = 0;           // SCHED_OTHER nice level, -20..19 (its weight in the fair class)
    std::vector<int> cpus;  // affinity: the CPUs it may run on when cpu is -1 (empty: any)
};

struct TaskInfo {
    int id = -1;
    std::string_view name;
};

enum class LockKind : uint8_t { Spinlock, Rwlock, Rwsem, Mutex, RawSpinlock };
enum class LockMode : uint8_t { Exclusive, Shared };
std::string_view lock_kind_name(LockKind k);

// The platform's state for one lock; each platform derives its own and owns every lock it
// creates (lock objects live as long as their platform).
struct LockObject {
    LockKind kind;
    std::string name;
    LockObject(LockKind k, std::string_view n) : kind(k), name(n) {}
    virtual ~LockObject() = default;
};

// Allocation context: Kernel may sleep (GFP_KERNEL), Atomic may not (GFP_ATOMIC).
enum class Gfp : uint8_t { Kernel, Atomic };
enum class AllocKind : uint8_t { KmallocKernel, KmallocAtomic, Vmalloc };

// What a platform implements. Strategy and workload code calls the free functions below.
class Platform {
  public:
    virtual ~Platform() = default;

    // --- tasks, time, identity ---
    virtual void create_task(TaskParams params, std::function<void()> body) = 0;
    virtual bool should_stop() = 0;  // set when the run's duration is over
    virtual Time now() = 0;
    virtual int num_cpus() = 0;
    virtual int smp_processor_id() = 0;
    virtual TaskInfo current_task() = 0;
    virtual uint64_t get_random_u64() = 0;  // per-task stream derived from the run's seed
    virtual void sleep_until(Time t, Site site) = 0;
    virtual void cond_resched(Site site) = 0;
    // A call that may sleep, whether or not it does this time (CONFIG_DEBUG_ATOMIC_SLEEP's
    // might_sleep): a platform that checks contexts reports one made in atomic context.
    virtual void might_sleep(Site) {}

    // --- cost of work ---
    // Charge core work that has just run: `counts` from the work meter, `host_ns` the host time
    // it took (measured only when measures_host_time()).
    virtual void charge(Label label, const WorkCounts &counts, Time host_ns) = 0;
    virtual bool measures_host_time() = 0;
    // Whether charge() wants the cache lines the work read (WorkCounts::lines).
    virtual int memory_sample_shift() { return -1; }
    // Whether charge() prices the work counts. Where it does not (the host's time is the cost),
    // compute() runs the core with no work meter: counting would only add its own time to the
    // time measured (a tenth of an access decision's on a host measured in bench/README.md).
    virtual bool counts_work() { return true; }
    // Whether the cache model prices streams (a first level: util/work_meter.h kStreamedLine).
    virtual bool memory_streams() { return false; }
    virtual void ndelay(Time ns, Label label) = 0;  // busy work of a known length

    // --- preemption and interrupts ---
    virtual void preempt_disable(Site site) = 0;
    virtual void preempt_enable(Site site) = 0;
    virtual void local_irq_disable(Site site) = 0;
    virtual void local_irq_enable(Site site) = 0;
    virtual bool irqs_disabled() = 0;
    // local_bh_disable / local_bh_enable: softirqs off on this CPU. Without PREEMPT_RT the softirq
    // count is part of preempt_count, so by default a preempt-off section.
    virtual void local_bh_disable(Site site) { preempt_disable(site); }
    virtual void local_bh_enable(Site site) { preempt_enable(site); }
    // CONFIG_PREEMPT_RT: spinlock_t and rwlock_t are sleeping rt_mutex-based locks, and their _irq
    // forms leave interrupts on; raw_spinlock_t is unchanged.
    virtual bool preempt_rt() const { return false; }
    // open_softirq: `action` runs once for each interrupt of the machine's sources of kind
    // `irq_kind` ("network", "block", "timer"), in the context the kernel runs that softirq work
    // in: softirq context on the interrupted CPU, or under PREEMPT_RT the interrupt's thread.
    // False where the platform has no such interrupt source (the real-thread platform has none).
    virtual bool open_softirq(std::string_view irq_kind, std::function<void()> action) {
        (void)irq_kind;
        (void)action;
        return false;
    }

    // --- locks ---
    virtual LockObject *lock_create(LockKind kind, std::string_view name) = 0;
    virtual void lock_acquire(LockObject *lock, LockMode mode, Site site) = 0;
    virtual bool lock_try(LockObject *lock, LockMode mode, Site site) = 0;
    virtual void lock_release(LockObject *lock, LockMode mode, Site site) = 0;
    // Releases a lock taken with interrupts off and turns them back on. A platform that models
    // preemption keeps it off until interrupts are on again (the kernel's order, below).
    virtual void lock_release_irq(LockObject *lock, LockMode mode, Site site) {
        lock_release(lock, mode, site);
        local_irq_enable(site);
    }

    // --- RCU ---
    virtual void rcu_read_lock(Site site) = 0;
    virtual void rcu_read_unlock(Site site) = 0;
    virtual void synchronize_rcu(bool expedited, Site site) = 0;
    virtual void call_rcu(std::function<void()> callback) = 0;
    // Hooks for the self-checks: a pointer read under RCU, and a pointer (re)published.
    virtual void rcu_dereferenced(const void *p, Site site) = 0;
    virtual void rcu_published(const void *old_p, const void *new_p) = 0;

    // --- memory accounting ---
    virtual void *mem_alloc(size_t bytes, AllocKind kind, Site site) = 0;
    virtual void mem_free(const void *p, Site site) = 0;
    // Asked before an accounted object is destroyed and freed. A platform whose self-check finds
    // the free unsafe (a reader may still hold the object) reports it and returns true: the
    // object is then left intact and never freed, as KASAN's quarantine keeps freed memory from
    // reuse, so the bug is reported instead of crashing the reader that still uses it.
    virtual bool mem_quarantine(const void *, Site) { return false; }
    virtual void mem_charge(const void *p, int64_t bytes) = 0;

    // --- operation scopes (per-label latency and throughput) ---
    virtual void op_begin(Label label) = 0;
    virtual void op_end(Label label) = 0;
};

namespace detail {
// Inline, so that the core's many calls read the thread's pointer in place (no call).
inline thread_local Platform *tl_platform = nullptr;
[[noreturn]] void no_platform();
}  // namespace detail

// The platform of the calling thread; throws std::logic_error when none is installed.
inline Platform &current() {
    Platform *p = detail::tl_platform;
    if (!p) [[unlikely]]
        detail::no_platform();
    return *p;
}
inline Platform *current_or_null() {
    return detail::tl_platform;
}

// Installs a platform as the calling thread's current one for the scope's lifetime.
class PlatformScope {
  public:
    explicit PlatformScope(Platform &p);
    ~PlatformScope();
    PlatformScope(const PlatformScope &) = delete;
    PlatformScope &operator=(const PlatformScope &) = delete;

  private:
    Platform *prev_;
};

using Loc = SourceLocation;

// ---------------------------------------------------------------- tasks, time

inline void create_task(TaskParams params, std::function<void()> body) {
    current().create_task(std::move(params), std::move(body));
}
inline bool open_softirq(std::string_view irq_kind, std::function<void()> action) {
    return current().open_softirq(irq_kind, std::move(action));
}
inline bool kthread_should_stop() {
    return current().should_stop();
}
inline Time now() {
    return current().now();
}
inline int num_online_cpus() {
    return current().num_cpus();
}
inline int smp_processor_id() {
    return current().smp_processor_id();
}
inline TaskInfo current_task() {
    return current().current_task();
}
inline uint64_t get_random_u64() {
    return current().get_random_u64();
}
inline uint64_t get_random_below(uint64_t n) {
    return n ? get_random_u64() % n : 0;
}

inline void sleep_until(Time t, Loc loc = Loc::current()) {
    current().sleep_until(t, {"sleep_until", loc});
}
inline void sleep_for(Time ns, Loc loc = Loc::current()) {
    Platform &p = current();
    p.sleep_until(p.now() + ns, {"sleep_for", loc});
}
inline void msleep(unsigned ms, Loc loc = Loc::current()) {
    Platform &p = current();
    p.sleep_until(p.now() + static_cast<Time>(ms) * kMsec, {"msleep", loc});
}
inline void might_sleep(Loc loc = Loc::current()) {
    current().might_sleep({"might_sleep", loc});
}
inline void cond_resched(Loc loc = Loc::current()) {
    current().cond_resched({"cond_resched", loc});
}

// ---------------------------------------------------------------- cost of work

namespace detail {
// The compute() span running on this thread: what compute_break() closes and reopens.
struct ComputeSpan {
    Platform *platform;
    Label label;
    WorkCounts counts;
    bool timed;
    WorkCounts *meter;  // &counts, or none where the platform does not price them
    std::chrono::steady_clock::time_point t0;
    WorkCounts *outer_meter;
    ComputeSpan *outer;

    Time host_ns() const {
        return timed ? std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - t0)
                           .count()
                     : Time{0};
    }
};
inline thread_local ComputeSpan *tl_span = nullptr;

// Opens a span: its counts become the work meter until close() (or the scope's end).
struct ComputeScope {
    ComputeSpan span;
    bool open = true;
    // The fields are set one by one: an aggregate initialisation would zero the whole span
    // first, with a `rep stos` slow to start (the counts zero themselves, work_meter.h).
    explicit ComputeScope(Platform &p, Label label) {
        span.platform = &p;
        span.label = label;
        span.timed = p.measures_host_time();
        span.outer_meter = ThreadSlot<WorkCounts>::current;
        span.outer = tl_span;
        if (span.timed) span.t0 = std::chrono::steady_clock::now();
        span.counts.line_shift = p.memory_sample_shift();
        span.counts.streams = p.memory_streams();
        span.meter = p.counts_work() ? &span.counts : nullptr;
        tl_span = &span;
        ThreadSlot<WorkCounts>::current = span.meter;
    }
    // Restores the thread's meter and charges the span's remaining work.
    void close() {
        open = false;
        tl_span = span.outer;
        ThreadSlot<WorkCounts>::current = span.outer_meter;
        span.platform->charge(span.label, span.counts, span.host_ns());
    }
    ~ComputeScope() {
        if (!open) return;
        tl_span = span.outer;
        ThreadSlot<WorkCounts>::current = span.outer_meter;
    }
    ComputeScope(const ComputeScope &) = delete;
    ComputeScope &operator=(const ComputeScope &) = delete;
};
}  // namespace detail

// Runs `fn` (real security-server work) now, on the host, and charges its cost to the calling
// task: the work units it counted times the CPU profile (`counted`), or its host time times a
// scale (`measured`). On the simulator the charged time passes preemptibly when the preempt
// count is zero and interrupts are on, and as one atomic span otherwise.
template <class F>
auto compute(Label label, F &&fn) {
    detail::ComputeScope scope(current(), label);
    if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
        std::forward<F>(fn)();
        scope.close();
    } else {
        auto result = std::forward<F>(fn)();
        scope.close();
        return result;
    }
}

// compute() for kernel code the core does not execute but only counts (an audit record's
// formatting, the flush of a cache the core does not keep): `fn` only counts work. A run prices
// it as any other work; where the simulator is compared with the real platform (validate),
// which runs nothing for it, it is priced at nothing (SimConfig::price_stand_ins).
template <class F>
void stand_in(Label label, F &&fn) {
    detail::ComputeScope scope(current(), label);
    scope.span.counts.stand_in = true;
    std::forward<F>(fn)();
    scope.close();
}

// Whether the calling thread is inside compute() (a task's core work, not setup code).
inline bool in_compute() {
    return detail::tl_span != nullptr;
}

// The label of the compute() span running on this thread (inside compute() only).
inline Label compute_label() {
    return detail::tl_span->label;
}

// From inside compute(): charges the work counted so far to the span's label, runs `fn` outside
// the span (it may make platform calls: take a lock, reschedule), then goes on counting under
// `next`. Returns the label the span had. This is how core code that takes a lock in the kernel
// (the SID table's spinlock) gets its section on the platform without knowing the platform.
template <class F>
Label compute_break(Label next, F &&fn) {
    detail::ComputeSpan *s = detail::tl_span;
    const Label prev = s->label;
    detail::tl_span = s->outer;
    ThreadSlot<WorkCounts>::current = s->outer_meter;
    s->platform->charge(prev, s->counts, s->host_ns());
    s->counts.clear();
    std::forward<F>(fn)();
    s->label = next;
    if (s->timed) s->t0 = std::chrono::steady_clock::now();
    detail::tl_span = s;
    ThreadSlot<WorkCounts>::current = s->meter;
    return prev;
}

// Busy work of a known length (a stand-in for code the core does not model).
inline void ndelay(Time ns, Label label = {}) {
    current().ndelay(ns, label);
}

// ---------------------------------------------------------------- memory

// Accounted allocations. Kernel may sleep (a sleeping call in atomic context is reported);
// Atomic may not. The bytes are live until freed; mem_charge (kmem_charge) adds what an object
// owns beyond its own size, such as a duplicated policy's tables.
inline void *kmalloc(size_t size, Gfp gfp, Loc loc = Loc::current()) {
    return current().mem_alloc(
        size, gfp == Gfp::Atomic ? AllocKind::KmallocAtomic : AllocKind::KmallocKernel,
        {"kmalloc", loc});
}
inline void kfree(const void *p, Loc loc = Loc::current()) {
    if (p && !current().mem_quarantine(p, {"kfree", loc})) current().mem_free(p, {"kfree", loc});
}
inline void *vmalloc(size_t size, Loc loc = Loc::current()) {
    return current().mem_alloc(size, AllocKind::Vmalloc, {"vmalloc", loc});
}
inline void vfree(const void *p, Loc loc = Loc::current()) {
    if (p && !current().mem_quarantine(p, {"vfree", loc})) current().mem_free(p, {"vfree", loc});
}
inline void kmem_charge(const void *p, int64_t bytes) {
    current().mem_charge(p, bytes);
}

// An object in accounted memory (kmalloc + constructor); free it with kdelete.
template <class T, class... A>
T *knew(Gfp gfp, A &&...args) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned type");
    void *mem = kmalloc(sizeof(T), gfp);
    try {
        return new (mem) T(std::forward<A>(args)...);
    } catch (...) {
        kfree(mem);
        throw;
    }
}
template <class T>
void kdelete(T *p, Loc loc = Loc::current()) {
    if (!p || current().mem_quarantine(p, {"kfree", loc})) return;
    p->~T();
    current().mem_free(p, {"kfree", loc});
}

// ---------------------------------------------------------------- operations

// Marks one labelled operation (a syscall, a boolean commit): its latency is recorded per label,
// and preempt-off sections, lock waits and allocations inside it are attributed to the label.
class OpScope {
  public:
    explicit OpScope(Label label) : label_(label), platform_(&current()) {
        platform_->op_begin(label_);
    }
    ~OpScope() { platform_->op_end(label_); }
    OpScope(const OpScope &) = delete;
    OpScope &operator=(const OpScope &) = delete;

  private:
    Label label_;
    Platform *platform_;
};

}  // namespace locksim::kernel
