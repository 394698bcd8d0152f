#include "strategies/catalog.h"

namespace locksim {

namespace {

ParamSpec grace_period_option() {
    return {.name = "grace_period",
            .type = ParamType::String,
            .doc = "how the writer waits for readers: synchronize_rcu or the expedited variant",
            .default_value = std::string("normal"),
            .choices = {"normal", "expedited"}};
}

}  // namespace

const std::vector<StrategyInfo> &strategy_catalog() {
    static const std::vector<StrategyInfo> catalog = {
        {"rwlock",
         "read_lock (spinning, preempt-off) around every read; set_bools under write_lock_irq",
         "kernels before 5.10: policy_rwlock",
         {}},
        {"rwsem",
         "down_read (sleeping, preemptible) around every read; set_bools under down_write",
         "Enderborg 2018 series, v1",
         {}},
        {"rcu-full-copy",
         "rcu_read_lock readers; set_bools deep-copies the whole policydb (write + read), "
         "publishes, synchronize_rcu, frees",
         "Enderborg 2018 series, v3",
         {{.name = "copy",
           .type = ParamType::String,
           .doc = "where the copy runs: 'atomic' (under a spinlock, preemption off, atomic "
                  "allocations, as the series did) or 'sleepable' (under a mutex)",
           .default_value = std::string("atomic"),
           .choices = {"atomic", "sleepable"}},
          grace_period_option()}},
        {"rcu-cond-dup",
         "rcu_read_lock readers; set_bools under policy_mutex duplicates only the conditional "
         "policy, publishes, synchronize_rcu, frees the old conditional state",
         "KaiGai 2004 / Smalley, merged in 5.10 (c7c556f1e81b, 1b8b31a2e612)",
         {grace_period_option()}},
        {"rcu-cond-dup-async",
         "as rcu-cond-dup, but the old state is freed by call_rcu: setsebool returns before the "
         "grace period ends, at the price of memory held until it does",
         "unmerged: call_rcu instead of synchronize_rcu",
         {}},
        {"percpu-rwsem",
         "per-CPU reader counts (readers nearly free, no shared cache line); a writer flips to "
         "the slow path, waits a grace period and for readers to drain, then holds it exclusively",
         "unmerged: percpu_rw_semaphore as used by cgroups and freezing",
         {}},
        {"seqlock",
         "readers run without a lock and retry if a writer overlapped (seqcount); set_bools "
         "updates in place under the write seqlock",
         "unmerged: read_seqbegin / read_seqretry around the services",
         {{.name = "max_retries",
           .type = ParamType::Int,
           .doc = "retries before a reader falls back to taking the lock",
           .default_value = int64_t{8},
           .min = 1,
           .max = 1000}}},
    };
    return catalog;
}

const StrategyInfo *find_strategy_info(std::string_view name) {
    for (const auto &s : strategy_catalog())
        if (s.name == name) return &s;
    return nullptr;
}

}  // namespace locksim
