// What workloads need to know about a policy before they run: class and permission values by
// name, which types are domains and which are objects, valid contexts for them, users, booleans.
// Looked up once, at setup, on the server's initial state; never from a running task.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ss/services.h"

namespace locksim {

class PolicyFacts {
  public:
    explicit PolicyFacts(const ss::PolicyState &st);

    // Class value by name, 0 when the policy has no such class.
    uint32_t class_value(std::string_view cls) const;
    // The access-vector bits of the named permissions of a class (unknown names are skipped).
    uint32_t perms(std::string_view cls, std::initializer_list<std::string_view> names) const;

    // A permission check a workload makes: the named class and permissions, or, on a policy
    // without that class (one whose classes are not the kernel's, as a policy compiled from
    // arbitrary sources), a stand-in: the policy's `nth` class other than process that has
    // permissions (modulo how many there are), in value order, with as many of its first
    // permissions as were named. {0, 0} when the policy has no such class.
    struct Check {
        uint32_t tclass = 0;
        uint32_t av = 0;
    };
    Check check(std::string_view cls, std::initializer_list<std::string_view> names,
                size_t nth) const;

    // Types that can run as processes (members of the `domain` attribute, else every type some
    // role other than object_r may take), and types of objects (members of `file_type`, else
    // every type). Both sorted by value and never empty for a policy with a type.
    const std::vector<uint32_t> &domains() const { return domains_; }
    const std::vector<uint32_t> &objects() const { return objects_; }

    // A valid context string for a process of `type`: a role authorised for it, a user
    // authorised for the role, and that user's whole MLS range. Empty when none is valid.
    std::string domain_context(uint32_t type) const;
    // The same with the low level's categories replaced by every other category up to
    // `categories` of them (senders with many categories); falls back to domain_context.
    // `carried`, when given, receives how many categories the context has.
    std::string domain_context_with_categories(uint32_t type, uint32_t categories,
                                               uint32_t *carried = nullptr) const;
    // The contexts a container runtime gives its containers (sVirt, MCS): a domain context
    // with its low level's categories set to the i-th pair {a, b}, a < b, of the categories its
    // high level allows, in the order (0,1), (0,2) ... (1,2) ... Made without the policy, so a
    // running task may use it.
    struct CategoryPairs {
        std::string head;  // "user:role:type:sens" of the low level
        std::string tail;  // "-" and the high level
        std::vector<std::string> names;
        uint64_t count() const;                 // how many pairs
        std::string context(uint64_t i) const;  // i < count()
    };
    // Empty (count() == 0) without MLS or with fewer than two categories.
    CategoryPairs category_pairs(const std::string &base) const;
    // A container runtime's contexts: category pairs below the range of a container domain
    // (svirt_t, container_t, else unconfined_t or the first domain), as `new_contexts`,
    // validate's context reader and calibrate draw them.
    CategoryPairs container_pairs() const;
    // "<a user>:object_r:<type>:<the lowest level>".
    std::string object_context(uint32_t type) const;
    // The first of `preferred` that names a type with a valid domain context, else the first
    // domain with one.
    std::string some_domain_context(std::initializer_list<std::string_view> preferred) const;

    // Users that have at least one role other than object_r.
    std::vector<std::string> login_users() const;
    std::vector<std::string> boolean_names() const;
    std::vector<int> boolean_values() const { return ss::get_bools(st_); }
    uint32_t boolean_value(std::string_view name) const { return ss::bool_value(st_, name); }
    const ss::PolicyState &state() const { return st_; }

  private:
    std::string context_string(const ss::Context &c) const;
    const ss::PolicyState &st_;
    std::vector<uint32_t> domains_, objects_;
};

}  // namespace locksim
