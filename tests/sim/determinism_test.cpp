// Same scenario and seed: byte-identical results. A different seed: different results.
#include <gtest/gtest.h>

#include "kernel/mutex.h"
#include "kernel/rcu.h"
#include "kernel/rwlock.h"
#include "kernel/rwsem.h"
#include "sim/sim_platform.h"
#include "sim_test_util.h"

using namespace locksim;
using namespace locksim::kernel;
using locksim::sim::SimConfig;
using locksim::sim::SimPlatform;

namespace {

// A busy mix: rwlock readers and an irq-off writer, an rwsem, RCU updates with call_rcu and
// synchronize_rcu, random think times, probes and allocations.
std::string run_mix(uint64_t seed) {
    SimConfig cfg;
    cfg.cpus = 4;
    cfg.duration = 30 * kMsec;
    cfg.seed = seed;
    cfg.profile.work_ps.fill(1000);
    SimPlatform sim(cfg);
    RwLock rw("policy_rwlock", sim);
    RwSem sem("policy_rwsem", sim);
    Mutex mu("policy_mutex", sim);
    RcuPointer<int> ptr;
    {
        PlatformScope setup(sim);
        rcu_assign_pointer(ptr, knew<int>(Gfp::Kernel, 0));
    }
    static const Label read_op("compute_av"), write_op("set_bools");
    for (int i = 0; i < 6; ++i)
        sim.create_task({"reader" + std::to_string(i), Sched::Other, 0, -1, false}, [&] {
            while (!kthread_should_stop()) {
                OpScope op(read_op);
                if (get_random_below(2)) {
                    read_lock(rw);
                    ndelay(static_cast<Time>(get_random_below(30)) * kUsec, "avtab");
                    read_unlock(rw);
                } else {
                    rcu_read_lock();
                    ndelay(
                        static_cast<Time>(get_random_below(30)) * kUsec + *rcu_dereference(ptr) % 3,
                        "avtab");
                    rcu_read_unlock();
                }
                down_read(sem);
                up_read(sem);
            }
        });
    sim.create_task({"writer", Sched::Other, 0, -1, false}, [&] {
        int gen = 0;
        while (!kthread_should_stop()) {
            OpScope op(write_op);
            write_lock_irq(rw);
            ndelay(200 * kUsec);
            write_unlock_irq(rw);
            mutex_lock(mu);
            int *old = rcu_replace_pointer(ptr, knew<int>(Gfp::Kernel, ++gen));
            if (gen % 2)
                call_rcu([old] { kdelete(old); });
            else {
                synchronize_rcu();
                kdelete(old);
            }
            mutex_unlock(mu);
            down_write(sem);
            up_write(sem);
            msleep(1 + static_cast<unsigned>(get_random_below(3)));
        }
    });
    for (int c = 0; c < 4; ++c)
        sim.create_task({"probe" + std::to_string(c), Sched::Fifo, 99, c, true}, [] {
            for (Time t = 0; !kthread_should_stop();) {
                t += 100 * kUsec + static_cast<Time>(get_random_below(1000));
                sleep_until(t);
            }
        });
    auto r = sim.run();
    EXPECT_TRUE(r.violations.empty());
    EXPECT_GT(r.ops.at("compute_av").completed, 100u);
    PlatformScope cleanup(sim);
    kdelete(rcu_dereference_protected(ptr));
    return sim::testing::results_json(r);
}

}  // namespace

TEST(Determinism, SameSeedSameBytes) {
    std::string a = run_mix(42), b = run_mix(42);
    EXPECT_EQ(a, b);
    std::string c = run_mix(43);
    EXPECT_NE(a, c);
}
