#include "workloads/catalog.h"

#include <stdexcept>

namespace locksim {

namespace {

ParamSpec dur(std::string name, std::string doc, int64_t ns, int64_t min = 0) {
    return {.name = std::move(name),
            .type = ParamType::Duration,
            .doc = std::move(doc),
            .default_value = ns,
            .min = min,
            .max = int64_t{3600} * 1'000'000'000};
}

ParamSpec count(std::string name, std::string doc, int64_t v, int64_t min, int64_t max) {
    return {.name = std::move(name),
            .type = ParamType::Int,
            .doc = std::move(doc),
            .default_value = v,
            .min = min,
            .max = max};
}

ParamSpec text(std::string name, std::string doc, std::string v, std::vector<std::string> choices) {
    return {.name = std::move(name),
            .type = ParamType::String,
            .doc = std::move(doc),
            .default_value = std::move(v),
            .choices = std::move(choices)};
}

ParamSpec names(std::string name, std::string doc) {
    return {.name = std::move(name),
            .type = ParamType::StringList,
            .doc = std::move(doc),
            .default_value = std::vector<std::string>{}};
}

constexpr int64_t us = 1000, ms = 1000 * us;

}  // namespace

const std::vector<ParamSpec> &common_workload_params() {
    static const std::vector<ParamSpec> common = {
        count("tasks", "how many tasks run this body; 0 = one per CPU", 1, 0, 100000),
        text("sched", "scheduling class", "other", {"other", "fifo"}),
        count("prio", "SCHED_FIFO priority (1..99) with sched = fifo", 50, 1, 99),
        {.name = "cpus",
         .type = ParamType::IntList,
         .doc = "CPUs the tasks may run on (empty: any); task i is pinned to cpus[i % n] "
                "when pin = true",
         .default_value = std::vector<int64_t>{},
         .min = 0,
         .max = 4095},
        {.name = "pin",
         .type = ParamType::Bool,
         .doc = "pin each task to one CPU of `cpus` (or to CPU i % ncpus when cpus is empty)",
         .default_value = false},
        dur("start", "when the tasks start (simulated time)", 0),
        text("cluster",
             "run on this cluster of the CPU profile (its [[cluster]] name): task i is pinned to "
             "the cluster's CPU i % n; empty: any CPU",
             "", {}),
    };
    return common;
}

const std::vector<WorkloadInfo> &workload_catalog() {
    static const std::vector<WorkloadInfo> catalog = {
        {"syscalls",
         "file read/write permission checks (mostly AVC hits), open/stat, and socket creation "
         "with its context validation; task SIDs drawn from the policy's real domains",
         {dur("think", "user-space time between two system calls", 20 * us),
          count("read_write", "weight of read/write checks in the mix", 80, 0, 1000),
          count("open_stat", "weight of open/stat (lookup + several checks)", 15, 0, 1000),
          count("socket", "weight of socket creation (transition_sid + context validation)", 5, 0,
                1000),
          count("packet_recv",
                "weight of packet receipt: the peer check made from softirq context (preemption "
                "off), where the security server must not sleep",
                5, 0, 1000),
          count("domains", "distinct source domains drawn from the policy", 16, 1, 100000),
          count("objects", "distinct target object types drawn from the policy", 64, 1, 100000),
          count("working_set",
                "objects each task touches (a window of `objects`): small windows mostly hit "
                "the AVC, large ones miss",
                8, 1, 100000),
          names("domain_types",
                "types the tasks run as, task i as the i-th modulo their number (default: "
                "`domains` of the policy's domains)"),
          names("object_types",
                "types of the objects the tasks touch (default: `objects` of the policy's file "
                "types)"),
          count("syscall_work",
                "the rest of each system call besides its security checks (entry, fd lookup, "
                "VFS, exit), in units of the CPU profile's `syscall` cost; 0 = only the checks "
                "are charged",
                0, 0, 1000),
          {.name = "checks",
           .type = ParamType::Bool,
           .doc = "make the permission checks; false runs the same system calls without them "
                  "(SELinux off), the baseline of an overhead figure",
           .default_value = true}}},
        {"aim7",
         "AIM7 high_systime-like mix over many users: process creation, file and socket churn",
         {count("users", "simulated AIM7 users, spread over the tasks", 1500, 1, 1000000),
          dur("think", "user-space time between two operations", 50 * us)}},
        {"journald",
         "SO_PASSSEC: one SID -> context string per received message from senders with many "
         "categories",
         {count("rate", "messages per second per task", 20000, 1, 100000000),
          count("senders", "distinct sending contexts", 32, 1, 100000),
          count("categories", "categories in each sender's context", 1024, 0, 1024)}},
        {"setsebool",
         "boolean commits (security_set_bools): periodic, random or in bursts",
         {text("mode", "when commits happen", "periodic", {"periodic", "random", "burst"}),
          dur("period",
              "time between commits (mean time with mode = random, between bursts "
              "with mode = burst)",
              100 * ms, 1 * us),
          count("burst", "commits per burst with mode = burst", 10, 1, 100000),
          count("booleans", "booleans changed per commit", 1, 1, 10000),
          names("names", "booleans to toggle (default: drawn from the policy's booleans)")}},
        {"load_policy",
         "periodic policy reload (security_load_policy) of the same policy",
         {dur("period", "time between reloads", 500 * ms, 1 * ms)}},
        {"login",
         "security_get_user_sids for chosen users (the long read-side section)",
         {dur("period", "time between logins per task", 10 * ms, 1 * us),
          names("users", "users to log in (default: every user of the policy with a role)")}},
        {"avc_pressure",
         "many distinct (source, target, class) triples to force AVC misses and reclaim",
         {count("triples", "distinct triples cycled through", 4096, 1, 10000000),
          dur("think", "time between two checks", 5 * us)}},
        {"new_contexts",
         "a long-lived system making new contexts (new SIDs), as a container runtime or sVirt "
         "does with a new MCS category pair per container: the SID table grows; needs an MLS "
         "policy",
         {count("rate", "new contexts per second per task", 1000, 1, 100000000),
          count("max_contexts",
                "new contexts the workload makes in the run (then it only looks up)", 20000, 0,
                1000000),
          count("preload", "contexts made at setup, before the run (the table's starting size)", 0,
                0, 1000000),
          count("lookups", "percent of operations that look up a context made earlier", 0, 0,
                100)}},
        {"probe",
         "a cyclictest-like SCHED_FIFO task: sleeps to the next period and records how late it "
         "woke",
         {dur("period", "wake-up period", 1 * ms, 10 * us)},
         {{"tasks", int64_t{0}},
          {"sched", std::string("fifo")},
          {"prio", int64_t{99}},
          {"pin", true}}},
    };
    return catalog;
}

const std::vector<ParamSpec> &core_params() {
    static const std::vector<ParamSpec> core = {
        text("mls_level_isvalid", "mls_level_isvalid: ebitmap_contains (3.13 on) or bit by bit",
             "contains", {"contains", "bitwise"}),
        text("avc_audit", "AVC audit path: only when needed, or on every check (before 2007)",
             "needed", {"needed", "always"}),
        text("avc_slow_path", "avc_has_perm_noaudit inlined or out of line", "inline",
             {"inline", "outline"}),
        text("avc_lock", "AVC chains: RCU (2.6.10 on), one global spinlock (2.6.9), one rwlock",
             "rcu", {"rcu", "spinlock", "rwlock"}),
        count("sid_string_cache", "SID -> context string cache entries; 0 = off", 256, 0,
              1'000'000),
        text("sidtab",
             "SID table era: context -> SID through a hash table (5.6 on), a scan over every "
             "entry (5.1 - 5.5), or the scan again under the lock and no new SID during a "
             "reload (before 5.1)",
             "hash", {"hash", "linear", "legacy"}),
        count("avc_slots", "AVC hash slots (a power of two)", 512, 1, 1 << 20),
        count("avc_threshold", "AVC entries before reclaim", 512, 1, 1 << 24),
    };
    return core;
}

const ParamSpec &core_param(std::string_view name) {
    for (const auto &p : core_params())
        if (p.name == name) return p;
    throw std::logic_error("no [core] key " + std::string(name));
}

const WorkloadInfo *find_workload_info(std::string_view name) {
    for (const auto &w : workload_catalog())
        if (w.name == name) return &w;
    return nullptr;
}

}  // namespace locksim
