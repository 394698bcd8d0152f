#include "sim/engine.h"

#include <algorithm>
#include <boost/context/protected_fixedsize_stack.hpp>
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
    heap_.push(Key{t, (seq_++ << kSlotBits) | slot});
}

void Engine::run(Time until) {
    stopped_ = false;
    while (!heap_.empty() && !stopped_) {
        Key k = heap_.top();
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

Fiber::Fiber(std::function<void()> body, size_t stack_size) : body_(std::move(body)) {
    self_ = ctx::fiber(std::allocator_arg, ctx::protected_fixedsize_stack(stack_size),
                       [this](ctx::fiber &&caller) {
                           caller_ = std::move(caller);
                           try {
                               body_();
                           } catch (const ctx::detail::forced_unwind &) {
                               throw;  // the destructor unwinding a suspended fiber
                           } catch (...) {
                               error_ = std::current_exception();
                           }
                           done_ = true;
                           running_ = false;
                           return std::move(caller_);
                       });
}

Fiber::~Fiber() {
    // Unwind a suspended fiber's stack while the body it runs is still alive.
    self_ = ctx::fiber{};
}

void Fiber::resume() {
    running_ = true;
    self_ = std::move(self_).resume();
    running_ = false;
    if (error_) {
        auto e = error_;
        error_ = nullptr;
        std::rethrow_exception(e);
    }
}

void Fiber::suspend() {
    caller_ = std::move(caller_).resume();
}

}  // namespace locksim::sim
