// The real platform (see real_platform.h): tasks on host threads, locks from real/locks.h,
// liburcu for RCU, accounted memory, would-be-atomic sections and the results of a run.
#include "real/real_platform.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

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
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "real/locks.h"
#include "real/urcu.h"

namespace locksim::real {

using kernel::AllocKind;
using kernel::Label;
using kernel::LockKind;
using kernel::LockMode;
using kernel::Site;

namespace {

constexpr uint64_t kStillPublished = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kAllocMagic = 0x6c6b736d;  // "lksm"
constexpr uint32_t kFreedMagic = 0x66726565;

std::atomic<uint64_t> g_platform_gen{0};

}  // namespace

#if defined(__SANITIZE_THREAD__)
// liburcu is not instrumented: its internal hand-offs (rcu_barrier's completion, the callback
// queue, the grace-period futex) look like races to ThreadSanitizer. What they order for our
// code is annotated in real/urcu.h.
extern "C" const char *__tsan_default_suppressions() {
    return "race:liburcu-memb.so\n"
           "race:liburcu-cds.so\n"
           "race:liburcu-common.so\n"
           "race:urcu_common_wake_up_gp\n";
}
#endif

namespace {

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

struct OpFrame {
    Label label;
    Time start;
    int64_t peak_live;
};

// Statistics of one thread, merged after the run.
struct ThreadStats {
    std::vector<kernel::OpStats> ops;  // by label id
    std::vector<uint8_t> op_used;
    std::vector<Time> compute_ns;          // by label id
    std::vector<kernel::LockStats> locks;  // by lock class
    std::vector<kernel::CpuStats> cpus;
    kernel::Histogram preempt_off, irqs_off;
    Time preempt_off_total = 0, irqs_off_total = 0;
    std::vector<Time> preempt_off_open, irqs_off_open;  // sections open when the run ended
    std::map<std::string, kernel::Histogram> wakeup;
    std::map<std::string, Time> wakeup_open;
    kernel::RcuStats rcu;
    uint64_t allocs_atomic = 0, allocs_sleeping = 0, frees = 0;
    int64_t bytes_atomic = 0, bytes_sleeping = 0;
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

unsigned long pub_hash(const void *p) {
    auto v = reinterpret_cast<uintptr_t>(p);
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    return static_cast<unsigned long>(v);
}

int pub_match(cds_lfht_node *node, const void *key) {
    PubNode *n = caa_container_of(node, PubNode, node);
    tsan_acquire(n);  // published by cds_lfht_add_unique (not instrumented)
    return n->key == key;
}

void pub_free(rcu_head *head) {
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

}  // namespace

struct TaskState {
    int id = 0;
    std::string name;
    kernel::TaskParams params;
    std::function<void()> body;
    std::thread thread;
    bool external = false;  // a thread the platform did not start (main, liburcu's callbacks)
    ThreadStats *stats = nullptr;
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

namespace {
struct ThreadCtx {
    uint64_t gen = 0;
    TaskState *task = nullptr;
};
thread_local ThreadCtx tl_ctx;
thread_local bool tl_in_callback_thread = false;
}  // namespace

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

    // --- would-be-atomic sections
    void open_section(TaskState &t, Section &s, const Site &site, Time at) {
        s.start = at;
        s.cpu = cpu_now();
        s.site = site;
        s.label = t.label();
        urcu_memb_read_lock();  // an atomic section is an RCU reader
    }
    void close_section(TaskState &t, Section &s, bool irq, const Site &end, Time at) {
        urcu_memb_read_unlock();
        tsan_rcu_reader_exit();
        Time len = at - s.start;
        ThreadStats &st = *t.stats;
        const std::optional<Time> open = open_part(s.start);
        if (!recording() && !open) return;
        Site closed_by = end;
        if (open) {
            len = *open;
            (irq ? st.irqs_off_open : st.preempt_off_open).push_back(len);
            closed_by = Site{"(open at the end)", {}};
        }
        (irq ? st.irqs_off : st.preempt_off).record(len);
        (irq ? st.irqs_off_total : st.preempt_off_total) += len;
        kernel::CpuStats &c = st.cpu(s.cpu);
        (irq ? c.irqs_off_ns : c.preempt_off_ns) += len;
        if (!s.label.empty()) {
            kernel::OpStats &o = st.op(s.label);
            (irq ? o.irqs_off_ns : o.preempt_off_ns) += len;
        }
        if (len > keep_threshold.load(std::memory_order_relaxed) &&
            !t.samples.push(
                Sample{irq, s.cpu, t.id, s.label.id(), s.start, len, s.site, closed_by}))
            ++st.samples_dropped;
    }
    void preempt_inc(TaskState &t, const Site &site, Time at) {
        if (t.preempt_count++ == 0) open_section(t, t.poff, site, at);
    }
    void preempt_dec(TaskState &t, const Site &site, Time at) {
        if (t.preempt_count == 0) {
            violation(&t, "preempt_unbalanced",
                      fmt::format("{} in {} with preemption on", site.str(), t.name));
            return;
        }
        if (--t.preempt_count == 0) close_section(t, t.poff, false, site, at);
    }

    // --- the collector's side of the sample queues
    void drain() {
        std::vector<TaskState *> all;
        {
            std::lock_guard g(mu);
            for (auto &t : tasks)
                all.push_back(t.get());
        }
        for (TaskState *t : all) {
            Sample s;
            while (t->samples.pop(s)) {
                ++samples_seen;
                kernel::IntervalStats &k = s.irq ? kept_ioff : kept_poff;
                if (!k.worth_keeping(s.length)) continue;
                k.add(kernel::AtomicInterval{s.cpu, s.start, s.length, t->name,
                                             std::string(kernel::label_name(s.label)),
                                             s.start_site.str(), s.end_site.str()});
            }
        }
        auto full = [](const kernel::IntervalStats &k) {
            return k.longest.size() >= k.keep ? k.longest.back().length : Time{0};
        };
        keep_threshold.store(std::min(full(kept_poff), full(kept_ioff)), std::memory_order_relaxed);
    }

    kernel::RunResults collect(Time duration);
};

// ---------------------------------------------------------------- construction, threads

RealPlatform::RealPlatform(RealConfig cfg) : cfg_(std::move(cfg)), ncpus_(0) {
    s_ = std::make_unique<State>(*this, cfg_);
    const int host = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ncpus_ = cfg_.cpus > 0 ? cfg_.cpus : host;
    s_->kept_poff.keep = s_->kept_ioff.keep = cfg_.keep_longest;
    if (cfg_.checks) {
        s_->pub = cds_lfht_new_flavor(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                                      &urcu_memb_flavor, nullptr);
        if (!s_->pub) throw std::runtime_error("cds_lfht_new failed");
    }
}

RealPlatform::~RealPlatform() {
    request_stop();
    std::vector<TaskState *> join;
    {
        std::lock_guard g(s_->mu);
        for (auto &t : s_->tasks)
            if (t->thread.joinable()) join.push_back(t.get());
    }
    for (TaskState *t : join)
        t->thread.join();
    urcu_thread_register();
    urcu_memb_barrier();  // callbacks queued after run() still need the platform
    if (s_->pub) {
        cds_lfht_iter it;
        urcu_memb_read_lock();
        cds_lfht_first(s_->pub, &it);
        while (cds_lfht_node *n = cds_lfht_iter_get_node(&it)) {
            if (!cds_lfht_del(s_->pub, n))
                urcu_memb_call_rcu(&caa_container_of(n, PubNode, node)->rh, pub_free);
            cds_lfht_next(s_->pub, &it);
        }
        urcu_memb_read_unlock();
        urcu_memb_barrier();
        cds_lfht_destroy(s_->pub, nullptr);
    }
    if (tl_ctx.gen == s_->gen) tl_ctx = {};
}

std::unique_ptr<RealPlatform> make_real_platform(RealConfig cfg) {
    return std::make_unique<RealPlatform>(std::move(cfg));
}

void RealPlatform::State::thread_main(TaskState *t) {
    tl_ctx = {gen, t};
    urcu_thread_register();
    t->stats = &stats.local();
    const unsigned host = std::max(1u, std::thread::hardware_concurrency());
    if (cfg.pin && t->params.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(static_cast<unsigned>(t->params.cpu) % host, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    if (t->params.policy == kernel::Sched::Fifo && cfg.fifo) {
        sched_param sp{};
        sp.sched_priority = std::clamp(t->params.priority, 1, 99);
        if (int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
            std::lock_guard g(mu);
            fifo_note = fmt::format("SCHED_FIFO not permitted ({}): those tasks ran SCHED_OTHER",
                                    rc == EPERM ? "EPERM" : std::to_string(rc));
        }
    }
    kernel::PlatformScope scope(p);
    try {
        t->body();
    } catch (const std::exception &e) {
        violation(t, "task_exception", fmt::format("{} threw: {}", t->name, e.what()));
    }
    if (t->atomic() || !t->held.empty() || t->rcu_nesting > 0)
        violation(t, "lock_held_at_exit",
                  fmt::format("{} exited with {} lock(s) held, preempt count {}, rcu nesting {}",
                              t->name, t->held.size(), t->preempt_count, t->rcu_nesting));
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    t->cpu_time = static_cast<Time>(ts.tv_sec) * kernel::kSec + ts.tv_nsec;
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    t->switches = static_cast<uint64_t>(ru.ru_nvcsw + ru.ru_nivcsw);
    t->last_cpu = cpu_now();
    t->body = nullptr;
    t->timer.reset();
    t->io.reset();
}

void RealPlatform::State::start_thread(TaskState *t) {
    t->thread = std::thread([this, t] { thread_main(t); });
}

void RealPlatform::create_task(kernel::TaskParams params, std::function<void()> body) {
    TaskState *t;
    {
        std::lock_guard g(s_->mu);
        t = s_->new_task(std::move(params));
        t->body = std::move(body);
        if (!s_->started) {
            s_->pending_start.push_back(t);
            return;
        }
    }
    s_->start_thread(t);  // created by a running task: it runs at once
}

void RealPlatform::request_stop() {
    {
        std::lock_guard g(s_->sleep_mu);
        Time unset = -1;
        s_->stop_at.compare_exchange_strong(unset, s_->now());
        stop_.store(true);
    }
    s_->sleep_cv.notify_all();
}

kernel::RunResults RealPlatform::run() {
    namespace asio = boost::asio;
    std::vector<TaskState *> start;
    {
        std::lock_guard g(s_->mu);
        if (s_->started) throw std::logic_error("RealPlatform::run called twice");
        s_->started = true;
        start.swap(s_->pending_start);
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (TaskState *t : start)
        s_->start_thread(t);

    // The collector: drains the sample queues, ends the run after the duration or on a signal.
    asio::io_context io;
    asio::steady_timer end(io, t0 + std::chrono::nanoseconds(cfg_.duration));
    asio::steady_timer tick(io);
    std::optional<asio::signal_set> signals;
    auto finish = [&] {
        request_stop();
        end.cancel();
        tick.cancel();
        if (signals) signals->cancel();
    };
    end.async_wait([&](const boost::system::error_code &ec) {
        if (!ec) finish();
    });
    if (cfg_.handle_signals) {
        signals.emplace(io, SIGINT, SIGTERM);
        signals->async_wait([&](const boost::system::error_code &ec, int) {
            if (ec) return;
            interrupted_.store(true);
            finish();
        });
    }
    std::function<void()> arm = [&] {
        tick.expires_after(std::chrono::milliseconds(2));
        tick.async_wait([&](const boost::system::error_code &ec) {
            if (ec) return;
            s_->drain();
            if (stop_.load())
                finish();
            else
                arm();
        });
    };
    arm();
    io.run();
    const Time ran =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();

    // The drain: join every task (also those started by tasks while we joined) while the work
    // in flight finishes and is recorded; at drain_limit after the stop, recording ends.
    std::atomic<bool> joined{false};
    std::thread joiner([&] {
        for (;;) {
            std::vector<TaskState *> join;
            {
                std::lock_guard g(s_->mu);
                for (auto &t : s_->tasks)
                    if (t->thread.joinable()) join.push_back(t.get());
            }
            if (join.empty()) break;
            for (TaskState *t : join)
                t->thread.join();
        }
        joined.store(true);
    });
    const Time drain_end = s_->stop_at.load() + cfg_.drain_limit;
    while (!joined.load() && s_->now() < drain_end) {
        s_->drain();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    s_->end_recording();
    joiner.join();
    urcu_thread_register();
    urcu_memb_barrier();
    s_->drain();
    return s_->collect(ran);
}

bool RealPlatform::drained() const {
    return !s_->recording();
}

// ---------------------------------------------------------------- time, identity

Time RealPlatform::now() {
    return s_->now();
}

int RealPlatform::smp_processor_id() {
    return s_->cpu_now();
}

kernel::TaskInfo RealPlatform::current_task() {
    TaskState &t = s_->me();
    return {t.id, t.name};
}

uint64_t RealPlatform::get_random_u64() {
    return s_->me().rng();
}

void RealPlatform::sleep_until(Time until, Site site) {
    TaskState &t = s_->me();
    s_->check_sleep(t, site);
    if (t.params.probe) {
        // The probe: a steady_timer on the task's own io_context; how late it woke is recorded.
        if (!t.io) {
            t.io = std::make_unique<boost::asio::io_context>();
            t.timer = std::make_unique<boost::asio::steady_timer>(*t.io);
        }
        t.timer->expires_at(s_->epoch + std::chrono::nanoseconds(until));
        t.timer->async_wait([](const boost::system::error_code &) {});
        t.io->restart();
        t.io->run_one();
        const Time late = s_->now() - until;
        const Time stop = s_->stop_at.load();
        if (stop >= 0 && until > stop) return;  // due after the stop: not counted
        if (s_->recording()) {
            t.stats->wakeup[t.name].record(std::max<Time>(late, 0));
        } else if (auto open = s_->open_part(until)) {
            t.stats->wakeup[t.name].record(*open);
            t.stats->wakeup_open[t.name] = *open;
        }
        return;
    }
    std::unique_lock lk(s_->sleep_mu);
    s_->sleep_cv.wait_until(lk, s_->epoch + std::chrono::nanoseconds(until),
                            [&] { return stop_.load(); });
}

void RealPlatform::cond_resched(Site site) {
    s_->check_sleep(s_->me(), site);
}

// ---------------------------------------------------------------- cost of work

void RealPlatform::charge(Label label, const ss::WorkCounts &, Time host_ns) {
    TaskState &t = s_->me();
    if (!s_->recording()) return;
    ThreadStats &st = *t.stats;
    if (label.id() >= st.compute_ns.size()) st.compute_ns.resize(label.id() + 1, 0);
    st.compute_ns[label.id()] += host_ns;
    if (!t.ops.empty()) st.op(t.label()).compute_ns += host_ns;
}

void RealPlatform::ndelay(Time ns, Label label) {
    const Time start = s_->now();
    while (s_->now() - start < ns)
        cpu_relax();
    if (!label.empty()) charge(label, {}, s_->now() - start);
}

// ---------------------------------------------------------------- preemption, interrupts

void RealPlatform::preempt_disable(Site site) {
    TaskState &t = s_->me();
    s_->preempt_inc(t, site, s_->now());
}

void RealPlatform::preempt_enable(Site site) {
    TaskState &t = s_->me();
    s_->preempt_dec(t, site, s_->now());
}

void RealPlatform::local_irq_disable(Site site) {
    TaskState &t = s_->me();
    if (t.irqs_off) return;
    t.irqs_off = true;
    s_->open_section(t, t.ioff, site, s_->now());
}

void RealPlatform::local_irq_enable(Site site) {
    TaskState &t = s_->me();
    if (!t.irqs_off) return;
    t.irqs_off = false;
    s_->close_section(t, t.ioff, true, site, s_->now());
}

bool RealPlatform::irqs_disabled() {
    return s_->me().irqs_off;
}

// ---------------------------------------------------------------- locks

kernel::LockObject *RealPlatform::lock_create(LockKind kind, std::string_view name) {
    std::lock_guard g(s_->mu);
    std::string n(name);
    auto [it, added] = s_->class_ids.emplace(n, static_cast<int>(s_->classes.size()));
    if (added) s_->classes.emplace_back(n, kind);
    auto l = std::make_unique<RealLock>(kind, name, it->second);
    if (kind == LockKind::Rwsem) l->sem = std::make_unique<SleepingRwSem>();
    if (kind == LockKind::Mutex) l->mutex = std::make_unique<SleepingMutex>();
    s_->locks.push_back(std::move(l));
    return s_->locks.back().get();
}

namespace {
bool spins(LockKind k) {
    return k == LockKind::Spinlock || k == LockKind::Rwlock;
}
size_t mode_index(LockMode m) {
    return m == LockMode::Shared ? 1 : 0;
}
}  // namespace

void RealPlatform::lock_acquire(kernel::LockObject *lo, LockMode mode, Site site) {
    TaskState &t = s_->me();
    auto *l = static_cast<RealLock *>(lo);
    const Time t0 = s_->now();
    if (spins(l->kind))
        s_->preempt_inc(t, site, t0);  // spinning and holding with preemption "off"
    else
        s_->check_sleep(t, site);
    bool waited = false;
    switch (l->kind) {
        case LockKind::Spinlock:
            waited = l->spin.lock();
            break;
        case LockKind::Rwlock:
            waited = mode == LockMode::Shared ? l->rw.read_lock() : l->rw.write_lock();
            break;
        case LockKind::Rwsem:
            waited = mode == LockMode::Shared ? l->sem->down_read() : l->sem->down_write();
            break;
        case LockKind::Mutex:
            waited = l->mutex->lock();
            break;
    }
    const Time t1 = waited ? s_->now() : t0;
    t.held.push_back(Held{lo, mode, t1});
    const size_t m = mode_index(mode);
    if (!s_->recording()) {
        if (auto open = s_->open_part(t0); open && waited) {
            kernel::LockStats &ls = t.stats->lock(l->cls);
            ls.wait[m].record(*open);
            ls.wait_open_at_end[m].push_back(*open);
        }
        return;
    }
    kernel::LockStats &ls = t.stats->lock(l->cls);
    ++ls.acquisitions[m];
    if (waited) {
        ++ls.contended[m];
        ls.wait[m].record(t1 - t0);
        if (!t.ops.empty()) t.stats->op(t.label()).lock_wait_ns += t1 - t0;
    }
}

bool RealPlatform::lock_try(kernel::LockObject *lo, LockMode mode, Site site) {
    TaskState &t = s_->me();
    auto *l = static_cast<RealLock *>(lo);
    const Time t0 = s_->now();
    if (spins(l->kind)) s_->preempt_inc(t, site, t0);
    bool ok = false;
    switch (l->kind) {
        case LockKind::Spinlock:
            ok = l->spin.try_lock();
            break;
        case LockKind::Rwlock:
            ok = mode == LockMode::Shared ? l->rw.try_read_lock() : l->rw.try_write_lock();
            break;
        case LockKind::Rwsem:
            ok = mode == LockMode::Shared ? l->sem->try_down_read() : l->sem->try_down_write();
            break;
        case LockKind::Mutex:
            ok = l->mutex->try_lock();
            break;
    }
    if (!ok) {
        if (spins(l->kind)) s_->preempt_dec(t, site, s_->now());
        return false;
    }
    t.held.push_back(Held{lo, mode, t0});
    if (s_->recording()) ++t.stats->lock(l->cls).acquisitions[mode_index(mode)];
    return true;
}

void RealPlatform::lock_release(kernel::LockObject *lo, LockMode mode, Site site) {
    TaskState &t = s_->me();
    auto *l = static_cast<RealLock *>(lo);
    auto it = std::find_if(t.held.rbegin(), t.held.rend(),
                           [&](const Held &h) { return h.lock == lo && h.mode == mode; });
    if (it == t.held.rend()) {
        s_->violation(&t, "lock_unbalanced",
                      fmt::format("{} of {} '{}' not held by {}", site.str(),
                                  kernel::lock_kind_name(l->kind), l->name, t.name));
        return;
    }
    const Time since = it->since;
    t.held.erase(std::next(it).base());
    switch (l->kind) {
        case LockKind::Spinlock:
            l->spin.unlock();
            break;
        case LockKind::Rwlock:
            if (mode == LockMode::Shared)
                l->rw.read_unlock();
            else
                l->rw.write_unlock();
            break;
        case LockKind::Rwsem:
            if (mode == LockMode::Shared)
                l->sem->up_read();
            else
                l->sem->up_write();
            break;
        case LockKind::Mutex:
            l->mutex->unlock();
            break;
    }
    const Time t2 = s_->now();
    if (s_->recording()) t.stats->lock(l->cls).hold[mode_index(mode)].record(t2 - since);
    if (spins(l->kind)) s_->preempt_dec(t, site, t2);
}

// ---------------------------------------------------------------- RCU

void RealPlatform::rcu_read_lock(Site) {
    TaskState &t = s_->me();
    urcu_memb_read_lock();
    if (t.rcu_nesting++ == 0 && cfg_.checks) {
        // Ordered after the liburcu read lock: a grace period that did not wait for this reader
        // began before this increment, so every object it unpublished has a smaller cutoff.
        t.rcu_start_seq.store(s_->rcu_seq.fetch_add(1) + 1);
        t.rcu_active.store(1);
    }
}

void RealPlatform::rcu_read_unlock(Site site) {
    TaskState &t = s_->me();
    if (t.rcu_nesting == 0) {
        s_->violation(&t, "rcu_unlock_unbalanced",
                      fmt::format("{} in {} outside a read section", site.str(), t.name));
        return;
    }
    if (--t.rcu_nesting == 0 && cfg_.checks) t.rcu_active.store(0);
    urcu_memb_read_unlock();
    tsan_rcu_reader_exit();
}

void RealPlatform::synchronize_rcu(bool expedited, Site site) {
    TaskState &t = s_->me();
    if (t.rcu_nesting > 0) {
        s_->violation(&t, "synchronize_rcu_in_reader",
                      fmt::format("{} in {} inside an RCU read section (would never return)",
                                  site.str(), t.name));
        return;
    }
    if (t.atomic()) {
        // An atomic section is a reader here too: waiting would never return.
        s_->check_sleep(t, site);
        return;
    }
    const Time t0 = s_->now();
    urcu_memb_synchronize_rcu();
    tsan_rcu_gp_end();
    const Time len = s_->now() - t0;
    if (!s_->recording()) return;
    kernel::RcuStats &r = t.stats->rcu;
    if (expedited) {
        ++r.expedited_grace_periods;
        r.expedited_grace_period_ns.record(len);
    } else {
        ++r.grace_periods;
        r.grace_period_ns.record(len);
    }
    if (!t.ops.empty()) {
        kernel::OpStats &o = t.stats->op(t.label());
        o.gp_wait_ns += len;
        ++o.grace_periods;
    }
}

namespace {
struct CallRcuPayload {
    RealPlatform *platform;
    RealPlatform::State *state;
    std::function<void()> fn;
};
struct CallRcu {  // standard layout, for caa_container_of
    rcu_head head;
    CallRcuPayload *c;
};
}  // namespace

void RealPlatform::call_rcu(std::function<void()> callback) {
    s_->me();  // registers the thread with liburcu
    auto *cr = new CallRcu{{}, new CallRcuPayload{this, s_.get(), std::move(callback)}};
    tsan_release(cr);
    urcu_memb_call_rcu(&cr->head, [](rcu_head *h) {
        auto *cr = caa_container_of(h, CallRcu, head);
        tsan_acquire(cr);
        std::unique_ptr<CallRcuPayload> c(cr->c);
        delete cr;
        tsan_rcu_gp_end();
        tl_in_callback_thread = true;
        {
            kernel::PlatformScope scope(*c->platform);
            State &s = *c->state;
            TaskState &t = s.me();
            static const Site batch{"rcu_do_batch", {}};
            if (s.recording()) ++t.stats->rcu.callbacks_invoked;
            s.preempt_inc(t, batch, s.now());  // softirq-like: must not sleep
            c->fn();
            s.preempt_dec(t, batch, s.now());
        }
    });
}

void RealPlatform::rcu_dereferenced(const void *, Site site) {
    TaskState &t = s_->me();
    if (t.rcu_nesting == 0 && !t.atomic())
        s_->violation(&t, "suspicious_rcu_usage",
                      fmt::format("{} in {} outside an RCU read section (use "
                                  "rcu_dereference_protected on the update side)",
                                  site.str(), t.name));
}

namespace {

// The publication record of `key`, added when absent (inside a liburcu read section).
PubNode *pub_get(cds_lfht *ht, const void *key, uint64_t cutoff_if_new) {
    const unsigned long h = pub_hash(key);
    cds_lfht_iter it;
    cds_lfht_lookup(ht, h, pub_match, key, &it);
    if (cds_lfht_node *n = cds_lfht_iter_get_node(&it)) return caa_container_of(n, PubNode, node);
    auto *node = new PubNode;
    cds_lfht_node_init(&node->node);
    node->key = key;
    node->cutoff.store(cutoff_if_new);
    tsan_release(node);
    cds_lfht_node *got = cds_lfht_add_unique(ht, h, pub_match, key, &node->node);
    if (got != &node->node) {
        delete node;
        return caa_container_of(got, PubNode, node);
    }
    return node;
}

}  // namespace

void RealPlatform::rcu_published(const void *old_p, const void *new_p) {
    if (!s_->pub) return;
    s_->me();
    PubReader reader;
    if (new_p) pub_get(s_->pub, new_p, kStillPublished)->cutoff.store(kStillPublished);
    if (old_p && old_p != new_p) {
        const uint64_t cutoff = s_->rcu_seq.fetch_add(1) + 1;
        pub_get(s_->pub, old_p, cutoff)->cutoff.store(cutoff);
    }
}

// ---------------------------------------------------------------- memory

void *RealPlatform::mem_alloc(size_t bytes, AllocKind kind, Site site) {
    TaskState &t = s_->me();
    const bool sleeps = kind != AllocKind::KmallocAtomic;
    if (sleeps && (t.atomic() || t.rcu_nesting > 0))
        s_->violation(&t, "sleep_in_atomic",
                      fmt::format("sleeping function called from invalid context: {} in {} "
                                  "(preempt count {}, irqs {}, rcu nesting {}); use Gfp::Atomic",
                                  site.str(), t.name, t.preempt_count, t.irqs_off ? "off" : "on",
                                  t.rcu_nesting));
    auto *h = static_cast<AllocHeader *>(::operator new(sizeof(AllocHeader) + (bytes ? bytes : 1)));
    const auto n = static_cast<int64_t>(bytes);
    h->magic = kAllocMagic;
    h->kind = static_cast<uint8_t>(kind);
    new (&h->bytes) std::atomic<int64_t>(n);
    const int64_t live = s_->live_bytes.fetch_add(n) + n;
    for (int64_t peak = s_->peak_bytes.load(); live > peak;)
        if (s_->peak_bytes.compare_exchange_weak(peak, live)) break;
    ThreadStats &st = *t.stats;
    (sleeps ? st.allocs_sleeping : st.allocs_atomic) += 1;
    (sleeps ? st.bytes_sleeping : st.bytes_atomic) += n;
    for (OpFrame &f : t.ops)
        f.peak_live = std::max(f.peak_live, live);
    if (!t.ops.empty() && s_->recording()) st.op(t.label()).bytes_allocated += n;
    return h + 1;
}

void RealPlatform::mem_charge(const void *p, int64_t bytes) {
    TaskState &t = s_->me();
    auto *h = static_cast<AllocHeader *>(const_cast<void *>(p)) - 1;
    if (h->magic != kAllocMagic) {
        s_->violation(&t, "bad_free", "kmem_charge on memory that is not an accounted allocation");
        return;
    }
    h->bytes.fetch_add(bytes);
    const int64_t live = s_->live_bytes.fetch_add(bytes) + bytes;
    for (int64_t peak = s_->peak_bytes.load(); live > peak;)
        if (s_->peak_bytes.compare_exchange_weak(peak, live)) break;
    for (OpFrame &f : t.ops)
        f.peak_live = std::max(f.peak_live, live);
    if (!t.ops.empty() && s_->recording()) t.stats->op(t.label()).bytes_allocated += bytes;
}

// The RCU check (torture runs): an object freed while readers that began before it was
// unpublished may still use it, or while it is still published, is reported, and kept intact
// (never freed) so that those readers do not crash before the run reports it.
bool RealPlatform::mem_quarantine(const void *p, Site site) {
    if (!s_->pub) return false;
    TaskState &t = s_->me();
    cds_lfht_iter it;
    cds_lfht_lookup(s_->pub, pub_hash(p), pub_match, p, &it);
    cds_lfht_node *n = cds_lfht_iter_get_node(&it);
    if (!n) return false;
    PubNode *node = caa_container_of(n, PubNode, node);
    const uint64_t cutoff = node->cutoff.load();
    bool unsafe = cutoff == kStillPublished;
    if (unsafe)
        s_->violation(
            &t, "rcu_free_published",
            fmt::format("{} frees an object that is still published under RCU", site.str()));
    std::vector<std::string> readers;
    {
        std::lock_guard g(s_->mu);
        for (auto &r : s_->tasks)
            if (r.get() != &t && r->rcu_active.load() && r->rcu_start_seq.load() < cutoff)
                readers.push_back(r->name);
    }
    for (const std::string &r : readers)
        s_->violation(&t, "rcu_free_in_use",
                      fmt::format("{} frees an object published under RCU while {} may "
                                  "still hold it; wait for a grace period first",
                                  site.str(), r));
    if (!cds_lfht_del(s_->pub, n)) urcu_memb_call_rcu(&node->rh, pub_free);
    if (!unsafe && readers.empty()) return false;
    std::lock_guard g(s_->quarantine.mu);
    s_->quarantine.held.push_back(static_cast<AllocHeader *>(const_cast<void *>(p)) - 1);
    return true;
}

void RealPlatform::mem_free(const void *p, Site site) {
    TaskState &t = s_->me();
    auto *h = static_cast<AllocHeader *>(const_cast<void *>(p)) - 1;
    if (h->magic != kAllocMagic) {
        s_->violation(&t, "bad_free",
                      fmt::format("{} of memory that is not allocated (double free?)", site.str()));
        return;
    }
    s_->live_bytes.fetch_sub(h->bytes.load());
    ++t.stats->frees;
    h->magic = kFreedMagic;
    h->bytes.~atomic();
    ::operator delete(h);
}

// ---------------------------------------------------------------- operations

void RealPlatform::op_begin(Label label) {
    TaskState &t = s_->me();
    t.ops.push_back(OpFrame{label, s_->now(), s_->live_bytes.load(std::memory_order_relaxed)});
}

void RealPlatform::op_end(Label label) {
    TaskState &t = s_->me();
    const Time end = s_->now();
    if (t.ops.empty() || t.ops.back().label != label) {
        s_->violation(&t, "op_scope_mismatch",
                      fmt::format("operation '{}' ended in {} while another was innermost",
                                  label.name(), t.name));
        return;
    }
    OpFrame f = t.ops.back();
    t.ops.pop_back();
    if (!s_->recording()) {
        if (auto open = s_->open_part(f.start)) {
            kernel::OpStats &s = t.stats->op(label);
            s.latency.record(*open);
            s.open_at_end.push_back(*open);
        }
        return;
    }
    kernel::OpStats &s = t.stats->op(label);
    ++s.completed;
    s.latency.record(end - f.start);
    s.peak_live_bytes = std::max(s.peak_live_bytes, f.peak_live);
}

// ---------------------------------------------------------------- results

kernel::RunResults RealPlatform::State::collect(Time duration) {
    kernel::RunResults r;
    r.platform = "real";
    r.duration_ns = duration;
    r.seed = cfg.seed;
    const unsigned host = std::max(1u, std::thread::hardware_concurrency());
    r.config = {
        {"cpus", std::to_string(p.ncpus_)},
        {"host_cpus", std::to_string(host)},
        {"cost_model", "host time"},
        {"atomic_sections",
         "would-be-atomic: preemption and interrupts stay on in user space; the sections are "
         "timed as if they were atomic"},
        {"rcu", "liburcu memb (expedited grace periods are normal ones)"},
        {"pin", cfg.pin ? "true" : "false"},
        {"checks", cfg.checks ? "true" : "false"},
        {"sched_fifo", fifo_note.empty() ? "as requested" : fifo_note},
    };
    std::vector<kernel::OpStats> ops;
    std::vector<uint8_t> used;
    std::vector<Time> compute;
    std::vector<kernel::LockStats> locks(classes.size());
    std::vector<kernel::CpuStats> cpus(static_cast<size_t>(p.ncpus_));
    uint64_t dropped = 0;
    for (ThreadStats &st : stats) {
        if (st.ops.size() > ops.size()) {
            ops.resize(st.ops.size());
            used.resize(st.ops.size(), 0);
        }
        for (size_t i = 0; i < st.ops.size(); ++i) {
            if (!st.op_used[i]) continue;
            used[i] = 1;
            kernel::OpStats &o = ops[i];
            const kernel::OpStats &s = st.ops[i];
            o.completed += s.completed;
            o.latency.merge(s.latency);
            o += s;
            o.caused_wait_ns += s.caused_wait_ns;
            o.peak_live_bytes = std::max(o.peak_live_bytes, s.peak_live_bytes);
            o.open_at_end.insert(o.open_at_end.end(), s.open_at_end.begin(), s.open_at_end.end());
        }
        if (st.compute_ns.size() > compute.size()) compute.resize(st.compute_ns.size(), 0);
        for (size_t i = 0; i < st.compute_ns.size(); ++i)
            compute[i] += st.compute_ns[i];
        for (size_t i = 0; i < st.locks.size() && i < locks.size(); ++i)
            for (int m = 0; m < 2; ++m) {
                locks[i].acquisitions[m] += st.locks[i].acquisitions[m];
                locks[i].contended[m] += st.locks[i].contended[m];
                locks[i].wait[m].merge(st.locks[i].wait[m]);
                locks[i].hold[m].merge(st.locks[i].hold[m]);
                locks[i].wait_open_at_end[m].insert(locks[i].wait_open_at_end[m].end(),
                                                    st.locks[i].wait_open_at_end[m].begin(),
                                                    st.locks[i].wait_open_at_end[m].end());
            }
        for (size_t i = 0; i < st.cpus.size(); ++i) {
            kernel::CpuStats &c = cpus[i % cpus.size()];
            c.preempt_off_ns += st.cpus[i].preempt_off_ns;
            c.irqs_off_ns += st.cpus[i].irqs_off_ns;
        }
        r.preempt_off.length.merge(st.preempt_off);
        r.preempt_off.total += st.preempt_off_total;
        r.irqs_off.length.merge(st.irqs_off);
        r.irqs_off.total += st.irqs_off_total;
        r.preempt_off.open_at_end.insert(r.preempt_off.open_at_end.end(),
                                         st.preempt_off_open.begin(), st.preempt_off_open.end());
        r.irqs_off.open_at_end.insert(r.irqs_off.open_at_end.end(), st.irqs_off_open.begin(),
                                      st.irqs_off_open.end());
        for (const auto &[name, h] : st.wakeup)
            r.wakeup_latency[name].merge(h);
        for (const auto &[name, late] : st.wakeup_open)
            r.wakeup_open_at_end[name] = late;
        r.rcu.grace_periods += st.rcu.grace_periods;
        r.rcu.expedited_grace_periods += st.rcu.expedited_grace_periods;
        r.rcu.callbacks_invoked += st.rcu.callbacks_invoked;
        r.rcu.grace_period_ns.merge(st.rcu.grace_period_ns);
        r.rcu.expedited_grace_period_ns.merge(st.rcu.expedited_grace_period_ns);
        r.memory.allocs_atomic += st.allocs_atomic;
        r.memory.allocs_sleeping += st.allocs_sleeping;
        r.memory.bytes_atomic += st.bytes_atomic;
        r.memory.bytes_sleeping += st.bytes_sleeping;
        r.memory.frees += st.frees;
        dropped += st.samples_dropped;
    }
    for (size_t i = 0; i < ops.size(); ++i)
        if (used[i]) r.ops[std::string(kernel::label_name(static_cast<uint32_t>(i)))] = ops[i];
    for (size_t i = 0; i < compute.size(); ++i)
        if (compute[i])
            r.compute_ns[std::string(kernel::label_name(static_cast<uint32_t>(i)))] = compute[i];
    for (size_t i = 0; i < classes.size(); ++i) {
        locks[i].kind = std::string(kernel::lock_kind_name(classes[i].second));
        r.locks[classes[i].first] = locks[i];
    }
    for (auto &t : tasks) {
        if (t->external) continue;
        kernel::CpuStats &c = cpus[static_cast<size_t>(t->last_cpu) % cpus.size()];
        c.busy_ns += t->cpu_time;
        c.context_switches += t->switches;
    }
    r.cpus = std::move(cpus);
    r.preempt_off.keep = kept_poff.keep;
    r.preempt_off.longest = kept_poff.longest;
    r.irqs_off.keep = kept_ioff.keep;
    r.irqs_off.longest = kept_ioff.longest;
    r.memory.live_bytes = live_bytes.load();
    r.memory.peak_bytes = peak_bytes.load();
    r.config["samples_dropped"] = std::to_string(dropped);
    {
        std::lock_guard g(mu);
        r.violations = violations;
    }
    return r;
}

}  // namespace locksim::real
