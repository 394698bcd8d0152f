#include "validate/side.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <unistd.h>

namespace locksim {

int others_runnable() {
    std::ifstream stat("/proc/stat");
    std::string key;
    int running = -1;
    for (std::string line; std::getline(stat, line);)
        if (line.rfind("procs_running ", 0) == 0) running = std::atoi(line.c_str() + 14);
    if (running < 0) return -1;
    int mine = 0;
    std::error_code ec;
    for (const auto &e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
        // A thread may end between the listing and the read (the read then fails with ESRCH,
        // which libstdc++'s stream buffer throws): it is not running.
        std::string text;
        try {
            std::ifstream f(e.path() / "stat");
            text.assign(std::istreambuf_iterator<char>(f), {});
        } catch (const std::ios_base::failure &) {
            continue;
        }
        const size_t close = text.rfind(')');
        if (close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'R') ++mine;
    }
    return std::max(0, running - mine);
}

double host_steal_ms() {
    std::ifstream stat("/proc/stat");
    std::string key;
    // cpu user nice system idle iowait irq softirq steal ...
    int64_t v[8] = {};
    if (!(stat >> key) || key != "cpu") return -1;
    for (int64_t &x : v)
        if (!(stat >> x)) return -1;
    const long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? static_cast<double>(v[7]) * 1000.0 / static_cast<double>(hz) : -1;
}

double others_runnable_during(const std::function<void()> &f) {
    std::atomic<bool> done{false};
    double sum = 0;
    int64_t n = 0;
    std::thread sampler([&] {
        while (!done.load()) {
            int k = -1;
            try {  // /proc changes under the reader (threads end): a failed sample is skipped
                k = others_runnable();
            } catch (const std::exception &) {
            }
            if (k >= 0) sum += k, ++n;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    });
    {
        // The sampler stops and is joined however f ends (a policy it refuses throws).
        struct Stop {
            std::atomic<bool> &done;
            std::thread &sampler;
            ~Stop() {
                done = true;
                sampler.join();
            }
        } stop{done, sampler};
        f();
    }
    return n ? sum / static_cast<double>(n) : 0.0;
}

}  // namespace locksim
