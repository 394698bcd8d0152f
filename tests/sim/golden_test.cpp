// Golden timelines: small scenarios whose event traces are kept in tests/sim/golden/. Run with
// LOCKSIM_UPDATE_GOLDEN=1 to rewrite them after an intended change, and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernel/rcu.h"
#include "kernel/rwlock.h"
#include "kernel/spinlock.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimConfig;
using locksim::sim::SimPlatform;

namespace {

SimConfig traced(int cpus, Time duration) {
    SimConfig cfg;
    cfg.cpus = cpus;
    cfg.duration = duration;
    cfg.trace = true;  // default primitive costs: the trace shows them
    return cfg;
}

void check_golden(const std::string &name, const SimPlatform &sim) {
    std::string text;
    for (const auto &line : sim.trace())
        text += line + "\n";
    std::filesystem::path file =
        std::filesystem::path(LOCKSIM_SOURCE_DIR) / "tests/sim/golden" / (name + ".trace");
    if (const char *u = std::getenv("LOCKSIM_UPDATE_GOLDEN"); u && *u == '1') {
        std::ofstream(file) << text;
        GTEST_SKIP() << "rewrote " << file;
    }
    std::ifstream in(file);
    ASSERT_TRUE(in) << "missing " << file << " (LOCKSIM_UPDATE_GOLDEN=1 writes it)";
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(text, want.str()) << "trace of " << name << " changed";
}

}  // namespace

TEST(Golden, FifoProbePreemptsAfterSpinSection) {
    SimPlatform sim(traced(1, 2 * kMsec));
    Spinlock lock("avc_lock", sim);
    sim.create_task({"worker", Sched::Other, 0, 0, false}, [&] {
        ndelay(100 * kUsec);
        spin_lock(lock);
        ndelay(300 * kUsec);
        spin_unlock(lock);
        ndelay(100 * kUsec);
    });
    sim.create_task({"probe", Sched::Fifo, 99, 0, true}, [&] {
        sleep_until(200 * kUsec);
        sleep_until(700 * kUsec);
    });
    sim.run();
    check_golden("fifo_probe_spin", sim);
}

TEST(Golden, RwlockWriterAndReaders) {
    SimPlatform sim(traced(3, 2 * kMsec));
    RwLock lock("policy_rwlock", sim);
    for (int i = 0; i < 2; ++i)
        sim.create_task({"reader" + std::to_string(i), Sched::Other, 0, i, false}, [&, i] {
            ndelay(i * 20 * kUsec);
            read_lock(lock);
            ndelay(100 * kUsec);
            read_unlock(lock);
        });
    sim.create_task({"writer", Sched::Other, 0, 2, false}, [&] {
        ndelay(10 * kUsec);
        write_lock_irq(lock);
        ndelay(50 * kUsec);
        write_unlock_irq(lock);
    });
    sim.run();
    check_golden("rwlock_writer_readers", sim);
}

TEST(Golden, SynchronizeRcuWaitsForReader) {
    SimPlatform sim(traced(2, 20 * kMsec));
    sim.create_task({"reader", Sched::Other, 0, 0, false}, [&] {
        rcu_read_lock();
        ndelay(6 * kMsec);
        rcu_read_unlock();
    });
    sim.create_task({"updater", Sched::Other, 0, 1, false}, [&] {
        ndelay(kMsec);
        synchronize_rcu();
        ndelay(kMsec);
        synchronize_rcu_expedited();
    });
    sim.run();
    check_golden("synchronize_rcu", sim);
}
