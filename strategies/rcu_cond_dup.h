// The 5.10 design (rcu_cond_dup.cpp), open for the variant that frees by call_rcu
// (rcu_cond_dup_async.cpp).
#pragma once

#include "strategies/strategy.h"

namespace locksim::strategies {

class RcuCondDupServer : public StrategyBase {
  public:
    RcuCondDupServer(std::string name, ss::PolicyState st, const CoreConfig &core, bool expedited);

  protected:
    int read_section(ReadFn fn) override;
    int write_bools(std::span<const int> values, uint32_t *seqno) override;
    int write_load(std::span<const uint8_t> image, uint32_t *seqno) override;

    // What happens to the version a boolean change replaced, with policy_mutex held: here
    // synchronize_rcu (or the expedited one) and the free of its conditional state.
    virtual void retire_bools(PolicyVersion *old);

    bool expedited_;
};

}  // namespace locksim::strategies
