// policydb_read: the binary policy reader, section by section in the kernel's order.
// Every count is checked against the bytes left before anything is sized from it, every value
// against its table, and expressions against their stack depth, so a malformed file ends in a
// UserError naming the section and byte offset rather than a crash or a huge allocation.
#include <algorithm>
#include <bit>
#include <fstream>
#include <iterator>
#include <type_traits>

#include "ss/binary_io.h"
#include "ss/policydb.h"
#include "util/read_file.h"

namespace locksim::ss {
namespace {

constexpr uint32_t kPermSymtabSize = 32;
constexpr uint32_t kBoundsMaxDepth = 4;

class PolicyReader {
  public:
    PolicyReader(std::span<const uint8_t> data, std::string_view source,
                 std::vector<PolicySection> *sections, uint32_t image_lines)
        : r_(data, source, sections, image_lines) {}

    Policydb read() {
        base_ = std::make_shared<PolicyBase>();
        cond_ = std::make_shared<CondPolicy>();
        read_header();
        read_symtabs();
        read_avtab();
        read_cond_list();
        read_role_trans();
        read_role_allow();
        read_filename_trans();
        read_ocontexts();
        read_genfs();
        read_range_trans();
        read_type_attr_map();
        check_bounds();
        Policydb db;
        db.base = std::move(base_);
        db.cond = std::move(cond_);
        return db;
    }

  private:
    PolicyBase &p() { return *base_; }
    uint32_t vers() const { return base_->policyvers; }

    bool type_ok(uint32_t v) const { return v && v <= base_->types.nprim; }
    bool class_ok(uint32_t v) const { return v && v <= base_->classes.nprim; }
    bool role_ok(uint32_t v) const { return v && v <= base_->roles.nprim; }

    // --- header ------------------------------------------------------------------------------
    void read_header() {
        r_.section("header");
        uint32_t magic = r_.u32();
        if (magic != kPolicydbMagic)
            r_.fail("magic {:#010x} is not the SELinux policy magic {:#010x}", magic,
                    kPolicydbMagic);
        uint32_t len = r_.u32();
        if (len != kPolicydbString.size())
            r_.fail("identifier length {} is not {}", len, kPolicydbString.size());
        std::string id = r_.str(len, "identifier");
        if (id != kPolicydbString) r_.fail("identifier '{}' is not '{}'", id, kPolicydbString);
        uint32_t version = r_.u32();
        if (version < kPolicyVersionReadMin || version > kPolicyVersionReadMax)
            r_.fail("policy version {} is outside {}..{}", version, kPolicyVersionReadMin,
                    kPolicyVersionReadMax);
        uint32_t config = r_.u32();
        p().policyvers = version;
        p().mls = config & POLICYDB_CONFIG_MLS;
        p().handle_unknown = config & POLICYDB_CONFIG_UNKNOWN_MASK;
        uint32_t sym_num = r_.u32();
        uint32_t ocon_num = r_.u32();
        if (sym_num != policydb_sym_num(version) || ocon_num != policydb_ocon_num(version))
            r_.fail("table counts ({}, {}) do not match version {} ({}, {})", sym_num, ocon_num,
                    version, policydb_sym_num(version), policydb_ocon_num(version));
        if (version >= POLICYDB_VERSION_POLCAP) {
            r_.section("policy capabilities");
            ebitmap_read(r_, p().policycaps);
        }
        if (version >= POLICYDB_VERSION_PERMISSIVE) {
            r_.section("permissive map");
            ebitmap_read(r_, p().permissive_map);
        }
    }

    // --- symbol tables -----------------------------------------------------------------------
    template <class Datum, class F>
    void read_symtab(const char *section, Symtab<Datum> &tab, size_t min_bytes, F read_one) {
        r_.section(section);
        uint32_t nprim = r_.u32();
        uint32_t nel = r_.u32();
        if (nel && !nprim) r_.fail("{} entries but no values", nel);
        r_.check_count(nel, min_bytes, section);
        if (nprim > r_.remaining())
            r_.fail("{} values is impossible: {} bytes left", nprim, r_.remaining());
        tab.init(nel);
        for (uint32_t i = 0; i < nel; ++i) {
            auto d = std::make_unique<Datum>();
            read_one(*d);
            size_t at = r_.pos();
            if (!tab.add(std::move(d)))
                r_.fail("duplicate name (entry {}, ending at byte {})", i, at);
        }
        tab.nprim = nprim;
        if (!tab.index()) r_.fail("a value is 0 or above the table's {} values", nprim);
    }

    void read_perms(Symtab<PermDatum> &perms, uint32_t nprim, uint32_t nel) {
        if (nprim > kPermSymtabSize) r_.fail("{} permissions (at most {})", nprim, kPermSymtabSize);
        r_.check_count(nel, 4 + kNameMinBytes, "permission");
        perms.init(nel);
        for (uint32_t i = 0; i < nel; ++i) {
            auto d = std::make_unique<PermDatum>();
            uint32_t len = r_.u32();
            d->value = r_.u32();
            if (d->value == 0 || d->value > nprim)
                r_.fail("permission value {} outside 1..{}", d->value, nprim);
            d->name = r_.str(len, "permission name");
            if (!perms.add(std::move(d))) r_.fail("duplicate permission");
        }
        perms.nprim = nprim;
        if (!perms.index()) r_.fail("bad permission values");
    }

    void read_constraints(std::vector<Constraint> &out, uint32_t ncons, bool allow_xtarget) {
        r_.check_count(ncons, 8, "constraint");  // permissions, nexpr = 0
        out.resize(ncons);
        for (Constraint &c : out) {
            c.permissions = r_.u32();
            uint32_t nexpr = r_.u32();
            r_.check_count(nexpr, 12, "constraint expression");  // an attribute test
            c.expr.resize(nexpr);
            int depth = -1;
            for (ConstraintExpr &e : c.expr) {
                e.line = next_line_object();
                e.expr_type = r_.u32();
                e.attr = r_.u32();
                e.op = r_.u32();
                switch (e.expr_type) {
                    case CEXPR_NOT:
                        if (depth < 0) r_.fail("constraint 'not' with an empty stack");
                        break;
                    case CEXPR_AND:
                    case CEXPR_OR:
                        if (depth < 1)
                            r_.fail("constraint 'and'/'or' with fewer than two operands");
                        --depth;
                        break;
                    case CEXPR_ATTR:
                    case CEXPR_NAMES:
                        if (depth == static_cast<int>(kConstraintStackDepth) - 1)
                            r_.fail("constraint expression deeper than {}", kConstraintStackDepth);
                        ++depth;
                        if (e.expr_type == CEXPR_ATTR) break;
                        if (!allow_xtarget && (e.attr & CEXPR_XTARGET))
                            r_.fail("constraint names the third context outside validatetrans");
                        ebitmap_read(r_, e.names);
                        if (vers() >= POLICYDB_VERSION_CONSTRAINT_NAMES) {
                            e.type_names = std::make_unique<TypeSet>();
                            ebitmap_read(r_, e.type_names->types);
                            ebitmap_read(r_, e.type_names->negset);
                            e.type_names->flags = r_.u32();
                        }
                        break;
                    default:
                        r_.fail("unknown constraint expression type {}", e.expr_type);
                }
            }
            if (depth != 0) r_.fail("constraint expression leaves {} operands", depth + 1);
        }
    }

    void read_symtabs() {
        read_symtab("commons", p().commons, 12 + kNameMinBytes, [&](CommonDatum &d) {
            uint32_t len = r_.u32();
            d.value = r_.u32();
            uint32_t nprim = r_.u32();
            uint32_t nel = r_.u32();
            d.name = r_.str(len, "common name");
            read_perms(d.permissions, nprim, nel);
        });
        read_symtab("classes", p().classes, 24 + kNameMinBytes, [&](ClassDatum &d) {
            uint32_t len = r_.u32();
            uint32_t len2 = r_.u32();
            d.value = r_.u32();
            if (d.value > UINT16_MAX) r_.fail("class value {} above 65535", d.value);
            uint32_t nprim = r_.u32();
            uint32_t nel = r_.u32();
            uint32_t ncons = r_.u32();
            d.name = r_.str(len, "class name");
            if (len2) {
                d.comkey = r_.str(len2, "common name");
                d.comdatum = p().commons.find(d.comkey);
                if (!d.comdatum) r_.fail("class {} inherits unknown common {}", d.name, d.comkey);
            }
            read_perms(d.permissions, nprim, nel);
            read_constraints(d.constraints, ncons, false);
            read_constraints(d.validatetrans, r_.u32(), true);
            if (vers() >= POLICYDB_VERSION_NEW_OBJECT_DEFAULTS) {
                d.default_user = r_.u32();
                d.default_role = r_.u32();
                d.default_range = r_.u32();
                if (d.default_user > DEFAULT_TARGET || d.default_role > DEFAULT_TARGET ||
                    d.default_range > DEFAULT_GLBLUB)
                    r_.fail("class {} has an unknown default rule", d.name);
            }
            if (vers() >= POLICYDB_VERSION_DEFAULT_TYPE) {
                d.default_type = r_.u32();
                if (d.default_type > DEFAULT_TARGET)
                    r_.fail("class {} has an unknown default_type", d.name);
            }
        });
        const bool bounds = vers() >= POLICYDB_VERSION_BOUNDARY;
        // Least sizes of a role and a user: value and name, then their sets and levels.
        constexpr size_t role_min = 4 + kNameMinBytes + 2 * kEbitmapMinBytes;
        constexpr size_t user_min =
            4 + kNameMinBytes + kEbitmapMinBytes + kMlsRangeMinBytes + kMlsLevelMinBytes;
        read_symtab("roles", p().roles, role_min, [&](RoleDatum &d) {
            uint32_t len = r_.u32();
            d.value = r_.u32();
            if (bounds) d.bounds = r_.u32();
            d.name = r_.str(len, "role name");
            ebitmap_read(r_, d.dominates);
            ebitmap_read(r_, d.types);
            if (d.name == OBJECT_R && d.value != OBJECT_R_VAL)
                r_.fail("role {} has value {}, not {}", OBJECT_R, d.value, OBJECT_R_VAL);
        });
        read_symtab("types", p().types, 8 + kNameMinBytes, [&](TypeDatum &d) {
            uint32_t len = r_.u32();
            d.value = r_.u32();
            if (bounds) {
                uint32_t props = r_.u32();
                d.primary = props & TYPEDATUM_PROPERTY_PRIMARY;
                d.attribute = props & TYPEDATUM_PROPERTY_ATTRIBUTE;
                d.bounds = r_.u32();
            } else {
                d.primary = r_.u32() != 0;
            }
            d.name = r_.str(len, "type name");
        });
        read_symtab("users", p().users, user_min, [&](UserDatum &d) {
            uint32_t len = r_.u32();
            d.value = r_.u32();
            if (bounds) d.bounds = r_.u32();
            d.name = r_.str(len, "user name");
            ebitmap_read(r_, d.roles);
            mls_range_read(r_, d.range);
            mls_level_read(r_, d.dfltlevel);
        });
        read_symtab("booleans", cond_->bools, 8 + kNameMinBytes, [&](BoolDatum &d) {
            d.value = r_.u32();
            uint32_t state = r_.u32();
            if (state > 1) r_.fail("boolean state {} is not 0 or 1", state);
            d.state = static_cast<int>(state);
            d.name = r_.str(r_.u32(), "boolean name");
        });
        read_symtab("sensitivities", p().levels, 4 + kNameMinBytes + kMlsLevelMinBytes,
                    [&](LevelDatum &d) {
                        uint32_t len = r_.u32();
                        d.isalias = r_.u32() != 0;
                        d.name = r_.str(len, "sensitivity name");
                        mls_level_read(r_, d.level);
                        d.value = d.level.sens;
                    });
        read_symtab("categories", p().cats, 8 + kNameMinBytes, [&](CatDatum &d) {
            uint32_t len = r_.u32();
            d.value = r_.u32();
            d.isalias = r_.u32() != 0;
            d.name = r_.str(len, "category name");
        });
        r_.section("symbol index");
        try {
            p().index();
        } catch (const UserError &e) {
            r_.fail("{}", e.what());
        }
        if (!p().process_class) r_.fail("the policy has no 'process' class");
    }

    // --- avtab -------------------------------------------------------------------------------
    // Reads one rule (the pre-v20 form may carry several) and hands each key/datum to insert.
    template <class Insert>
    void read_avtab_item(Insert &&insert) {
        AvtabKey key;
        AvtabDatum datum;
        if (vers() < POLICYDB_VERSION_AVTAB) {
            static constexpr uint16_t spec_order[] = {AVTAB_ALLOWED,    AVTAB_AUDITDENY,
                                                      AVTAB_AUDITALLOW, AVTAB_TRANSITION,
                                                      AVTAB_CHANGE,     AVTAB_MEMBER};
            uint32_t items2 = r_.u32();
            if (items2 < 5 || items2 > 4 + std::size(spec_order))
                r_.fail("old-format rule has {} words", items2);
            uint32_t st = r_.u32(), tt = r_.u32(), tc = r_.u32();
            if (!type_ok(st) || !type_ok(tt) || !class_ok(tc))
                r_.fail("rule names an unknown type or class ({}, {}, {})", st, tt, tc);
            key.source_type = static_cast<uint16_t>(st);
            key.target_type = static_cast<uint16_t>(tt);
            key.target_class = static_cast<uint16_t>(tc);
            uint32_t val = r_.u32();
            uint16_t enabled = (val & 0x80000000u) ? AVTAB_ENABLED : 0;
            if (!(val & (AVTAB_AV | AVTAB_TYPE))) r_.fail("old-format rule of no kind");
            if ((val & AVTAB_AV) && (val & AVTAB_TYPE))
                r_.fail("old-format rule with both access vectors and types");
            uint32_t items = 4;
            for (uint16_t spec : spec_order) {
                if (!(val & spec)) continue;
                if (items == items2) r_.fail("old-format rule has fewer words than its kinds need");
                key.specified = spec | enabled;
                datum.u.data = r_.u32();
                ++items;
                if ((spec & AVTAB_TYPE) && !type_ok(datum.u.data))
                    r_.fail("rule's new type {} is unknown", datum.u.data);
                insert(key, datum);
            }
            if (items != items2)
                r_.fail("old-format rule has {} words, its kinds use {}", items2, items);
            return;
        }
        key.source_type = r_.u16();
        key.target_type = r_.u16();
        key.target_class = r_.u16();
        key.specified = r_.u16();
        if (!type_ok(key.source_type) || !type_ok(key.target_type) || !class_ok(key.target_class))
            r_.fail("rule names an unknown type or class ({}, {}, {})", key.source_type,
                    key.target_type, key.target_class);
        uint16_t kind = key.specified & static_cast<uint16_t>(~AVTAB_ENABLED);
        if ((kind & ~(AVTAB_AV | AVTAB_TYPE | AVTAB_XPERMS)) || std::popcount(kind) != 1)
            r_.fail("rule kind {:#x} is not exactly one known kind", key.specified);
        AvtabExtendedPerms xp;
        if (kind & AVTAB_XPERMS) {
            if (vers() < POLICYDB_VERSION_XPERMS_IOCTL)
                r_.fail("extended permissions in a version {} policy", vers());
            xp.specified = r_.u8();
            xp.driver = r_.u8();
            if (xp.specified < AVTAB_XPERMS_IOCTLFUNCTION || xp.specified > 3)
                r_.fail("unknown extended permission kind {}", xp.specified);
            for (uint32_t &w : xp.perms)
                w = r_.u32();
            datum.u.xperms = &xp;
        } else {
            datum.u.data = r_.u32();
            if ((kind & AVTAB_TYPE) && !type_ok(datum.u.data))
                r_.fail("rule's new type {} is unknown", datum.u.data);
        }
        insert(key, datum);
    }

    size_t avtab_item_min() const { return vers() < POLICYDB_VERSION_AVTAB ? 24 : 12; }

    void read_avtab() {
        r_.section("avtab");
        uint32_t nel = r_.u32();
        if (nel == 0) r_.fail("the access vector table is empty");
        r_.check_count(nel, avtab_item_min(), "avtab rule");
        p().te_avtab.alloc(nel);
        for (uint32_t i = 0; i < nel; ++i)
            read_avtab_item([&](const AvtabKey &k, const AvtabDatum &d) {
                if (!p().te_avtab.insert(k, d))
                    r_.fail("duplicate rule ({}, {}, {}, {:#x})", k.source_type, k.target_type,
                            k.target_class, k.specified);
            });
    }

    // --- conditional rules -------------------------------------------------------------------
    void read_cond_av_list(std::vector<AvtabNode *> &list, const std::vector<AvtabNode *> *other) {
        uint32_t len = r_.u32();
        r_.check_count(len, avtab_item_min(), "conditional rule");
        list.reserve(len);
        Avtab &ctab = cond_->te_cond_avtab;
        for (uint32_t i = 0; i < len; ++i)
            read_avtab_item([&](const AvtabKey &k, const AvtabDatum &d) {
                if (k.specified & AVTAB_TYPE) {
                    if (p().te_avtab.search_node(k))
                        r_.fail("type rule also exists outside a conditional");
                    AvtabNode *n = ctab.search_node(k);
                    if (n && !other) r_.fail("conflicting type rules in a true list");
                    if (n) {
                        if (Avtab::search_node_next(n, k.specified))
                            r_.fail("too many conflicting type rules");
                        if (std::find(other->begin(), other->end(), n) == other->end())
                            r_.fail("conflicting type rules");
                    }
                }
                list.push_back(ctab.insert_nonunique(k, d));
            });
    }

    void read_cond_list() {
        r_.section("conditional rules");
        uint32_t len = r_.u32();
        r_.check_count(len, 16, "conditional node");  // state, nexpr, two list lengths
        cond_->te_cond_avtab.alloc(p().te_avtab.nel());
        cond_->cond_list.resize(len);
        for (CondNode &node : cond_->cond_list) {
            node.cur_state = static_cast<int>(r_.u32());
            uint32_t nexpr = r_.u32();
            r_.check_count(nexpr, 8, "conditional expression");
            node.expr.resize(nexpr);
            for (CondExpr &e : node.expr) {
                e.expr_type = r_.u32();
                e.boolean = r_.u32();
                if (e.expr_type == 0 || e.expr_type > COND_LAST)
                    r_.fail("unknown conditional operator {}", e.expr_type);
                if (e.boolean > cond_->bools.nprim || (e.expr_type == COND_BOOL && e.boolean == 0))
                    r_.fail("conditional expression names unknown boolean {}", e.boolean);
            }
            read_cond_av_list(node.true_list, nullptr);
            read_cond_av_list(node.false_list, &node.true_list);
        }
    }

    // --- role rules --------------------------------------------------------------------------
    void read_role_trans() {
        r_.section("role transitions");
        uint32_t nel = r_.u32();
        bool with_class = vers() >= POLICYDB_VERSION_ROLETRANS;
        r_.check_count(nel, with_class ? 16 : 12, "role transition");
        p().role_tr_index.init(nel);
        p().role_tr.reserve(nel);
        for (uint32_t i = 0; i < nel; ++i) {
            RoleTrans rt;
            rt.key.role = r_.u32();
            rt.key.type = r_.u32();
            rt.new_role = r_.u32();
            rt.key.tclass = with_class ? r_.u32() : p().process_class;
            if (!role_ok(rt.key.role) || !type_ok(rt.key.type) || !role_ok(rt.new_role) ||
                !class_ok(rt.key.tclass))
                r_.fail("role transition names an unknown role, type or class");
            if (!p().role_trans_add(rt)) r_.fail("duplicate role transition");
        }
    }

    void read_role_allow() {
        r_.section("role allow");
        uint32_t nel = r_.u32();
        r_.check_count(nel, 8, "role allow");
        p().role_allow.resize(nel);
        for (RoleAllow &ra : p().role_allow) {
            ra.role = r_.u32();
            ra.new_role = r_.u32();
            if (!role_ok(ra.role) || !role_ok(ra.new_role))
                r_.fail("role allow names an unknown role");
        }
    }

    // --- filename transitions ----------------------------------------------------------------
    void read_filename_trans() {
        if (vers() < POLICYDB_VERSION_FILENAME_TRANS) return;
        r_.section("filename transitions");
        uint32_t nel = r_.u32();
        if (vers() < POLICYDB_VERSION_COMP_FTRANS) {
            r_.check_count(nel, kNameMinBytes + 16, "filename transition");
            p().filename_trans_index.init(nel);
            for (uint32_t i = 0; i < nel; ++i) {
                std::string name = r_.str(r_.u32(), "filename");
                uint32_t stype = r_.u32(), ttype = r_.u32(), tclass = r_.u32(), otype = r_.u32();
                if (!type_ok(stype) || !type_ok(ttype) || !class_ok(tclass) || !type_ok(otype))
                    r_.fail("filename transition names an unknown type or class");
                // Duplicates are ignored, as older tools wrote some.
                p().filename_trans_add(stype, ttype, tclass, name, otype);
            }
            return;
        }
        // A key holds at least one rule, whose source types are not empty.
        constexpr size_t rule_min = kEbitmapMinBytes + kEbitmapMapBytes + 4;
        r_.check_count(nel, kNameMinBytes + 12 + rule_min, "filename transition key");
        p().filename_trans_index.init(nel);
        for (uint32_t i = 0; i < nel; ++i) {
            FilenameTrans ft;
            ft.name = r_.str(r_.u32(), "filename");
            ft.ttype = r_.u32();
            ft.tclass = r_.u32();
            uint32_t ndatum = r_.u32();
            if (!type_ok(ft.ttype) || !class_ok(ft.tclass))
                r_.fail("filename transition names an unknown type or class");
            if (ndatum == 0) r_.fail("filename transition key with no rules");
            r_.check_count(ndatum, rule_min, "filename transition rule");
            ft.datums.resize(ndatum);
            Ebitmap seen;
            for (FilenameTransDatum &d : ft.datums) {
                ebitmap_read(r_, d.stypes);
                d.otype = r_.u32();
                if (!type_ok(d.otype))
                    r_.fail("filename transition's new type {} is unknown", d.otype);
                if (d.stypes.empty() || d.stypes.last_set_bit() >= p().types.nprim)
                    r_.fail("filename transition source types are empty or unknown");
                if (!ebitmap_and(seen, d.stypes).empty())
                    r_.fail("filename transition gives a source type two new types");
                seen = ebitmap_or(seen, d.stypes);
            }
            if (!p().filename_trans_add_key(std::move(ft)))
                r_.fail("duplicate filename transition key");
        }
    }

    // --- object contexts ---------------------------------------------------------------------
    void read_context(Context &c) {
        c.user = r_.u32();
        c.role = r_.u32();
        c.type = r_.u32();
        mls_range_read(r_, c.range);
        if (!policydb_context_isvalid(p(), c))
            r_.fail("invalid security context ({}, {}, {})", c.user, c.role, c.type);
    }

    void read_ocontexts() {
        static const char *names[] = {
            "ocontexts: initial SIDs", "ocontexts: fs",      "ocontexts: ports",
            "ocontexts: netif",        "ocontexts: nodes",   "ocontexts: fs_use",
            "ocontexts: nodes6",       "ocontexts: ibpkeys", "ocontexts: ibendports"};
        uint32_t n = policydb_ocon_num(vers());
        for (uint32_t i = 0; i < n; ++i) {
            r_.section(names[i]);
            uint32_t nel = r_.u32();
            // The smallest kind is an initial SID: its value and one context.
            r_.check_count(nel, 4 + kContextMinBytes, "object context");
            auto &list = p().ocontexts[i];
            list.resize(nel);
            for (Ocontext &c : list) {
                switch (i) {
                    case OCON_ISID:
                        c.sid_value = r_.u32();
                        if (c.sid_value == 0) r_.fail("initial SID 0");
                        read_context(c.context[0]);
                        break;
                    case OCON_FS:
                    case OCON_NETIF:
                        c.name = r_.str(r_.u32(), "name");
                        read_context(c.context[0]);
                        read_context(c.context[1]);
                        break;
                    case OCON_PORT:
                        c.protocol = r_.u32();
                        c.low_port = r_.u32();
                        c.high_port = r_.u32();
                        read_context(c.context[0]);
                        break;
                    case OCON_NODE:
                        c.addr[0] = r_.u32();
                        c.mask[0] = r_.u32();
                        read_context(c.context[0]);
                        break;
                    case OCON_FSUSE:
                        c.behavior = r_.u32();
                        c.name = r_.str(r_.u32(), "file system name");
                        read_context(c.context[0]);
                        break;
                    case OCON_NODE6:
                        for (uint32_t &a : c.addr)
                            a = r_.u32();
                        for (uint32_t &m : c.mask)
                            m = r_.u32();
                        read_context(c.context[0]);
                        break;
                    case OCON_IBPKEY:
                        c.subnet_prefix = r_.u64();
                        c.low_port = r_.u32();
                        c.high_port = r_.u32();
                        if (c.low_port > UINT16_MAX || c.high_port > UINT16_MAX)
                            r_.fail("partition key above 65535");
                        read_context(c.context[0]);
                        break;
                    case OCON_IBENDPORT: {
                        uint32_t len = r_.u32();
                        c.low_port = r_.u32();
                        if (len == 0 || len > 63) r_.fail("device name length {}", len);
                        if (c.low_port == 0 || c.low_port > UINT8_MAX)
                            r_.fail("end port {} outside 1..255", c.low_port);
                        c.name = r_.str(len, "device name");
                        read_context(c.context[0]);
                        break;
                    }
                }
            }
        }
    }

    void read_genfs() {
        r_.section("genfs");
        uint32_t nel = r_.u32();
        r_.check_count(nel, kNameMinBytes + 4, "genfs file system");
        auto &all = p().genfs;
        all.reserve(nel);
        for (uint32_t i = 0; i < nel; ++i) {
            Genfs g;
            g.fstype = r_.str(r_.u32(), "file system type");
            auto pos =
                std::lower_bound(all.begin(), all.end(), g.fstype,
                                 [](const Genfs &a, const std::string &b) { return a.fstype < b; });
            if (pos != all.end() && pos->fstype == g.fstype)
                r_.fail("duplicate genfs file system {}", g.fstype);
            uint32_t nel2 = r_.u32();
            r_.check_count(nel2, kNameMinBytes + 4 + kContextMinBytes, "genfs entry");
            for (uint32_t j = 0; j < nel2; ++j) {
                GenfsEntry e;
                e.path = r_.str(r_.u32(), "genfs path");
                e.sclass = r_.u32();
                if (e.sclass && !class_ok(e.sclass))
                    r_.fail("genfs entry names unknown class {}", e.sclass);
                read_context(e.context);
                // Keep longer paths first; reject a path repeated for an overlapping class.
                auto at = g.entries.begin();
                for (; at != g.entries.end(); ++at) {
                    if (at->path == e.path && (!at->sclass || !e.sclass || at->sclass == e.sclass))
                        r_.fail("duplicate genfs entry ({}, {})", g.fstype, e.path);
                    if (e.path.size() > at->path.size()) break;
                }
                for (auto rest = at; rest != g.entries.end(); ++rest)
                    if (rest->path == e.path &&
                        (!rest->sclass || !e.sclass || rest->sclass == e.sclass))
                        r_.fail("duplicate genfs entry ({}, {})", g.fstype, e.path);
                g.entries.insert(at, std::move(e));
            }
            all.insert(pos, std::move(g));
        }
    }

    void read_range_trans() {
        r_.section("range transitions");
        uint32_t nel = r_.u32();
        bool with_class = vers() >= POLICYDB_VERSION_RANGETRANS;
        r_.check_count(nel, (with_class ? 12 : 8) + kMlsRangeMinBytes, "range transition");
        p().range_tr_index.init(nel);
        for (uint32_t i = 0; i < nel; ++i) {
            RangeTrans rt;
            rt.key.source_type = r_.u32();
            rt.key.target_type = r_.u32();
            rt.key.target_class = with_class ? r_.u32() : p().process_class;
            if (!type_ok(rt.key.source_type) || !type_ok(rt.key.target_type) ||
                !class_ok(rt.key.target_class))
                r_.fail("range transition names an unknown type or class");
            mls_range_read(r_, rt.range);
            if (p().mls && !mls_range_isvalid(p(), rt.range))
                r_.fail("range transition with an invalid range");
            if (!p().range_trans_add(std::move(rt))) r_.fail("duplicate range transition");
        }
    }

    void read_type_attr_map() {
        r_.section("type attribute map");
        uint32_t n = p().types.nprim;
        auto &tam = p().type_attr_map;
        auto &atm = p().attr_type_map;
        tam.resize(n);
        atm.resize(n);
        for (uint32_t i = 0; i < n; ++i) {
            if (vers() >= POLICYDB_VERSION_AVTAB) {
                ebitmap_read(r_, tam[i]);
                for (uint32_t j : tam[i].bits()) {
                    if (j == i) continue;
                    if (j >= n) r_.fail("type {} has unknown attribute value {}", i + 1, j + 1);
                    atm[j].set_bit(i, true);
                }
            }
            const TypeDatum *t = p().types.by_value(i + 1);
            if (t) {
                tam[i].set_bit(i, true);
                if (!t->attribute) atm[i].set_bit(i, true);
            }
        }
        // Built here rather than read (older versions): named for the cache model all the same.
        for (uint32_t i = 0; i < n; ++i)
            for (Ebitmap *e : {&tam[i], &atm[i]})
                if (!e->lines()) e->name_lines(next_line_object());
    }

    // Bounds chains must be short and end (the kernel's policydb_bounds_sanity_check).
    template <class Datum>
    void check_bounds_of(const Symtab<Datum> &tab, const char *what) {
        for (Datum *d : tab.val_to_struct()) {
            if (!d) continue;
            const Datum *upper = d;
            for (uint32_t depth = 0; upper->bounds; ++depth) {
                if (depth == kBoundsMaxDepth)
                    r_.fail("{} {}: bounds too deep or looped", what, d->name);
                const Datum *next = tab.by_value(upper->bounds);
                if (!next)
                    r_.fail("{} {}: bounded by unknown value {}", what, d->name, upper->bounds);
                if constexpr (std::is_same_v<Datum, TypeDatum>)
                    if (next->attribute)
                        r_.fail("type {}: bounded by attribute {}", d->name, next->name);
                upper = next;
            }
        }
    }

    void check_bounds() {
        if (vers() < POLICYDB_VERSION_BOUNDARY) return;
        r_.section("bounds");
        check_bounds_of(p().users, "user");
        check_bounds_of(p().roles, "role");
        check_bounds_of(p().types, "type");
    }

    BinaryReader r_;
    std::shared_ptr<PolicyBase> base_;
    std::shared_ptr<CondPolicy> cond_;
};

}  // namespace

Policydb policydb_read(std::span<const uint8_t> data, std::string_view source,
                       std::vector<PolicySection> *sections, uint32_t image_lines) {
    return PolicyReader(data, source, sections, image_lines).read();
}

Policydb policydb_read_file(const std::string &path) {
    std::string data = read_whole_file(path, "policy file");
    return policydb_read(std::span(reinterpret_cast<const uint8_t *>(data.data()), data.size()),
                         path);
}

}  // namespace locksim::ss
