#include "ss/policy_info.h"

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

}  // namespace

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
