// A deliberately broken strategy the self-checks must catch, shared by the simulator's checks
// and the real platform's torture test: rcu-cond-dup without its grace period, so the old
// version is freed right after the new one is published.
#pragma once

#include <cerrno>

#include "kernel/mutex.h"
#include "kernel/platform.h"
#include "ss/services.h"
#include "strategies/strategy.h"

namespace locksim::strategies::test {

class FreesWithoutGracePeriod final : public StrategyBase {
  public:
    FreesWithoutGracePeriod(ss::PolicyState st, const CoreConfig &core)
        : StrategyBase("broken-no-grace-period", std::move(st), core, true) {}

  protected:
    int read_section(ReadFn fn) override { return rcu_read_section(fn); }
    int write_bools(std::span<const int> values, uint32_t *seqno) override {
        kernel::mutex_lock(policy_mutex_);
        PolicyVersion *old = policy_locked();
        ss::PolicyState st;
        int rc =
            kernel::compute("dup", [&] { return ss::set_bools_cond_dup(old->st, values, &st); });
        PolicyVersion *next = new_version(std::move(st), old->kmem, kernel::Gfp::Kernel);
        next->base_mem = old->base_mem;
        old->base_mem = nullptr;
        *seqno = next->st.seqno;
        replace_policy(next);
        free_version(old);  // BUG: readers may still hold it
        notify_policy_change(*seqno, PolicyChange::Full);
        kernel::mutex_unlock(policy_mutex_);
        return rc;
    }
    int write_load(std::span<const uint8_t>, uint32_t *) override { return -EINVAL; }
};

}  // namespace locksim::strategies::test
