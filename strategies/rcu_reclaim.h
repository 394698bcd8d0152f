// Frees deferred by call_rcu that survive their owner: each pending free is registered in a
// slot, the callback runs it after the grace period, and whatever is still
// pending when the owner goes away (a run that ended before the callbacks could run) is freed
// then, so nothing leaks and no callback touches a dead owner.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "kernel/primitives.h"

namespace locksim::strategies {

class RcuReclaimer {
  public:
    RcuReclaimer() = default;
    RcuReclaimer(const RcuReclaimer &) = delete;
    RcuReclaimer &operator=(const RcuReclaimer &) = delete;
    ~RcuReclaimer() { flush(); }

    // call_rcu(free_fn).
    void defer(std::function<void()> free_fn) {
        uint32_t slot;
        {
            std::lock_guard<std::mutex> g(s_->mu);
            if (s_->free_slots.empty()) {
                slot = static_cast<uint32_t>(s_->pending.size());
                s_->pending.emplace_back();
            } else {
                slot = s_->free_slots.back();
                s_->free_slots.pop_back();
            }
            s_->pending[slot] = std::move(free_fn);
        }
        kernel::call_rcu([s = s_, slot] {
            std::function<void()> f;
            {
                std::lock_guard<std::mutex> g(s->mu);
                if (s->dead) return;
                f = std::move(s->pending[slot]);
                s->pending[slot] = nullptr;
                s->free_slots.push_back(slot);
            }
            f();
        });
    }

    // Runs every pending free now (the owner is going away; no reader is left).
    void flush() {
        std::vector<std::function<void()>> left;
        {
            std::lock_guard<std::mutex> g(s_->mu);
            s_->dead = true;
            left.swap(s_->pending);
            s_->free_slots.clear();
        }
        for (auto &f : left)
            if (f) f();
    }

  private:
    struct State {
        std::mutex mu;
        bool dead = false;
        std::vector<std::function<void()>> pending;  // by slot; empty: a free slot
        std::vector<uint32_t> free_slots;
    };
    std::shared_ptr<State> s_ = std::make_shared<State>();
};

}  // namespace locksim::strategies
