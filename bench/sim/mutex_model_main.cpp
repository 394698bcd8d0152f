// sim_mutex_model [--kernel-costs] [tasks cpus hold_ns think_ns duration_ns]: runs the model once
// and prints a grep-able SUMMARY line with the wall time.
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "mutex_model.h"

int main(int argc, char **argv) {
    locksim::bench::MutexModel m;
    if (argc > 1 && std::string(argv[1]) == "--kernel-costs") {
        m.kernel_costs = true;
        --argc;
        ++argv;
    }
    if (argc == 6) {
        m.tasks = std::atoi(argv[1]);
        m.cpus = std::atoi(argv[2]);
        m.hold = std::atoll(argv[3]);
        m.think = std::atoll(argv[4]);
        m.duration = std::atoll(argv[5]);
    } else if (argc != 1) {
        fmt::print(stderr, "usage: {} [--kernel-costs] [tasks cpus hold_ns think_ns duration_ns]\n",
                   argv[0]);
        return 2;
    }
    auto t0 = std::chrono::steady_clock::now();
    auto r = locksim::bench::run_mutex_model(m);
    double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(
        "SUMMARY engine=locksim tasks={} cpus={} hold_ns={} think_ns={} duration_ns={} "
        "acquisitions={} "
        "events={} wall_ms={:.1f}\n",
        m.tasks, m.cpus, m.hold, m.think, m.duration, r.acquisitions, r.events, wall);
    return 0;
}
