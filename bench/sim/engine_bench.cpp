// Engine throughput: events per second on an event-only model, the cost of a fiber switch, and
// the contended-mutex model of the SimGrid comparison.
#include <benchmark/benchmark.h>

#include "mutex_model.h"
#include "sim/engine.h"

using locksim::sim::Engine;
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
