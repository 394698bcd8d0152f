// Engine throughput: events per second on an event-only model, the cost of a fiber switch, and
// the contended-mutex model of the SimGrid comparison.
#include <benchmark/benchmark.h>

#include <boost/heap/d_ary_heap.hpp>

#include "mutex_model.h"
#include "sim/engine.h"
#include "sim/event_queue.h"

using locksim::sim::Engine;
using locksim::sim::EventQueue;
using locksim::sim::Fiber;

namespace {

// Each event reschedules itself a pseudo-random distance ahead: `pending` timers in flight.
struct Chain {
    Engine *engine;
    uint64_t state;
    static void fire(void *ctx, uint64_t arg) {
        auto *c = static_cast<Chain *>(ctx);
        c->state = c->state * 6364136223846793005ULL + 1442695040888963407ULL;
        c->engine->schedule(c->engine->now() + 1 + static_cast<int64_t>((c->state >> 33) % 10000),
                            fire, ctx, arg);
    }
};

void BM_EngineEvents(benchmark::State &state) {
    const auto pending = static_cast<size_t>(state.range(0));
    const int64_t batch = 1'000'000;
    uint64_t total = 0;
    for (auto _ : state) {
        Engine e;
        Chain chain{&e, 42};
        for (size_t i = 0; i < pending; ++i)
            e.schedule(static_cast<int64_t>(i), Chain::fire, &chain, i);
        while (e.events_processed() < static_cast<uint64_t>(batch))
            e.run(e.now() + 1'000'000);
        total += e.events_processed();
    }
    state.counters["events_per_s"] =
        benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineEvents)->Arg(16)->Arg(1024)->Arg(65536)->Unit(benchmark::kMillisecond);

// The queue alone, in the hold model (pop the earliest key, push one a pseudo-random distance
// later), against its peer: Boost.Heap's 4-ary heap of the same keys, which the engine used
// before. Arguments: keys pending, and 0 for EventQueue or 1 for the peer.
struct LaterKey {
    bool operator()(const EventQueue::Key &a, const EventQueue::Key &b) const {
        return a.time != b.time ? a.time > b.time : a.order > b.order;
    }
};
using BoostQueue =
    boost::heap::d_ary_heap<EventQueue::Key, boost::heap::arity<4>, boost::heap::compare<LaterKey>>;

template <class Queue>
uint64_t hold(Queue &q, size_t pending, int64_t batch) {
    uint64_t rng = 42, seq = 0, sum = 0;
    for (size_t i = 0; i < pending; ++i)
        q.push(EventQueue::Key{static_cast<int64_t>(i), seq++});
    for (int64_t i = 0; i < batch; ++i) {
        const EventQueue::Key k = q.top();
        q.pop();
        sum += k.order;
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        q.push(EventQueue::Key{k.time + 1 + static_cast<int64_t>((rng >> 33) % 10000), seq++});
    }
    return sum;
}

void BM_EventQueue(benchmark::State &state) {
    const auto pending = static_cast<size_t>(state.range(0));
    const int64_t batch = 1'000'000;
    for (auto _ : state) {
        if (state.range(1) == 0) {
            EventQueue q;
            benchmark::DoNotOptimize(hold(q, pending, batch));
        } else {
            BoostQueue q;
            benchmark::DoNotOptimize(hold(q, pending, batch));
        }
    }
    state.counters["events_per_s"] =
        benchmark::Counter(static_cast<double>(batch) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueue)->ArgsProduct({{16, 1024, 65536}, {0, 1}})->Unit(benchmark::kMillisecond);

// One iteration = a switch into the fiber and a switch back (two switches).
void BM_FiberSwitch(benchmark::State &state) {
    Fiber *self = nullptr;
    bool stop = false;
    Fiber f([&] {
        while (!stop)
            self->suspend();
    });
    self = &f;
    for (auto _ : state)
        f.resume();
    stop = true;
    f.resume();
    state.counters["ns_per_switch"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * 2,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_FiberSwitch);

void BM_MutexModel(benchmark::State &state) {
    locksim::bench::MutexModel m;
    m.tasks = static_cast<int>(state.range(0));
    m.cpus = static_cast<int>(state.range(1));
    m.duration = 100'000'000;
    uint64_t events = 0;
    for (auto _ : state)
        events += locksim::bench::run_mutex_model(m).events;
    state.counters["events_per_s"] =
        benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MutexModel)->Args({32, 8})->Args({8, 8})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
