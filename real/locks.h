// The real platform's lock primitives, on std::atomic (spinning) and on std::mutex /
// std::condition_variable (sleeping; futex-based in glibc). They know nothing of the platform's
// metrics: RealPlatform wraps them with the timing and the would-be-atomic bookkeeping, and the
// primitive benchmarks (bench/real/) use them bare as well.
//
//  - TicketSpinlock: FIFO hand-off (the kernel's qspinlock queues waiters in MCS nodes; a
//    ticket lock gives the same FIFO order with one shared line, which is what two to eight
//    CPUs see anyway).
//  - QueuedRwLock: the kernel's qrwlock (kernel/locking/qrwlock.c): one word of reader count and
//    writer state, plus a ticket spinlock that queues the slow paths, so a waiting writer stops
//    new readers and readers arriving behind it queue in FIFO order.
//  - SleepingRwSem: readers share, a writer excludes; a waiting writer blocks new readers.
//  - SleepingMutex: FIFO hand-off by tickets.
//
// Spinning waits cpu_relax() and, because user space cannot stop the lock holder from being
// preempted, yield the CPU every kYieldEvery rounds so that an oversubscribed machine still makes
// progress (the kernel would not need to).
#pragma once

#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace locksim::real {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

inline constexpr unsigned kYieldEvery = 1024;

// Spins until `done()` holds; returns whether it had to wait at all.
template <class F>
inline bool spin_until(F &&done) {
    if (done()) return false;
    for (unsigned n = 1; !done(); ++n) {
        cpu_relax();
        if (n % kYieldEvery == 0) sched_yield();
    }
    return true;
}

class TicketSpinlock {
  public:
    // Returns whether the caller had to wait.
    bool lock() {
        const uint32_t ticket = next_.fetch_add(1, std::memory_order_relaxed);
        return spin_until([&] { return owner_.load(std::memory_order_acquire) == ticket; });
    }
    bool try_lock() {
        uint32_t owner = owner_.load(std::memory_order_relaxed);
        uint32_t expected = owner;
        return next_.compare_exchange_strong(expected, owner + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }
    void unlock() {
        owner_.store(owner_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    bool is_locked() const {
        return next_.load(std::memory_order_relaxed) != owner_.load(std::memory_order_relaxed);
    }

  private:
    std::atomic<uint32_t> next_{0};
    std::atomic<uint32_t> owner_{0};
};

class QueuedRwLock {
  public:
    static constexpr uint32_t kWriterLocked = 0xff;
    static constexpr uint32_t kWriterWaiting = 0x100;
    static constexpr uint32_t kWriterMask = 0x1ff;
    static constexpr uint32_t kReaderBias = 0x200;

    bool read_lock() {
        uint32_t c = cnts_.fetch_add(kReaderBias, std::memory_order_acquire);
        if (!(c & kWriterMask)) [[likely]]
            return false;
        // queued_read_lock_slowpath: leave, queue behind whoever waits, come back when the
        // writer has gone.
        cnts_.fetch_sub(kReaderBias, std::memory_order_relaxed);
        wait_lock_.lock();
        cnts_.fetch_add(kReaderBias, std::memory_order_relaxed);
        spin_until([&] { return !(cnts_.load(std::memory_order_acquire) & kWriterLocked); });
        wait_lock_.unlock();
        return true;
    }
    bool try_read_lock() {
        uint32_t c = cnts_.load(std::memory_order_relaxed);
        if (c & kWriterMask) return false;
        c = cnts_.fetch_add(kReaderBias, std::memory_order_acquire);
        if (!(c & kWriterMask)) return true;
        cnts_.fetch_sub(kReaderBias, std::memory_order_relaxed);
        return false;
    }
    void read_unlock() { cnts_.fetch_sub(kReaderBias, std::memory_order_release); }

    bool write_lock() {
        if (try_write_lock()) [[likely]]
            return false;
        // queued_write_lock_slowpath: queue, announce, wait for the readers to drain.
        wait_lock_.lock();
        cnts_.fetch_or(kWriterWaiting, std::memory_order_relaxed);
        spin_until([&] {
            uint32_t expected = kWriterWaiting;
            return cnts_.compare_exchange_weak(expected, kWriterLocked, std::memory_order_acquire,
                                               std::memory_order_relaxed);
        });
        wait_lock_.unlock();
        return true;
    }
    bool try_write_lock() {
        uint32_t expected = 0;
        return cnts_.compare_exchange_strong(expected, kWriterLocked, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }
    void write_unlock() { cnts_.fetch_sub(kWriterLocked, std::memory_order_release); }

  private:
    std::atomic<uint32_t> cnts_{0};
    TicketSpinlock wait_lock_;
};

class SleepingRwSem {
  public:
    bool down_read() {
        std::unique_lock lk(mu_);
        bool waited = writer_ || writers_waiting_ > 0;
        cv_.wait(lk, [&] { return !writer_ && writers_waiting_ == 0; });
        ++readers_;
        return waited;
    }
    bool try_down_read() {
        std::lock_guard lk(mu_);
        if (writer_ || writers_waiting_ > 0) return false;
        ++readers_;
        return true;
    }
    // The waiters are woken after the mutex is released (as the kernel's wake_q wakes them
    // after its wait_lock): woken under it, a waiter would sleep again on the mutex at once.
    void up_read() {
        bool wake;
        {
            std::lock_guard lk(mu_);
            wake = --readers_ == 0 && writers_waiting_ > 0;
        }
        if (wake) cv_.notify_all();
    }
    bool down_write() {
        std::unique_lock lk(mu_);
        bool waited = writer_ || readers_ > 0;
        ++writers_waiting_;
        cv_.wait(lk, [&] { return !writer_ && readers_ == 0; });
        --writers_waiting_;
        writer_ = true;
        return waited;
    }
    bool try_down_write() {
        std::lock_guard lk(mu_);
        if (writer_ || readers_ > 0) return false;
        writer_ = true;
        return true;
    }
    void up_write() {
        {
            std::lock_guard lk(mu_);
            writer_ = false;
        }
        cv_.notify_all();
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    int readers_ = 0;
    int writers_waiting_ = 0;
    bool writer_ = false;
};

class SleepingMutex {
  public:
    bool lock() {
        std::unique_lock lk(mu_);
        const uint64_t ticket = next_++;
        if (serving_ == ticket) return false;
        cv_.wait(lk, [&] { return serving_ == ticket; });
        return true;
    }
    bool try_lock() {
        std::lock_guard lk(mu_);
        if (serving_ != next_) return false;
        ++next_;
        return true;
    }
    void unlock() {  // its waiters woken after the mutex is released, as SleepingRwSem's
        bool wake;
        {
            std::lock_guard lk(mu_);
            wake = ++serving_ != next_;
        }
        if (wake) cv_.notify_all();
    }

  private:
    std::mutex mu_;
    std::condition_variable cv_;
    uint64_t next_ = 0;
    uint64_t serving_ = 0;
};

}  // namespace locksim::real
