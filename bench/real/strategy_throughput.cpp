// Reader throughput against writer frequency, per strategy, on the real core and host threads:
// the torture workload's checked readers (each read section runs four access decisions on the
// Debian default policy) beside a task committing every boolean with the given period.
//
//   real_strategy_throughput [duration_ms] [readers]
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "real/real_platform.h"
#include "ss/policydb.h"
#include "strategies/catalog.h"
#include "strategies/security_server.h"
#include "validate/torture.h"

using namespace locksim;

int main(int argc, char **argv) {
    const kernel::Time duration = (argc > 1 ? std::atoll(argv[1]) : 300) * kernel::kMsec;
    const int readers = argc > 2 ? std::atoi(argv[2]) : 1;
    const std::string policy = std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33";
    const kernel::Time periods[] = {0, 100 * kernel::kMsec, 10 * kernel::kMsec, kernel::kMsec};
    fmt::print("{:<20}", "reads/s (k)");
    for (kernel::Time p : periods)
        fmt::print(" {:>12}", p ? fmt::format("every {}ms", p / kernel::kMsec) : "no writer");
    fmt::print("\n");
    for (const auto &info : strategy_catalog()) {
        fmt::print("{:<20}", info.name);
        for (kernel::Time period : periods) {
            real::RealConfig rc;
            rc.duration = duration;
            real::RealPlatform p(rc);
            kernel::PlatformScope scope(p);
            CoreConfig core;
            auto server = make_security_server(
                info.name, {}, make_policy_state(ss::policydb_read_file(policy), core), core);
            TortureConfig tc;
            tc.readers = readers;
            tc.reader_hold = 0;
            tc.queries = 4;
            tc.writer_period = period ? period : 3600 * kernel::kSec;
            Torture t(*server, tc);
            t.create_tasks();
            kernel::RunResults r = p.run();
            TortureStats s = t.finish(r);
            const double per_s = s.reads * 1e9 / static_cast<double>(r.duration_ns);
            fmt::print(" {:>12.1f}", per_s / 1000);
            if (s.failed()) fmt::print("!");
        }
        fmt::print("\n");
    }
}
