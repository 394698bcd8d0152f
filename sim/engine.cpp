#include "sim/engine.h"

#include <algorithm>
#include <atomic>
#include <boost/context/preallocated.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <stdexcept>
#include <utility>

#include "util/sanitizers.h"
#if LOCKSIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace locksim::sim {

namespace ctx = boost::context;

void Engine::schedule(Time t, Handler fn, void *c, uint64_t arg) {
    uint32_t slot;
    if (free_head_ != kNoSlot) {
        slot = free_head_;
        free_head_ = static_cast<uint32_t>(slots_[slot].arg);
    } else {
        if (slots_.size() >= kMaxPending)
            throw std::length_error("too many pending simulation events");
        slot = static_cast<uint32_t>(slots_.size());
        slots_.emplace_back();
    }
    if (t < now_) t = now_;
    slots_[slot] = Event{t, fn, c, arg};
    heap_.push(EventQueue::Key{t, (seq_++ << kSlotBits) | slot});
}

Fiber *Engine::dispatch() {
    while (!heap_.empty() && !stopped_) {
        const EventQueue::Key k = heap_.top();
        if (k.time > until_) break;
        heap_.pop();
        auto slot = static_cast<uint32_t>(k.order & ((uint64_t{1} << kSlotBits) - 1));
        Event e = slots_[slot];
        slots_[slot].arg = free_head_;  // the slot is free: it links to the next free one
        free_head_ = slot;
        now_ = e.time;
        ++processed_;
        e.fn(e.ctx, e.arg);
        if (next_fiber_) return std::exchange(next_fiber_, nullptr);
    }
    return nullptr;
}

void Engine::run(Time until) {
    stopped_ = false;
    until_ = until;
    while (Fiber *f = dispatch()) {
        f->resume();  // until a fiber comes back here: the run is over, or a fiber ended
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }
}

void Engine::suspend_fiber(Fiber *self) {
    Fiber *next = nullptr;
    try {
        next = dispatch();
    } catch (...) {
        error_ = std::current_exception();  // run() rethrows it on its own stack
    }
    if (next == self) return;
    if (next)
        self->switch_to(*next);
    else
        self->suspend();
}

void Engine::clear() {
    heap_.clear();
    slots_.clear();
    free_head_ = kNoSlot;
    next_fiber_ = nullptr;
    error_ = nullptr;
}

namespace {

#if LOCKSIM_ASAN
void start_switch(void **fake_stack, const void *bottom, size_t size) {
    __sanitizer_start_switch_fiber(fake_stack, bottom, size);
}
void finish_switch(void *fake_stack, const void **bottom, size_t *size) {
    __sanitizer_finish_switch_fiber(fake_stack, bottom, size);
}
void unpoison(void *bottom, size_t size) {
    __asan_unpoison_memory_region(bottom, size);
}
#else
void start_switch(void **, const void *, size_t) {}
void finish_switch(void *, const void **, size_t *) {}
void unpoison(void *, size_t) {}
#endif

// Guard-paged fiber stacks. Frames left on a stack keep their redzones poisoned in
// AddressSanitizer's shadow memory; the stack is unpoisoned before it is unmapped, so that a
// later mapping at the same address (another allocator's) does not inherit the poison.
struct FiberStack {
    ctx::protected_fixedsize_stack alloc;
    explicit FiberStack(size_t size) : alloc(size) {}
    ctx::stack_context allocate() { return alloc.allocate(); }
    void deallocate(ctx::stack_context &sc) noexcept {
        unpoison(static_cast<char *>(sc.sp) - sc.size, sc.size);
        alloc.deallocate(sc);
    }
};

// Every switch on this thread says, just before it jumps, where the context it leaves is to be
// kept and which fiber it leaves (nullptr: a resumer's stack); the context it arrives in keeps it
// there (boost.context hands the left context to the one arrived in).
struct Departure {
    ctx::fiber *park = nullptr;
    Fiber *from = nullptr;
};
thread_local Departure tl_departure;

// Stacks are page-aligned mappings of one size, so without an offset the top frames of every
// fiber would sit at the same offsets within a page and compete for the same cache sets (a
// switch among hundreds of fibers then misses in the cache on every switch). Each stack starts
// one of kStackColors cache lines below its top, in turn.
constexpr size_t kStackColors = 64;
constexpr size_t kCacheLine = 64;
std::atomic<size_t> next_stack_color{0};

}  // namespace

Fiber::Fiber(std::function<void()> body, size_t stack_size) : body_(std::move(body)) {
    const size_t color =
        next_stack_color.fetch_add(1, std::memory_order_relaxed) % kStackColors * kCacheLine;
    FiberStack alloc(stack_size + kStackColors * kCacheLine);
    ctx::stack_context sc = alloc.allocate();
    stack_bottom_ = static_cast<char *>(sc.sp) - sc.size;
    stack_size_ = sc.size;
    self_ = ctx::fiber(std::allocator_arg,
                       ctx::preallocated(static_cast<char *>(sc.sp) - color, sc.size - color, sc),
                       alloc, [this](ctx::fiber &&from) {
                           arrive(std::move(from), nullptr);
                           if (!cancel_) {
                               try {
                                   body_();
                               } catch (const Cancelled &) {
                                   // unwound by the destructor
                               } catch (...) {
                                   error_ = std::current_exception();
                               }
                           }
                           return finish();
                       });
}

Fiber::~Fiber() {
    if (done_) return;
    // Run the fiber to its end: a fiber never started returns at once, a suspended one unwinds
    // from its suspend(). The body runs no further than its destructors.
    cancel_ = true;
    try {
        resume();
    } catch (...) {
        // an exception escaping a destructor during cancellation has nowhere to go
    }
}

void Fiber::resume() {
    void *fake_stack = nullptr;
    start_switch(&fake_stack, stack_bottom_, stack_size_);
    tl_departure = {&caller_, nullptr};
    ctx::fiber back = std::move(self_).resume();
    // Back from this fiber, or from one it handed its resumer to (Engine::suspend_fiber).
    const Departure d = tl_departure;
    *d.park = std::move(back);
    finish_switch(fake_stack, nullptr, nullptr);
    d.from->running_ = false;
    if (d.from->error_) std::rethrow_exception(std::exchange(d.from->error_, nullptr));
}

void Fiber::suspend() {
    running_ = false;
    start_switch(&fiber_fake_stack_, caller_bottom_, caller_size_);
    tl_departure = {&self_, this};
    ctx::fiber from = std::move(caller_).resume();
    arrive(std::move(from), fiber_fake_stack_);
    if (cancel_) throw Cancelled{};
}

void Fiber::switch_to(Fiber &next) {
    next.caller_ = std::move(caller_);
    next.caller_bottom_ = caller_bottom_;
    next.caller_size_ = caller_size_;
    running_ = false;
    start_switch(&fiber_fake_stack_, next.stack_bottom_, next.stack_size_);
    tl_departure = {&self_, this};
    ctx::fiber from = std::move(next.self_).resume();
    arrive(std::move(from), fiber_fake_stack_);
    if (cancel_) throw Cancelled{};
}

void Fiber::arrive(ctx::fiber &&from, void *fake_stack) {
    const Departure d = tl_departure;
    *d.park = std::move(from);
    running_ = true;
    // From the resumer: its stack's bounds, for the switch back. From a fiber that handed over,
    // the bounds came with its resumer.
    if (d.from)
        finish_switch(fake_stack, nullptr, nullptr);
    else
        finish_switch(fake_stack, &caller_bottom_, &caller_size_);
}

ctx::fiber Fiber::finish() {
    done_ = true;
    running_ = false;
    tl_departure = {&self_, this};
    start_switch(nullptr, caller_bottom_, caller_size_);  // this stack ends
    return std::move(caller_);
}

}  // namespace locksim::sim
