#include "sim/engine.h"

#include <gtest/gtest.h>

#include <memory>
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

namespace {
// A task of the fiber tests below: each step is logged, then the fiber waits `period` for an
// event that names it to run again (Engine::run_fiber), from the loop in suspend_fiber.
struct Stepper {
    Engine *e;
    std::vector<std::pair<int64_t, char>> *log;
    char name;
    int64_t period;
    int steps;
    std::unique_ptr<Fiber> fiber;

    static void wake(void *self, uint64_t) {
        auto *s = static_cast<Stepper *>(self);
        s->e->run_fiber(s->fiber.get());
    }
    void start() {
        fiber = std::make_unique<Fiber>([this] {
            for (int i = 0; i < steps; ++i) {
                log->emplace_back(e->now(), name);
                e->schedule(e->now() + period, wake, this, 0);
                e->suspend_fiber(fiber.get());
            }
        });
        e->schedule(0, wake, this, 0);
    }
};
}  // namespace

TEST(Engine, FibersHandOverInEventOrder) {
    Engine e;
    std::vector<std::pair<int64_t, char>> log;
    Stepper a{&e, &log, 'a', 10, 3, nullptr}, b{&e, &log, 'b', 15, 3, nullptr};
    a.start();
    b.start();
    // An event that names no fiber runs from a waiting fiber's stack, in its place in time.
    Log marks{&e, {}};
    e.schedule(12, record, &marks, 7);
    e.run();
    std::vector<std::pair<int64_t, char>> want{{0, 'a'},  {0, 'b'},  {10, 'a'},
                                               {15, 'b'}, {20, 'a'}, {30, 'b'}};
    EXPECT_EQ(log, want);
    EXPECT_EQ(marks.seen, (std::vector<std::pair<int64_t, uint64_t>>{{12, 7}}));
    EXPECT_TRUE(a.fiber->done());
    EXPECT_TRUE(b.fiber->done());
    EXPECT_EQ(e.pending(), 0u);
}

TEST(Engine, RunStopsAtTheHorizonWhileAFiberWaits) {
    Engine e;
    std::vector<std::pair<int64_t, char>> log;
    Stepper a{&e, &log, 'a', 10, 5, nullptr};
    a.start();
    e.run(25);
    EXPECT_EQ(log.size(), 3u);  // at 0, 10 and 20
    EXPECT_FALSE(a.fiber->done());
    e.run();  // goes on where it stopped
    EXPECT_EQ(log.size(), 5u);
    EXPECT_TRUE(a.fiber->done());
}

namespace {
void throw_from_handler(void *, uint64_t) {
    throw std::runtime_error("handler");
}
}  // namespace

TEST(Engine, ExceptionsOnAFibersStackReachRun) {
    // A handler's, run by the loop on a waiting fiber's stack.
    {
        Engine e;
        std::vector<std::pair<int64_t, char>> log;
        Stepper a{&e, &log, 'a', 10, 5, nullptr};
        a.start();
        e.schedule(5, throw_from_handler, nullptr, 0);
        EXPECT_THROW(e.run(), std::runtime_error);
        EXPECT_FALSE(a.fiber->done());
        a.fiber.reset();  // unwinds the waiting fiber
    }
    // A fiber's own, after a hand-over.
    {
        Engine e;
        std::vector<std::pair<int64_t, char>> log;
        Stepper a{&e, &log, 'a', 10, 2, nullptr};
        a.start();
        struct Thrower {
            Engine *e;
            std::unique_ptr<Fiber> fiber;
            static void wake(void *self, uint64_t) {
                auto *t = static_cast<Thrower *>(self);
                t->e->run_fiber(t->fiber.get());
            }
        } t{&e, std::make_unique<Fiber>([] { throw std::runtime_error("body"); })};
        e.schedule(5, Thrower::wake, &t, 0);
        EXPECT_THROW(e.run(), std::runtime_error);
        EXPECT_TRUE(t.fiber->done());
    }
}
