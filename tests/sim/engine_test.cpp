#include "sim/engine.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using locksim::sim::Engine;
using locksim::sim::Fiber;

namespace {
struct Log {
    Engine *e;
    std::vector<std::pair<int64_t, uint64_t>> seen;
};
void record(void *ctx, uint64_t arg) {
    auto *l = static_cast<Log *>(ctx);
    l->seen.emplace_back(l->e->now(), arg);
}
}  // namespace

TEST(Engine, EventsRunInTimeThenSchedulingOrder) {
    Engine e;
    Log log{&e, {}};
    e.schedule(30, record, &log, 1);
    e.schedule(10, record, &log, 2);
    e.schedule(30, record, &log, 3);
    e.schedule(20, record, &log, 4);
    e.run();
    std::vector<std::pair<int64_t, uint64_t>> want{{10, 2}, {20, 4}, {30, 1}, {30, 3}};
    EXPECT_EQ(log.seen, want);
    EXPECT_EQ(e.events_processed(), 4u);
}

TEST(Engine, RunStopsAtTheHorizon) {
    Engine e;
    Log log{&e, {}};
    e.schedule(10, record, &log, 1);
    e.schedule(100, record, &log, 2);
    e.run(50);
    EXPECT_EQ(log.seen.size(), 1u);
    EXPECT_EQ(e.pending(), 1u);
    EXPECT_EQ(e.next_time(), 100);
}

TEST(Fiber, ResumeAndSuspendInterleave) {
    std::vector<int> order;
    Fiber *self = nullptr;
    Fiber f([&] {
        order.push_back(1);
        self->suspend();
        order.push_back(3);
    });
    self = &f;
    f.resume();
    order.push_back(2);
    EXPECT_FALSE(f.done());
    f.resume();
    EXPECT_TRUE(f.done());
    EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(Fiber, ExceptionsReachTheResumer) {
    Fiber f([] { throw std::runtime_error("boom"); });
    EXPECT_THROW(f.resume(), std::runtime_error);
    EXPECT_TRUE(f.done());
}

TEST(Fiber, DestroyingASuspendedFiberUnwindsIt) {
    bool destroyed = false;
    struct Flag {
        bool *b;
        ~Flag() { *b = true; }
    };
    {
        Fiber *self = nullptr;
        Fiber f([&] {
            Flag flag{&destroyed};
            self->suspend();
        });
        self = &f;
        f.resume();
    }
    EXPECT_TRUE(destroyed);
}
