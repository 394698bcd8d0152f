// The discrete-event engine: integer simulated time, a heap of pending events, and stackful
// fibers for simulated tasks. It knows nothing of CPUs, locks or RCU (sim_platform.h models
// those on top of it), in the way SimGrid keeps its kernel apart from its models.
//
// An event is a plain function pointer with a context pointer and an integer argument: no
// allocation per event (payloads live in a recycled slot array; the queue, event_queue.h, holds
// 16-byte keys). Events at equal times run in the
// order they were scheduled, so a run is a function of its inputs. Cancelling is done by the owner
// with generation numbers carried in `arg` (a stale event is ignored when it fires), which keeps
// the heap simple.
#pragma once

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <exception>
#include <functional>
#include <vector>

#include "sim/event_queue.h"

namespace locksim::sim {

using Time = int64_t;
class Fiber;

class Engine {
  public:
    using Handler = void (*)(void *ctx, uint64_t arg);

    struct Event {
        Time time;
        Handler fn;
        void *ctx;
        uint64_t arg;
    };

    Time now() const { return now_; }
    uint64_t events_processed() const { return processed_; }
    size_t pending() const { return heap_.size(); }
    // Events can be at most this many pending at once (the slot index is 24 bits).
    static constexpr size_t kMaxPending = size_t{1} << 24;

    void schedule(Time t, Handler fn, void *ctx, uint64_t arg);
    // Time of the earliest pending event, or INT64_MAX when none.
    Time next_time() const { return heap_.empty() ? INT64_MAX : heap_.top().time; }
    // Moves the clock forward with no event in between (the caller checked next_time()).
    void advance_to(Time t) { now_ = t; }

    // Runs events in order until the queue is empty, `until` is passed, or stop() is called.
    void run(Time until = INT64_MAX);
    void stop() { stopped_ = true; }
    void clear();

    // Fibers driven by the loop. A handler names the fiber to run next with run_fiber(); the
    // loop switches to it once the handler has returned. A running fiber that waits calls
    // suspend_fiber(), which goes on with the loop on the fiber's own stack and switches
    // straight to the next fiber an event names, or returns at once when that is the fiber
    // itself: one switch from task to task instead of two through run()'s stack. The events run
    // in the same order either way. run() returns (and rethrows a fiber's or a handler's
    // exception) on run()'s stack.
    void run_fiber(Fiber *f) { next_fiber_ = f; }
    void suspend_fiber(Fiber *self);

  private:
    // Runs events until a handler names a fiber (returned) or the run is over (nullptr).
    Fiber *dispatch();

    // A key's order word: the scheduling sequence number (upper 40 bits, the tie-break) and the
    // index of the event's payload slot (lower 24 bits).
    static constexpr int kSlotBits = 24;

    EventQueue heap_;
    std::vector<Event> slots_;
    // The free slots, as a list threaded through their `arg` (the last freed first).
    static constexpr uint32_t kNoSlot = UINT32_MAX;
    uint32_t free_head_ = kNoSlot;
    Time now_ = 0;
    Time until_ = INT64_MAX;
    uint64_t seq_ = 0;
    uint64_t processed_ = 0;
    bool stopped_ = false;
    Fiber *next_fiber_ = nullptr;
    std::exception_ptr error_;  // a handler's, thrown on a fiber's stack
};

// A stackful coroutine driven by the engine. resume() runs it until it calls suspend() or its
// body returns; the body's exception, if any, is rethrown by resume() (or by Engine::run() for
// fibers it runs). Destroying an unfinished
// fiber cancels it: its pending suspend() throws Fiber::Cancelled, which unwinds its stack
// (running destructors) back to the fiber's entry. Every switch is announced to
// AddressSanitizer when it is on, so sanitizer builds see the right stack.
class Fiber {
  public:
    struct Cancelled {};

    explicit Fiber(std::function<void()> body, size_t stack_size = 256 * 1024);
    ~Fiber();
    Fiber(const Fiber &) = delete;
    Fiber &operator=(const Fiber &) = delete;

    void resume();   // from the engine's context
    void suspend();  // from inside the fiber
    bool done() const { return done_; }
    bool running() const { return running_; }

  private:
    friend class Engine;
    // From inside this fiber, straight to `next` (suspended or new), which takes over this
    // fiber's resumer; returns when this fiber is switched to again.
    void switch_to(Fiber &next);
    // On arriving in this fiber: keeps the context left where its switcher said, and the
    // resumer's stack bounds when the resumer switched here.
    void arrive(boost::context::fiber &&from, void *fake_stack);
    // The entry's last step: back to the resumer with this stack ended.
    boost::context::fiber finish();

    boost::context::fiber self_;    // the fiber's context while it is suspended
    boost::context::fiber caller_;  // the resumer's context while the fiber runs
    std::function<void()> body_;
    std::exception_ptr error_;
    bool done_ = false;
    bool running_ = false;
    bool cancel_ = false;
    // Stack bounds for the sanitizer annotations.
    const void *stack_bottom_ = nullptr;
    size_t stack_size_ = 0;
    const void *caller_bottom_ = nullptr;
    size_t caller_size_ = 0;
    void *fiber_fake_stack_ = nullptr;
};

}  // namespace locksim::sim
