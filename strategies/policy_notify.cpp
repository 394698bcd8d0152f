#include "strategies/policy_notify.h"

#include "ss/conditional.h"
#include "util/work_meter.h"

namespace locksim::strategies {

using kernel::Label;
using locksim::count_work;
using locksim::Work;

namespace {

// Bucket counts of the caches a policy change flushes (the kernel's *_HASH_SIZE and
// *_CACHE_BUCKETS).
constexpr uint32_t kNetifBuckets = 64;     // SEL_NETIF_HASH_SIZE
constexpr uint32_t kNetnodeBuckets = 256;  // SEL_NETNODE_HASH_SIZE
constexpr uint32_t kNetportBuckets = 256;  // SEL_NETPORT_HASH_SIZE
constexpr uint32_t kPkeyBuckets = 256;     // SEL_PKEY_HASH_SIZE
constexpr uint32_t kNetlblBuckets = 128;   // CIPSO_V4_CACHE_BUCKETS, CALIPSO_CACHE_BUCKETS
constexpr uint32_t kAuditFilterLists = 7;  // AUDIT_NR_FILTERS (5.10)
constexpr uint32_t kPolicyCapFiles = 7;    // policy capabilities 5.10 knows
constexpr size_t kNetlinkSkb = 512;        // sk_buff + a small selnl message
constexpr size_t kAuditBuffer = 64;        // struct audit_buffer (its own slab)
constexpr size_t kAuditSkb = 1024 + 256;   // nlmsg_new(AUDIT_BUFSIZ) + the sk_buff
constexpr uint64_t kAuditFixedChars = 60;  // "bool= val= old_val= auid= ses=" with numbers
constexpr uint64_t kLoadAuditChars = 40;   // "auid= ses= lsm=selinux res=1" with numbers
// selinux_ima_collect_state's buffer: "initialized=0;enforcing=0;checkreqprot=0;", "name=0;"
// for each of v6.6's eight policy capabilities (policycap_names.h: 149 characters of names),
// and the terminating NUL.
constexpr uint64_t kImaStateChars = 41 + 149 + 8 * 3 + 1;

// audit_log: audit_log_start (the audit_buffer and its skb), the record formatted, audit_log_end
// (the skb queued for kauditd, freed here at once).
void audit_record(kernel::Gfp gfp, uint64_t chars) {
    static const Label kAudit("audit_log");
    void *ab = kernel::kmalloc(kAuditBuffer, gfp);
    void *skb = kernel::kmalloc(kAuditSkb, gfp);
    kernel::stand_in(kAudit, [&] {
        count_work(Work::AuditCall);
        count_work(Work::StringByte, chars);
    });
    kernel::kfree(skb);  // kauditd's, later (not modelled)
    kernel::kfree(ab);
}

}  // namespace

PolicyNotifier::PolicyNotifier(kernel::Platform &p, bool xfrm_rtnl, ImaMeasure ima)
    : audit_filter_mutex_("audit_filter_mutex", p),
      sel_ib_pkey_lock_("sel_ib_pkey_lock", p),
      sel_netif_lock_("sel_netif_lock", p),
      sel_netnode_lock_("sel_netnode_lock", p),
      sel_netport_lock_("sel_netport_lock", p),
      status_lock_("selinux_status_lock", p),
      cipso_v4_cache_lock_("cipso_v4_cache", p),
      calipso_cache_lock_("calipso_cache", p),
      net_rwsem_("net_rwsem", p),
      rtnl_mutex_("rtnl_mutex", p),
      xfrm_rtnl_(xfrm_rtnl),
      ima_(ima) {}

void PolicyNotifier::flush_buckets(kernel::Spinlock &lock, uint32_t buckets, Label label) {
    kernel::spin_lock(lock);  // spin_lock_bh
    kernel::stand_in(label, [&] { count_work(Work::HashProbe, buckets); });
    kernel::spin_unlock(lock);
}

void PolicyNotifier::reset_callbacks() {
    static const Label kAurule("audit_update_lsm_rules");
    static const Label kPkey("sel_ib_pkey_flush");
    static const Label kLsm("call_blocking_lsm_notifier");
    static const Label kNetif("sel_netif_flush");
    static const Label kNetnode("sel_netnode_flush");
    static const Label kNetport("sel_netport_flush");

    // aurule_avc_callback (registered last, so called first)
    kernel::mutex_lock(audit_filter_mutex_);
    kernel::stand_in(kAurule, [] { count_work(Work::HashProbe, kAuditFilterLists); });
    kernel::mutex_unlock(audit_filter_mutex_);

    // selinux_lsm_notifier_avc_callback
    unsigned long flags = kernel::spin_lock_irqsave(sel_ib_pkey_lock_);
    kernel::stand_in(kPkey, [] { count_work(Work::HashProbe, kPkeyBuckets); });
    kernel::spin_unlock_irqrestore(sel_ib_pkey_lock_, flags);
    kernel::stand_in(kLsm, [] { count_work(Work::Call); });  // an empty chain: one check

    // selinux_netcache_avc_callback
    flush_buckets(sel_netif_lock_, kNetifBuckets, kNetif);
    flush_buckets(sel_netnode_lock_, kNetnodeBuckets, kNetnode);
    flush_buckets(sel_netport_lock_, kNetportBuckets, kNetport);
    kernel::synchronize_rcu();  // synchronize_net() without RTNL held
}

// The IMA step (the sequence above): policy_mutex is the caller's.
void PolicyNotifier::ima_measure(CurrentPolicy current) {
    static const Label kState("selinux_ima_collect_state");
    static const Label kMeasure("ima_measure_critical_data");
    static const Label kRead("security_read_state_kernel");
    if (ima_ == ImaMeasure::None) return;
    auto measure = [] {  // no rule measures critical data: the first test returns
        kernel::stand_in(kMeasure, [] { count_work(Work::Call); });
    };
    if (ima_ == ImaMeasure::StateAndPolicy) {
        void *state = kernel::kmalloc(kImaStateChars, kernel::Gfp::Kernel);  // kzalloc
        kernel::stand_in(kState, [] {
            count_work(Work::StringByte, kImaStateChars);
            count_work(Work::Call, 3 + 2 * 8);  // strscpy and the strlcat of each name and value
        });
        measure();
        kernel::kfree(state);
    }
    void *image = kernel::vmalloc(static_cast<size_t>(current.image_bytes));
    kernel::compute(kRead, [&] { (void)ss::policydb_write(current.db); });
    measure();
    kernel::vfree(image);
}

void PolicyNotifier::notify(Avc &avc, uint32_t seqno, PolicyChange change,
                            FunctionRef<bool()> allow_unknown, CurrentPolicy current) {
    static const Label kSelnl("selnl_notify_policyload");
    static const Label kStatus("selinux_status_update_policyload");
    static const Label kCipso("cipso_v4_cache_invalidate");
    static const Label kCalipso("calipso_cache_invalidate");
    static const Label kXfrm("selinux_xfrm_notify_policyload");

    avc.ss_reset(seqno, [this] { reset_callbacks(); });

    // selnl_notify_policyload: nlmsg_new(GFP_USER), fill, netlink_broadcast (no listener
    // keeps it: the skb is consumed at once).
    void *skb = kernel::kmalloc(kNetlinkSkb, kernel::Gfp::Kernel);
    kernel::stand_in(kSelnl, [] {
        count_work(Work::Call, 3);  // nlmsg_put, the payload, netlink_broadcast
        count_work(Work::BytesCopied, sizeof(uint32_t));
    });
    kernel::kfree(skb);

    // selinux_status_update_policyload
    kernel::mutex_lock(status_lock_);
    allow_unknown();  // deny_unknown = !security_get_allow_unknown()
    kernel::stand_in(kStatus, [] {
        count_work(Work::BytesCopied, 4 * sizeof(uint32_t));  // sequence, policyload, deny, seq
    });
    kernel::mutex_unlock(status_lock_);

    if (change != PolicyChange::BoolsBefore510) {  // selinux_netlbl_cache_invalidate
        for (uint32_t b = 0; b < kNetlblBuckets; ++b)
            flush_buckets(cipso_v4_cache_lock_, 1, kCipso);
        for (uint32_t b = 0; b < kNetlblBuckets; ++b)
            flush_buckets(calipso_cache_lock_, 1, kCalipso);
    }

    // selinux_xfrm_notify_policyload
    auto bump = [] {  // rt_genid_bump_all: v4, v6, fnhe
        kernel::stand_in(kXfrm, [] { count_work(Work::Call, 3); });
    };
    if (xfrm_rtnl_) {
        kernel::mutex_lock(rtnl_mutex_);
        bump();
        kernel::mutex_unlock(rtnl_mutex_);
    } else {
        kernel::down_read(net_rwsem_);
        bump();
        kernel::up_read(net_rwsem_);
    }

    ima_measure(current);
}

void PolicyNotifier::audit_bool_changes(const ss::CondPolicy &cond, std::span<const int> values) {
    if (values.size() != cond.bools.nprim) return;  // -EFAULT before any record
    for (uint32_t i = 0; i < values.size(); ++i) {
        const ss::BoolDatum *b = cond.bools.by_value(i + 1);
        if (!b || (values[i] ? 1 : 0) == b->state) continue;
        audit_record(kernel::Gfp::Atomic, kAuditFixedChars + b->name.size());
    }
}

void PolicyNotifier::audit_policy_load() {
    audit_record(kernel::Gfp::Kernel, kLoadAuditChars);
}

namespace {
uint64_t bool_files(const ss::Policydb &db) {
    return db.cond->bools.nprim;
}
// Per class a directory, its "index" file, its "perms" directory and a file per permission.
uint64_t class_files(const ss::Policydb &db) {
    uint64_t n = 0;
    for (const auto &c : db.b().classes.entries())
        n += 3 + c->permissions.nprim + (c->comdatum ? c->comdatum->permissions.nprim : 0);
    return n;
}
}  // namespace

SelinuxfsFiles PolicyNotifier::selinuxfs_files(const ss::Policydb &db) {
    return {bool_files(db), class_files(db)};
}

uint64_t PolicyNotifier::rebuild_nodes(SelinuxfsFiles old_files, const ss::Policydb &new_db,
                                       PolicyChange change) {
    const uint64_t caps = change == PolicyChange::Full ? 0 : 2 * kPolicyCapFiles;
    return old_files.bools + bool_files(new_db) + old_files.classes + class_files(new_db) + caps;
}

void PolicyNotifier::rebuild_selinuxfs(SelinuxfsFiles old_files, const ss::Policydb &new_db,
                                       PolicyChange change) {
    static const Label kBools("sel_make_bools");
    static const Label kClasses("sel_make_classes");
    static const Label kCaps("sel_make_policycap");
    kernel::stand_in(kBools, [&] {
        count_work(Work::VfsNode, old_files.bools + bool_files(new_db));
        for (const auto &b : new_db.cond->bools.entries()) {
            // security_get_bools: kstrdup of each name; the page with "/booleans/<name>" and
            // its genfs lookup ("selinuxfs" entries) for the file's SID.
            count_work(Work::Alloc);
            count_work(Work::StringByte, 2 * (b->name.size() + 1) + 10);
            count_work(Work::HashProbe, 2);
        }
    });
    kernel::stand_in(kClasses, [&] {
        count_work(Work::VfsNode, old_files.classes + class_files(new_db));
        for (const auto &c : new_db.b().classes.entries()) {
            count_work(Work::Alloc, 1 + c->permissions.nprim);  // security_get_permissions
            count_work(Work::StringByte, c->name.size() + 1);
        }
    });
    if (change != PolicyChange::Full)  // 5.10 makes them once, at mount (sel_fill_super)
        kernel::stand_in(kCaps, [] { count_work(Work::VfsNode, 2 * kPolicyCapFiles); });
}

}  // namespace locksim::strategies
