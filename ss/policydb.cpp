#include "ss/policydb.h"

#include <fmt/format.h>

#include "util/error.h"

namespace locksim::ss {

uint32_t policydb_sym_num(uint32_t version) {
    if (version >= POLICYDB_VERSION_MLS) return SYM_NUM;
    return version >= POLICYDB_VERSION_BOOL ? SYM_NUM - 2 : SYM_NUM - 3;
}

uint32_t policydb_ocon_num(uint32_t version) {
    if (version >= POLICYDB_VERSION_INFINIBAND) return OCON_NUM;
    return version >= POLICYDB_VERSION_IPV6 ? OCON_NUM - 2 : OCON_NUM - 3;
}

// --- rule tables ----------------------------------------------------------------------------

uint32_t PolicyBase::filename_trans_search(uint32_t stype, uint32_t ttype, uint32_t tclass,
                                           std::string_view name) const {
    auto *ft = filename_trans_index.search(FilenameTransKey{ttype, tclass, name});
    if (!ft) return 0;
    for (const FilenameTransDatum &d : (*ft)->datums)
        if (d.stypes.get_bit(stype - 1)) return d.otype;
    return 0;
}

bool PolicyBase::filename_trans_add(uint32_t stype, uint32_t ttype, uint32_t tclass,
                                    std::string_view name, uint32_t otype) {
    FilenameTrans **found = filename_trans_index.search(FilenameTransKey{ttype, tclass, name});
    FilenameTrans *ft;
    if (found) {
        ft = *found;
    } else {
        ft = &filename_trans.emplace_back();
        ft->ttype = ttype;
        ft->tclass = tclass;
        ft->name = std::string(name);
        filename_trans_index.insert(FilenameTransKey{ttype, tclass, ft->name}, ft);
    }
    FilenameTransDatum *target = nullptr;
    for (FilenameTransDatum &d : ft->datums) {
        if (d.stypes.get_bit(stype - 1))
            return false;  // this source already has a rule for the key
        if (d.otype == otype) target = &d;
    }
    if (!target) {
        target = &ft->datums.emplace_back();
        target->otype = otype;
    }
    target->stypes.set_bit(stype - 1, true);
    ++filename_trans_rules;
    return true;
}

bool PolicyBase::filename_trans_add_key(FilenameTrans ft) {
    if (filename_trans_index.search(FilenameTransKey{ft.ttype, ft.tclass, ft.name})) return false;
    for (const FilenameTransDatum &d : ft.datums)
        filename_trans_rules += d.stypes.cardinality();
    FilenameTrans *p = &filename_trans.emplace_back(std::move(ft));
    filename_trans_index.insert(FilenameTransKey{p->ttype, p->tclass, p->name}, p);
    return true;
}

bool PolicyBase::role_trans_add(const RoleTrans &rt) {
    if (!role_tr_index.insert(rt.key, rt.new_role)) return false;
    role_tr.push_back(rt);
    return true;
}

bool PolicyBase::range_trans_add(RangeTrans rt) {
    if (range_tr_index.search(rt.key)) return false;
    RangeTrans *p = &range_tr.emplace_back(std::move(rt));
    range_tr_index.insert(p->key, &p->range);
    return true;
}

void PolicyBase::index() {
    auto check = [](bool ok, const char *table) {
        if (!ok)
            throw UserError(
                fmt::format("policy: {}: a value is 0 or above the table's count", table));
    };
    check(commons.index(), "commons");
    check(classes.index(), "classes");
    check(roles.index(), "roles");
    check(types.index(), "types");
    check(users.index(), "users");
    check(levels.index(), "sensitivities");
    check(cats.index(), "categories");
    for (const auto &c : classes.entries())
        check(c->permissions.index(), "class permissions");
    for (const auto &c : commons.entries())
        check(c->permissions.index(), "common permissions");
    process_class = 0;
    process_trans_perms = 0;
    if (const ClassDatum *proc = classes.find("process")) {
        process_class = proc->value;
        auto perm_bit = [&](std::string_view name) -> uint32_t {
            const PermDatum *pd = proc->permissions.find(name);
            if (!pd && proc->comdatum) pd = proc->comdatum->permissions.find(name);
            return pd ? uint32_t{1} << (pd->value - 1) : 0;
        };
        process_trans_perms = perm_bit("transition") | perm_bit("dyntransition");
    }
}

// --- validity -------------------------------------------------------------------------------

bool mls_level_isvalid(const PolicyBase &p, const MlsLevel &l, LevelCheck how) {
    const LevelDatum *lev = p.levels.by_value(l.sens);
    if (!lev) return false;
    uint32_t ncats = p.cats.nprim;
    return how == LevelCheck::Contains ? ebitmap_contains(lev->level.cat, l.cat, ncats)
                                       : ebitmap_contains_bitwise(lev->level.cat, l.cat, ncats);
}

bool mls_range_isvalid(const PolicyBase &p, const MlsRange &r, LevelCheck how) {
    return mls_level_isvalid(p, r.level[0], how) && mls_level_isvalid(p, r.level[1], how) &&
           mls_level_dom(r.level[1], r.level[0]);
}

bool policydb_context_isvalid(const PolicyBase &p, const Context &c, LevelCheck how) {
    const RoleDatum *role = p.roles.by_value(c.role);
    const UserDatum *user = p.users.by_value(c.user);
    if (!role || !user || c.type == 0 || c.type > p.types.nprim) return false;
    if (c.role != OBJECT_R_VAL) {
        if (!role->types.get_bit(c.type - 1)) return false;
        if (!user->roles.get_bit(c.role - 1)) return false;
    }
    if (!p.mls) return true;
    if (!mls_range_isvalid(p, c.range, how)) return false;
    if (c.role == OBJECT_R_VAL) return true;
    return mls_range_contains(user->range, c.range);
}

}  // namespace locksim::ss
