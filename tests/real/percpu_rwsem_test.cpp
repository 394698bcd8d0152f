// kernel/percpu_rwsem.h on host threads (also run under ThreadSanitizer): writers exclude
// readers and each other while readers come and go on every path (fast, slow, shut out).
#include <gtest/gtest.h>

#include <atomic>

#include "kernel/percpu_rwsem.h"
#include "real_test_util.h"

namespace locksim::real::test {
namespace {

TEST(RealPercpuRwsem, WritersExcludeReadersAndWriters) {
    constexpr int kTasks = 4, kRounds = 300;
    RealPlatform p(short_run(kUpperBound));
    kernel::PlatformScope scope(p);
    StopWhenDone stop(p, kTasks);
    kernel::PercpuRwSemaphore sem("test_percpu_rwsem");
    std::atomic<int> readers_in{0};
    std::atomic<bool> overlap{false};
    int64_t counter = 0;  // plain: a data race if a writer is not alone
    int64_t seen = 0;
    for (int i = 0; i < kTasks; ++i)
        p.create_task({"rw"}, [&, i] {
            int64_t last = 0;
            for (int n = 0; n < kRounds; ++n) {
                if (i == 0 && n % 50 == 0) {
                    kernel::percpu_down_write(sem);
                    if (readers_in.load()) overlap = true;
                    ++counter;
                    kernel::percpu_up_write(sem);
                } else {
                    kernel::percpu_down_read(sem);
                    ++readers_in;
                    last = counter;
                    --readers_in;
                    kernel::percpu_up_read(sem);
                }
            }
            if (i == 1) seen = last;
            stop.done();
        });
    kernel::RunResults r = p.run();
    EXPECT_FALSE(overlap.load());
    EXPECT_EQ(counter, kRounds / 50);
    EXPECT_LE(seen, counter);
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
}

}  // namespace
}  // namespace locksim::real::test
