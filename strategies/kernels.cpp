#include "strategies/kernels.h"

#include <fmt/format.h>

#include <charconv>

#include "util/error.h"
#include "util/name_table.h"

namespace locksim {

namespace {

constexpr KernelRelease kFirstModelled{4, 15, 0};

bool parse_number(std::string_view s, int *out) {
    if (s.empty() || s.size() > 4) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::optional<KernelRelease> parse_kernel_release(std::string_view text) {
    KernelRelease r;
    const size_t dot1 = text.find('.');
    if (dot1 == std::string_view::npos) return std::nullopt;
    const size_t dot2 = text.find('.', dot1 + 1);
    if (!parse_number(text.substr(0, dot1), &r.major)) return std::nullopt;
    if (!parse_number(
            text.substr(dot1 + 1, dot2 == std::string_view::npos ? text.npos : dot2 - dot1 - 1),
            &r.minor))
        return std::nullopt;
    if (dot2 != std::string_view::npos && !parse_number(text.substr(dot2 + 1), &r.patch))
        return std::nullopt;
    return r;
}

std::string kernel_release_name(KernelRelease r) {
    return r.patch ? fmt::format("{}.{}.{}", r.major, r.minor, r.patch)
                   : fmt::format("{}.{}", r.major, r.minor);
}

KernelBehaviour kernel_behaviour(KernelRelease r, std::string_view where) {
    if (r < kFirstModelled)
        throw UserError(fmt::format(
            "{}{}kernel {} is not modelled: the first modelled release is {} (see 'locksim list "
            "kernels')",
            where, where.empty() ? "" : ": ", kernel_release_name(r),
            kernel_release_name(kFirstModelled)));
    KernelBehaviour b;
    b.release = r;
    b.sidtab = r < KernelRelease{5, 0, 0}   ? ss::SidtabEra::Legacy
               : r < KernelRelease{5, 6, 0} ? ss::SidtabEra::Linear
               : r < KernelRelease{5, 8, 0} ? ss::SidtabEra::HashString
                                            : ss::SidtabEra::Hash;
    b.sid_string_cache = r < KernelRelease{5, 6, 0} ? 0 : ss::kSidtabDefaultCacheSize;
    // The fix reached 5.10.30 and 5.11.14 from stable, and 5.12 from the merge window.
    b.sidtab_freeze = r >= KernelRelease{5, 12, 0} ||
                      (r.major == 5 && r.minor == 11 && r.patch >= 14) ||
                      (r.major == 5 && r.minor == 10 && r.patch >= 30);
    b.policy_rcu = r >= KernelRelease{5, 10, 0};
    b.xfrm_rtnl = r < KernelRelease{4, 17, 0};
    b.ima_step = r < KernelRelease{5, 12, 0}   ? ImaMeasure::None
                 : r < KernelRelease{5, 13, 0} ? ImaMeasure::Policy
                                               : ImaMeasure::StateAndPolicy;
    return b;
}

const std::vector<KernelListing> &kernel_listing() {
    static const std::vector<KernelListing> list = {
        {"4.15", "v4.15.1 ss/services.c, ss/sidtab.c, selinuxfs.c (4.20.1: still legacy)"},
        {"5.0", "v5.0.1 ss/sidtab.c, ss/services.c (5.4.214: still linear)"},
        {"5.6", "v5.6.4 ss/sidtab.c, ss/context.h (5.7.14: the same)"},
        {"5.8", "v5.8.1 ss/context.c context_compute_hash, ss/sidtab.c"},
        {"5.9", "v5.9.1 ss/services.c (the last policy_rwlock), ss/sidtab.c"},
        {"5.10", "v5.10.13 ss/services.c selinux_policy_commit, ss/sidtab.c (no freeze)"},
        {"5.10.30",
         "v5.10.44 and v5.11.14 ss/sidtab.c, ss/services.c (the freeze; 5.10.30 from "
         "stable-rc's record)"},
        {"5.12", "v5.12.9 ima.c selinux_ima_measure_state, ss/services.c (the IMA step)"},
        {"5.13", "v6.6.0 ima.c selinux_ima_measure_state_locked (the state string; 5.13 not read)"},
        {"6.6", "v6.6.0 ss/services.c, ss/sidtab.c, ima.c"},
    };
    return list;
}

std::string_view ima_measure_name(ImaMeasure m) {
    static const NameTable<ImaMeasure> names = {{ImaMeasure::None, "none"},
                                                {ImaMeasure::Policy, "policy"},
                                                {ImaMeasure::StateAndPolicy, "state+policy"}};
    return names.name(m);
}

std::string_view xfrm_lock_name(bool xfrm_rtnl) {
    return xfrm_rtnl ? "rtnl_lock" : "net_rwsem";
}

std::string_view policy_lock_name(bool policy_rcu) {
    return policy_rcu ? "rcu" : "policy_rwlock";
}

std::string_view commit_path_text(const KernelBehaviour &b) {
    if (!b.policy_rcu)
        return "write_lock_irq(policy_rwlock): booleans changed in place, a load swapped in";
    return b.sidtab_freeze ? "RCU: duplicate, publish inside the old SID table's freeze, "
                             "synchronize_rcu, free"
                           : "RCU: duplicate, publish, synchronize_rcu, free (no freeze)";
}

bool KernelRange::contains(KernelRelease r) const {
    if (r < *parse_kernel_release(first)) return false;
    if (last.empty()) return true;
    // `last` names a series: 5.9 holds 5.9.y.
    const KernelRelease end = *parse_kernel_release(last);
    return r.major < end.major || (r.major == end.major && r.minor <= end.minor);
}

std::string KernelRange::text() const {
    if (last.empty()) return fmt::format("{} on", first);
    if (last == first) return std::string(first);
    return fmt::format("{} - {}", first, last);
}

}  // namespace locksim
