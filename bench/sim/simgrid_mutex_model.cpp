// The contended-mutex model in SimGrid 3.32 (s4u), the peer of mutex_model.cpp:
// simgrid_mutex_model [tasks cpus hold_ns think_ns duration_ns]. One host of `cpus` cores at
// 1 Gflop/s, so one flop is one nanosecond; each actor alternates lock / execute(hold) /
// unlock / execute(think) until the simulated clock passes the duration.
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sg4 = simgrid::s4u;

int main(int argc, char **argv) {
    int tasks = 32, cpus = 8;
    double hold = 1000, think = 20000, duration = 1e9;
    // SimGrid consumes its own --options first; ours are the positional ones left.
    sg4::Engine engine(&argc, argv);
    if (argc == 6) {
        tasks = std::atoi(argv[1]);
        cpus = std::atoi(argv[2]);
        hold = std::atof(argv[3]);
        think = std::atof(argv[4]);
        duration = std::atof(argv[5]);
    }
    auto *zone = sg4::create_full_zone("zone");
    sg4::Host *host = zone->create_host("machine", 1e9);
    host->set_core_count(cpus);
    host->seal();
    zone->seal();
    sg4::MutexPtr mutex = sg4::Mutex::create();
    unsigned long acquisitions = 0;
    const double end = duration / 1e9;
    for (int i = 0; i < tasks; ++i)
        sg4::Actor::create("task" + std::to_string(i), host, [&] {
            while (sg4::Engine::get_clock() < end) {
                mutex->lock();
                ++acquisitions;
                sg4::this_actor::execute(hold);
                mutex->unlock();
                sg4::this_actor::execute(think);
            }
        });
    auto t0 = std::chrono::steady_clock::now();
    engine.run();
    double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "SUMMARY engine=simgrid tasks=%d cpus=%d hold_ns=%.0f think_ns=%.0f duration_ns=%.0f "
        "acquisitions=%lu wall_ms=%.1f\n",
        tasks, cpus, hold, think, duration, acquisitions, wall);
    return 0;
}
