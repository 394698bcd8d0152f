#include "strategies/strategy.h"

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "record/op_names.h"
#include "ss/conditional.h"
#include "strategies/file_hook.h"
#include "strategies/sidtab_lock.h"
#include "util/error.h"

namespace locksim::strategies {

using kernel::Label;

namespace {

// The serialised size of a policy: what a full copy writes and reads back (its buffer).
int64_t image_bytes(const ss::Policydb &db) {
    uint32_t v = std::max<uint32_t>(db.version(), 24);  // the oldest version the writer emits
    return static_cast<int64_t>(ss::policydb_write(db, v).size());
}

}  // namespace

StrategyBase::StrategyBase(std::string name, ss::PolicyState initial, const CoreConfig &core,
                           bool rcu_published)
    : platform_(kernel::current()),
      policy_mutex_("policy_mutex", platform_),
      name_(std::move(name)),
      rcu_published_(rcu_published),
      sidtab_freeze_(core.sidtab_freeze),
      avc_(*this, core, platform_),
      file_hook_(core.file_hook),
      notifier_(platform_, core.xfrm_rtnl, core.ima) {
    initial.config.level_check = core.level_check;
    if (!initial.sidtab) throw std::invalid_argument("policy state without a SID table");
    // The SID table's spinlocks on this platform (before any task can use the table).
    initial.sidtab->set_locking(std::make_shared<KernelSidtabLocking>(platform_));
    const int64_t image = image_bytes(initial.db);
    PolicyVersion *v = new_version(std::move(initial), kernel::Gfp::Kernel);
    new_base_charge(v, image, kernel::Gfp::Kernel);
    replace_policy(v);
}

StrategyBase::~StrategyBase() {
    kernel::PlatformScope scope(platform_);
    reclaim_.flush();
    if (PolicyVersion *v = policy_locked()) {
        if (rcu_published_) kernel::rcu_assign_pointer<PolicyVersion>(policy_, nullptr);
        free_version(v);
    }
}

// ---------------------------------------------------------------- versions and memory

PolicyVersion *StrategyBase::replace_policy(PolicyVersion *v) {
    if (rcu_published_) return kernel::rcu_replace_pointer(policy_, v);
    return policy_.raw().exchange(v, std::memory_order_acq_rel);
}

PolicyVersion *StrategyBase::new_version(ss::PolicyState st, const ss::PolicyKmem &kmem,
                                         kernel::Gfp gfp) {
    PolicyVersion *v = kernel::knew<PolicyVersion>(gfp);
    v->st = std::move(st);
    v->kmem = kmem;
    kernel::kmem_charge(v, kmem.duplicate());
    return v;
}

PolicyVersion *StrategyBase::new_version(ss::PolicyState st, kernel::Gfp gfp) {
    const ss::PolicyKmem kmem = ss::policy_kmem(st.db);
    return new_version(std::move(st), kmem, gfp);
}

void StrategyBase::new_base_charge(PolicyVersion *v, int64_t image_bytes, kernel::Gfp gfp) {
    v->image_bytes = image_bytes;
    v->base_mem = kernel::kmalloc(sizeof(void *), gfp);
    kernel::kmem_charge(v->base_mem, v->kmem.whole() - v->kmem.duplicate());
}

namespace {

// One destroy function's frees, under its own label: a compute per stretch, each after a
// reschedule point when `resched` (the process-context destroys that call cond_resched()). A
// label, not an operation of its own: the platform gives an operation's parts to the innermost
// one open, and the destroy is part of the commit or load that frees (its writer work).
void charge_destroy(Label label, std::span<const ss::FreeCalls> stretches, bool resched) {
    for (const ss::FreeCalls &f : stretches) {
        if (resched) kernel::cond_resched();
        kernel::compute(label, [&] {
            count_work(Work::Free, static_cast<uint64_t>(f.kfree));
            count_work(Work::CacheFree, static_cast<uint64_t>(f.cache_free));
        });
    }
}

}  // namespace

void StrategyBase::free_version(PolicyVersion *v, bool sidtab_first) {
    static const Label kPolicydb("policydb_destroy");
    static const Label kSidtab("sidtab_destroy");
    static const Label kCondDup("cond_policydb_destroy_dup");
    if (!v->base_mem) {
        charge_destroy(kCondDup, {&v->kmem.destroy_dup, 1}, false);
    } else {
        const PolicyVersion *cur = policy_locked();
        auto sidtab = [&] {
            if (cur && cur->st.sidtab == v->st.sidtab) return;  // the copy keeps it
            ss::FreeCalls f = ss::sidtab_destroy_calls(*v->st.sidtab);
            // 5.x: kfree of the struct sidtab after its contents (4.15's is static).
            if (v->st.sidtab->era() != ss::SidtabEra::Legacy) ++f.kfree;
            charge_destroy(kSidtab, {&f, 1}, true);
        };
        if (sidtab_first) sidtab();
        // The base charge's kfree below is one of policydb_destroy's (its last).
        std::vector<ss::FreeCalls> stretches = v->kmem.destroy;
        if (!stretches.empty() && stretches.back().kfree > 0) --stretches.back().kfree;
        charge_destroy(kPolicydb, stretches, true);
        kernel::kfree(v->base_mem);
        if (!sidtab_first) sidtab();
    }
    WorkMeterScope uncounted(nullptr);
    kernel::kdelete(v);  // the struct selinux_policy's kfree
}

void StrategyBase::free_version_rcu(PolicyVersion *v) {
    reclaim_.defer([this, v] { free_version(v); });
}

// ---------------------------------------------------------------- read side

int StrategyBase::read_policy(ReadFn fn) {
    static const Label kRetry("sidtab_estale_retry");
    int rc = read_section(fn);
    while (rc == -ESTALE) {  // the SID table was frozen under us: again on the new policy
        kernel::OpScope op(kRetry);
        rc = read_section(fn);
    }
    return rc;
}

const ss::PolicyState &StrategyBase::setup_state() const {
    return policy_locked()->st;
}

int StrategyBase::avc_has_perm(uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t requested,
                               ss::AvDecision *avd) {
    ss::AvDecision local;
    return avc_.has_perm(ssid, tsid, tclass, requested, avd ? avd : &local);
}

int StrategyBase::file_permission(const FileCheck &check) {
    return selinux_file_permission(
        file_hook_, check, [this](uint32_t ssid, uint32_t tsid, uint32_t tclass, uint32_t av) {
            return avc_has_perm(ssid, tsid, tclass, av, nullptr);
        });
}

int StrategyBase::compute_av(uint32_t ssid, uint32_t tsid, uint32_t tclass, ss::AvDecision *avd) {
    static const Label kLabel("compute_av");
    return read_policy([&](const ss::PolicyState &st) {
        return kernel::compute(kLabel, [&] { return ss::compute_av(st, ssid, tsid, tclass, avd); });
    });
}

int StrategyBase::context_to_sid(std::string_view context, uint32_t *sid) {
    static const Label kLabel("context_to_sid");
    return read_policy([&](const ss::PolicyState &st) {
        return kernel::compute(kLabel, [&] { return ss::context_to_sid(st, context, sid); });
    });
}

int StrategyBase::sid_to_context(uint32_t sid, std::string *out) {
    static const Label kLabel("sid_to_context");
    return read_policy([&](const ss::PolicyState &st) {
        return kernel::compute(kLabel, [&] { return ss::sid_to_context(st, sid, out); });
    });
}

int StrategyBase::transition_sid(uint32_t ssid, uint32_t tsid, uint32_t tclass,
                                 std::string_view objname, uint32_t *out_sid) {
    static const Label kLabel("transition_sid");
    return read_policy([&](const ss::PolicyState &st) {
        // As the kernel's security_transition_sid: socket classes take the socket defaults.
        return kernel::compute(kLabel, [&] {
            return ss::compute_sid(st, ssid, tsid, tclass, ss::AVTAB_TRANSITION, objname, out_sid,
                                   ss::is_socket_class(st.p(), tclass));
        });
    });
}

int StrategyBase::get_user_sids(uint32_t fromsid, std::string_view username,
                                std::vector<uint32_t> *sids) {
    static const Label kLabel("get_user_sids");
    std::vector<uint32_t> candidates;
    uint32_t process_class = 0, transition = 0;
    int rc = read_policy([&](const ss::PolicyState &st) {
        return kernel::compute(kLabel, [&] {
            process_class = st.p().process_class;
            transition = ss::process_transition_perm(st.p());
            return ss::get_user_sids_candidates(st, fromsid, username, &candidates);
        });
    });
    sids->clear();
    if (rc) return rc;
    // Outside the policy's read section: a permission check per candidate, through the AVC.
    for (uint32_t sid : candidates) {
        ss::AvDecision avd;
        if (transition && avc_.has_perm_noaudit(fromsid, sid, process_class, transition,
                                                ss::AVC_STRICT, &avd) == 0)
            sids->push_back(sid);
    }
    return 0;
}

// ---------------------------------------------------------------- write side

void StrategyBase::notify_policy_change(uint32_t seqno, PolicyChange change) {
    static const Label kAllowUnknown("security_get_allow_unknown");
    const PolicyVersion *current = policy_locked();  // policy_mutex is held
    notifier_.notify(
        avc_, seqno, change,
        [&] {
            bool allow = false;
            auto lookup = [&](const ss::PolicyState &st) {
                kernel::compute(kAllowUnknown, [&] {
                    count_work(Work::Call);
                    allow = (st.db.b().handle_unknown & ss::ALLOW_UNKNOWN) != 0;
                });
                return 0;
            };
            if (change == PolicyChange::Full)
                read_policy(lookup);  // 5.10 on: rcu_read_lock, rcu_dereference
            else
                lookup(policy_locked()->st);  // before 5.10: policydb.allow_unknown, no lock
            return allow;
        },
        {current->st.db, current->image_bytes});
}

int StrategyBase::set_bools(std::span<const int> values, uint32_t *seqno) {
    static const Label kOp(kernel::op::kSetBools);
    kernel::OpScope op(kOp);
    uint32_t s = 0;
    int rc = write_bools(values, &s);
    if (rc == 0 && seqno) *seqno = s;
    return rc;
}

int StrategyBase::load_policy(std::span<const uint8_t> image, uint32_t *seqno) {
    static const Label kOp(kernel::op::kLoadPolicy);
    kernel::OpScope op(kOp);
    uint32_t s = 0;
    int rc = write_load(image, &s);
    if (rc == 0 && seqno) *seqno = s;
    return rc;
}

PolicyVersion *StrategyBase::prepare_load(std::span<const uint8_t> image, const PolicyVersion &old,
                                          int *rc) {
    static const Label kRead("policydb_read");
    static const Label kConvert("sidtab_convert");
    ss::Policydb db;
    *rc = kernel::compute(kRead, [&] {
        try {
            db = ss::policydb_read(image, "load_policy");
            return 0;
        } catch (const UserError &) {
            return -EINVAL;
        }
    });
    if (*rc) return nullptr;
    ss::PolicyState next;
    *rc = kernel::compute(kConvert, [&] { return ss::load_policy(&old.st, std::move(db), &next); });
    if (*rc) return nullptr;
    PolicyVersion *v = new_version(std::move(next), kernel::Gfp::Kernel);
    new_base_charge(v, static_cast<int64_t>(image.size()), kernel::Gfp::Kernel);
    return v;
}

void StrategyBase::commit_load(const PolicyVersion &old, FunctionRef<void()> publish) {
    static const Label kFreeze("sidtab_freeze");
    if (!sidtab_freeze_) {
        publish();
        return;
    }
    ss::Sidtab &t = *old.st.sidtab;
    kernel::compute(kFreeze, [&] { t.freeze_begin(); });
    publish();
    kernel::compute(kFreeze, [&] { t.freeze_end(); });
}

int StrategyBase::set_bools_exclusive(std::span<const int> values, uint32_t *seqno,
                                      Exclusive exclusive) {
    static const Label kSet("set_bools_inplace");
    kernel::mutex_lock(policy_mutex_);
    int rc = 0;
    exclusive([&] {
        PolicyVersion *p = policy_locked();
        PolicyNotifier::audit_bool_changes(*p->st.db.cond, values);
        rc = kernel::compute(kSet, [&] { return ss::set_bools_inplace(p->st, values); });
        *seqno = p->st.seqno;
    });
    if (!rc) notify_policy_change(*seqno, PolicyChange::BoolsBefore510);
    kernel::mutex_unlock(policy_mutex_);
    return rc;
}

int StrategyBase::load_exclusive(std::span<const uint8_t> image, uint32_t *seqno,
                                 Exclusive exclusive, LoadSteps steps) {
    kernel::mutex_lock(policy_mutex_);
    PolicyVersion *old = policy_locked();
    const SelinuxfsFiles old_files = PolicyNotifier::selinuxfs_files(old->st.db);
    int rc;
    if (PolicyVersion *next = prepare_load(image, *old, &rc)) {
        exclusive([&] {
            if (steps.freeze_in_section)
                commit_load(*old, [&] { replace_policy(next); });
            else
                replace_policy(next);
            *seqno = next->st.seqno;
        });
        if (!steps.freeze_in_section) commit_load(*old);
        if (steps.grace_period) grace_period(steps.expedited);
        free_version(old);
        notify_policy_change(*seqno, PolicyChange::LoadBefore510);
        PolicyNotifier::rebuild_selinuxfs(old_files, next->st.db, PolicyChange::LoadBefore510);
        PolicyNotifier::audit_policy_load();
    }
    kernel::mutex_unlock(policy_mutex_);
    return rc;
}

}  // namespace locksim::strategies
