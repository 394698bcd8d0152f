// kernel/seqlock.h on host threads (also run under ThreadSanitizer): a reader whose section
// read_seqretry accepts saw one write's data whole, never half of one and half of the next.
#include <gtest/gtest.h>

#include <atomic>

#include "kernel/seqlock.h"
#include "real_test_util.h"

namespace locksim::real::test {
namespace {

TEST(RealSeqlock, AnAcceptedReadIsNeverTorn) {
    constexpr int kReaders = 3, kWrites = 2000;
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, kReaders + 1);
    kernel::Seqlock sl("test_seqlock");
    // The protected data, written only inside the write section; READ_ONCE / WRITE_ONCE
    // accesses, as the kernel's data under a seqcount has them.
    std::atomic<int64_t> a{0}, b{0};
    std::atomic<bool> writing{true};
    std::atomic<int64_t> torn{0};
    p.create_task({"writer"}, [&] {
        for (int64_t n = 1; n <= kWrites; ++n) {
            kernel::write_seqlock(sl);
            a.store(n, std::memory_order_relaxed);
            b.store(n, std::memory_order_relaxed);
            kernel::write_sequnlock(sl);
        }
        writing = false;
        stop.done();
    });
    for (int i = 0; i < kReaders; ++i)
        p.create_task({"reader"}, [&] {
            while (writing) {
                uint64_t seq = kernel::read_seqbegin(sl);
                int64_t x = a.load(std::memory_order_relaxed);
                int64_t y = b.load(std::memory_order_relaxed);
                if (kernel::read_seqretry(sl, seq)) continue;
                if (x != y) ++torn;
            }
            stop.done();
        });
    kernel::RunResults r = p.run();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(a.load(), kWrites);
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
}

}  // namespace
}  // namespace locksim::real::test
