// The probe's wake-up lateness on an idle machine against cyclictest (Debian rt-tests), each run
// alone for the same time, period and scheduling class. The one timing comparison in the suite,
// mandated by the issue: the probe sleeps on a Boost.Asio steady_timer (epoll and timerfd)
// where cyclictest calls clock_nanosleep, so it pays a few microseconds more per wake-up, and a
// shared VM moves both by tens of microseconds between runs. The tolerance is therefore wide:
// the probe's mean lateness must be at most 4 times cyclictest's plus 50 us, and at least a
// quarter of it (the probe's timer path is never faster than clock_nanosleep). It fails when the
// probe measures the wrong thing (a lateness of zero, of a whole period, or of another clock).
// It runs alone (RUN_SERIAL: other tests on the same CPUs would move both sides).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "real_test_util.h"

namespace locksim::real::test {
namespace {

using kernel::kMsec;

constexpr int kPeriodUs = 1000;
constexpr int kSeconds = 1;

// cyclictest's average lateness in microseconds, or -1 when it cannot run.
double cyclictest_avg_us(bool fifo, std::string *why) {
    std::string cmd = "cyclictest -q -t 1 -i " + std::to_string(kPeriodUs) + " -D " +
                      std::to_string(kSeconds) + (fifo ? " -p 80" : "") + " 2>&1";
    FILE *f = popen(cmd.c_str(), "r");
    if (!f) {
        *why = "popen failed";
        return -1;
    }
    std::string out;
    char buf[512];
    while (fgets(buf, sizeof buf, f))
        out += buf;
    int rc = pclose(f);
    const size_t at = out.find("Avg:");
    if (rc != 0 || at == std::string::npos) {
        *why = "cyclictest did not run: " + out;
        return -1;
    }
    return std::strtod(out.c_str() + at + 4, nullptr);
}

TEST(Probe, AgreesWithCyclictest) {
    const bool fifo = geteuid() == 0;
    std::string why;
    const double theirs = cyclictest_avg_us(fifo, &why);
    if (theirs < 0) GTEST_SKIP() << why;

    RealConfig cfg = short_run(kSeconds * kernel::kSec);
    RealPlatform p(cfg);
    kernel::PlatformScope scope(p);
    kernel::TaskParams probe{"probe"};
    probe.probe = true;
    probe.policy = fifo ? kernel::Sched::Fifo : kernel::Sched::Other;
    probe.priority = 80;
    p.create_task(probe, [&] {
        for (kernel::Time next = kernel::now(); !kernel::kthread_should_stop();) {
            next += kPeriodUs * kernel::kUsec;
            kernel::sleep_until(next);
        }
    });
    kernel::RunResults r = p.run();
    const kernel::Histogram &h = r.wakeup_latency["probe"];
    ASSERT_GT(h.count(), 100u);
    const double ours = h.mean() / 1000.0;
    RecordProperty("probe_avg_us", std::to_string(ours));
    RecordProperty("cyclictest_avg_us", std::to_string(theirs));
    std::printf("probe mean %.1f us, cyclictest mean %.1f us (%s)\n", ours, theirs,
                fifo ? "SCHED_FIFO 80" : "SCHED_OTHER");
    EXPECT_GT(ours, 0.0);
    EXPECT_LE(ours, 4 * theirs + 50) << "cyclictest " << theirs << " us";
    EXPECT_GE(ours, theirs / 4) << "cyclictest " << theirs << " us";
}

}  // namespace
}  // namespace locksim::real::test
