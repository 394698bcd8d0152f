// Torture runs (validate/torture.h) of every shipped strategy on host threads, with the
// platform's RCU checks on: no mixed read, no freed policy seen, no self-check report. The
// suite also runs under ThreadSanitizer and AddressSanitizer (scripts/test.sh), where any
// report fails it. A strategy that frees the old policy without a grace period is caught: by
// the platform's check in a plain build, by the sanitizer's report under a sanitizer.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "../strategies/broken_strategy.h"
#include "real_test_util.h"
#include "ss/policydb.h"
#include "strategies/catalog.h"
#include "strategies/strategy.h"
#include "util/sanitizers.h"
#include "validate/torture.h"

namespace locksim::real::test {
namespace {

using kernel::kMsec;
using kernel::kUsec;

struct Outcome {
    TortureStats stats;
    kernel::RunResults results;
};

template <class Make>
Outcome torture(Make make, kernel::Time duration) {
    RealConfig cfg = short_run(duration, true);
    cfg.report_violations = true;
    RealPlatform p(cfg);
    kernel::PlatformScope scope(p);
    CoreConfig core;
    std::unique_ptr<SecurityServer> server =
        make(make_policy_state(ss::policydb_read(read_bytes(fixture("cond.33"))), core), core);
    TortureConfig tc;
    tc.readers = 2;
    tc.writer_period = 100 * kUsec;
    tc.reader_hold = 20 * kUsec;
    Torture t(*server, tc);
    t.create_tasks();
    Outcome o;
    o.results = p.run();
    o.stats = t.finish(o.results);
    return o;
}

std::string failures_text(const TortureStats &s) {
    std::string out;
    for (const auto &f : s.failures)
        out += f + "\n";
    return out;
}

class Shipped : public ::testing::TestWithParam<std::string> {};

TEST_P(Shipped, SurvivesTorture) {
    Outcome o = torture(
        [&](ss::PolicyState st, const CoreConfig &core) {
            return make_security_server(GetParam(), {}, std::move(st), core);
        },
        150 * kMsec);
    EXPECT_FALSE(o.stats.failed()) << failures_text(o.stats);
    EXPECT_GT(o.stats.reads, 0u);
    EXPECT_GT(o.stats.commits, 0u);
    EXPECT_EQ(o.stats.mixed, 0u);
    EXPECT_EQ(o.stats.freed, 0u);
    uint64_t piped = 0;
    for (uint64_t n : o.stats.pipe)
        piped += n;
    EXPECT_EQ(piped, o.stats.reads) << o.stats.pipe_text();
}

std::vector<std::string> strategy_names() {
    std::vector<std::string> names;
    for (const auto &info : strategy_catalog())
        names.push_back(info.name);
    return names;
}

INSTANTIATE_TEST_SUITE_P(Strategies, Shipped, ::testing::ValuesIn(strategy_names()),
                         [](const auto &info) {
                             std::string s = info.param;
                             for (char &c : s)
                                 if (c == '-') c = '_';
                             return s;
                         });

// Runs the broken strategy and exits: 3 when the torture caught it, 0 when it did not. A
// sanitizer's report is a catch as well: AddressSanitizer ends the process at the first bad
// access, ThreadSanitizer turns the exit status into 66 at exit when it reported.
// Catching needs a reader inside its section at the moment of a premature free; on a loaded
// machine (a sanitizer, other tests on the same CPUs) one run may see no such moment, so up to
// five runs are made, and the strategy passes only if it survives all of them.
[[noreturn]] void run_broken_and_exit() {
    for (int attempt = 1; attempt <= 5; ++attempt) {
        Outcome o = torture(
            [](ss::PolicyState st, const CoreConfig &core) {
                return std::make_unique<strategies::test::FreesWithoutGracePeriod>(std::move(st),
                                                                                   core);
            },
            300 * kMsec);
        std::fprintf(
            stderr, "torture run %d: %s, %llu reads, %llu commits\n%s", attempt,
            o.stats.failed() ? "FAILED" : "passed", static_cast<unsigned long long>(o.stats.reads),
            static_cast<unsigned long long>(o.stats.commits), failures_text(o.stats).c_str());
        std::fflush(stderr);
        if (o.stats.failed()) std::exit(3);
    }
    std::exit(0);
}

#if LOCKSIM_ASAN || LOCKSIM_TSAN
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Under a sanitizer either the platform or the sanitizer may catch it first. In a plain build
// (scripts/test.sh runs this test once in its Release build) nothing but the platform's own
// check is there, and it must be what catches it: exit status 3 with its report.
TEST(TortureDeathTest, FreeWithoutGracePeriodIsCaught) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    if (kSanitized) {
        EXPECT_EXIT(
            run_broken_and_exit(),
            [](int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); },
            "rcu_free_in_use|use-after-free|ThreadSanitizer|mixed reads");
    } else {
        EXPECT_EXIT(run_broken_and_exit(), ::testing::ExitedWithCode(3),
                    "rcu_free_in_use|rcu_free_published|mixed reads");
    }
}

}  // namespace
}  // namespace locksim::real::test
