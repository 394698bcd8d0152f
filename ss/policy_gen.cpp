// The synthetic policy generator. Proportions follow the Debian reference policy (per type:
// ~0.055 attributes, ~26 unconditional rules of which 78% allow, 14% dontaudit, 7%
// type_transition; conditional rules about a quarter of those; ~1.1 conditional blocks per
// boolean), scaled to the requested size; presets (gen_presets) set the proportions and the
// type -> attribute fan-out of published distribution policies. Everything is built in the
// policy structures and is a pure function of the options (own xorshift generator, no library
// distributions).
#include "ss/policy_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace locksim::ss {
namespace {

class Rng {
  public:
    explicit Rng(uint64_t seed) : s_(seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull) {}
    uint64_t next() {
        s_ ^= s_ << 13;
        s_ ^= s_ >> 7;
        s_ ^= s_ << 17;
        return s_;
    }
    uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(next() % n) : 0; }
    bool chance(uint32_t percent) { return below(100) < percent; }
    // Skewed towards small values: a few types and attributes appear in many rules.
    uint32_t skewed(uint32_t n) {
        uint32_t a = below(n), b = below(n);
        return std::min(a, b);
    }

  private:
    uint64_t s_;
};

struct ClassSpec {
    const char *name;
    const char *common;  // nullptr: none
    std::vector<const char *> perms;
};

const std::vector<const char *> kFilePerms = {
    "ioctl",       "read",      "write",  "create",  "getattr", "setattr",      "lock",
    "relabelfrom", "relabelto", "append", "map",     "unlink",  "link",         "rename",
    "execute",     "open",      "watch",  "quotaon", "mounton", "audit_access", "execmod"};
const std::vector<const char *> kSocketPerms = {
    "ioctl",       "read",      "write",  "create",   "getattr",  "setattr", "lock",
    "relabelfrom", "relabelto", "append", "map",      "bind",     "connect", "listen",
    "accept",      "getopt",    "setopt", "shutdown", "recvfrom", "sendto",  "name_bind"};

const std::vector<ClassSpec> &class_specs() {
    static const std::vector<ClassSpec> specs = {
        {"security",
         nullptr,
         {"compute_av", "compute_create", "check_context", "load_policy", "setbool", "setenforce"}},
        {"process",
         nullptr,
         {"fork", "transition", "sigchld", "sigkill", "sigstop", "signal", "ptrace", "getsched",
          "setsched", "getattr", "setexec", "setfscreate", "noatsecure", "siginh", "rlimitinh",
          "dyntransition", "setcurrent", "execmem", "execstack"}},
        {"filesystem",
         nullptr,
         {"mount", "remount", "unmount", "getattr", "relabelfrom", "relabelto", "associate",
          "quotamod", "quotaget"}},
        {"file", "file", {"execute_no_trans", "entrypoint"}},
        {"dir", "file", {"add_name", "remove_name", "reparent", "search", "rmdir"}},
        {"lnk_file", "file", {}},
        {"chr_file", "file", {}},
        {"blk_file", "file", {}},
        {"sock_file", "file", {}},
        {"fifo_file", "file", {}},
        {"fd", nullptr, {"use"}},
        {"tcp_socket", "socket", {"node_bind", "name_connect"}},
        {"udp_socket", "socket", {"node_bind"}},
        {"unix_stream_socket", "socket", {"connectto"}},
        {"unix_dgram_socket", "socket", {"sendto"}},
        {"capability",
         nullptr,
         {"chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid",
          "setuid", "net_bind_service", "net_admin", "sys_admin", "sys_ptrace"}},
    };
    return specs;
}

class Generator {
  public:
    explicit Generator(const GenOptions &o) : o_(o), rng_(o.seed) {
        if (o.types < 8) throw UserError("policy gen: at least 8 types");
        if (o.version < kPolicyVersionWriteMin || o.version > kPolicyVersionWriteMax)
            throw UserError(fmt::format("policy gen: version {} outside {}..{}", o.version,
                                        kPolicyVersionWriteMin, kPolicyVersionWriteMax));
        nattr_ = o.attributes ? o.attributes : std::max(2u, o.types / 18);
        nrules_ = o.rules ? o.rules : o.types * 20;
        ncond_ = o.cond_rules ? o.cond_rules : nrules_ / 4;
        if (o.types + nattr_ > 65000)
            throw UserError("policy gen: types and attributes must stay below 65000");
    }

    Policydb run() {
        b_ = std::make_shared<PolicyBase>();
        c_ = std::make_shared<CondPolicy>();
        b_->policyvers = o_.version;
        b_->mls = o_.mls;
        b_->handle_unknown = ALLOW_UNKNOWN;
        for (uint32_t cap : {0u, 1u, 2u, 4u, 5u})
            b_->policycaps.set_bit(cap, true);
        classes();
        mls_symbols();
        types();
        roles_and_users();
        b_->index();
        avtab();
        conditionals();
        constraints();
        transitions();
        contexts();
        Policydb db;
        db.base = std::move(b_);
        db.cond = std::move(c_);
        return db;
    }

  private:
    template <class D>
    D *add(Symtab<D> &tab, std::string name, uint32_t value) {
        auto d = std::make_unique<D>();
        d->name = std::move(name);
        d->value = value;
        return tab.add(std::move(d));
    }

    void classes() {
        auto common = [&](const char *name, const std::vector<const char *> &perms) {
            CommonDatum *c = add(b_->commons, name, b_->commons.nel() + 1);
            for (const char *p : perms)
                add(c->permissions, p, c->permissions.nel() + 1);
            c->permissions.nprim = c->permissions.nel();
        };
        b_->commons.init(2);
        common("file", kFilePerms);
        common("socket", kSocketPerms);
        b_->commons.nprim = 2;
        b_->classes.init(static_cast<uint32_t>(class_specs().size()));
        for (const ClassSpec &s : class_specs()) {
            ClassDatum *c = add(b_->classes, s.name, b_->classes.nel() + 1);
            uint32_t base = 0;
            if (s.common) {
                c->comkey = s.common;
                c->comdatum = b_->commons.find(s.common);
                base = c->comdatum->permissions.nprim;
            }
            for (const char *p : s.perms)
                add(c->permissions, p, base + c->permissions.nel() + 1);
            c->permissions.nprim = base + c->permissions.nel();
            if (std::string_view(s.name) == "file") {
                c->default_range = o_.mls ? DEFAULT_TARGET_LOW : 0;
                c->default_user = DEFAULT_SOURCE;
            }
        }
        b_->classes.nprim = b_->classes.nel();
    }

    uint32_t nperms(uint32_t cls) const { return b_->classes.by_value(cls)->permissions.nprim; }
    uint32_t class_value(std::string_view name) const { return b_->classes.find(name)->value; }

    void mls_symbols() {
        if (!o_.mls) return;
        b_->cats.init(o_.categories);
        for (uint32_t i = 0; i < o_.categories; ++i)
            add(b_->cats, fmt::format("c{}", i), i + 1);
        b_->cats.nprim = o_.categories;
        b_->levels.init(o_.sensitivities);
        for (uint32_t i = 0; i < o_.sensitivities; ++i) {
            LevelDatum *l = add(b_->levels, fmt::format("s{}", i), i + 1);
            l->level.sens = i + 1;
            for (uint32_t c = 0; c < o_.categories; ++c)
                l->level.cat.set_bit(c, true);
        }
        b_->levels.nprim = o_.sensitivities;
    }

    MlsRange low_range() const {
        MlsRange r;
        if (o_.mls) r.level[0].sens = r.level[1].sens = 1;
        return r;
    }
    MlsRange full_range() const {
        MlsRange r = low_range();
        if (!o_.mls) return r;
        r.level[1].sens = o_.sensitivities;
        for (uint32_t c = 0; c < o_.categories; ++c)
            r.level[1].cat.set_bit(c, true);
        return r;
    }

    void types() {
        uint32_t n = o_.types;
        uint32_t naliases = n / 15;
        b_->types.init(n + nattr_ + naliases);
        // Domains are the first types (a quarter unless the options say); attributes follow.
        ndomains_ = std::max(2u, o_.domain_percent ? n / 100 * o_.domain_percent : n / 4);
        for (uint32_t i = 1; i <= n; ++i)
            add(b_->types,
                i <= ndomains_ ? fmt::format("domain{}_t", i) : fmt::format("file{}_t", i), i);
        for (uint32_t a = 1; a <= nattr_; ++a) {
            TypeDatum *t = add(b_->types, fmt::format("attr{}", a), n + a);
            t->attribute = true;
        }
        for (uint32_t i = 0; i < naliases; ++i) {
            uint32_t target = 1 + rng_.below(n);
            TypeDatum *t = add(b_->types, fmt::format("alias{}_t", i), target);
            t->primary = false;
        }
        b_->types.nprim = n + nattr_;
        // Attribute membership, skewed to the first attributes: one to six per type, or the
        // preset's fan-out (attr_count).
        uint32_t total = n + nattr_;
        b_->type_attr_map.resize(total);
        b_->attr_type_map.resize(total);
        for (uint32_t t = 0; t < n; ++t) {
            uint32_t k = o_.domain_attrs > 0 ? attr_count(t < ndomains_) : 1 + rng_.below(6);
            for (uint32_t i = 0, tries = 0; i < k && tries < 64 * k; ++tries) {
                uint32_t a = n + rng_.skewed(nattr_);
                if (o_.domain_attrs > 0 && b_->type_attr_map[t].get_bit(a)) continue;
                b_->type_attr_map[t].set_bit(a, true);
                b_->attr_type_map[a].set_bit(t, true);
                ++i;
            }
            b_->type_attr_map[t].set_bit(t, true);
            b_->attr_type_map[t].set_bit(t, true);
        }
        for (uint32_t a = n; a < total; ++a)
            b_->type_attr_map[a].set_bit(a, true);
        // A few permissive domains and bounded domains.
        for (uint32_t i = 0; i < std::max(1u, ndomains_ / 200); ++i)
            b_->permissive_map.set_bit(1 + rng_.below(ndomains_), true);
        for (uint32_t i = 2; i <= std::min(ndomains_, 6u); i += 2)
            b_->types.find(fmt::format("domain{}_t", i))->bounds = i - 1;
    }

    // Attributes of one type (besides itself): most drawn uniformly around the body's mean, a
    // tail_percent share from [max/2, max] (the unconfined and catch-all domains of a real
    // policy), so that the mean over all types is the option's.
    uint32_t attr_count(bool domain) {
        const double mean = domain ? o_.domain_attrs : o_.type_attrs;
        const uint32_t max =
            std::min(nattr_, std::max(static_cast<uint32_t>(std::ceil(mean)),
                                      domain ? o_.domain_attrs_max : o_.type_attrs_max));
        if (rng_.chance(o_.tail_percent)) return max / 2 + rng_.below(max - max / 2 + 1);
        const double tail = o_.tail_percent / 100.0;
        const double body = std::max(1.0, (mean - tail * 0.75 * max) / (1.0 - tail));
        const auto span = static_cast<uint32_t>(2.0 * body - 1.0 + 0.5);
        return std::min(max, 1 + rng_.below(std::max(1u, span)));
    }

    void roles_and_users() {
        uint32_t nroles = o_.roles + 1;
        b_->roles.init(nroles);
        RoleDatum *obj = add(b_->roles, std::string(OBJECT_R), OBJECT_R_VAL);
        obj->dominates.set_bit(0, true);
        for (uint32_t r = 2; r <= nroles; ++r) {
            RoleDatum *role = add(b_->roles, fmt::format("role{}_r", r - 1), r);
            role->dominates.set_bit(r - 1, true);
            for (uint32_t t = 1; t <= ndomains_; ++t)
                if (r == 2 || rng_.chance(30)) role->types.set_bit(t - 1, true);
        }
        b_->roles.nprim = nroles;
        b_->users.init(o_.users);
        for (uint32_t u = 1; u <= o_.users; ++u) {
            UserDatum *user = add(b_->users, fmt::format("user{}_u", u), u);
            user->roles.set_bit(0, true);
            for (uint32_t r = 2; r <= nroles; ++r)
                if (u == 1 || rng_.chance(40)) user->roles.set_bit(r - 1, true);
            user->range = u == 1 ? full_range() : low_range();
            user->dfltlevel = low_range().level[0];
        }
        b_->users.nprim = o_.users;
    }

    AvtabKey random_key(uint16_t kind) {
        uint32_t n = o_.types;
        // Sources: domains or attributes; targets: any type or attribute.
        uint32_t s = rng_.chance(25) ? n + 1 + rng_.skewed(nattr_) : 1 + rng_.skewed(ndomains_);
        uint32_t t = rng_.chance(30) ? n + 1 + rng_.skewed(nattr_) : 1 + rng_.below(n);
        uint32_t cls = kind & AVTAB_TYPE ? class_value(rng_.chance(60) ? "file" : "dir")
                                         : 1 + rng_.skewed(b_->classes.nprim);
        return AvtabKey{static_cast<uint16_t>(s), static_cast<uint16_t>(t),
                        static_cast<uint16_t>(cls), kind};
    }

    AvtabDatum random_datum(const AvtabKey &k) {
        AvtabDatum d;
        if (k.specified & AVTAB_TYPE) {
            d.u.data = 1 + ndomains_ + rng_.below(o_.types - ndomains_);
            return d;
        }
        uint32_t np = nperms(k.target_class);
        uint32_t mask = 0;
        for (uint32_t i = 0, m = 1 + rng_.below(5); i < m; ++i)
            mask |= 1u << rng_.below(np);
        d.u.data = k.specified == AVTAB_AUDITDENY ? ~mask : mask;
        return d;
    }

    uint16_t random_kind() {
        const bool mix = o_.dontaudit_percent || o_.transition_percent;
        const uint32_t dontaudit = mix ? o_.dontaudit_percent : 14;
        const uint32_t transition = mix ? o_.transition_percent : 7;
        uint32_t x = rng_.below(100);
        return x < 99 - dontaudit - transition ? AVTAB_ALLOWED
               : x < 99 - transition           ? AVTAB_AUDITDENY
               : x < 99                        ? AVTAB_TRANSITION
                                               : AVTAB_AUDITALLOW;
    }

    void avtab() {
        // Type rules only from concrete types, as a policy compiler writes them.
        b_->te_avtab.alloc(nrules_);
        for (uint32_t tries = 0; b_->te_avtab.nel() < nrules_ && tries < nrules_ * 4; ++tries) {
            uint16_t kind = random_kind();
            AvtabKey k = random_key(kind);
            if ((kind & AVTAB_TYPE) && (k.source_type > o_.types || k.target_type > o_.types))
                continue;
            b_->te_avtab.insert(k, random_datum(k));
        }
    }

    void conditionals() {
        c_->bools.init(o_.booleans);
        for (uint32_t i = 1; i <= o_.booleans; ++i) {
            BoolDatum *b = add(c_->bools, fmt::format("bool{}", i), i);
            b->state = rng_.chance(35) ? 1 : 0;
        }
        c_->bools.nprim = o_.booleans;
        c_->bools.index();
        c_->te_cond_avtab.alloc(b_->te_avtab.nel());
        if (!o_.booleans) return;
        uint32_t nnodes = o_.booleans + o_.booleans / 10;
        c_->cond_list.resize(nnodes);
        for (CondNode &node : c_->cond_list) {
            uint32_t a = 1 + rng_.below(o_.booleans);
            node.expr.push_back({COND_BOOL, a});
            uint32_t shape = rng_.below(10);
            if (shape < 2) {
                node.expr.push_back({COND_NOT, 0});
            } else if (shape < 4) {
                node.expr.push_back({COND_BOOL, 1 + rng_.below(o_.booleans)});
                node.expr.push_back({shape == 2 ? COND_AND : COND_OR, 0});
            }
        }
        for (uint32_t i = 0; i < ncond_; ++i) {
            CondNode &node = c_->cond_list[rng_.skewed(nnodes)];
            uint16_t kind = rng_.chance(85) ? AVTAB_ALLOWED : AVTAB_AUDITDENY;
            AvtabKey k = random_key(kind);
            auto &list = rng_.chance(80) ? node.true_list : node.false_list;
            list.push_back(c_->te_cond_avtab.insert_nonunique(k, random_datum(k)));
        }
        cond_evaluate_nodes(*c_, true);
    }

    static ConstraintExpr cexpr(uint32_t type, uint32_t attr = 0, uint32_t op = 0) {
        ConstraintExpr e;
        e.expr_type = type;
        e.attr = attr;
        e.op = op;
        return e;
    }

    void constraints() {
        uint32_t n = o_.constraints ? o_.constraints : b_->classes.nprim * 2;
        std::vector<ClassDatum *> cls = b_->classes.val_to_struct();
        for (uint32_t i = 0; i < n; ++i) {
            ClassDatum *c = cls[rng_.below(static_cast<uint32_t>(cls.size()))];
            Constraint con;
            con.permissions = 1u << rng_.below(c->permissions.nprim);
            // (u1 == u2) or (t1 == { some domains }), and with MLS sometimes (l1 dom l2)
            ConstraintExpr names = cexpr(CEXPR_NAMES, CEXPR_TYPE, CEXPR_EQ);
            for (uint32_t k = 0; k < 1 + rng_.below(4); ++k)
                names.names.set_bit(rng_.skewed(ndomains_), true);
            names.type_names = std::make_unique<TypeSet>();
            names.type_names->types = names.names;
            con.expr.push_back(cexpr(CEXPR_ATTR, CEXPR_USER, CEXPR_EQ));
            con.expr.push_back(std::move(names));
            con.expr.push_back(cexpr(CEXPR_OR));
            if (o_.mls && rng_.chance(40)) {
                con.expr.push_back(cexpr(CEXPR_ATTR, CEXPR_L1L2, CEXPR_DOM));
                con.expr.push_back(cexpr(CEXPR_AND));
            }
            c->constraints.push_back(std::move(con));
        }
    }

    void transitions() {
        uint32_t nroles = b_->roles.nprim;
        for (uint32_t i = 0; i < (nroles - 1) * 3; ++i)
            b_->role_trans_add(
                {{2 + rng_.below(nroles - 1), 1 + rng_.below(o_.types), b_->process_class},
                 2 + rng_.below(nroles - 1)});
        for (uint32_t r = 2; r < nroles; ++r)
            b_->role_allow.push_back({r, r + 1});
        uint32_t nfile = o_.types / 5;
        b_->filename_trans_index.init(nfile);
        for (uint32_t i = 0; i < nfile; ++i)
            b_->filename_trans_add(1 + rng_.below(ndomains_), 1 + rng_.below(o_.types),
                                   class_value(rng_.chance(70) ? "file" : "dir"),
                                   fmt::format("name{}", rng_.below(nfile / 2 + 1)),
                                   1 + ndomains_ + rng_.below(o_.types - ndomains_));
        if (o_.mls) {
            b_->range_tr_index.init(16);
            for (uint32_t i = 0; i < 16; ++i)
                b_->range_trans_add(
                    {{1 + rng_.below(ndomains_), 1 + rng_.below(o_.types), b_->process_class},
                     full_range()});
        }
    }

    Context object_context(uint32_t type) const {
        Context c;
        c.user = 1;
        c.role = OBJECT_R_VAL;
        c.type = type;
        c.range = low_range();
        return c;
    }

    void contexts() {
        auto &oc = b_->ocontexts;
        for (uint32_t sid = 1; sid <= 27; ++sid) {
            Ocontext c;
            c.sid_value = sid;
            c.context[0] = object_context(1 + rng_.below(o_.types));
            oc[OCON_ISID].push_back(std::move(c));
        }
        for (uint32_t i = 0; i < 100; ++i) {
            Ocontext c;
            c.protocol = i % 2 ? 6 : 17;
            c.low_port = c.high_port = 1 + i * 7;
            c.context[0] = object_context(1 + rng_.below(o_.types));
            oc[OCON_PORT].push_back(std::move(c));
        }
        for (const char *fs : {"ext4", "xfs", "btrfs", "tmpfs", "pipefs"}) {
            Ocontext c;
            c.behavior =
                std::string_view(fs) == "tmpfs" ? SECURITY_FS_USE_TRANS : SECURITY_FS_USE_XATTR;
            c.name = fs;
            c.context[0] = object_context(1 + ndomains_ + rng_.below(o_.types - ndomains_));
            oc[OCON_FSUSE].push_back(std::move(c));
        }
        for (const char *fs : {"cgroup", "proc", "sysfs"}) {
            Genfs g;
            g.fstype = fs;
            for (const char *path : {"/sys/kernel", "/net", "/"})
                g.entries.push_back({path, 0, object_context(1 + rng_.below(o_.types))});
            b_->genfs.push_back(std::move(g));
        }
    }

    const GenOptions &o_;
    Rng rng_;
    uint32_t nattr_ = 0, nrules_ = 0, ncond_ = 0, ndomains_ = 0;
    std::shared_ptr<PolicyBase> b_;
    std::shared_ptr<CondPolicy> c_;
};

}  // namespace

namespace {

const GenPreset kPresets[] = {
    {"debian-refpolicy",
     "Debian 12 reference policy (default flavour)",
     "measured on Debian 12's selinux-policy-default built as docs/policies.md says (sizes by "
     "`locksim policy info`, the fan-out from its type_attr_map): 3936 types, 217 attributes, 291 "
     "booleans, 102340 + 27347 avtab rules; domains 17 % of types with 6.8 attributes on average "
     "(themselves included; p99 26, max 30), other types 5.1 (p99 8, max 12)",
     {.types = 3936,
      .attributes = 217,
      .booleans = 291,
      .rules = 102340,
      .cond_rules = 27347,
      .users = 7,
      .roles = 14,
      .categories = 1024,
      .domain_percent = 17,
      .domain_attrs = 6,
      .domain_attrs_max = 29,
      .type_attrs = 4,
      .type_attrs_max = 21,
      .tail_percent = 1,
      .dontaudit_percent = 14,
      .transition_percent = 7}},
    {"fedora-27",
     "Fedora 27 targeted policy (selinux-policy 3.13.1, policy version 31)",
     "measured on Fedora 27's targeted policy built from fedora-selinux/selinux-policy branch f27 "
     "(05e6586, 2018-11-04) and selinux-policy-contrib branch f27 (be428c4), with the module, "
     "boolean and user lists of the Fedora package (3.13.1-302, November 2017): modules compiled "
     "by checkmodule, converted to CIL and compiled by secilc as semodule does (sizes by `locksim "
     "policy info`, the fan-out by `policy info --fan-out`, checked with libsepol): 4848 types, "
     "252 attributes, 317 booleans, 109221 + 22988 avtab rules (7 % dontaudit, 16 % "
     "type_transition); domains 17 % of types with 11.7 attributes on average (themselves "
     "included; p50 9, p99 37, max 44), 10.5 % of them in a tail of 22-44 (the unconfined and "
     "other catch-all domains), other types 5.6 (p99 9, max 13). Published seinfo of a v31 "
     "targeted policy: 4792 types, 253 attributes, 316 booleans",
     {.types = 4848,
      .attributes = 252,
      .booleans = 317,
      .rules = 109221,
      .cond_rules = 22988,
      .users = 8,
      .roles = 13,
      .categories = 1024,
      .domain_percent = 17,
      .domain_attrs = 10.67,
      .domain_attrs_max = 43,
      .type_attrs = 4.56,
      .type_attrs_max = 12,
      .tail_percent = 11,
      .dontaudit_percent = 7,
      .transition_percent = 16}},
};

}  // namespace

std::span<const GenPreset> gen_presets() {
    return kPresets;
}

const GenPreset &find_gen_preset(std::string_view name) {
    std::string known;
    for (const GenPreset &p : kPresets) {
        if (p.name == name) return p;
        known += (known.empty() ? "" : ", ") + std::string(p.name);
    }
    throw UserError(fmt::format("unknown policy preset '{}' (known: {})", name, known));
}

Policydb policy_generate(const GenOptions &opt) {
    return Generator(opt).run();
}

}  // namespace locksim::ss
