// Frees deferred by call_rcu that survive their owner: each pending free is registered under
// the object it frees, the callback runs it after the grace period, and whatever is still
// pending when the owner goes away (a run that ended before the callbacks could run) is freed
// then, so nothing leaks and no callback touches a dead owner.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "kernel/kernel.h"

namespace locksim::strategies {

class RcuReclaimer {
  public:
    RcuReclaimer() = default;
    RcuReclaimer(const RcuReclaimer &) = delete;
    RcuReclaimer &operator=(const RcuReclaimer &) = delete;
    ~RcuReclaimer() { flush(); }

    // call_rcu(free_fn), keyed by the object it frees.
    void defer(const void *key, std::function<void()> free_fn) {
        {
            std::lock_guard<std::mutex> g(s_->mu);
            s_->pending.emplace(key, std::move(free_fn));
        }
        kernel::call_rcu([s = s_, key] {
            std::function<void()> f;
            {
                std::lock_guard<std::mutex> g(s->mu);
                auto it = s->pending.find(key);
                if (s->dead || it == s->pending.end()) return;
                f = std::move(it->second);
                s->pending.erase(it);
            }
            f();
        });
    }

    // Runs every pending free now (the owner is going away; no reader is left).
    void flush() {
        std::unordered_map<const void *, std::function<void()>> left;
        {
            std::lock_guard<std::mutex> g(s_->mu);
            s_->dead = true;
            left.swap(s_->pending);
        }
        for (auto &[key, f] : left)
            f();
    }

  private:
    struct State {
        std::mutex mu;
        bool dead = false;
        std::unordered_map<const void *, std::function<void()>> pending;
    };
    std::shared_ptr<State> s_ = std::make_shared<State>();
};

}  // namespace locksim::strategies
