// Read-side cost of each primitive on host threads, as the kernel's refscale measures it: every
// thread runs empty read sections back to back; the time per section is the cost. One harness
// (ReadSection<P>) for all primitives, each at 1 and 2 threads:
//   raw_*      the primitive alone (liburcu memb read section, real/locks.h rwlock and rwsem,
//              a seqcount read, the percpu-rwsem fast path);
//   kernel_*   the same through kernel/ on a RealPlatform, with its timing and bookkeeping
//              (what a strategy pays on the real platform).
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <vector>

#include "kernel/rcu.h"
#include "kernel/rwlock.h"
#include "kernel/rwsem.h"
#include "real/locks.h"
#include "real/real_platform.h"
#include "real/urcu.h"

namespace locksim::real {
namespace {

struct RawRcu {
    void read() {
        urcu_memb_read_lock();
        urcu_memb_read_unlock();
    }
};

struct RawRwlock {
    QueuedRwLock l;
    void read() {
        l.read_lock();
        l.read_unlock();
    }
};

struct RawRwsem {
    SleepingRwSem s;
    void read() {
        s.down_read();
        s.up_read();
    }
};

// read_seqbegin / read_seqretry around nothing.
struct RawSeqlock {
    std::atomic<uint64_t> seq{0};
    void read() {
        uint64_t s;
        do {
            while ((s = seq.load(std::memory_order_acquire)) & 1)
                cpu_relax();
        } while (seq.load(std::memory_order_acquire) != s);
    }
};

// percpu_down_read / percpu_up_read's fast path: a read-side section (the kernel's preempt-off
// region, a liburcu reader here), the idle check and a per-CPU counter on both sides.
struct RawPercpuRwsem {
    struct alignas(64) Counter {
        std::atomic<int64_t> n{0};
    };
    std::vector<Counter> counts = std::vector<Counter>(256);
    std::atomic<bool> idle{true};
    void read() {
        urcu_memb_read_lock();
        if (idle.load(std::memory_order_relaxed))
            counts[static_cast<unsigned>(sched_getcpu()) % counts.size()].n.fetch_add(
                1, std::memory_order_relaxed);
        urcu_memb_read_unlock();
        urcu_memb_read_lock();
        counts[static_cast<unsigned>(sched_getcpu()) % counts.size()].n.fetch_sub(
            1, std::memory_order_relaxed);
        urcu_memb_read_unlock();
    }
};

// The platform the kernel_* variants run on (threads install it themselves).
RealPlatform &platform() {
    static RealPlatform p([] {
        RealConfig c;
        c.duration = kernel::kSec;
        return c;
    }());
    return p;
}

struct KernelRcu {
    void read() {
        kernel::rcu_read_lock();
        kernel::rcu_read_unlock();
    }
};

struct KernelRwlock {
    kernel::RwLock l{"bench_rwlock", platform()};
    void read() {
        kernel::read_lock(l);
        kernel::read_unlock(l);
    }
};

struct KernelRwsem {
    kernel::RwSem s{"bench_rwsem", platform()};
    void read() {
        kernel::down_read(s);
        kernel::up_read(s);
    }
};

template <class P>
void ReadSection(benchmark::State &state) {
    static P *prim = nullptr;
    if (state.thread_index() == 0) prim = new P;
    kernel::PlatformScope scope(platform());
    urcu_thread_register();
    for (auto _ : state)
        prim->read();
    state.SetItemsProcessed(state.iterations());
    if (state.thread_index() == 0) {
        delete prim;
        prim = nullptr;
    }
}

#define READ_BENCH(P) BENCHMARK_TEMPLATE(ReadSection, P)->Threads(1)->Threads(2)->UseRealTime()
READ_BENCH(RawRcu);
READ_BENCH(RawRwlock);
READ_BENCH(RawRwsem);
READ_BENCH(RawSeqlock);
READ_BENCH(RawPercpuRwsem);
READ_BENCH(KernelRcu);
READ_BENCH(KernelRwlock);
READ_BENCH(KernelRwsem);

}  // namespace
}  // namespace locksim::real

BENCHMARK_MAIN();
