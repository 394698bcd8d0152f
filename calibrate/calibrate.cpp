#include "calibrate/calibrate.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <sys/utsname.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <semaphore>
#include <sstream>
#include <thread>

#include "kernel/platform.h"
#include "kernel/preempt.h"
#include "kernel/rcu.h"
#include "kernel/rwsem.h"
#include "kernel/spinlock.h"
#include "real/real_platform.h"
#include "real/urcu.h"
#include "sim/cache_model.h"
#include "ss/policydb.h"
#include "ss/services.h"
#include "ss/sidtab.h"
#include "strategies/rcu_reclaim.h"
#include "util/error.h"
#include "util/line_set.h"
#include "util/median.h"
#include "validate/torture.h"
#include "workloads/policy_facts.h"

namespace locksim {

using locksim::Work;
using locksim::WorkCounts;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t K = locksim::kWorkKinds;
using Vec = std::array<double, K>;

// The fit's system in units of the prior (u_k = w_k / prior_k, every variable of order one):
// row i is a_ik = counts_ik * prior_k / t_i with target 1, and the prior adds
// prior_weight * (u_k - 1)^2. Kept as its normal equations H u = g.
struct FitSystem {
    Vec scale{};
    std::vector<Vec> rows;
    std::array<Vec, K> h{};
    Vec g{};

    FitSystem(const std::vector<CalibrationSample> &samples, const Vec &prior,
              double prior_weight) {
        for (size_t k = 0; k < K; ++k)
            scale[k] = prior[k] > 0 ? prior[k] : 1.0;
        for (const auto &s : samples) {
            if (!(s.host_ns > 0)) continue;
            Vec row{};
            for (size_t k = 0; k < K; ++k)
                row[k] = static_cast<double>(s.counts.n[k]) * scale[k] / s.host_ns;
            rows.push_back(row);
        }
        for (const auto &row : rows)
            for (size_t j = 0; j < K; ++j) {
                g[j] += row[j];
                for (size_t k = 0; k < K; ++k)
                    h[j][k] += row[j] * row[k];
            }
        for (size_t k = 0; k < K; ++k) {
            h[k][k] += prior_weight;
            g[k] += prior_weight;
        }
    }

    // Projected coordinate descent from `u`; the kinds `held` keep their value.
    void solve(Vec &u, const std::array<bool, K> &held) const {
        for (int sweep = 0; sweep < 20000; ++sweep) {
            double moved = 0;
            for (size_t k = 0; k < K; ++k) {
                if (held[k]) continue;
                double r = g[k];
                for (size_t j = 0; j < K; ++j)
                    if (j != k) r -= h[k][j] * u[j];
                double next = std::max(0.0, r / h[k][k]);
                moved = std::max(moved, std::abs(next - u[k]));
                u[k] = next;
            }
            if (moved < 1e-12) break;
        }
    }

    // The squared relative residuals of the timings (the prior's pull left out).
    double residuals(const Vec &u) const {
        double sum = 0;
        for (const auto &row : rows) {
            double r = -1;
            for (size_t k = 0; k < K; ++k)
                r += row[k] * u[k];
            sum += r * r;
        }
        return sum;
    }
};

}  // namespace

std::array<double, locksim::kWorkKinds> fit_work_costs(
    const std::vector<CalibrationSample> &samples,
    const std::array<double, locksim::kWorkKinds> &prior, double prior_weight,
    const std::array<bool, locksim::kWorkKinds> &fixed) {
    const FitSystem sys(samples, prior, prior_weight);
    Vec u;
    u.fill(1.0);
    sys.solve(u, fixed);
    Vec w{};
    for (size_t k = 0; k < K; ++k)
        w[k] = fixed[k] ? prior[k] : u[k] * sys.scale[k];
    return w;
}

std::array<PriceInterval, locksim::kWorkKinds> price_intervals(
    const std::vector<CalibrationSample> &samples,
    const std::array<double, locksim::kWorkKinds> &prior, double prior_weight,
    const std::array<bool, locksim::kWorkKinds> &fixed,
    const std::array<double, locksim::kWorkKinds> &fitted) {
    const FitSystem sys(samples, prior, prior_weight);
    Vec best{};
    for (size_t k = 0; k < K; ++k)
        best[k] = fitted[k] / sys.scale[k];
    const double best_residuals = sys.residuals(best);
    std::array<PriceInterval, K> out{};
    size_t free_kinds = 0;
    for (size_t k = 0; k < K; ++k) {
        out[k].fitted = fitted[k];
        out[k].fixed = fixed[k];
        for (const auto &row : sys.rows)
            out[k].counted = out[k].counted || row[k] != 0;
        free_kinds += !fixed[k] && out[k].counted;
    }
    const double dof =
        std::max<double>(1, static_cast<double>(sys.rows.size()) - static_cast<double>(free_kinds));
    const double variance = std::max(best_residuals / dof, 1e-4);
    const double bound = best_residuals + 3.84 * variance;
    for (size_t k = 0; k < K; ++k) {
        PriceInterval &p = out[k];
        if (p.fixed) {
            p.low = p.high = p.fitted;
            continue;
        }
        if (!p.counted) {  // nothing constrains it: any price fits
            p.high = std::numeric_limits<double>::infinity();
            continue;
        }
        std::array<bool, K> held = fixed;
        held[k] = true;
        // Whether the timings allow price `v` (in prior units) once the others are refitted.
        auto allows = [&](double v) {
            Vec u = best;
            u[k] = v;
            sys.solve(u, held);
            return sys.residuals(u) <= bound;
        };
        auto edge = [&](double inside, double outside) {  // bisection between the two
            for (int i = 0; i < 40; ++i) {
                const double mid = 0.5 * (inside + outside);
                (allows(mid) ? inside : outside) = mid;
            }
            return inside;
        };
        const double at = best[k];
        p.low = allows(0) ? 0 : edge(at, 0) * sys.scale[k];
        double outside = std::max(at, 1.0) * 2;
        while (outside < 1e6 && allows(outside))
            outside *= 2;
        p.high = outside >= 1e6 ? std::numeric_limits<double>::infinity()
                                : edge(at, outside) * sys.scale[k];
        p.identified = p.low > 0;
    }
    return out;
}

std::string price_text(const PriceInterval &p) {
    if (p.fixed) return fmt::format("{:.4g} ns, kept from the base profile", p.fitted);
    const std::string high =
        std::isfinite(p.high) ? fmt::format("{:.4g}", p.high) : std::string("unbounded");
    std::string text = fmt::format("{:.4g} ns, 95% interval {:.4g} - {} ns", p.fitted, p.low, high);
    if (!p.counted)
        text +=
            ": not identified by this host's timings (no operation counts it; the base "
            "profile's price is kept)";
    else if (!p.identified)
        text += ": not identified by this host's timings (zero fits them too)";
    return text;
}

std::vector<uint32_t> cyclic_permutation(size_t n, uint64_t seed) {
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::mt19937_64 rng(seed);
    for (size_t i = n - 1; i > 0 && n > 0; --i)
        std::swap(perm[i], perm[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
    return perm;
}

double pointer_chase_ns(size_t bytes, int64_t steps, int rounds) {
    struct alignas(64) Line {
        uint32_t next;
    };
    const size_t n = std::max<size_t>(2, bytes / sizeof(Line));
    std::vector<Line> buf(n);
    const std::vector<uint32_t> perm = cyclic_permutation(n, 0x6c6f636bull);
    for (size_t i = 0; i < n; ++i)
        buf[i].next = perm[i];
    uint32_t at = 0;
    for (size_t i = 0; i < std::min<size_t>(n, static_cast<size_t>(steps)); ++i)
        at = buf[at].next;  // bring the buffer in where it fits
    std::vector<double> per;
    for (int r = 0; r < std::max(rounds, 1); ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < steps; ++i)
            at = buf[at].next;
        per.push_back(
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                .count() /
            static_cast<double>(std::max<int64_t>(steps, 1)));
    }
    // The chase's end, kept so that the loads are not optimised away.
    asm volatile("" : : "r"(at));
    // The fastest round: a latency, which another task's turn or a descheduled vCPU only
    // lengthens (a median had once taken 18.6 ns for a private cache of 7.1 ns).
    return *std::min_element(per.begin(), per.end());
}

double independent_loads_ns(size_t bytes, int64_t steps, int rounds) {
    struct alignas(64) Line {
        uint32_t value;
    };
    const size_t n = std::max<size_t>(2, bytes / sizeof(Line));
    std::vector<Line> buf(n);
    for (size_t i = 0; i < n; ++i)
        buf[i].value = static_cast<uint32_t>(i);
    // The order: a permutation, read sequentially (the index array streams; the loads it names
    // are spread over the buffer and do not wait for each other).
    const std::vector<uint32_t> order = cyclic_permutation(n, 0x6d6c70ull);
    const auto len = static_cast<size_t>(std::max<int64_t>(steps, 1));
    uint64_t sum = 0;
    std::vector<double> per;
    size_t at = 0;
    for (int r = 0; r < std::max(rounds, 1); ++r) {
        auto t0 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < len; ++i) {
            sum += buf[order[at]].value;
            at = at + 1 == n ? 0 : at + 1;
        }
        per.push_back(
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                .count() /
            static_cast<double>(len));
    }
    asm volatile("" : : "r"(sum));
    return median(std::move(per));
}

std::string chase_record(const ChaseSet &set) {
    std::string text;
    for (const ChasePoint &p : set)
        text +=
            fmt::format("{}{} {:.1f} ns in {} KiB", text.empty() ? "" : "; ", p.level, p.ns, p.kib);
    return text;
}

ChaseSet parse_chase_record(const std::string &text) {
    ChaseSet set;
    size_t from = 0;
    while (from <= text.size()) {
        const size_t end = std::min(text.find(';', from), text.size());
        const std::string part = text.substr(from, end - from);
        std::istringstream in(part);
        ChasePoint p;
        std::string ns, word_in, kib, rest;
        if (!(in >> p.level >> p.ns >> ns >> word_in >> p.kib >> kib) || ns != "ns" ||
            word_in != "in" || kib != "KiB" || (in >> rest) || !(p.ns > 0) || p.kib <= 0)
            throw UserError(
                fmt::format("{} '{}': part {} ('{}') is not '<level> <ns> ns in <size> KiB'",
                            kHostChaseKey, text, set.size() + 1, part));
        set.push_back(std::move(p));
        from = end + 1;
    }
    return set;
}

ChaseSet chase_again(const ChaseSet &set, int64_t steps, int rounds) {
    ChaseSet now = set;
    for (ChasePoint &p : now)
        p.ns = pointer_chase_ns(static_cast<size_t>(p.kib) * 1024, steps, rounds);
    return now;
}

double largest_move(const ChaseSet &then, const ChaseSet &now) {
    double worst = 0;
    for (const ChasePoint &a : then)
        for (const ChasePoint &b : now)
            if (a.level == b.level && a.ns > 0 && b.ns > 0)
                worst = std::max({worst, a.ns / b.ns, b.ns / a.ns});
    return worst;
}

std::pair<double, double> idle_lifetimes_us(const MemoryMeasure &m) {
    auto lifetime = [&m](double kept, double gone) {
        if (!(kept > 0) || gone < 1.5 * kept) return 0.0;
        const double limit = std::sqrt(kept * gone);
        double found = 0;
        for (size_t i = m.idle_ns.size(); i-- > 0;) {
            if (m.idle_ns[i] <= limit) break;
            found = m.idle_us[i];
        }
        return found;
    };
    // No level holds the lines after the eviction, nor where a sleep left them slower still
    // (an eviction the host's last level partly kept): the coldest chase seen.
    double cold = m.idle_cold_ns;
    for (double ns : m.idle_ns)
        cold = std::max(cold, ns);
    return {lifetime(m.idle_hot_ns, m.idle_llc_ns), lifetime(m.idle_llc_ns, cold)};
}

namespace {

double elapsed_ns(Clock::time_point since) {
    return std::chrono::duration<double, std::nano>(Clock::now() - since).count();
}

// Host time of one call of `f`: batches of about batch_ms, the median of `rounds` of them.
template <class F>
double time_per_call(F &&f, const CalibrateOptions &o) {
    auto t0 = Clock::now();
    f();
    double once = std::max(elapsed_ns(t0), 1.0);
    auto reps = static_cast<int64_t>(std::clamp(o.batch_ms * 1e6 / once, 1.0, 1e8));
    std::vector<double> per;
    for (int r = 0; r < std::max(o.rounds, 1); ++r) {
        auto start = Clock::now();
        for (int64_t i = 0; i < reps; ++i)
            f();
        per.push_back(elapsed_ns(start) / static_cast<double>(reps));
    }
    return median(std::move(per));
}

// Writes a byte of every line of `buf`: its lines take the caches' place of what was there.
void write_every_line(std::vector<uint8_t> &buf) {
    for (size_t i = 0; i < buf.size(); i += 64)
        ++buf[i];
}

// Host time of one call of `f` with cold caches: `evict` (larger than the last level) is
// written through before each call; the median of `rounds` calls (at least 3).
template <class F>
double time_cold_call(F &&f, std::vector<uint8_t> &evict, const CalibrateOptions &o) {
    std::vector<double> per;
    for (int r = 0; r < std::max(o.rounds, 3); ++r) {
        write_every_line(evict);
        auto start = Clock::now();
        f();
        per.push_back(elapsed_ns(start));
    }
    return median(std::move(per));
}

// "1024K", "32M" -> KiB; 0 when unreadable.
int64_t size_kib(const std::string &text) {
    size_t used = 0;
    int64_t v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception &) {
        return 0;
    }
    const char unit = used < text.size() ? text[used] : 'B';
    return unit == 'K' ? v : unit == 'M' ? v * 1024 : unit == 'G' ? v * 1024 * 1024 : v / 1024;
}

// The largest level-2 cache and the last level of CPU 0, in KiB: from sysfs, else sysconf,
// else the base profile's [memory], else 1 MiB and 32 MiB.
MemoryMeasure host_cache_sizes(const sim::MemoryProfile &base) {
    MemoryMeasure m;
    namespace fs = std::filesystem;
    std::error_code ec;
    int best_level = 0;
    for (const auto &e : fs::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
        if (e.path().filename().string().rfind("index", 0) != 0) continue;
        auto field = [&](const char *name) {
            std::ifstream f(e.path() / name);
            std::string v;
            f >> v;
            return v;
        };
        if (field("type") == "Instruction") continue;
        const int level = std::atoi(field("level").c_str());
        const int64_t kib = size_kib(field("size"));
        if (kib <= 0) continue;
        if (level == 1) m.l1_kib = kib;
        if (level == 2) m.private_kib = std::max(m.private_kib, kib);
        if (level >= 2 && level >= best_level) {
            best_level = level;
            m.llc_kib = kib;
        }
    }
    m.sizes_from = "/sys/devices/system/cpu/cpu0/cache";
    if (m.private_kib <= 0 || m.llc_kib <= 0) {
        m.l1_kib = sysconf(_SC_LEVEL1_DCACHE_SIZE) / 1024;
        m.private_kib = sysconf(_SC_LEVEL2_CACHE_SIZE) / 1024;
        m.llc_kib = sysconf(_SC_LEVEL3_CACHE_SIZE) / 1024;
        if (m.llc_kib <= 0) m.llc_kib = m.private_kib;
        m.sizes_from = "sysconf";
    }
    if (m.private_kib <= 0 || m.llc_kib <= 0) {
        m.l1_kib = base.l1_kib;
        m.private_kib = base.private_kib > 0 ? base.private_kib : 1024;
        m.llc_kib = base.llc_kib > 0 ? base.llc_kib : 32 * 1024;
        m.sizes_from = base.private_kib > 0 ? "the base profile" : "assumed (not readable)";
    }
    // A first level is modelled only inside a larger private one.
    if (m.l1_kib < 0 || m.l1_kib * 2 > m.private_kib) m.l1_kib = 0;
    return m;
}

// Buffer sizes: the last level's chase (4x the private cache, within half the last level and at
// most 32 MiB: a virtual machine may report a last level far larger than any it has, and a
// chase over a buffer many times the TLB's reach times its page walks, not the cache); memory's
// (4x the last level, at least 64 MiB); the
// eviction before a cold call (2x the last level, at least 16 MiB); both at most
// max_buffer_bytes.
constexpr size_t kLlcChaseMax = size_t{32} << 20;
constexpr size_t kDramChaseMin = size_t{64} << 20, kEvictMin = size_t{16} << 20;

}  // namespace

int64_t chase_steps(const CalibrateOptions &o) {
    return static_cast<int64_t>(std::max(20000.0, o.batch_ms * 1e6 / 50.0));
}

namespace {

// The load-to-use latencies of the private cache, the last level and memory, by pointer chasing.
MemoryMeasure measure_memory(const CalibrateOptions &o) {
    MemoryMeasure m = host_cache_sizes(o.base.memory);
    const size_t kib = 1024;
    const auto priv = static_cast<size_t>(m.private_kib) * kib;
    const auto llc = static_cast<size_t>(m.llc_kib) * kib;
    const int64_t steps = chase_steps(o);
    if (m.l1_kib > 0)
        m.l1_ns = pointer_chase_ns(static_cast<size_t>(m.l1_kib) * kib / 2, steps, o.rounds);
    auto chase = [&](const char *level, size_t bytes) {
        const double ns = pointer_chase_ns(bytes, steps, o.rounds);
        m.chases.push_back({level, static_cast<int64_t>(bytes / kib), ns});
        return ns;
    };
    m.private_ns = chase("private", priv / 2);
    // Well beyond the private cache, well within the last level: its own latency.
    m.llc_ns =
        llc >= 4 * priv ? chase("llc", std::min({4 * priv, llc / 2, kLlcChaseMax})) : m.private_ns;
    m.dram_ns = chase("memory", std::clamp<size_t>(4 * llc, 64 << 20, size_t{1} << 30));
    m.independent_ns =
        independent_loads_ns(static_cast<size_t>(m.chases.back().kib) * kib, steps, o.rounds);
    // Two decimals: what the profile file states.
    m.mlp = m.independent_ns > 0 ? std::round(std::clamp(m.dram_ns / m.independent_ns, 1.0,
                                                         sim::MemoryProfile::kMaxMlp) *
                                              100) /
                                       100
                                 : 1.0;
    return m;
}

// A chase through a quarter of the private cache (a commit's working set, about), timed once
// through after the caches were left in some state: how long lines stay while the CPU sleeps.
void measure_idle(MemoryMeasure &m, std::vector<uint8_t> &evict, const CalibrateOptions &o) {
    struct alignas(64) Line {
        uint32_t next;
    };
    const size_t n = std::max<size_t>(64, static_cast<size_t>(m.private_kib) * 1024 / 4 / 64);
    std::vector<Line> buf(n);
    const std::vector<uint32_t> perm = cyclic_permutation(n, 0x69646c65ull);
    for (size_t i = 0; i < n; ++i)
        buf[i].next = perm[i];
    uint32_t at = 0;
    auto through = [&] {
        for (size_t i = 0; i < n; ++i)
            at = buf[at].next;
    };
    // The median over `reps` of one timed chase after `prepare` (each after a warming chase).
    const int reps = std::max(3, std::min(o.rounds, 7));
    auto timed = [&](auto &&prepare) {
        std::vector<double> per;
        for (int r = 0; r < reps; ++r) {
            through();
            through();
            prepare();
            const auto t0 = Clock::now();
            through();
            per.push_back(elapsed_ns(t0) / static_cast<double>(n));
        }
        return median(std::move(per));
    };
    std::vector<uint8_t> other(static_cast<size_t>(m.private_kib) * 2048);
    m.idle_hot_ns = timed([] {});
    m.idle_llc_ns = timed([&] { write_every_line(other); });
    m.idle_cold_ns = timed([&] { write_every_line(evict); });
    for (double us : {100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0}) {
        m.idle_us.push_back(us);
        m.idle_ns.push_back(timed(
            [us] { std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us)); }));
    }
    asm volatile("" : : "r"(at));
}

// "100 us 6.3, 300 us 6.3, ...": the idle chases' times after each sleep.
std::string idle_text(const MemoryMeasure &m) {
    std::string text;
    for (size_t i = 0; i < m.idle_us.size(); ++i)
        text += fmt::format("{}{:g} us {:.1f}", i ? ", " : "", m.idle_us[i], m.idle_ns[i]);
    return text;
}

template <class F>
WorkCounts count_call(F &&f) {
    WorkCounts c;
    c.line_shift = 0;  // every line
    c.streams = true;
    locksim::WorkMeterScope scope(&c);
    f();
    return c;
}

uint32_t sid_of(const ss::PolicyState &st, const std::string &context) {
    uint32_t sid = 0;
    if (context.empty() || ss::context_to_sid(st, context, &sid))
        throw UserError(fmt::format("calibrate: the policy rejects the context '{}'", context));
    return sid;
}

// The core operations, each a closure over states of its own.
class CoreOps {
  public:
    // `private_lines`: the host's private cache in lines; the random decisions are as many as
    // read at most half of it.
    CoreOps(const CalibrateOptions &o, uint64_t private_lines) : o_(o) {
        auto state = [&](uint32_t cache, ss::LevelCheck check) {
            ss::ServiceConfig cfg;
            cfg.level_check = check;
            return ss::policy_state_create(ss::policydb_read(o.policy_image, o.policy_name), cache,
                                           cfg);
        };
        main_ = state(ss::kSidtabDefaultCacheSize, ss::LevelCheck::Contains);
        bitwise_ = state(ss::kSidtabDefaultCacheSize, ss::LevelCheck::BitByBit);
        nocache_ = state(0, ss::LevelCheck::Contains);
        toggled_ = state(ss::kSidtabDefaultCacheSize, ss::LevelCheck::Contains);
        facts_ = std::make_unique<PolicyFacts>(main_);
        // Access decisions between random domains and objects, in random classes, as many as
        // read half the private cache (at most 512): their hot time is then the private level's
        // on the host and in the model alike. A working set about the private cache's size would
        // make it hang on how the host's cache replaces lines (an adaptive policy keeps much of
        // a working set that LRU, as the model approximates it, would lose whole).
        const auto &doms = facts_->domains(), &objs = facts_->objects();
        LineSet read;
        uint64_t x = 0x9e3779b97f4a7c15ull;
        auto next = [&x] {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            return x;
        };
        const uint32_t nclasses = main_.p().classes.nprim;
        for (int tries = 0; queries_.size() < 512 && tries < 20000; ++tries) {
            std::string sc = facts_->domain_context(doms[next() % doms.size()]);
            std::string tc = facts_->object_context(objs[next() % objs.size()]);
            uint32_t s, t;
            if (sc.empty() || ss::context_to_sid(main_, sc, &s) ||
                ss::context_to_sid(main_, tc, &t))
                continue;
            const Query q{s, t, 1 + static_cast<uint32_t>(next() % nclasses)};
            const WorkCounts c = count_call([&] {
                ss::AvDecision avd;
                ss::compute_av(main_, q.s, q.t, q.c, &avd);
            });
            for (uint64_t line : c.lines)
                read.insert(line_tag(line));
            if (!queries_.empty() && read.size() * 2 > private_lines) break;
            queries_.push_back(q);
        }
        if (queries_.empty()) throw UserError("calibrate: the policy has no valid contexts");
        // Keys whose slot in the rule table is empty (as for many of the attribute pairs a
        // decision searches): a search for one costs the hash and the slot's load alone, which
        // prices a probe apart from the chain nodes the other operations walk.
        const ss::PolicyBase &pb = main_.p();
        for (int tries = 0; absent_.size() < 512 && tries < 20000 && pb.types.nprim; ++tries) {
            ss::AvtabKey k;
            k.source_type = static_cast<uint16_t>(1 + next() % pb.types.nprim);
            k.target_type = static_cast<uint16_t>(1 + next() % pb.types.nprim);
            k.target_class = static_cast<uint16_t>(1 + next() % nclasses);
            k.specified = ss::AVTAB_ALLOWED;
            const WorkCounts c =
                count_call([&] { sink_ += pb.te_avtab.search_node(k) != nullptr; });
            if (c.n[static_cast<size_t>(Work::AvtabNode)] == 0) absent_.push_back(k);
        }
        rich_context_ = facts_->domain_context_with_categories(doms.front(), 1024);
        rich_sid_ = sid_of(nocache_, rich_context_);
        auto users = facts_->login_users();
        if (!users.empty()) {
            user_ = users.front();
            from_sid_ = sid_of(main_, facts_->some_domain_context({"unconfined_t", "sysadm_t"}));
        }
        for (uint32_t i = 0; i < kScanEntries; ++i) {
            uint32_t sid = 0;
            if (scan_table_.context_to_sid(mcs_context(i), &sid))
                throw std::runtime_error("calibrate: the scan's SID table is full");
        }
        // What `validate`'s context reader looks up (read = "contexts"): a domain's context with
        // a pair of categories below its full range, already in the table.
        const PolicyFacts::CategoryPairs pairs = facts_->container_pairs();
        for (uint64_t i = 0; i < std::min<uint64_t>(pairs.count(), kValidateContexts); ++i) {
            std::string ctx = pairs.context(i);
            uint32_t sid = 0;
            if (ss::context_to_sid(main_, ctx, &sid) == 0) pair_contexts_.push_back(std::move(ctx));
        }
        bools_ = ss::get_bools(main_);
        if (!bools_.empty()) {
            // What `validate`'s reader checks: decisions that depend on the booleans.
            ss::PolicyState on, off;
            cond_queries_ = boolean_dependent_queries(main_, kValidatePool, &on, &off);
            cond_order_.resize(cond_queries_.size());
            std::iota(cond_order_.begin(), cond_order_.end(), size_t{0});
        }
    }

    // name -> operation
    struct Op {
        Op(std::string n, std::function<void()> r, bool f = true,
           std::optional<ValidateRead> rd = std::nullopt)
            : name(std::move(n)), run(std::move(r)), fitted(f), reader(rd) {}
        std::string name;
        std::function<void()> run;
        bool fitted;  // see CalibrationSample::fitted
        // What `validate`'s reader does with this [validate] read (its HostSpeedProbe).
        std::optional<ValidateRead> reader;
    };
    std::vector<Op> list() {
        std::vector<Op> ops;
        ops.emplace_back(fmt::format("compute_av x{}", queries_.size()), [this] {
            for (const auto &q : queries_) {
                ss::AvDecision avd;
                ss::compute_av(main_, q.s, q.t, q.c, &avd);
                sink_ += avd.allowed;
            }
        });
        if (!absent_.empty())
            ops.emplace_back(fmt::format("avtab search x{}, empty slots", absent_.size()), [this] {
                const ss::Avtab &t = main_.p().te_avtab;
                for (const ss::AvtabKey &k : absent_)
                    sink_ += t.search_node(k) != nullptr;
            });
        ops.emplace_back("context_to_sid, 1024 categories, ebitmap_contains", [this] {
            uint32_t sid;
            sink_ += ss::context_to_sid(main_, rich_context_, &sid);
        });
        ops.emplace_back("context_to_sid, 1024 categories, bit by bit", [this] {
            uint32_t sid;
            sink_ += ss::context_to_sid(bitwise_, rich_context_, &sid);
        });
        ops.emplace_back("sid_to_context, 1024 categories, no cache", [this] {
            std::string out;
            ss::sid_to_context(nocache_, rich_sid_, &out);
            sink_ += out.size();
        });
        if (!user_.empty())
            ops.emplace_back("get_user_sids " + user_, [this] {
                std::vector<uint32_t> sids;
                ss::get_user_sids(main_, from_sid_, user_, &sids);
                sink_ += sids.size();
            });
        if (!bools_.empty()) {
            // Ten booleans flipped; and every boolean, alternately on and off, as `validate`'s
            // writer commits them.
            for (bool all : {false, true}) {
                const std::string what =
                    all ? "validate commit: set_bools {}, all flipped" : "set_bools {}, 10 flipped";
                ops.emplace_back(fmt::format(fmt::runtime(what), "in place"), [this, all] {
                    flip(all);
                    ss::set_bools_inplace(toggled_, bools_);
                });
                ops.emplace_back(fmt::format(fmt::runtime(what), "cond_policydb_dup"), [this, all] {
                    flip(all);
                    ss::PolicyState next;
                    ss::set_bools_cond_dup(toggled_, bools_, &next);
                    toggled_ = std::move(next);
                });
            }
            // `validate --pool 4`'s reader: the same four decisions, their lines hot. Timed and
            // shown, not fitted: repeated thousands of times, every branch of the four decisions
            // is learnt by the host's predictors, as no access decision a kernel computes (an
            // AVC miss) finds them.
            ops.emplace_back(
                "validate read, pool 4: compute_av x4, the same four",
                [this] {
                    for (size_t i = 0; i < 4; ++i) {
                        const auto &q = cond_queries_[i % cond_queries_.size()];
                        ss::AvDecision avd;
                        ss::compute_av(main_, q.ssid, q.tsid, q.tclass, &avd);
                        sink_ += avd.allowed;
                    }
                },
                false);
            // `validate`'s reader (its default pool): 64 read sections of four, in a new random
            // order each call: the whole pool, as the reader's sections go through it (one call is
            // the working set, hot or cold).
            ops.emplace_back(
                fmt::format("validate read: 64 x compute_av x4 of {}", cond_queries_.size()),
                [this] {
                    for (size_t i = cond_queries_.size(); i > 1; --i)
                        std::swap(cond_order_[i - 1], cond_order_[next_random() % i]);
                    for (size_t i = 0; i < 64 * 4; ++i) {
                        const auto &q = cond_queries_[cond_order_[i % cond_order_.size()]];
                        ss::AvDecision avd;
                        ss::compute_av(main_, q.ssid, q.tsid, q.tclass, &avd);
                        sink_ += avd.allowed;
                    }
                },
                true, ValidateRead::Decisions);
            ops.emplace_back("set_bools full copy, 10 flipped", [this] {
                flip(false);
                ss::PolicyState next;
                ss::set_bools_full_copy(toggled_, bools_, &next);
                toggled_ = std::move(next);
            });
        }
        if (!pair_contexts_.empty())
            ops.emplace_back(
                fmt::format("validate read, contexts: context_to_sid x{}, held",
                            pair_contexts_.size()),
                [this] {
                    for (const std::string &ctx : pair_contexts_) {
                        uint32_t sid = 0;
                        sink_ += ss::context_to_sid(main_, ctx, &sid) + sid;
                    }
                },
                true, ValidateRead::Contexts);
        // A scan's step: a context the table lacks, looked for among kScanEntries; with the
        // table's type, each entry's compare goes on to the range (its categories' nodes), with
        // another type each stops there.
        ops.emplace_back(
            fmt::format("context_to_sid scan x{}, linear era, a context it lacks", kScanEntries),
            [this] { sink_ += scan_table_.lookup(scan_absent_, 0); });
        ops.emplace_back(
            fmt::format("context_to_sid scan x{}, linear era, a type it lacks", kScanEntries),
            [this] { sink_ += scan_table_.lookup(scan_other_type_, 0); });
        ops.emplace_back("policydb_read + free", [this] {
            ss::Policydb db = ss::policydb_read(o_.policy_image, o_.policy_name);
            sink_ += db.base->types.nprim;
        });
        return ops;
    }

  private:
    static constexpr size_t kValidatePool = 256;
    static constexpr uint64_t kValidateContexts = 64;
    std::vector<std::string> pair_contexts_;
    // The SID table of the linear era (5.0-5.5) that validate's sidtab-growth searches: MCS
    // contexts of one type that differ only in their categories, so that each entry's compare
    // goes on to the range.
    static constexpr uint32_t kScanEntries = 4000;
    static ss::Context mcs_context(uint32_t i) {
        ss::Context c;
        c.user = c.role = c.type = 1;
        for (ss::MlsLevel &l : c.range.level) {
            l.sens = 1;
            l.cat.set_bit(i % 256, true);
            l.cat.set_bit(256 + (i / 256) % 256, true);
        }
        return c;
    }
    ss::Sidtab scan_table_{0, ss::SidtabEra::Linear};
    ss::Context scan_absent_ = mcs_context(kScanEntries + 7);
    ss::Context scan_other_type_ = [] {
        ss::Context c = mcs_context(7);
        c.type = 2;
        return c;
    }();
    uint64_t next_random() {
        rng_ ^= rng_ << 13, rng_ ^= rng_ >> 7, rng_ ^= rng_ << 17;
        return rng_;
    }
    // Flips ten booleans, or sets all alternately on and off.
    void flip(bool all) {
        if (all)
            for (int &b : bools_)
                b = (round_ & 1) ? 0 : 1;
        else
            for (size_t i = 0; i < 10; ++i)
                bools_[(i * 7 + round_) % bools_.size()] ^= 1;
        ++round_;
    }
    struct Query {
        uint32_t s, t, c;
    };
    const CalibrateOptions &o_;
    ss::PolicyState main_, bitwise_, nocache_, toggled_;
    std::unique_ptr<PolicyFacts> facts_;
    std::vector<Query> queries_;
    std::vector<ss::AvtabKey> absent_;
    std::vector<TortureQuery> cond_queries_;
    std::vector<size_t> cond_order_;
    uint64_t rng_ = 0x2545f4914f6cdd1dull;
    std::string rich_context_, user_;
    uint32_t rich_sid_ = 0, from_sid_ = 0;
    std::vector<int> bools_;
    size_t round_ = 0;
    uint64_t sink_ = 0;
};

// The first two CPUs this process may run on, for two threads pinned apart ({-1, -1}: one CPU,
// nothing to pin).
std::array<int, 2> two_cpus() {
    std::array<int, 2> cpus = {-1, -1};
    cpu_set_t allowed;
    if (!sched_getaffinity(0, sizeof(allowed), &allowed))
        for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; ++c)
            if (CPU_ISSET(c, &allowed)) cpus[static_cast<size_t>(n++)] = c;
    if (cpus[1] < 0) cpus[0] = -1;
    return cpus;
}

// Two threads passing a turn back and forth; `pass` hands it over and waits for it back.
template <class Pass>
double round_trip_ns(Pass &&pass, const CalibrateOptions &o, int64_t trips) {
    std::vector<double> per;
    for (int r = 0; r < std::max(o.rounds, 1); ++r) {
        auto t0 = Clock::now();
        pass(trips);
        per.push_back(elapsed_ns(t0) / static_cast<double>(trips));
    }
    std::sort(per.begin(), per.end());
    return per[per.size() / 2];
}

// Pins the calling thread to one CPU; the previous affinity is returned for restoring.
std::optional<cpu_set_t> pin_to(int cpu) {
    cpu_set_t old;
    if (cpu < 0 || pthread_getaffinity_np(pthread_self(), sizeof(old), &old)) return std::nullopt;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<unsigned>(cpu), &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one)) return std::nullopt;
    return old;
}

// The hardware's cost, not the scheduler's. The two threads run on two different CPUs (where
// the process may use two): left to the scheduler on a busy host they often share one, and each
// pass is then a yield and a context switch. The round trips are timed in short windows and a
// round counts its fastest one, so that a thread descheduled meanwhile is not taken for the
// line's price either (4-12 us had been fitted under load instead of some 0.1-0.5 us).
double cacheline_round_trip(const CalibrateOptions &o) {
    constexpr int64_t kWindow = 100, kWindows = 200;
    const std::array<int, 2> cpus = two_cpus();
    std::vector<double> per;
    for (int r = 0; r < std::max(o.rounds, 1); ++r) {
        alignas(64) std::atomic<int64_t> turn{0};
        auto spin_until = [&turn](int64_t v) {
            for (int i = 0; turn.load(std::memory_order_acquire) != v; ++i)
                if ((i & 1023) == 1023) std::this_thread::yield();  // a descheduled peer
        };
        const int64_t trips = kWindow * kWindows;
        std::thread peer([&] {
            pin_to(cpus[1]);
            for (int64_t i = 0; i < trips; ++i) {
                spin_until(2 * i + 1);
                turn.store(2 * i + 2, std::memory_order_release);
            }
        });
        const std::optional<cpu_set_t> restore = pin_to(cpus[0]);
        double fastest = std::numeric_limits<double>::infinity();
        auto t0 = Clock::now();
        for (int64_t i = 0; i < trips; ++i) {
            turn.store(2 * i + 1, std::memory_order_release);
            spin_until(2 * i + 2);
            if ((i + 1) % kWindow == 0) {
                fastest = std::min(fastest, elapsed_ns(t0) / static_cast<double>(kWindow));
                t0 = Clock::now();
            }
        }
        peer.join();
        if (restore) pthread_setaffinity_np(pthread_self(), sizeof(*restore), &*restore);
        per.push_back(fastest);
    }
    return median(std::move(per));
}

double sleep_wake_round_trip(const CalibrateOptions &o) {
    return round_trip_ns(
        [](int64_t trips) {
            std::binary_semaphore ping(0), pong(0);
            std::thread peer([&] {
                for (int64_t i = 0; i < trips; ++i) {
                    ping.acquire();
                    pong.release();
                }
            });
            for (int64_t i = 0; i < trips; ++i) {
                ping.release();
                pong.acquire();
            }
            peer.join();
        },
        o, 5000);
}

// liburcu's grace period beside a thread (pinned to cpus[1]) that entered a read section just
// before it and stays kHold in it, so that wait_for_readers sleeps for it: the median over the
// samples of the time from the reader's last instant inside to the grace period's end. The
// reader notes that instant before it unlocks; the grace period cannot end before the unlock,
// so the note is there to read when it returns, and the tail never counts the wait itself, even
// when this thread was preempted before it began its grace period.
double urcu_reader_sleep_tail(const std::array<int, 2> &cpus, const CalibrateOptions &o) {
    constexpr auto kHold = std::chrono::microseconds(200);
    std::atomic<int> ask{0}, inside{0};
    std::atomic<Clock::time_point> left{};  // the reader's last instant inside
    std::atomic<bool> stop{false};
    std::thread reader([&] {
        pin_to(cpus[1]);
        real::urcu_thread_register();
        for (int seen = 0; !stop.load();) {
            const int n = ask.load();
            if (n == seen) {
                caa_cpu_relax();
                continue;
            }
            seen = n;
            urcu_memb_read_lock();
            const auto t0 = Clock::now();
            inside.store(n);
            auto t = t0;
            while (t - t0 < kHold) {
                caa_cpu_relax();
                t = Clock::now();
            }
            left.store(t);
            urcu_memb_read_unlock();
        }
    });
    const std::optional<cpu_set_t> restore = pin_to(cpus[0]);
    std::vector<double> per;
    const int samples = std::max(9, 3 * o.rounds);
    for (int i = 1; i <= samples; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ask.store(i);
        while (inside.load() != i)
            caa_cpu_relax();
        kernel::synchronize_rcu();
        per.push_back(elapsed_ns(left.load()));
    }
    stop = true;
    reader.join();
    if (restore) pthread_setaffinity_np(pthread_self(), sizeof(*restore), &*restore);
    return std::max(0.0, median(std::move(per)));
}

// The primitives a strategy calls, through kernel/ on a RealPlatform from this thread.
// Sets `profile`'s primitive costs and its liburcu grace period.
std::vector<PrimitiveSample> time_primitives(sim::CpuProfile *profile, const CalibrateOptions &o) {
    sim::PrimitiveCosts *p = &profile->primitive;
    real::RealConfig rc;
    rc.cpus = 0;
    real::RealPlatform platform(rc);
    kernel::PlatformScope scope(platform);
    real::urcu_thread_register();
    std::vector<PrimitiveSample> out;
    auto ns = [](double x) { return std::max<sim::Time>(1, std::llround(x)); };
    auto pair = [&](const char *name, const char *how, auto &&f) {
        double ns = time_per_call(
                        [&] {
                            for (int i = 0; i < 64; ++i)
                                f();
                        },
                        o) /
                    64;
        out.push_back({name, ns, how});
        return ns;
    };
    // Pairs split in the base profile's proportion of their halves.
    auto split = [&ns](double pair_ns, sim::Time *first, sim::Time *second) {
        double a = static_cast<double>(*first), b = static_cast<double>(*second);
        double f = a + b > 0 ? a / (a + b) : 0.5;
        *first = ns(pair_ns * f);
        *second = ns(pair_ns * (1 - f));
    };
    kernel::Spinlock spin("calibrate_spin", platform);
    split(pair("spin_lock + spin_unlock", "kernel::spin_lock/unlock, uncontended",
               [&] {
                   kernel::spin_lock(spin);
                   kernel::spin_unlock(spin);
               }),
          &p->spin_acquire, &p->spin_release);
    kernel::RwSem sem("calibrate_rwsem", platform);
    split(pair("down_read + up_read", "kernel::down_read/up_read, uncontended",
               [&] {
                   kernel::down_read(sem);
                   kernel::up_read(sem);
               }),
          &p->sem_acquire, &p->sem_release);
    p->preempt_toggle = ns(pair("preempt_disable + enable", "a would-be-atomic section, empty",
                                [] {
                                    kernel::preempt_disable();
                                    kernel::preempt_enable();
                                }) /
                           2);
    p->irq_toggle = ns(pair("local_irq_disable + enable", "a would-be-irqs-off section, empty",
                            [] {
                                kernel::local_irq_disable();
                                kernel::local_irq_enable();
                            }) /
                       2);
    p->rcu_read_lock = ns(pair("rcu_read_lock + unlock", "a liburcu memb read section", [] {
        kernel::rcu_read_lock();
        kernel::rcu_read_unlock();
    }));
    split(pair("kmalloc(64) + kfree", "accounted allocation",
               [&] { kernel::kfree(kernel::kmalloc(64, kernel::Gfp::Kernel)); }),
          &p->kmalloc, &p->kfree);
    {
        strategies::RcuReclaimer deferred;
        profile->calibration[kCallRcuKey] = fmt::format(
            "{:.1f}", pair("call_rcu, a deferred free",
                           "a strategy's deferred free (RcuReclaimer::defer, liburcu's call_rcu): "
                           "validate's simulator charges it per call_rcu",
                           [&] { deferred.defer([] {}); }));
    }
    static const kernel::Label kSpan("calibrate_span");
    profile->calibration[kComputeSpanKey] = fmt::format(
        "{:.1f}", pair("compute() span, empty",
                       "the real platform's bookkeeping around core work: validate's simulator "
                       "charges it per span",
                       [] { kernel::compute(kSpan, [] {}); }));
    double gp = time_per_call([] { kernel::synchronize_rcu(); }, o);
    out.push_back({"urcu_grace_period", gp, "kernel::synchronize_rcu, no readers (liburcu memb)"});
    if (std::thread::hardware_concurrency() >= 2) {
        // validate's reader always runs on the other CPU: liburcu's membarrier then interrupts
        // it, and waits for the interrupt's handler (a round trip through the hypervisor on a
        // virtual machine). That grace period is what validate's simulator gets. The two threads
        // are pinned apart: on one CPU there is nothing to interrupt (a calibration whose
        // threads shared one timed 0.8 us against 33-47 us).
        const std::array<int, 2> cpus = two_cpus();
        std::atomic<bool> stop{false}, running{false};
        std::thread busy([&] {
            pin_to(cpus[1]);
            real::urcu_thread_register();
            running = true;
            uint64_t x = 0;
            while (!stop.load(std::memory_order_relaxed))
                asm volatile("" : "+r"(x));
        });
        const std::optional<cpu_set_t> restore = pin_to(cpus[0]);
        while (!running.load())
            std::this_thread::yield();
        // Another process on the busy thread's CPU leaves it less or nothing to interrupt (a
        // validate whose host compiled beside its calibration timed 0.4-0.6 us against
        // 28-38 us; a spinning process on that CPU, 9 us against 42).
        clockid_t busy_clock{};
        const bool clocked = pthread_getcpuclockid(busy.native_handle(), &busy_clock) == 0;
        auto busy_cpu_ns = [&] {
            timespec ts{};
            clock_gettime(busy_clock, &ts);
            return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
        };
        bool had_cpu = !clocked;
        gp = clocked ? time_beside_busy(
                           [&] {
                               const double cpu0 = busy_cpu_ns();
                               const auto t0 = Clock::now();
                               BesideBusy b;
                               b.ns = time_per_call([] { kernel::synchronize_rcu(); }, o);
                               b.busy_share = (busy_cpu_ns() - cpu0) / elapsed_ns(t0);
                               return b;
                           },
                           5, &had_cpu)
                     : time_per_call([] { kernel::synchronize_rcu(); }, o);
        stop = true;
        busy.join();
        if (restore) pthread_setaffinity_np(pthread_self(), sizeof(*restore), &*restore);
        if (!had_cpu && o.progress)
            o.progress(fmt::format(
                "warning: liburcu's grace period beside a busy CPU ({:.1f} us): the busy thread "
                "had less than 90% of its CPU at each of 5 tries, another process took the rest; "
                "validate's simulator gets it as timed (calibrate again on a quiet host)",
                gp / 1000));
        out.push_back({"urcu_grace_period, a CPU busy", gp,
                       std::string("the same, another thread of the process running on another "
                                   "CPU (no reader): what validate's simulator gets") +
                           (had_cpu ? "" : "; not all of it: another process held that CPU")});
        const double tail = urcu_reader_sleep_tail(cpus, o);
        out.push_back({"urcu_grace_period, a reader slept for", tail,
                       "the same, beside a thread inside a read section for 200 us more: the "
                       "time past the reader's end"});
        profile->calibration[kUrcuSleepKey] = fmt::format("{:.0f}", tail);
    }
    profile->calibration[kUrcuGracePeriodKey] = fmt::format("{:.0f}", gp);
    // wait_for_readers' polling: RCU_QS_ACTIVE_ATTEMPTS (100) rounds, each dropping the
    // registry mutex, relaxing the CPU once and taking the mutex again.
    std::mutex registry;
    registry.lock();
    const double polling = time_per_call(
        [&] {
            for (int i = 0; i < 100; ++i) {
                registry.unlock();
                caa_cpu_relax();
                registry.lock();
            }
        },
        o);
    registry.unlock();
    out.push_back({"urcu polling window", polling,
                   "liburcu's 100 rounds of waiting for a reader before it sleeps on a futex"});
    profile->calibration[kUrcuSpinKey] = fmt::format("{:.0f}", polling);
    if (std::thread::hardware_concurrency() >= 2) {
        double line = cacheline_round_trip(o);
        out.push_back({"cache-line round trip", line, "two threads alternating on an atomic"});
        p->cacheline_transfer = ns(line / 2);
        double sw = sleep_wake_round_trip(o);
        out.push_back({"sleep/wake round trip", sw, "two threads alternating on semaphores"});
        split(sw / 2, &p->context_switch, &p->wakeup);
    }
    return out;
}

std::string host_description() {
    utsname u{};
    uname(&u);
    return fmt::format("{} {} {}, {} CPUs", u.nodename, u.sysname, u.release,
                       std::thread::hardware_concurrency());
}

}  // namespace

Calibration calibrate(const CalibrateOptions &o) {
    auto say = [&o](const std::string &line) {
        if (o.progress) o.progress(line);
    };
    Calibration c;
    c.memory = measure_memory(o);
    const MemoryMeasure &mm = c.memory;
    say(
        fmt::format("memory: first level {} KiB, private {} KiB, last level {} KiB ({}); chase "
                    "{:.1f} / {:.1f} / {:.1f} / {:.1f} ns; independent loads {:.1f} ns: "
                    "memory-level parallelism {:.2f}",
                    mm.l1_kib, mm.private_kib, mm.llc_kib, mm.sizes_from, mm.l1_ns, mm.private_ns,
                    mm.llc_ns, mm.dram_ns, mm.independent_ns, mm.mlp));
    sim::MemoryProfile mem = o.base.memory;
    mem.line_bytes = 64;
    mem.private_kib = mm.private_kib;
    mem.llc_kib = mm.llc_kib;
    // [work_ns] prices are hits in the nearest level modelled (the first, where the host's is
    // known; else the private one): the levels beyond add their latency over it. The private
    // level's is its chase's (a chase within it has no page walks and no other work to overlap);
    // the last level's and memory's are fitted below.
    mem.l1_kib = mm.l1_kib;
    const double nearest_ns = mm.l1_kib > 0 ? mm.l1_ns : mm.private_ns;
    mem.l2_ns = mm.l1_kib > 0 ? std::round(std::max(0.0, mm.private_ns - mm.l1_ns) * 10) / 10 : 0;
    const double chase_llc = std::max(0.0, mm.llc_ns - nearest_ns);
    const double chase_dram = std::max(0.0, mm.dram_ns - nearest_ns);
    std::vector<uint8_t> evict(std::clamp<size_t>(static_cast<size_t>(mm.llc_kib) * 2048,
                                                  std::min(kEvictMin, o.max_buffer_bytes),
                                                  o.max_buffer_bytes));
    measure_idle(c.memory, evict, o);
    std::tie(mem.private_lifetime_us, mem.llc_lifetime_us) = idle_lifetimes_us(mm);
    {
        const std::string after = idle_text(mm);
        auto life = [](double us) {
            return us > 0 ? fmt::format("{:g} us", us) : std::string("not seen to leave");
        };
        say(
            fmt::format("lines while the CPU sleeps: a chase through {} KiB, ns per load: at once "
                        "{:.1f}, private cache evicted {:.1f}, every level evicted {:.1f}; after "
                        "sleeping {}: lifetime in the private cache {}, in the last level {}",
                        mm.private_kib / 4, mm.idle_hot_ns, mm.idle_llc_ns, mm.idle_cold_ns, after,
                        life(mem.private_lifetime_us), life(mem.llc_lifetime_us)));
    }
    CoreOps core(o, static_cast<uint64_t>(mm.private_kib) * 1024 / 64);
    const auto ops = core.list();
    for (auto &[name, op, fitted, reader] : ops) {
        CalibrationSample s;
        s.name = name;
        s.fitted = fitted;
        op();  // warm the caches (and the SID table) first
        s.counts = count_call(op);
        s.lines = std::move(s.counts.lines);
        s.counts.line_shift = -1;
        s.counts.line_touches = 0;
        c.samples.push_back(std::move(s));
    }
    // Every operation timed in each pass, the median over the passes kept: a host that moves
    // while it is calibrated moves every operation alike rather than the few timed then.
    const auto passes = static_cast<size_t>(std::max(o.passes, 1));
    std::vector<std::vector<double>> hot(ops.size()), cold(ops.size());
    for (size_t pass = 0; pass < passes; ++pass)
        for (size_t i = 0; i < ops.size(); ++i) {
            hot[i].push_back(time_per_call(ops[i].run, o));
            cold[i].push_back(time_cold_call(ops[i].run, evict, o));
        }
    auto spread = [](const std::vector<double> &v) {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        return *lo > 0 ? *hi / *lo : 1.0;
    };
    for (size_t i = 0; i < ops.size(); ++i) {
        CalibrationSample &s = c.samples[i];
        s.host_spread = spread(hot[i]);
        s.host_cold_spread = spread(cold[i]);
        s.host_ns = median(std::move(hot[i]));
        s.host_cold_ns = median(std::move(cold[i]));
        say(fmt::format("{:<56} {:>12.0f} ns, cold {:>12.0f} ns (over {} passes x{:.2f}, x{:.2f})",
                        s.name, s.host_ns, s.host_cold_ns, passes, s.host_spread,
                        s.host_cold_spread));
    }
    // Where the model serves each call's lines from (sizes only): from empty caches (cold), and
    // when called again (hot: the same lines, now cached where they fit).
    {
        sim::MemoryLatency sizes = mem.latency();
        sizes.sample = 1;
        for (auto &s : c.samples) {
            sim::CacheHierarchy caches(sizes, {sizes.private_lines});
            caches.price(0, s.lines, s.cold);
            caches.price(0, s.lines, s.hot);
        }
    }
    // A sample's misses as full latencies: the independent ones overlap mlp at a time.
    mem.mlp = mm.mlp;
    // Each level's misses as full latencies.
    struct Misses {
        double l2, llc, dram;
    };
    auto misses = [&mem](const sim::MemoryTally &t) {
        return Misses{effective_misses(t.l2_hits, t.l2_independent, mem.mlp),
                      effective_misses(t.llc_hits, t.llc_independent, mem.mlp),
                      effective_misses(t.dram, t.dram_independent, mem.mlp)};
    };
    auto stall = [&misses](const sim::MemoryTally &t, const sim::MemoryProfile &m) {
        const Misses x = misses(t);
        return x.l2 * m.l2_ns + x.llc * m.llc_ns + x.dram * m.dram_ns;
    };
    auto stalls = [&c, &stall](const sim::MemoryProfile &m) {
        for (auto &s : c.samples) {
            s.stall_cold_ns = stall(s.cold, m);
            s.stall_hot_ns = stall(s.hot, m);
        }
    };
    std::array<double, locksim::kWorkKinds> prior{};
    for (size_t k = 0; k < locksim::kWorkKinds; ++k)
        prior[k] = static_cast<double>(o.base.work_ps[k]) / 1000.0;
    // The core's audit path only counts: what avc_audit costs in a kernel cannot be timed here.
    std::array<bool, locksim::kWorkKinds> fixed{};
    fixed[static_cast<size_t>(Work::AuditCall)] = true;
    fixed[static_cast<size_t>(Work::Syscall)] = true;  // the rest of a system call: not the core
    fixed[static_cast<size_t>(Work::VfsNode)] = true;  // selinuxfs's files: not the core either
    // A chase's loads wait one after the other; the core's misses partly overlap (independent
    // decisions, out-of-order execution) and its lines share pages. So the latencies the model
    // adds are fitted, in turn with the prices until all settle: the last level's to the hot
    // times (what is left of them beyond the prices, over the lines the model serves from the
    // last level when warm), memory's to the cold times alike; each at most its chased latency.
    // The prices are fitted to each hot time less the model's hot stall.
    std::array<double, locksim::kWorkKinds> w{};
    mem.llc_ns = chase_llc;
    mem.dram_ns = chase_dram;
    std::vector<CalibrationSample> fit;
    for (int round = 0; round < 20; ++round) {
        stalls(mem);
        fit.clear();
        std::copy_if(c.samples.begin(), c.samples.end(), std::back_inserter(fit),
                     [](const CalibrationSample &s) { return s.fitted; });
        for (auto &s : fit)
            s.host_ns = std::max(s.host_ns - s.stall_hot_ns, 0.1 * s.host_ns);
        w = fit_work_costs(fit, prior, o.prior_weight, fixed);
        double l2_left = 0, l2_lines = 0, llc_left = 0, llc_lines = 0, dram_left = 0,
               dram_lines = 0;
        for (const auto &s : c.samples) {
            if (!s.fitted) continue;
            double cost = 0;
            for (size_t k = 0; k < locksim::kWorkKinds; ++k)
                cost += static_cast<double>(s.counts.n[k]) * w[k];
            const Misses h = misses(s.hot), k = misses(s.cold);
            l2_left += std::max(s.host_ns - cost - h.llc * mem.llc_ns - h.dram * mem.dram_ns, 0.0) *
                       (h.l2 > 0);
            l2_lines += h.l2;
            llc_left += std::max(s.host_ns - cost - h.l2 * mem.l2_ns - h.dram * mem.dram_ns, 0.0) *
                        (h.llc > 0);
            llc_lines += h.llc;
            dram_left +=
                std::max(s.host_cold_ns - cost - k.l2 * mem.l2_ns - k.llc * mem.llc_ns, 0.0) *
                (k.dram > 0);
            dram_lines += k.dram;
        }
        const double dram =
            dram_lines > 0 ? std::min(dram_left / dram_lines, chase_dram) : chase_dram;
        // A line only the private level holds: at most its whole chase latency (the first
        // level's, which the chase includes, is hidden in a hot price's overlapped loads).
        const double l2 =
            mm.l1_kib > 0 && l2_lines > 0 ? std::min(l2_left / l2_lines, mm.private_ns) : mem.l2_ns;
        // The last level is no slower than memory and no faster than the private level.
        const double llc = std::max(
            std::min(llc_lines > 0 ? std::min(llc_left / llc_lines, chase_llc) : chase_llc, dram),
            l2);
        const bool settled = std::abs(l2 - mem.l2_ns) < 0.05 && std::abs(llc - mem.llc_ns) < 0.05 &&
                             std::abs(dram - mem.dram_ns) < 0.05;
        mem.l2_ns = std::round(l2 * 10) / 10;
        mem.llc_ns = std::round(llc * 10) / 10;
        mem.dram_ns = std::round(dram * 10) / 10;
        if (settled) break;
    }
    stalls(mem);
    c.prices = price_intervals(fit, prior, o.prior_weight, fixed, w);

    sim::CpuProfile &p = c.profile;
    p = o.base;
    p.name = o.name;
    p.source.clear();
    p.calibration.clear();  // a calibrated base's record is not this one's
    for (size_t k = 0; k < locksim::kWorkKinds; ++k)
        p.work_ps[k] = std::llround(w[k] * 1000.0);
    p.memory = mem;
    for (auto &s : c.samples) {
        s.predicted_ns = static_cast<double>(p.cost(s.counts)) + s.stall_hot_ns;
        s.predicted_cold_ns = static_cast<double>(p.cost(s.counts)) + s.stall_cold_ns;
    }
    c.primitives = time_primitives(&p, o);
    for (const auto &ps : c.primitives)
        say(fmt::format("{:<48} {:>12.1f} ns", ps.name, ps.host_ns));

    const std::time_t now = std::time(nullptr);
    p.description = fmt::format("Fitted to {}", host_description());
    p.derivation = fmt::format(
        "Written by `locksim calibrate` on {:%Y-%m-%d} from {} operations of the security-server "
        "core on the policy '{}' (work counts x cost per unit fitted to host times by "
        "non-negative least squares, relative errors, pulled towards '{}' with weight {}), and "
        "kernel/ primitives timed on the real-thread platform (user-space costs: an uncontended "
        "atomic, a futex sleep and wake-up, a liburcu read section). Kept from '{}': audit_call "
        "(the core's audit path is not the kernel's), syscall (not the core's work), rcu_callback, "
        "vmalloc, IPIs, idle exit "
        "and timer interrupts, which user space cannot time. [memory]: cache sizes from {}; "
        "{}llc_ns and dram_ns are pointer-chase latencies (a random cyclic permutation of lines "
        "in a buffer within the last level, and in one of 4x the last level) less the chase "
        "within the {} (upper bounds: a chase's misses do not overlap), fitted to the hot "
        "times (llc_ns: what they leave beyond the prices, per line the model serves from the "
        "last level) and to the cold times (dram_ns: the caches evicted by writing {} MiB "
        "before each call), with the misses of independent reads (hash slots) overlapping mlp at "
        "a time; mlp is the memory chase's latency over that of loads of the same buffer at "
        "addresses known ahead; [work_ns] is fitted to each operation's hot time less the cache "
        "model's stall for its lines; private_lifetime_us and llc_lifetime_us are the shortest "
        "sleeps after which a chase through a quarter of the private cache is slower than the "
        "geometric mean of its times with that level holding the lines and with only the next "
        "one holding them (the machine's other load, idle states, other guests take them).",
        fmt::localtime(now), fit.size(), o.policy_name, o.base.name, o.prior_weight, o.base.name,
        mm.sizes_from,
        mm.l1_kib > 0 ? "l2_ns is the chase within the private cache less that within the first "
                        "level (L1d), whose hits the [work_ns] prices are; "
                      : "",
        mm.l1_kib > 0 ? "first level" : "private cache", evict.size() >> 20);
    p.calibration["host"] = host_description();
    p.calibration["date"] = fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::localtime(now));
    p.calibration["base"] = o.base.name;
    p.calibration["policy"] = o.policy_name;
    double worst = 0;
    for (const auto &s : c.samples) {
        double r = s.predicted_ns / s.host_ns;
        if (s.fitted) worst = std::max(worst, std::abs(std::log(r)));
        p.calibration["op: " + s.name] = fmt::format(
            "host {:.0f} ns, model {:.0f} ns ({:.2f}); cold: host {:.0f} ns, model {:.0f} ns "
            "({:.2f}), {} lines; passes' largest over smallest: hot {:.2f}, cold {:.2f}{}",
            s.host_ns, s.predicted_ns, r, s.host_cold_ns, s.predicted_cold_ns,
            s.predicted_cold_ns / s.host_cold_ns, s.lines.size(), s.host_spread, s.host_cold_spread,
            s.fitted ? "" : "; shown, not fitted (the host's branch predictors learn it)");
    }
    p.calibration["memory"] = fmt::format(
        "first level {} KiB, private {} KiB, last level {} KiB (from {}); pointer chase: {:.1f} "
        "ns in {} KiB, {:.1f} ns in {} KiB, {:.1f} ns in the last level, {:.1f} ns in memory; "
        "independent loads {:.1f} ns in memory (mlp {:.2f}); l2_ns {}; fitted llc_ns {}, "
        "dram_ns {}; a chase through {} KiB after sleeping: {:.1f} ns per load at once, {:.1f} "
        "with the private cache evicted, {:.1f} with every level evicted, {} (lifetimes: "
        "private {}, last level {}; 0: not seen to leave)",
        mm.l1_kib, mm.private_kib, mm.llc_kib, mm.sizes_from, mm.l1_ns, mm.l1_kib / 2,
        mm.private_ns, mm.private_kib / 2, mm.llc_ns, mm.dram_ns, mm.independent_ns, mm.mlp,
        mem.l2_ns, mem.llc_ns, mem.dram_ns, mm.private_kib / 4, mm.idle_hot_ns, mm.idle_llc_ns,
        mm.idle_cold_ns, idle_text(mm), mem.private_lifetime_us, mem.llc_lifetime_us);
    p.calibration[kHostChaseKey] = chase_record(mm.chases);
    p.calibration["fit"] =
        fmt::format("worst model/host ratio {:.2f} or {:.2f}", std::exp(worst), std::exp(-worst));
    // [uncertainty]: the work prices move together as far as the fit leaves some operation's
    // modelled time from the host's; the other families are the base profile's.
    p.uncertainty = o.base.uncertainty;
    const auto work = static_cast<size_t>(sim::PriceFamily::Work);
    p.uncertainty.factor[work] =
        std::clamp(std::ceil(std::exp(worst) * 100) / 100, 1.05, sim::kMaxPriceFactor);
    p.uncertainty.stated.fill(true);
    p.uncertainty.why = fmt::format(
        "work: the fit's worst model/host ratio over the {} operations timed ({:.2f}), at least "
        "1.05 (each unit's own 95% interval is under [calibration] 'unit: ...'); memory, "
        "primitive and grace_period as the base profile '{}' states them",
        fit.size(), std::exp(worst), o.base.name);
    for (size_t k = 0; k < locksim::kWorkKinds; ++k)
        p.calibration[fmt::format("unit: {}", locksim::kWorkNames[k])] = price_text(c.prices[k]);
    for (const auto &ps : c.primitives)
        p.calibration["primitive: " + ps.name] = fmt::format("{:.1f} ns ({})", ps.host_ns, ps.how);
    return c;
}

PolicySpec calibration_policy(const std::string &name) {
    PolicySpec spec;
    if (name == "default") {
        spec.source = PolicySpec::Source::DebianDefault;
    } else if (name == "mls") {
        spec.source = PolicySpec::Source::DebianMls;
    } else {
        spec.source = PolicySpec::Source::File;
        spec.path = name;
    }
    return spec;
}

// The operations' states are held as void: a member of a type in this file's anonymous
// namespace would give the class, declared in the header, a field without linkage.
struct HostSpeedProbe::Impl {
    CalibrateOptions options;    // before `core`, which keeps a reference
    std::shared_ptr<void> core;  // CoreOps, which `run` calls into
    std::string name;
    std::function<void()> run;
};

HostSpeedProbe::HostSpeedProbe(const CalibrateOptions &o, ValidateRead read)
    : impl_(std::make_unique<Impl>()) {
    impl_->options = o;
    auto core = std::make_shared<CoreOps>(
        impl_->options,
        static_cast<uint64_t>(host_cache_sizes(o.base.memory).private_kib) * 1024 / 64);
    for (auto &op : core->list())
        if (op.reader == read) {
            impl_->name = std::move(op.name);
            impl_->run = std::move(op.run);
        }
    impl_->core = std::move(core);
    if (!impl_->run)
        throw UserError(
            fmt::format("policy '{}': calibrate times no operation for [validate] "
                        "read = \"{}\"",
                        o.policy_name, validate_read_names().name(read)));
    impl_->run();  // warm, as calibrate does before timing
}

HostSpeedProbe::~HostSpeedProbe() = default;

const std::string &HostSpeedProbe::op() const {
    return impl_->name;
}

double HostSpeedProbe::time_ns() {
    return time_per_call(impl_->run, impl_->options);
}

std::optional<double> calibrated_ns(const sim::CpuProfile &profile, const char *key) {
    const auto it = profile.calibration.find(key);
    if (it == profile.calibration.end()) return std::nullopt;
    double ns = 0;
    int used = 0;
    if (std::sscanf(it->second.c_str(), "%lf%n", &ns, &used) != 1 ||
        static_cast<size_t>(used) != it->second.size() || !(ns >= 0) || !std::isfinite(ns))
        throw UserError(fmt::format("{}profile '{}' [calibration] '{}': \"{}\" is not a time in ns",
                                    profile.source.empty() ? "" : profile.source + ": ",
                                    profile.name, key, it->second));
    return ns;
}

double calibrated_host_ns(const sim::CpuProfile &profile, const std::string &op) {
    const auto it = profile.calibration.find("op: " + op);
    if (it == profile.calibration.end()) return 0;
    double ns = 0;
    if (std::sscanf(it->second.c_str(), "host %lf ns", &ns) != 1 || !(ns > 0))
        throw UserError(fmt::format("{}profile '{}' [calibration] 'op: {}': no host time in \"{}\"",
                                    profile.source.empty() ? "" : profile.source + ": ",
                                    profile.name, op, it->second));
    return ns;
}

}  // namespace locksim
