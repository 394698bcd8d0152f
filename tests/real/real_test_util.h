// Shared pieces of the real-platform tests.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "real/real_platform.h"
#include "record/run_results.h"

namespace locksim::real::test {

inline std::vector<uint8_t> read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string fixture(const std::string &name) {
    return std::string(LOCKSIM_FIXTURE_DIR) + "/" + name;
}

inline RealConfig short_run(kernel::Time duration, bool checks = false) {
    RealConfig c;
    c.duration = duration;
    c.checks = checks;
    c.pin = false;
    c.keep_longest = 50;
    return c;
}

// Ends a run when `tasks` tasks have called done(): tests of finite work use a long duration as
// an upper bound and stop as soon as the work is over (metrics are recorded until the work in
// flight at the stop has ended).
class StopWhenDone {
  public:
    StopWhenDone(RealPlatform &p, int tasks) : p_(p), left_(tasks) {}
    void done() {
        if (--left_ == 0) p_.request_stop();
    }

  private:
    RealPlatform &p_;
    std::atomic<int> left_;
};

inline constexpr kernel::Time kUpperBound = 60 * kernel::kSec;

inline std::string violations_text(const kernel::RunResults &r) {
    std::string s;
    for (const auto &v : r.violations)
        s += v.kind + ": " + v.message + "\n";
    return s;
}

}  // namespace locksim::real::test
