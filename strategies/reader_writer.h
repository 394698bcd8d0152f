// The shape the designs with one reader-writer lock around the policy share (rwlock, rwsem,
// percpu-rwsem): the reader holds the read side around every read-side service; set_bools
// holds the write side around the update in place (set_bools_exclusive) and load_policy
// around the swap (load_exclusive). The designs differ only in the lock.
#pragma once

#include <span>
#include <utility>

#include "strategies/strategy.h"

namespace locksim::strategies {

// `Lock` is a small struct in the design's own file: `kName` (the design's name), a constructor
// from the platform that creates the lock under the kernel's name, and read_lock, read_unlock,
// write_lock and write_unlock, each one kernel call written there, so the lock sites a run
// records (`read_lock @ rwlock.cpp:NN`) name the design's file.
template <class Lock>
class ReaderWriterServer final : public StrategyBase {
  public:
    ReaderWriterServer(ss::PolicyState st, const CoreConfig &core)
        : StrategyBase(Lock::kName, std::move(st), core, false), lock_(platform_) {}

  protected:
    int read_section(ReadFn fn) override {
        lock_.read_lock();
        int rc = fn(policy_locked()->st);
        lock_.read_unlock();
        return rc;
    }

    int write_bools(std::span<const int> values, uint32_t *seqno) override {
        return set_bools_exclusive(values, seqno, [&](FunctionRef<void()> update) {
            lock_.write_lock();
            update();
            lock_.write_unlock();
        });
    }

    int write_load(std::span<const uint8_t> image, uint32_t *seqno) override {
        return load_exclusive(image, seqno, [&](FunctionRef<void()> swap) {
            lock_.write_lock();
            swap();
            lock_.write_unlock();
        });
    }

  private:
    Lock lock_;
};

}  // namespace locksim::strategies
