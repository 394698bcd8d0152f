#include "ss/policy_mem.h"

#include <bit>

namespace locksim::ss {

namespace {

// kmem_cache objects (v5.10, x86-64).
constexpr int64_t kAvtabNode = 24;
constexpr int64_t kAvtabXperms = 40;
constexpr int64_t kEbitmapNode = 64;
constexpr int64_t kHashtabNode = 24;
constexpr size_t kPointer = 8;
// struct sizes (v5.10, x86-64), allocated with kmalloc.
constexpr size_t kPermDatum = 4, kCommonDatum = 32, kClassDatum = 72, kRoleDatum = 40,
                 kTypeDatum = 12, kUserDatum = 96, kLevelDatum = 16, kMlsLevel = 24, kCatDatum = 8,
                 kCondBoolDatum = 8, kConstraintNode = 24, kConstraintExpr = 48, kTypeSet = 40,
                 kRoleTransKey = 12, kRoleTransDatum = 4, kRoleAllow = 16, kFilenameTransKey = 16,
                 kFilenameTransDatum = 32, kRangeTransKey = 12, kMlsRange = 48, kOcontext = 200,
                 kGenfs = 24, kCondNode = 56, kCondExprNode = 8, kSelinuxPolicy = 620;

int64_t array_of(size_t n, size_t size) {
    return kmalloc_bytes(n * size);
}
int64_t string_bytes(const std::string &s) {
    return kmalloc_bytes(s.size() + 1);
}
int64_t ebitmap_bytes(const Ebitmap &e) {
    return static_cast<int64_t>(e.node_count()) * kEbitmapNode;
}
int64_t range_bytes(const MlsRange &r) {
    return ebitmap_bytes(r.level[0].cat) + ebitmap_bytes(r.level[1].cat);
}

// The hash table's slot array and, per entry, its node, its name and its datum of
// `datum_size` plus what `extra` says the datum points to.
template <class Datum, class Extra>
int64_t symtab_bytes(const Symtab<Datum> &s, size_t datum_size, Extra &&extra) {
    int64_t b = array_of(s.table().size(), kPointer);
    for (const auto &d : s.entries())
        b += kHashtabNode + string_bytes(d->name) + kmalloc_bytes(datum_size) + extra(*d);
    return b;
}
template <class Datum>
int64_t symtab_bytes(const Symtab<Datum> &s, size_t datum_size) {
    return symtab_bytes(s, datum_size, [](const Datum &) { return int64_t{0}; });
}

int64_t constraints_bytes(const std::vector<Constraint> &list) {
    int64_t b = 0;
    for (const Constraint &c : list) {
        b += kmalloc_bytes(kConstraintNode);
        for (const ConstraintExpr &e : c.expr) {
            b += kmalloc_bytes(kConstraintExpr) + ebitmap_bytes(e.names);
            if (e.type_names)
                b += kmalloc_bytes(kTypeSet) + ebitmap_bytes(e.type_names->types) +
                     ebitmap_bytes(e.type_names->negset);
        }
    }
    return b;
}

int64_t avtab_bytes(const Avtab &a) {
    int64_t b = array_of(a.nslot(), kPointer) + static_cast<int64_t>(a.nel()) * kAvtabNode;
    a.for_each([&](const AvtabNode &n) {
        if (n.key.specified & AVTAB_XPERMS) b += kAvtabXperms;
    });
    return b;
}

int64_t ocontext_bytes(const Ocontext &c) {
    int64_t b = kmalloc_bytes(kOcontext) + range_bytes(c.context[0].range) +
                range_bytes(c.context[1].range);
    if (!c.name.empty()) b += string_bytes(c.name);
    return b;
}

// What the conditional state's copy allocates besides the names (cond_policydb_dup), and the
// names with their val_to_name array (which policydb_read allocates and the copy shares).
void cond_kmem(const CondPolicy &c, PolicyKmem *k) {
    const int64_t shared = array_of(c.bools.nprim, kPointer);  // sym_val_to_name[SYM_BOOLS]
    int64_t names = 0;
    for (const auto &d : c.bools.entries())
        names += string_bytes(d->name);
    int64_t dup =
        array_of(c.bools.table().size(), kPointer) +
        static_cast<int64_t>(c.bools.nel()) * (kHashtabNode + kmalloc_bytes(kCondBoolDatum)) +
        array_of(c.bools.nprim, kPointer);  // bool_val_to_struct
    dup += avtab_bytes(c.te_cond_avtab);
    dup += array_of(c.cond_list.size(), kCondNode);
    for (const CondNode &n : c.cond_list)
        dup += array_of(n.expr.size(), kCondExprNode) + array_of(n.true_list.size(), kPointer) +
               array_of(n.false_list.size(), kPointer);
    k->cond_dup = dup;
    k->cond = dup + names + shared;
}

int64_t base_kmem(const PolicyBase &p) {
    int64_t b = 0;
    auto none = [](const auto &) { return int64_t{0}; };
    // The symbol tables, with their val_to_name arrays (the booleans' are in cond_kmem).
    b += symtab_bytes(p.commons, kCommonDatum,
                      [](const CommonDatum &d) { return symtab_bytes(d.permissions, kPermDatum); });
    b += symtab_bytes(p.classes, kClassDatum, [](const ClassDatum &d) {
        return (d.comkey.empty() ? 0 : string_bytes(d.comkey)) +
               symtab_bytes(d.permissions, kPermDatum) + constraints_bytes(d.constraints) +
               constraints_bytes(d.validatetrans);
    });
    b += symtab_bytes(p.roles, kRoleDatum, [](const RoleDatum &d) {
        return ebitmap_bytes(d.dominates) + ebitmap_bytes(d.types);
    });
    b += symtab_bytes(p.types, kTypeDatum, none);
    b += symtab_bytes(p.users, kUserDatum, [](const UserDatum &d) {
        return ebitmap_bytes(d.roles) + range_bytes(d.range) + ebitmap_bytes(d.dfltlevel.cat);
    });
    b += symtab_bytes(p.levels, kLevelDatum, [](const LevelDatum &d) {
        return kmalloc_bytes(kMlsLevel) + ebitmap_bytes(d.level.cat);
    });
    b += symtab_bytes(p.cats, kCatDatum, none);
    for (uint32_t n : {p.commons.nprim, p.classes.nprim, p.roles.nprim, p.types.nprim,
                       p.users.nprim, p.levels.nprim, p.cats.nprim})
        b += array_of(n, kPointer);  // sym_val_to_name
    for (uint32_t n : {p.classes.nprim, p.roles.nprim, p.users.nprim, p.types.nprim})
        b += array_of(n, kPointer);  // *_val_to_struct
    b += avtab_bytes(p.te_avtab);
    // Role transitions (a hash table since 5.8) and role allows (a list).
    b += array_of(p.role_tr_index.size(), kPointer) +
         static_cast<int64_t>(p.role_tr.size()) *
             (kHashtabNode + kmalloc_bytes(kRoleTransKey) + kmalloc_bytes(kRoleTransDatum));
    b += static_cast<int64_t>(p.role_allow.size()) * kmalloc_bytes(kRoleAllow);
    // Filename transitions: per key its node, key and name; per new type a datum.
    b += array_of(p.filename_trans_index.size(), kPointer);
    for (const FilenameTrans &ft : p.filename_trans) {
        b += kHashtabNode + kmalloc_bytes(kFilenameTransKey) + string_bytes(ft.name);
        for (const FilenameTransDatum &d : ft.datums)
            b += kmalloc_bytes(kFilenameTransDatum) + ebitmap_bytes(d.stypes);
    }
    b += array_of(p.range_tr_index.size(), kPointer);
    for (const RangeTrans &rt : p.range_tr)
        b += kHashtabNode + kmalloc_bytes(kRangeTransKey) + kmalloc_bytes(kMlsRange) +
             range_bytes(rt.range);
    for (const auto &list : p.ocontexts)
        for (const Ocontext &c : list)
            b += ocontext_bytes(c);
    for (const Genfs &g : p.genfs) {
        b += kmalloc_bytes(kGenfs) + string_bytes(g.fstype);
        for (const GenfsEntry &e : g.entries)
            b += kmalloc_bytes(kOcontext) + string_bytes(e.path) + range_bytes(e.context.range);
    }
    // type_attr_map_array: one struct ebitmap (16 bytes) per type, and its nodes.
    b += array_of(p.type_attr_map.size(), 16);
    for (const Ebitmap &e : p.type_attr_map)
        b += ebitmap_bytes(e);
    b += ebitmap_bytes(p.policycaps) + ebitmap_bytes(p.permissive_map);
    return b;
}

}  // namespace

int64_t kmalloc_bytes(size_t n) {
    if (n == 0) return 0;  // ZERO_SIZE_PTR
    for (size_t c : {8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192})
        if (n <= c) return static_cast<int64_t>(c);
    return static_cast<int64_t>(std::bit_ceil((n + 4095) / 4096) * 4096);  // a page block
}

PolicyKmem policy_kmem(const Policydb &p) {
    PolicyKmem k;
    k.policy_struct = kmalloc_bytes(kSelinuxPolicy);
    k.base = base_kmem(p.b());
    cond_kmem(*p.cond, &k);
    return k;
}

}  // namespace locksim::ss
