#include "kernel/percpu_rwsem.h"

#include "kernel/preempt.h"
#include "kernel/rcu.h"
#include "kernel/rwsem.h"

namespace locksim::kernel {

PercpuRwSemaphore::PercpuRwSemaphore(std::string_view name, Platform &p)
    : read_count_(static_cast<size_t>(p.num_cpus())), rw_sem_(name, p) {}

void PercpuRwSemaphore::down_read(Loc loc) {
    might_sleep(loc);  // percpu_down_read may sleep, fast path or not
    preempt_disable(loc);
    if (sync_->state == Sync::Idle) {  // rcu_sync_is_idle: the fast path
        ++read_count_[static_cast<size_t>(smp_processor_id())];
        preempt_enable(loc);
        return;
    }
    preempt_enable(loc);
    for (;;) {  // __percpu_down_read
        preempt_disable(loc);
        ++read_count_[static_cast<size_t>(smp_processor_id())];
        if (!block_) {
            preempt_enable(loc);
            return;
        }
        --read_count_[static_cast<size_t>(smp_processor_id())];
        preempt_enable(loc);
        kernel::down_read(rw_sem_, loc);  // percpu_rwsem_wait: sleep until the writer leaves
        kernel::up_read(rw_sem_, loc);
    }
}

void PercpuRwSemaphore::up_read(Loc loc) {
    preempt_disable(loc);
    --read_count_[static_cast<size_t>(smp_processor_id())];
    preempt_enable(loc);
}

void PercpuRwSemaphore::down_write(Loc loc) {
    ++sync_->writers;  // rcu_sync_enter
    if (sync_->state == Sync::Idle) {
        sync_->state = Sync::Entering;
        synchronize_rcu(loc);
    }
    sync_->state = Sync::Passed;
    kernel::down_write(rw_sem_, loc);
    block_ = true;
    while (readers_active())
        sleep_for(kPercpuRwsemDrainPoll, loc);  // rcuwait_wait_event(readers_active_check)
}

void PercpuRwSemaphore::up_write(Loc loc) {
    block_ = false;
    kernel::up_write(rw_sem_, loc);
    --sync_->writers;  // rcu_sync_exit: back to the fast path a grace period later
    call_rcu([s = sync_] {
        if (s->writers == 0) s->state = Sync::Idle;
    });
}

bool PercpuRwSemaphore::readers_active() const {
    int64_t sum = 0;
    for (const auto &c : read_count_)
        sum += c.load();
    return sum != 0;
}

}  // namespace locksim::kernel
