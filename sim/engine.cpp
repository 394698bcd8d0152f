#include "sim/engine.h"

#include <algorithm>
#include <atomic>
#include <boost/context/preallocated.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#include <stdexcept>

namespace locksim::sim {

namespace ctx = boost::context;

void Engine::schedule(Time t, Handler fn, void *c, uint64_t arg) {
    uint32_t slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
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

void Engine::run(Time until) {
    stopped_ = false;
    while (!heap_.empty() && !stopped_) {
        const EventQueue::Key k = heap_.top();
        if (k.time > until) break;
        heap_.pop();
        auto slot = static_cast<uint32_t>(k.order & ((uint64_t{1} << kSlotBits) - 1));
        Event e = slots_[slot];
        free_slots_.push_back(slot);
        now_ = e.time;
        ++processed_;
        e.fn(e.ctx, e.arg);
    }
}

void Engine::clear() {
    heap_.clear();
    slots_.clear();
    free_slots_.clear();
}

namespace {

#if defined(__SANITIZE_ADDRESS__)
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
                       alloc, [this](ctx::fiber &&caller) {
                           finish_switch(nullptr, &caller_bottom_, &caller_size_);
                           caller_ = std::move(caller);
                           if (!cancel_) {
                               try {
                                   body_();
                               } catch (const Cancelled &) {
                                   // unwound by the destructor
                               } catch (...) {
                                   error_ = std::current_exception();
                               }
                           }
                           done_ = true;
                           running_ = false;
                           start_switch(nullptr, caller_bottom_, caller_size_);  // this stack ends
                           return std::move(caller_);
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
    running_ = true;
    start_switch(&caller_fake_stack_, stack_bottom_, stack_size_);
    self_ = std::move(self_).resume();
    finish_switch(caller_fake_stack_, nullptr, nullptr);
    running_ = false;
    if (error_) {
        auto e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
}

void Fiber::suspend() {
    start_switch(&fiber_fake_stack_, caller_bottom_, caller_size_);
    caller_ = std::move(caller_).resume();
    finish_switch(fiber_fake_stack_, &caller_bottom_, &caller_size_);
    if (cancel_) throw Cancelled{};
}

}  // namespace locksim::sim
