#include "ss/policy_info.h"

#include <algorithm>
#include <stdexcept>

namespace locksim::ss {

uint64_t PolicyInfo::at(std::string_view key) const {
    for (const auto &[k, v] : counts)
        if (k == key) return v;
    throw std::out_of_range(std::string(key));
}

namespace {

struct KindName {
    uint16_t kind;
    const char *name;
};
constexpr KindName kKinds[] = {
    {AVTAB_ALLOWED, "allow"},
    {AVTAB_AUDITALLOW, "auditallow"},
    {AVTAB_AUDITDENY, "dontaudit"},
    {AVTAB_TRANSITION, "type_transition"},
    {AVTAB_MEMBER, "type_member"},
    {AVTAB_CHANGE, "type_change"},
    {AVTAB_XPERMS_ALLOWED, "allowxperm"},
    {AVTAB_XPERMS_AUDITALLOW, "auditallowxperm"},
    {AVTAB_XPERMS_DONTAUDIT, "dontauditxperm"},
};

void avtab_counts(const Avtab &t, const std::string &prefix,
                  std::vector<std::pair<std::string, uint64_t>> &out) {
    uint64_t by_kind[std::size(kKinds)] = {};
    t.for_each([&](const AvtabNode &n) {
        for (size_t i = 0; i < std::size(kKinds); ++i)
            if (n.key.specified & kKinds[i].kind) ++by_kind[i];
    });
    out.emplace_back(prefix + "entries", t.nel());
    for (size_t i = 0; i < std::size(kKinds); ++i)
        out.emplace_back(prefix + kKinds[i].name, by_kind[i]);
}

FanOutStats fan_out_stats(std::vector<uint32_t> sizes) {
    FanOutStats s;
    s.types = sizes.size();
    if (sizes.empty()) return s;
    std::sort(sizes.begin(), sizes.end());
    uint64_t sum = 0;
    for (uint32_t k : sizes)
        sum += k;
    s.mean = static_cast<double>(sum) / static_cast<double>(sizes.size());
    auto rank = [&](uint32_t percent) {
        size_t r = (sizes.size() * percent + 99) / 100;  // ceil(n * q)
        return sizes[std::max<size_t>(r, 1) - 1];
    };
    s.p50 = rank(50);
    s.p90 = rank(90);
    s.p99 = rank(99);
    s.max = sizes.back();
    s.tail = static_cast<uint64_t>(sizes.end() -
                                   std::lower_bound(sizes.begin(), sizes.end(), (s.max + 1) / 2));
    return s;
}

}  // namespace

FanOut policy_fan_out(const Policydb &db) {
    const PolicyBase &p = *db.base;
    FanOut f;
    std::vector<bool> is_domain(p.type_attr_map.size());
    auto mark = [&](const Ebitmap &types) {
        for (uint32_t b : types.bits())
            if (b < is_domain.size()) is_domain[b] = true;
    };
    const TypeDatum *domain = p.types.find("domain");
    if (domain && domain->primary && domain->attribute && domain->value <= p.attr_type_map.size()) {
        f.domains_by = "attribute domain";
        mark(p.attr_type_map[domain->value - 1]);
    } else {
        f.domains_by = "roles";
        for (const auto &r : p.roles.entries())
            if (r->value != OBJECT_R_VAL) mark(r->types);
    }
    std::vector<uint32_t> dsizes, osizes;
    for (const TypeDatum *t : p.types.val_to_struct()) {
        if (!t || t->attribute || t->value > p.type_attr_map.size()) continue;
        uint32_t k = p.type_attr_map[t->value - 1].cardinality();
        (is_domain[t->value - 1] ? dsizes : osizes).push_back(k);
    }
    f.domains = fan_out_stats(std::move(dsizes));
    f.others = fan_out_stats(std::move(osizes));
    return f;
}

PolicyInfo policy_info(const Policydb &db) {
    const PolicyBase &p = *db.base;
    const CondPolicy &c = *db.cond;
    PolicyInfo info;
    info.version = p.policyvers;
    info.mls = p.mls;
    info.handle_unknown = p.handle_unknown & ALLOW_UNKNOWN    ? "allow"
                          : p.handle_unknown & REJECT_UNKNOWN ? "reject"
                                                              : "deny";
    auto &out = info.counts;

    uint64_t types = 0, attributes = 0, aliases = 0, typebounds = 0;
    for (const auto &t : p.types.entries()) {
        if (!t->primary)
            ++aliases;
        else if (t->attribute)
            ++attributes;
        else
            ++types;
        typebounds += t->primary && t->bounds;
    }
    uint64_t permissions = 0, constraints = 0, validatetrans = 0;
    for (const auto &cl : p.classes.entries()) {
        permissions += cl->permissions.nel();
        constraints += cl->constraints.size();
        validatetrans += cl->validatetrans.size();
    }
    for (const auto &cm : p.commons.entries())
        permissions += cm->permissions.nel();
    uint64_t sens = 0, sens_alias = 0, cats = 0, cat_alias = 0;
    for (const auto &l : p.levels.entries())
        (l->isalias ? sens_alias : sens)++;
    for (const auto &k : p.cats.entries())
        (k->isalias ? cat_alias : cats)++;
    uint64_t genfs_entries = 0;
    for (const Genfs &g : p.genfs)
        genfs_entries += g.entries.size();

    out.emplace_back("types", types);
    out.emplace_back("attributes", attributes);
    out.emplace_back("aliases", aliases);
    out.emplace_back("typebounds", typebounds);
    out.emplace_back("permissive_types", p.permissive_map.cardinality());
    out.emplace_back("roles", p.roles.nprim);
    out.emplace_back("users", p.users.nprim);
    out.emplace_back("classes", p.classes.nprim);
    out.emplace_back("commons", p.commons.nprim);
    out.emplace_back("permissions", permissions);
    out.emplace_back("booleans", c.bools.nprim);
    out.emplace_back("sensitivities", sens);
    out.emplace_back("sensitivity_aliases", sens_alias);
    out.emplace_back("categories", cats);
    out.emplace_back("category_aliases", cat_alias);
    out.emplace_back("policy_capabilities", p.policycaps.cardinality());
    avtab_counts(p.te_avtab, "avtab_", out);
    avtab_counts(c.te_cond_avtab, "cond_avtab_", out);
    out.emplace_back("cond_expressions", c.cond_list.size());
    out.emplace_back("constraints", constraints);
    out.emplace_back("validatetrans", validatetrans);
    out.emplace_back("role_allow", p.role_allow.size());
    out.emplace_back("role_trans", p.role_tr.size());
    out.emplace_back("range_trans", p.range_tr.size());
    out.emplace_back("filename_trans", p.filename_trans_rules);
    out.emplace_back("filename_trans_keys", p.filename_trans.size());
    static const char *ocon_keys[OCON_NUM] = {"ocon_isid",  "ocon_fs",     "ocon_port",
                                              "ocon_netif", "ocon_node",   "ocon_fsuse",
                                              "ocon_node6", "ocon_ibpkey", "ocon_ibendport"};
    for (uint32_t i = 0; i < OCON_NUM; ++i)
        out.emplace_back(ocon_keys[i], p.ocontexts[i].size());
    out.emplace_back("genfs_fstypes", p.genfs.size());
    out.emplace_back("genfs_entries", genfs_entries);
    return info;
}

}  // namespace locksim::ss
