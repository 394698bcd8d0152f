#include "sim/engine.h"

#include <algorithm>
#include <boost/context/protected_fixedsize_stack.hpp>

namespace locksim::sim {

namespace ctx = boost::context;

void Engine::schedule(Time t, Handler fn, void *c, uint64_t arg) {
    heap_.push_back(Event{t < now_ ? now_ : t, seq_++, fn, c, arg});
    std::push_heap(heap_.begin(), heap_.end(), later);
}

void Engine::run(Time until) {
    stopped_ = false;
    while (!heap_.empty() && !stopped_) {
        if (heap_.front().time > until) break;
        std::pop_heap(heap_.begin(), heap_.end(), later);
        Event e = heap_.back();
        heap_.pop_back();
        now_ = e.time;
        ++processed_;
        e.fn(e.ctx, e.arg);
    }
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
