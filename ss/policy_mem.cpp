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

// The walk: the bytes of each object go to the area it belongs to, and its free to the
// destroy's current stretch (and to the duplicate's destroy for the conditional state that
// cond_policydb_dup copies).
class Walk {
  public:
    explicit Walk(PolicyKmem *k) : k_(k) {}
    enum class Area { Base, Cond, CondDup };  // Cond: the read's only; CondDup: the copy's too
    void area(Area a) { area_ = a; }

    void kmalloc(size_t n) {
        if (n == 0) return;  // ZERO_SIZE_PTR: nothing allocated, nothing freed
        add(kmalloc_bytes(n), {.kfree = 1});
    }
    void array_of(size_t n, size_t size) { kmalloc(n * size); }
    void string(const std::string &s) { kmalloc(s.size() + 1); }
    void cache(int64_t size, int64_t n = 1) {
        if (n) add(size * n, {.cache_free = n});
    }
    void ebitmap(const Ebitmap &e) { cache(kEbitmapNode, static_cast<int64_t>(e.node_count())); }
    void range(const MlsRange &r) {
        ebitmap(r.level[0].cat);
        ebitmap(r.level[1].cat);
    }
    // A cond_resched() of policydb_destroy: the stretch so far is one charge.
    void resched() {
        if (stretch_.calls()) k_->destroy.push_back(stretch_);
        stretch_ = {};
    }
    // Per entry of a list that reschedules at every entry: one point per stretch of entries.
    void entry_resched(size_t i) {
        if ((static_cast<int64_t>(i) + 1) % kDestroyEntriesPerStretch == 0) resched();
    }

  private:
    void add(int64_t bytes, FreeCalls f) {
        stretch_ += f;
        switch (area_) {
            case Area::Base:
                k_->base += bytes;
                break;
            case Area::Cond:
                k_->cond += bytes;
                break;
            case Area::CondDup:
                k_->cond += bytes;
                k_->cond_dup += bytes;
                k_->destroy_dup += f;
                break;
        }
    }
    PolicyKmem *k_;
    Area area_ = Area::Base;
    FreeCalls stretch_;
};

// hashtab_map(destroy) + hashtab_destroy: per entry its node, its name and its datum of
// `datum_size` plus what `extra` walks of what the datum points to; then the slot array.
template <class Datum, class Extra>
void symtab(Walk &w, const Symtab<Datum> &s, size_t datum_size, Extra &&extra) {
    for (const auto &d : s.entries()) {
        w.string(d->name);
        extra(*d);
        w.kmalloc(datum_size);
        w.cache(kHashtabNode);
    }
    w.array_of(s.table().size(), kPointer);
}
template <class Datum>
void symtab(Walk &w, const Symtab<Datum> &s, size_t datum_size) {
    symtab(w, s, datum_size, [](const Datum &) {});
}

void constraints(Walk &w, const std::vector<Constraint> &list) {
    for (const Constraint &c : list) {
        for (const ConstraintExpr &e : c.expr) {
            w.ebitmap(e.names);
            if (e.type_names) {
                w.ebitmap(e.type_names->types);
                w.ebitmap(e.type_names->negset);
                w.kmalloc(kTypeSet);
            }
            w.kmalloc(kConstraintExpr);
        }
        w.kmalloc(kConstraintNode);
    }
}

void avtab(Walk &w, const Avtab &a) {
    int64_t xperms = 0;
    a.for_each([&](const AvtabNode &n) {
        if (n.key.specified & AVTAB_XPERMS) ++xperms;
    });
    w.cache(kAvtabXperms, xperms);
    w.cache(kAvtabNode, static_cast<int64_t>(a.nel()));
    w.array_of(a.nslot(), kPointer);
}

void ocontext(Walk &w, const Ocontext &c) {
    w.range(c.context[0].range);
    w.range(c.context[1].range);
    if (!c.name.empty()) w.string(c.name);
    w.kmalloc(kOcontext);
}

// cond_policydb_destroy: bool_val_to_struct, the conditional avtab, the cond_node array with
// each node's expression and lists (the part cond_policydb_dup copies).
void cond_policydb(Walk &w, const CondPolicy &c) {
    w.area(Walk::Area::CondDup);
    w.array_of(c.bools.nprim, kPointer);  // bool_val_to_struct
    avtab(w, c.te_cond_avtab);
    for (const CondNode &n : c.cond_list) {
        w.array_of(n.expr.size(), kCondExprNode);
        w.array_of(n.true_list.size(), kPointer);
        w.array_of(n.false_list.size(), kPointer);
    }
    w.array_of(c.cond_list.size(), kCondNode);
    w.area(Walk::Area::Base);
}

// The boolean symbol table: each name (the read's only: the duplicate shares it), each datum
// and node and the slots (the duplicate's too).
void bools(Walk &w, const Symtab<BoolDatum> &s) {
    for (const auto &d : s.entries()) {
        w.area(Walk::Area::Cond);
        w.string(d->name);
        w.area(Walk::Area::CondDup);
        w.kmalloc(kCondBoolDatum);
        w.cache(kHashtabNode);
    }
    w.area(Walk::Area::CondDup);
    w.array_of(s.table().size(), kPointer);
    w.area(Walk::Area::Base);
}

// policydb_destroy's order (v5.10), every object policydb_read allocated.
void policydb(Walk &w, const PolicyBase &p, const CondPolicy &c) {
    // The symbol tables (SYM_COMMONS .. SYM_CATS), a cond_resched before each.
    w.resched();
    symtab(w, p.commons, kCommonDatum,
           [&](const CommonDatum &d) { symtab(w, d.permissions, kPermDatum); });
    w.resched();
    symtab(w, p.classes, kClassDatum, [&](const ClassDatum &d) {
        symtab(w, d.permissions, kPermDatum);
        constraints(w, d.constraints);
        constraints(w, d.validatetrans);
        if (!d.comkey.empty()) w.string(d.comkey);
    });
    w.resched();
    symtab(w, p.roles, kRoleDatum, [&](const RoleDatum &d) {
        w.ebitmap(d.dominates);
        w.ebitmap(d.types);
    });
    w.resched();
    symtab(w, p.types, kTypeDatum);
    w.resched();
    symtab(w, p.users, kUserDatum, [&](const UserDatum &d) {
        w.ebitmap(d.roles);
        w.range(d.range);
        w.ebitmap(d.dfltlevel.cat);
    });
    w.resched();
    bools(w, c.bools);
    w.resched();
    symtab(w, p.levels, kLevelDatum, [&](const LevelDatum &d) {
        w.ebitmap(d.level.cat);
        w.kmalloc(kMlsLevel);
    });
    w.resched();
    symtab(w, p.cats, kCatDatum);
    // sym_val_to_name (the booleans' is the read's only), then the *_val_to_struct arrays.
    for (uint32_t n :
         {p.commons.nprim, p.classes.nprim, p.roles.nprim, p.types.nprim, p.users.nprim})
        w.array_of(n, kPointer);
    w.area(Walk::Area::Cond);
    w.array_of(c.bools.nprim, kPointer);
    w.area(Walk::Area::Base);
    for (uint32_t n : {p.levels.nprim, p.cats.nprim})
        w.array_of(n, kPointer);
    for (uint32_t n : {p.classes.nprim, p.roles.nprim, p.users.nprim, p.types.nprim})
        w.array_of(n, kPointer);
    avtab(w, p.te_avtab);
    for (const auto &list : p.ocontexts) {
        w.resched();
        for (const Ocontext &o : list)
            ocontext(w, o);
    }
    for (const Genfs &g : p.genfs) {
        w.resched();
        w.string(g.fstype);
        for (const GenfsEntry &e : g.entries) {
            w.range(e.context.range);
            w.string(e.path);
            w.kmalloc(kOcontext);
        }
        w.kmalloc(kGenfs);
    }
    cond_policydb(w, c);
    // Role transitions (a hash table since 5.8).
    for (size_t i = 0; i < p.role_tr.size(); ++i) {
        w.kmalloc(kRoleTransKey);
        w.kmalloc(kRoleTransDatum);
        w.cache(kHashtabNode);
    }
    w.array_of(p.role_tr_index.size(), kPointer);
    // Role allows (a list, a cond_resched before each).
    for (size_t i = 0; i < p.role_allow.size(); ++i) {
        w.kmalloc(kRoleAllow);
        w.entry_resched(i);
    }
    // Filename transitions: per key its name, key, datums (with their ebitmaps) and node.
    for (size_t i = 0; i < p.filename_trans.size(); ++i) {
        const FilenameTrans &ft = p.filename_trans[i];
        w.string(ft.name);
        w.kmalloc(kFilenameTransKey);
        for (const FilenameTransDatum &d : ft.datums) {
            w.ebitmap(d.stypes);
            w.kmalloc(kFilenameTransDatum);
        }
        w.cache(kHashtabNode);
        w.entry_resched(i);
    }
    w.array_of(p.filename_trans_index.size(), kPointer);
    for (size_t i = 0; i < p.range_tr.size(); ++i) {
        w.kmalloc(kRangeTransKey);
        w.range(p.range_tr[i].range);
        w.kmalloc(kMlsRange);
        w.cache(kHashtabNode);
        w.entry_resched(i);
    }
    w.array_of(p.range_tr_index.size(), kPointer);
    // type_attr_map_array: one struct ebitmap (16 bytes) per type, and its nodes.
    for (const Ebitmap &e : p.type_attr_map)
        w.ebitmap(e);
    w.array_of(p.type_attr_map.size(), 16);
    w.ebitmap(p.policycaps);
    w.ebitmap(p.permissive_map);
    w.resched();
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
    Walk w(&k);
    policydb(w, p.b(), *p.cond);
    return k;
}

FreeCalls sidtab_destroy_calls(const Sidtab &t) {
    FreeCalls f;
    int64_t dynamic = 0;
    t.for_each([&](const Sidtab::Entry &e) {
        if (e.context.is_invalid()) ++f.kfree;
        for (const MlsLevel &l : e.context.range.level)
            f.cache_free += static_cast<int64_t>(l.cat.node_count());
        if (e.sid > kSecInitSidNum) ++dynamic;
    });
    if (t.era() == SidtabEra::Legacy) {
        f.kfree += t.count() + 1;  // the chain nodes, the bucket array
        return f;
    }
    constexpr int64_t kInnerEntries = 4096 / kPointer;
    int64_t pages = (dynamic + kSidtabLeafEntries - 1) / kSidtabLeafEntries;
    for (int64_t level = pages; level > 1;) {  // the inner pages above the leaves
        level = (level + kInnerEntries - 1) / kInnerEntries;
        pages += level;
    }
    f.kfree += pages;
    f.kfree += t.cache_used_unlocked();  // the cached strings (none before 5.6)
    return f;
}

FreeCalls PolicyKmem::destroy_total() const {
    FreeCalls t;
    for (const FreeCalls &f : destroy)
        t += f;
    return t;
}

}  // namespace locksim::ss
