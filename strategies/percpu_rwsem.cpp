// percpu-rwsem: not merged anywhere; the policy guarded by a per-CPU reader-writer semaphore
// (include/linux/percpu-rwsem.h, as cgroups and the freezer use it).
//
// Reader: percpu_down_read: while no writer is about (rcu_sync idle) a per-CPU counter
//   increment with preemption off for two instructions — no shared cache line, no atomic;
//   otherwise the slow path: count, and if a writer has blocked readers, uncount and sleep on
//   the semaphore until the writer is done. Then the service, preemptible and sleepable;
//   percpu_up_read decrements the counter of the CPU it runs on.
// set_bools: policy_mutex; percpu_down_write: rcu_sync_enter (synchronize_rcu the first time,
//   so every reader sees the slow path from then on), take the writer side (readers arriving
//   now sleep), block readers, wait until the per-CPU counts sum to zero; the update in place;
//   percpu_up_write (unblock, wake the sleepers; rcu_sync_exit lets readers back onto the fast
//   path after another grace period, by call_rcu); audit_log per changed boolean inside the
//   write section, as v5.9 logs them; then v5.9's notification path: avc_ss_reset (with its
//   reset callbacks and synchronize_net, one more grace period), selnl_notify_policyload,
//   selinux_status_update_policyload, selinux_xfrm_notify_policyload
//   (strategies/policy_notify.h); unmerged, so the kernel's notifications are kept as they
//   were and only the lock changes.
// load_policy: the same exclusive section, only for the swap; read and convert outside; the
//   old policy freed; the full notification path; selinuxfs's rebuild.
// Trades: readers nearly free and preemptible, but every write costs a grace period before it
//   can even start, readers block for the write, and a writer waits for the longest reader
//   (a get_user_sids) to drain.
// Model: the writer's rcuwait for the readers to drain is a poll every kDrainPoll of simulated
//   time (a sleep, not CPU), so it sees the drain up to kDrainPoll late.
#include <atomic>

#include "strategies/strategy.h"

namespace locksim::strategies {
namespace {

constexpr kernel::Time kDrainPoll = 5 * kernel::kUsec;

class PercpuRwsem {
  public:
    explicit PercpuRwsem(kernel::Platform &p)
        : read_count_(static_cast<size_t>(p.num_cpus())), rw_sem_("percpu_rwsem", p) {}

    void down_read() {
        kernel::might_sleep();  // percpu_down_read may sleep, fast path or not
        kernel::preempt_disable();
        if (sync_->state == Sync::Idle) {  // rcu_sync_is_idle: the fast path
            ++read_count_[static_cast<size_t>(kernel::smp_processor_id())];
            kernel::preempt_enable();
            return;
        }
        kernel::preempt_enable();
        for (;;) {  // __percpu_down_read
            kernel::preempt_disable();
            ++read_count_[static_cast<size_t>(kernel::smp_processor_id())];
            if (!block_) {
                kernel::preempt_enable();
                return;
            }
            --read_count_[static_cast<size_t>(kernel::smp_processor_id())];
            kernel::preempt_enable();
            kernel::down_read(rw_sem_);  // percpu_rwsem_wait: sleep until the writer leaves
            kernel::up_read(rw_sem_);
        }
    }

    void up_read() {
        kernel::preempt_disable();
        --read_count_[static_cast<size_t>(kernel::smp_processor_id())];
        kernel::preempt_enable();
    }

    void down_write() {
        ++sync_->writers;  // rcu_sync_enter
        if (sync_->state == Sync::Idle) {
            sync_->state = Sync::Entering;
            kernel::synchronize_rcu();
        }
        sync_->state = Sync::Passed;
        kernel::down_write(rw_sem_);
        block_ = true;
        while (readers_active())
            kernel::sleep_for(kDrainPoll);  // rcuwait_wait_event(readers_active_check)
    }

    void up_write() {
        block_ = false;
        kernel::up_write(rw_sem_);
        --sync_->writers;  // rcu_sync_exit: back to the fast path a grace period later
        kernel::call_rcu([s = sync_] {
            if (s->writers == 0) s->state = Sync::Idle;
        });
    }

  private:
    bool readers_active() const {
        int64_t sum = 0;
        for (const auto &c : read_count_)
            sum += c.load();
        return sum != 0;
    }

    // Atomics because on host threads a "preempt-off" section does not keep other tasks off
    // the counter (this_cpu_inc is one instruction in the kernel), and the fields are shared
    // between readers, the writer and the call_rcu callback.
    struct Sync {
        enum State { Idle, Entering, Passed };
        std::atomic<State> state{Idle};
        std::atomic<int> writers{0};
    };
    std::vector<std::atomic<int64_t>> read_count_;  // this_cpu counters (one may go negative)
    std::atomic<bool> block_{false};
    std::shared_ptr<Sync> sync_ = std::make_shared<Sync>();
    kernel::RwSem rw_sem_;
};

class PercpuRwsemServer final : public StrategyBase {
  public:
    PercpuRwsemServer(ss::PolicyState st, const CoreConfig &core)
        : StrategyBase("percpu-rwsem", std::move(st), core, false), sem_(platform_) {}

  protected:
    int read_section(ReadFn fn) override {
        sem_.down_read();
        int rc = fn(policy_locked()->st);
        sem_.up_read();
        return rc;
    }

    int write_bools(std::span<const int> values, uint32_t *seqno) override {
        return set_bools_exclusive(values, seqno, [&](FunctionRef<void()> update) {
            sem_.down_write();
            update();
            sem_.up_write();
        });
    }

    int write_load(std::span<const uint8_t> image, uint32_t *seqno) override {
        return load_exclusive(
            image, seqno,
            [&](FunctionRef<void()> swap) {
                sem_.down_write();
                swap();
                sem_.up_write();
            },
            false);
    }

  private:
    PercpuRwsem sem_;
};

}  // namespace

// The catalog's entry (strategies/catalog.cpp lists it).
StrategyInfo percpu_rwsem_strategy() {
    return {.name = "percpu-rwsem",
            .summary =
                "per-CPU reader counts (readers nearly free, no shared cache line); a "
                "writer flips to the slow path, waits a grace period and for readers to "
                "drain, then holds it exclusively",
            .models = "unmerged: percpu_rw_semaphore as used by cgroups and freezing",
            .options = {},
            .make = make_without_options<PercpuRwsemServer>};
}

}  // namespace locksim::strategies
