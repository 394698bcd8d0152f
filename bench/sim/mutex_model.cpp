#include "mutex_model.h"

#include "kernel/mutex.h"
#include "kernel/platform.h"
#include "sim/sim_platform.h"

namespace locksim::bench {

MutexModelResult run_mutex_model(const MutexModel &m) {
    using namespace kernel;
    sim::SimConfig cfg;
    cfg.cpus = m.cpus;
    cfg.duration = m.duration;
    cfg.drain_limit = 10 * kMsec;
    if (!m.kernel_costs) {
        cfg.profile.primitive =
            sim::PrimitiveCosts{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        cfg.profile.primitive.tick_irq = 0;
    }
    sim::SimPlatform platform(cfg);
    Mutex lock("model_mutex", platform);
    for (int i = 0; i < m.tasks; ++i)
        platform.create_task({"task" + std::to_string(i), Sched::Other, 0, -1, false}, [&] {
            while (!kthread_should_stop()) {
                mutex_lock(lock);
                ndelay(m.hold);
                mutex_unlock(lock);
                ndelay(m.think);
            }
        });
    RunResults r = platform.run();
    return {r.locks.at("model_mutex").acquisitions[0], r.events};
}

}  // namespace locksim::bench
