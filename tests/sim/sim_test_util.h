// Helpers shared by the simulator tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kernel/rwlock.h"
#include "record/run_results.h"
#include "sim/sim_platform.h"

namespace locksim::sim::testing {

// A profile in which nothing but explicit ndelay/compute spans costs time, so timelines can be
// computed by hand.
inline CpuProfile zero_profile() {
    CpuProfile p;
    p.name = "zero";
    p.derivation = "all costs zero, for hand-computed timelines";
    p.primitive = PrimitiveCosts{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    p.primitive.tick_irq = 0;  // the tick takes no time either
    return p;
}

inline SimConfig zero_config(int cpus, kernel::Time duration) {
    SimConfig c;
    c.cpus = cpus;
    c.duration = duration;
    c.profile = zero_profile();
    return c;
}

// Three tasks on three CPUs around one rwlock "policy_rwlock": reader1 holds it for reading
// from 0 to 100 us, the writer asks (write_lock_irq) at 10 us and holds it 50 us, reader2 asks
// at 20 us and lets go at once. When each got in, and the run's results.
struct RwlockTimeline {
    kernel::Time writer_in = -1, reader2_in = -1;
    kernel::RunResults results;
};
inline RwlockTimeline rwlock_reader_writer_reader(const SimConfig &c) {
    using namespace kernel;
    SimPlatform sim(c);
    RwLock lock("policy_rwlock", sim);
    RwlockTimeline out;
    sim.create_task({"reader1", Sched::Other, 0, 0, false}, [&] {
        read_lock(lock);
        ndelay(100 * kUsec);
        read_unlock(lock);
    });
    sim.create_task({"writer", Sched::Other, 0, 1, false}, [&] {
        ndelay(10 * kUsec);
        write_lock_irq(lock);
        out.writer_in = now();
        ndelay(50 * kUsec);
        write_unlock_irq(lock);
    });
    sim.create_task({"reader2", Sched::Other, 0, 2, false}, [&] {
        ndelay(20 * kUsec);
        read_lock(lock);
        out.reader2_in = now();
        read_unlock(lock);
    });
    out.results = sim.run();
    return out;
}

inline std::string results_json(const kernel::RunResults &r) {
    return nlohmann::json(r).dump(1);
}

}  // namespace locksim::sim::testing
