#include "workloads/policy_facts.h"

#include <algorithm>

#include "ss/context_string.h"

namespace locksim {

namespace {

std::vector<uint32_t> attribute_members(const ss::PolicyBase &p, std::string_view attr) {
    std::vector<uint32_t> out;
    const ss::TypeDatum *a = p.types.find(attr);
    if (!a || !a->attribute || a->value == 0 || a->value > p.attr_type_map.size()) return out;
    for (uint32_t bit : p.attr_type_map[a->value - 1].bits()) {
        const ss::TypeDatum *t = p.types.by_value(bit + 1);
        if (t && !t->attribute) out.push_back(bit + 1);
    }
    return out;
}

}  // namespace

PolicyFacts::PolicyFacts(const ss::PolicyState &st) : st_(st) {
    const ss::PolicyBase &p = st.p();
    domains_ = attribute_members(p, "domain");
    objects_ = attribute_members(p, "file_type");
    if (domains_.empty()) {
        for (const auto &role : p.roles.entries()) {
            if (role->value == ss::OBJECT_R_VAL) continue;
            for (uint32_t bit : role->types.bits()) {
                const ss::TypeDatum *t = p.types.by_value(bit + 1);
                if (t && !t->attribute) domains_.push_back(bit + 1);
            }
        }
        std::sort(domains_.begin(), domains_.end());
        domains_.erase(std::unique(domains_.begin(), domains_.end()), domains_.end());
    }
    if (objects_.empty()) {
        for (uint32_t v = 1; v <= p.types.nprim; ++v) {
            const ss::TypeDatum *t = p.types.by_value(v);
            if (t && !t->attribute) objects_.push_back(v);
        }
    }
    if (domains_.empty()) domains_ = objects_;
}

uint32_t PolicyFacts::class_value(std::string_view cls) const {
    const ss::ClassDatum *c = st_.p().classes.find(cls);
    return c ? c->value : 0;
}

uint32_t PolicyFacts::perms(std::string_view cls,
                            std::initializer_list<std::string_view> names) const {
    const ss::ClassDatum *c = st_.p().classes.find(cls);
    if (!c) return 0;
    uint32_t bits = 0;
    for (auto name : names) {
        const ss::PermDatum *perm = c->permissions.find(name);
        if (!perm && c->comdatum) perm = c->comdatum->permissions.find(name);
        if (perm) bits |= 1u << (perm->value - 1);
    }
    return bits;
}

PolicyFacts::Check PolicyFacts::check(std::string_view cls,
                                      std::initializer_list<std::string_view> names,
                                      size_t nth) const {
    if (uint32_t v = class_value(cls)) return {v, perms(cls, names)};
    const ss::PolicyBase &p = st_.p();
    // Classes with a permission to ask for (a class's nprim counts its common's too).
    std::vector<const ss::ClassDatum *> others;
    for (uint32_t v = 1; v <= p.classes.nprim; ++v)
        if (const ss::ClassDatum *c = p.classes.by_value(v);
            c && v != p.process_class && c->permissions.nprim > 0)
            others.push_back(c);
    if (others.empty()) return {};
    const ss::ClassDatum *c = others[nth % others.size()];
    const auto n = std::min<size_t>({names.size(), c->permissions.nprim, 32});
    const uint32_t av = n == 32 ? 0xffffffffu : (1u << n) - 1;
    return {c->value, av};
}

std::string PolicyFacts::context_string(const ss::Context &c) const {
    if (!ss::policydb_context_isvalid(st_.p(), c)) return {};
    return ss::context_to_string(st_.p(), c);
}

std::string PolicyFacts::domain_context(uint32_t type) const {
    const ss::PolicyBase &p = st_.p();
    for (const auto &role : p.roles.entries()) {
        if (role->value == ss::OBJECT_R_VAL || !role->types.get_bit(type - 1)) continue;
        for (const auto &user : p.users.entries()) {
            if (!user->roles.get_bit(role->value - 1)) continue;
            ss::Context c;
            c.user = user->value;
            c.role = role->value;
            c.type = type;
            if (p.mls) c.range = user->range;
            std::string s = context_string(c);
            if (!s.empty()) return s;
        }
    }
    return {};
}

std::string PolicyFacts::domain_context_with_categories(uint32_t type, uint32_t categories,
                                                        uint32_t *carried) const {
    const ss::PolicyBase &p = st_.p();
    std::string base = domain_context(type);
    if (carried) *carried = 0;
    if (base.empty() || !p.mls || categories == 0) return base;
    ss::Context c;
    if (ss::context_parse(p, base, c) != 0) return base;
    // Every other category the user's high level allows, up to `categories` of them: a long
    // string, since alternate categories cannot be written as a c0.cN range.
    ss::Ebitmap cats;
    uint32_t n = 0, i = 0;
    for (uint32_t bit : c.range.level[1].cat.bits()) {
        if (n == categories) break;
        if (i++ % 2 == 0) {
            cats.set_bit(bit, true);
            ++n;
        }
    }
    c.range.level[0].cat = cats;
    std::string s = context_string(c);
    if (s.empty()) return base;
    if (carried) *carried = n;
    return s;
}

uint64_t PolicyFacts::CategoryPairs::count() const {
    const uint64_t m = names.size();
    return m < 2 ? 0 : m * (m - 1) / 2;
}

std::string PolicyFacts::CategoryPairs::context(uint64_t i) const {
    for (size_t a = 0; a + 1 < names.size(); ++a) {
        const uint64_t with_a = names.size() - 1 - a;
        if (i < with_a) return head + ":" + names[a] + "," + names[a + 1 + i] + tail;
        i -= with_a;
    }
    return {};
}

PolicyFacts::CategoryPairs PolicyFacts::category_pairs(const std::string &base) const {
    const ss::PolicyBase &p = st_.p();
    CategoryPairs out;
    ss::Context c;
    if (!p.mls || ss::context_parse(p, base, c) != 0) return out;
    for (uint32_t bit : c.range.level[1].cat.bits())
        out.names.emplace_back(p.cats.name_of(bit + 1));
    // The low level without categories, below a high level with them: "head-tail".
    c.range.level[0].cat = ss::Ebitmap();
    const std::string whole = context_string(c);
    const size_t dash = whole.rfind('-');
    if (whole.empty() || dash == std::string::npos || out.names.size() < 2) return {};
    out.head = whole.substr(0, dash);
    out.tail = whole.substr(dash);
    return out;
}

PolicyFacts::CategoryPairs PolicyFacts::container_pairs() const {
    return category_pairs(some_domain_context({"svirt_t", "container_t", "unconfined_t"}));
}

std::string PolicyFacts::object_context(uint32_t type) const {
    const ss::PolicyBase &p = st_.p();
    for (const auto &user : p.users.entries()) {
        ss::Context c;
        c.user = user->value;
        c.role = ss::OBJECT_R_VAL;
        c.type = type;
        if (p.mls) {
            c.range.level[0] = user->range.level[0];
            c.range.level[1] = user->range.level[0];
        }
        std::string s = context_string(c);
        if (!s.empty()) return s;
    }
    return {};
}

std::string PolicyFacts::some_domain_context(
    std::initializer_list<std::string_view> preferred) const {
    for (auto name : preferred) {
        const ss::TypeDatum *t = st_.p().types.find(name);
        if (!t || t->attribute) continue;
        std::string s = domain_context(t->value);
        if (!s.empty()) return s;
    }
    for (uint32_t d : domains_) {
        std::string s = domain_context(d);
        if (!s.empty()) return s;
    }
    return {};
}

std::vector<std::string> PolicyFacts::login_users() const {
    std::vector<std::string> out;
    for (const auto &user : st_.p().users.entries()) {
        for (uint32_t bit : user->roles.bits()) {
            if (bit + 1 != ss::OBJECT_R_VAL) {
                out.push_back(user->name);
                break;
            }
        }
    }
    return out;
}

std::vector<std::string> PolicyFacts::boolean_names() const {
    std::vector<std::string> out;
    const auto &bools = st_.db.cond->bools;  // file order
    for (uint32_t v = 1; v <= bools.nprim; ++v) {
        std::string_view name = bools.name_of(v);
        if (!name.empty()) out.emplace_back(name);
    }
    return out;
}

}  // namespace locksim
