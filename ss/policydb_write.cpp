// policydb_write: the binary policy writer, in the same section order as the reader. Writing
// an older version leaves out what that version cannot express, as libsepol does: permissive
// types below 23, filename transitions below 25, role transitions for classes other than
// process below 26, object defaults below 27/28, constraint type names below 29, Infiniband
// contexts below 31, and the glblub default below 32; extended permission rules cannot be
// written below 30 and are refused.
#include <fmt/format.h>

#include <fstream>

#include "ss/binary_io.h"
#include "ss/policydb.h"

namespace locksim::ss {
namespace {

class PolicyWriter {
  public:
    PolicyWriter(const Policydb &db, uint32_t version)
        : p_(*db.base),
          c_(*db.cond),
          v_(version ? version : db.base->policyvers),
          w_(1 << 20, db.base->lines) {
        if (v_ < kPolicyVersionWriteMin || v_ > kPolicyVersionWriteMax)
            throw UserError(fmt::format("cannot write policy version {} (supported: {}..{})", v_,
                                        kPolicyVersionWriteMin, kPolicyVersionWriteMax));
    }

    uint32_t lines() const { return w_.lines(); }
    std::vector<uint8_t> write() {
        header();
        symtabs();
        avtab(p_.te_avtab);
        cond_list();
        role_trans();
        role_allow();
        filename_trans();
        ocontexts();
        genfs();
        range_trans();
        type_attr_map();
        return w_.take();
    }

  private:
    // Type values without a datum, in order.
    std::vector<uint32_t> nameless_types() const {
        std::vector<uint32_t> out;
        for (uint32_t v = 1; v <= p_.types.nprim; ++v)
            if (!p_.types.by_value(v)) out.push_back(v);
        return out;
    }

    // Each type's attributes; a value named here as an attribute (nameless_types) holds itself,
    // as every attribute does in the maps checkpolicy writes.
    void type_attr_map() {
        const Ebitmap none;
        for (uint32_t i = 0; i < p_.types.nprim; ++i) {
            const Ebitmap &m = i < p_.type_attr_map.size() ? p_.type_attr_map[i] : none;
            if (p_.types.by_value(i + 1)) {
                ebitmap_write(w_, m);
                continue;
            }
            Ebitmap with_self = m;
            with_self.set_bit(i, true);
            ebitmap_write(w_, with_self);
        }
    }

    void str(std::string_view s) {
        w_.u32(static_cast<uint32_t>(s.size()));
        w_.bytes(s);
    }

    void header() {
        w_.u32(kPolicydbMagic);
        str(kPolicydbString);
        w_.u32(v_);
        w_.u32((p_.mls ? POLICYDB_CONFIG_MLS : 0) |
               (p_.handle_unknown & POLICYDB_CONFIG_UNKNOWN_MASK));
        w_.u32(policydb_sym_num(v_));
        w_.u32(policydb_ocon_num(v_));
        if (v_ >= POLICYDB_VERSION_POLCAP) ebitmap_write(w_, p_.policycaps);
        if (v_ >= POLICYDB_VERSION_PERMISSIVE) ebitmap_write(w_, p_.permissive_map);
    }

    void perms(const Symtab<PermDatum> &perms) {
        for (const auto &pd : perms.entries()) {
            w_.u32(static_cast<uint32_t>(pd->name.size()));
            w_.u32(pd->value);
            w_.bytes(pd->name);
        }
    }

    void constraints(const std::vector<Constraint> &cons) {
        for (const Constraint &c : cons) {
            w_.u32(c.permissions);
            w_.u32(static_cast<uint32_t>(c.expr.size()));
            for (const ConstraintExpr &e : c.expr) {
                w_.u32(e.expr_type);
                w_.u32(e.attr);
                w_.u32(e.op);
                if (e.expr_type != CEXPR_NAMES) continue;
                ebitmap_write(w_, e.names);
                if (v_ >= POLICYDB_VERSION_CONSTRAINT_NAMES) {
                    static const TypeSet empty;
                    const TypeSet &ts = e.type_names ? *e.type_names : empty;
                    ebitmap_write(w_, ts.types);
                    ebitmap_write(w_, ts.negset);
                    w_.u32(ts.flags);
                }
            }
        }
    }

    template <class Datum, class F>
    void symtab(const Symtab<Datum> &tab, F write_one) {
        w_.u32(tab.nprim);
        w_.u32(tab.nel());
        for (const auto &d : tab.entries())
            write_one(*d);
    }

    void symtabs() {
        symtab(p_.commons, [&](const CommonDatum &d) {
            w_.u32(static_cast<uint32_t>(d.name.size()));
            w_.u32(d.value);
            w_.u32(d.permissions.nprim);
            w_.u32(d.permissions.nel());
            w_.bytes(d.name);
            perms(d.permissions);
        });
        symtab(p_.classes, [&](const ClassDatum &d) {
            w_.u32(static_cast<uint32_t>(d.name.size()));
            w_.u32(static_cast<uint32_t>(d.comkey.size()));
            w_.u32(d.value);
            w_.u32(d.permissions.nprim);
            w_.u32(d.permissions.nel());
            w_.u32(static_cast<uint32_t>(d.constraints.size()));
            w_.bytes(d.name);
            w_.bytes(d.comkey);
            perms(d.permissions);
            constraints(d.constraints);
            w_.u32(static_cast<uint32_t>(d.validatetrans.size()));
            constraints(d.validatetrans);
            if (v_ >= POLICYDB_VERSION_NEW_OBJECT_DEFAULTS) {
                w_.u32(d.default_user);
                w_.u32(d.default_role);
                bool glblub_ok = v_ >= POLICYDB_VERSION_GLBLUB;
                w_.u32(d.default_range == DEFAULT_GLBLUB && !glblub_ok ? 0 : d.default_range);
            }
            if (v_ >= POLICYDB_VERSION_DEFAULT_TYPE) w_.u32(d.default_type);
        });
        symtab(p_.roles, [&](const RoleDatum &d) {
            w_.u32(static_cast<uint32_t>(d.name.size()));
            w_.u32(d.value);
            w_.u32(d.bounds);
            w_.bytes(d.name);
            ebitmap_write(w_, d.dominates);
            ebitmap_write(w_, d.types);
        });
        // A policy compiled below version 24 names no attributes: their values have no datum.
        // Version 24 and later name every value, so each gets one here, "@ttr" and its value
        // (the name setools gives them), an attribute like those checkpolicy writes.
        const std::vector<uint32_t> nameless = nameless_types();
        auto write_type = [&](std::string_view name, uint32_t value, uint32_t props,
                              uint32_t bounds) {
            w_.u32(static_cast<uint32_t>(name.size()));
            w_.u32(value);
            w_.u32(props);
            w_.u32(bounds);
            w_.bytes(name);
        };
        w_.u32(p_.types.nprim);
        w_.u32(p_.types.nel() + static_cast<uint32_t>(nameless.size()));
        for (const auto &d : p_.types.entries())
            write_type(d->name, d->value,
                       (d->primary ? TYPEDATUM_PROPERTY_PRIMARY : 0) |
                           (d->attribute ? TYPEDATUM_PROPERTY_ATTRIBUTE : 0),
                       d->bounds);
        for (uint32_t value : nameless)
            write_type(fmt::format("@ttr{:04}", value), value,
                       TYPEDATUM_PROPERTY_PRIMARY | TYPEDATUM_PROPERTY_ATTRIBUTE, 0);
        symtab(p_.users, [&](const UserDatum &d) {
            w_.u32(static_cast<uint32_t>(d.name.size()));
            w_.u32(d.value);
            w_.u32(d.bounds);
            w_.bytes(d.name);
            ebitmap_write(w_, d.roles);
            mls_range_write(w_, d.range);
            mls_level_write(w_, d.dfltlevel);
        });
        symtab(c_.bools, [&](const BoolDatum &d) {
            w_.u32(d.value);
            w_.u32(static_cast<uint32_t>(d.state));
            str(d.name);
        });
        symtab(p_.levels, [&](const LevelDatum &d) {
            w_.u32(static_cast<uint32_t>(d.name.size()));
            w_.u32(d.isalias ? 1 : 0);
            w_.bytes(d.name);
            mls_level_write(w_, d.level);
        });
        symtab(p_.cats, [&](const CatDatum &d) {
            w_.u32(static_cast<uint32_t>(d.name.size()));
            w_.u32(d.value);
            w_.u32(d.isalias ? 1 : 0);
            w_.bytes(d.name);
        });
    }

    void avtab_item(const AvtabNode &n) {
        if ((n.key.specified & AVTAB_XPERMS) && v_ < POLICYDB_VERSION_XPERMS_IOCTL)
            throw UserError(
                fmt::format("policy version {} cannot express extended permission rules", v_));
        w_.u16(n.key.source_type);
        w_.u16(n.key.target_type);
        w_.u16(n.key.target_class);
        w_.u16(n.key.specified);
        if (n.key.specified & AVTAB_XPERMS) {
            w_.u8(n.datum.u.xperms->specified);
            w_.u8(n.datum.u.xperms->driver);
            for (uint32_t word : n.datum.u.xperms->perms)
                w_.u32(word);
        } else {
            w_.u32(n.datum.u.data);
        }
    }

    void avtab(const Avtab &t) {
        w_.u32(t.nel());
        t.for_each([&](const AvtabNode &n) { avtab_item(n); });
    }

    void cond_list() {
        w_.u32(static_cast<uint32_t>(c_.cond_list.size()));
        for (const CondNode &node : c_.cond_list) {
            w_.u32(static_cast<uint32_t>(node.cur_state));
            w_.u32(static_cast<uint32_t>(node.expr.size()));
            for (const CondExpr &e : node.expr) {
                w_.u32(e.expr_type);
                w_.u32(e.boolean);
            }
            for (const auto *list : {&node.true_list, &node.false_list}) {
                w_.u32(static_cast<uint32_t>(list->size()));
                for (const AvtabNode *n : *list)
                    avtab_item(*n);
            }
        }
    }

    void role_trans() {
        bool with_class = v_ >= POLICYDB_VERSION_ROLETRANS;
        uint32_t n = 0;
        for (const RoleTrans &rt : p_.role_tr)
            n += with_class || rt.key.tclass == p_.process_class;
        w_.u32(n);
        for (const RoleTrans &rt : p_.role_tr) {
            if (!with_class && rt.key.tclass != p_.process_class) continue;
            w_.u32(rt.key.role);
            w_.u32(rt.key.type);
            w_.u32(rt.new_role);
            if (with_class) w_.u32(rt.key.tclass);
        }
    }

    void role_allow() {
        w_.u32(static_cast<uint32_t>(p_.role_allow.size()));
        for (const RoleAllow &ra : p_.role_allow) {
            w_.u32(ra.role);
            w_.u32(ra.new_role);
        }
    }

    void filename_trans() {
        if (v_ < POLICYDB_VERSION_FILENAME_TRANS) return;
        if (v_ >= POLICYDB_VERSION_COMP_FTRANS) {
            w_.u32(static_cast<uint32_t>(p_.filename_trans.size()));
            for (const FilenameTrans &ft : p_.filename_trans) {
                str(ft.name);
                w_.u32(ft.ttype);
                w_.u32(ft.tclass);
                w_.u32(static_cast<uint32_t>(ft.datums.size()));
                for (const FilenameTransDatum &d : ft.datums) {
                    ebitmap_write(w_, d.stypes);
                    w_.u32(d.otype);
                }
            }
            return;
        }
        uint32_t n = 0;
        for (const FilenameTrans &ft : p_.filename_trans)
            for (const FilenameTransDatum &d : ft.datums)
                n += d.stypes.cardinality();
        w_.u32(n);
        for (const FilenameTrans &ft : p_.filename_trans)
            for (const FilenameTransDatum &d : ft.datums)
                for (uint32_t bit : d.stypes.bits()) {
                    str(ft.name);
                    w_.u32(bit + 1);
                    w_.u32(ft.ttype);
                    w_.u32(ft.tclass);
                    w_.u32(d.otype);
                }
    }

    void context(const Context &c) {
        w_.u32(c.user);
        w_.u32(c.role);
        w_.u32(c.type);
        mls_range_write(w_, c.range);
    }

    void ocontexts() {
        uint32_t n = policydb_ocon_num(v_);
        for (uint32_t i = 0; i < n; ++i) {
            const auto &list = p_.ocontexts[i];
            w_.u32(static_cast<uint32_t>(list.size()));
            for (const Ocontext &c : list) {
                switch (i) {
                    case OCON_ISID:
                        w_.u32(c.sid_value);
                        context(c.context[0]);
                        break;
                    case OCON_FS:
                    case OCON_NETIF:
                        str(c.name);
                        context(c.context[0]);
                        context(c.context[1]);
                        break;
                    case OCON_PORT:
                        w_.u32(c.protocol);
                        w_.u32(c.low_port);
                        w_.u32(c.high_port);
                        context(c.context[0]);
                        break;
                    case OCON_NODE:
                        w_.u32(c.addr[0]);
                        w_.u32(c.mask[0]);
                        context(c.context[0]);
                        break;
                    case OCON_FSUSE:
                        w_.u32(c.behavior);
                        str(c.name);
                        context(c.context[0]);
                        break;
                    case OCON_NODE6:
                        for (uint32_t a : c.addr)
                            w_.u32(a);
                        for (uint32_t m : c.mask)
                            w_.u32(m);
                        context(c.context[0]);
                        break;
                    case OCON_IBPKEY:
                        w_.u64(c.subnet_prefix);
                        w_.u32(c.low_port);
                        w_.u32(c.high_port);
                        context(c.context[0]);
                        break;
                    case OCON_IBENDPORT:
                        w_.u32(static_cast<uint32_t>(c.name.size()));
                        w_.u32(c.low_port);
                        w_.bytes(c.name);
                        context(c.context[0]);
                        break;
                }
            }
        }
    }

    void genfs() {
        w_.u32(static_cast<uint32_t>(p_.genfs.size()));
        for (const Genfs &g : p_.genfs) {
            str(g.fstype);
            w_.u32(static_cast<uint32_t>(g.entries.size()));
            for (const GenfsEntry &e : g.entries) {
                str(e.path);
                w_.u32(e.sclass);
                context(e.context);
            }
        }
    }

    void range_trans() {
        w_.u32(static_cast<uint32_t>(p_.range_tr.size()));
        for (const RangeTrans &rt : p_.range_tr) {
            w_.u32(rt.key.source_type);
            w_.u32(rt.key.target_type);
            w_.u32(rt.key.target_class);
            mls_range_write(w_, rt.range);
        }
    }

    const PolicyBase &p_;
    const CondPolicy &c_;
    uint32_t v_;
    BinaryWriter w_;
};

}  // namespace

std::vector<uint8_t> policydb_write(const Policydb &p, uint32_t version, uint32_t *image_lines) {
    PolicyWriter w(p, version);
    if (image_lines) *image_lines = w.lines();
    return w.write();
}

void policydb_write_file(const Policydb &p, const std::string &path, uint32_t version) {
    std::vector<uint8_t> data = policydb_write(p, version);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("{}: cannot create the output file", path));
    out.write(reinterpret_cast<const char *>(data.data()),
              static_cast<std::streamsize>(data.size()));
    if (!out) throw UserError(fmt::format("{}: write failed", path));
}

}  // namespace locksim::ss
