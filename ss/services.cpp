#include "ss/services.h"

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "ss/avtab.h"
#include "ss/constraint_eval.h"
#include "ss/context_string.h"
#include "ss/mls.h"
#include "ss/policy_dup.h"
#include "ss/te_rules_memo.h"
#include "util/error.h"
#include "util/work_meter.h"

namespace locksim::ss {

namespace {

int load_isids(const PolicyBase &p, Sidtab &sidtab) {
    for (const Ocontext &oc : p.ocontexts[OCON_ISID]) {
        if (oc.sid_value == SECSID_NULL) return -EINVAL;
        if (oc.sid_value > kSecInitSidNum) continue;  // not known to this kernel
        if (!oc.context[0].user) return -EINVAL;      // declared, never given a context
        if (int rc = sidtab.set_initial(oc.sid_value, oc.context[0])) return rc;
    }
    return 0;
}

}  // namespace

PolicyState policy_state_create(Policydb db, uint32_t sid_cache_size, ServiceConfig config,
                                SidtabEra era) {
    PolicyState st;
    st.db = std::move(db);
    st.sidtab = std::make_shared<Sidtab>(sid_cache_size, era);
    st.config = config;
    if (load_isids(st.p(), *st.sidtab))
        throw UserError("policy: initial SIDs: a SID is 0, repeated or has no context");
    return st;
}

// --- contexts and SIDs -----------------------------------------------------------------------

int context_to_sid(const PolicyState &st, std::string_view str, uint32_t *sid, bool force) {
    Context c;
    int rc = string_to_context(st.p(), str, c, st.config.level_check);
    if (rc) {
        if (!force || rc != -EINVAL) return rc;
        // Keep the context by its string (security_context_to_sid_force).
        c = Context{};
        size_t nul = str.find('\0');
        c.str = std::string(nul == std::string_view::npos ? str : str.substr(0, nul));
        if (c.str.empty()) return -EINVAL;
    }
    return st.sidtab->context_to_sid(c, sid, str.substr(0, str.find('\0')));
}

int sid_to_context(const PolicyState &st, uint32_t sid, std::string *out, bool force) {
    Sidtab &s = *st.sidtab;
    Sidtab::Entry *e = s.search_entry(sid, force);
    if (!e) return -EINVAL;
    if (e->context.is_invalid()) {
        *out = e->context.str;
        return 0;
    }
    if (s.sid2str_get(e->sid, *out)) return 0;
    out->clear();
    context_to_string_append(st.p(), e->context, *out);
    s.sid2str_put(e->sid, *out);
    return 0;
}

// --- access decisions ------------------------------------------------------------------------

namespace {

// A conditional rule applies while its ENABLED bit is set.
inline void cond_node_av(const AvtabNode &n, AvDecision &avd) {
    uint16_t spec = n.key.specified;
    if (!(spec & AVTAB_ENABLED)) return;
    if (spec & AVTAB_ALLOWED) avd.allowed |= n.datum.u.data;
    if (spec & AVTAB_AUDITDENY) avd.auditdeny &= n.datum.u.data;
    if (spec & AVTAB_AUDITALLOW) avd.auditallow |= n.datum.u.data;
}

// Rules of one (source, target, class) key in the unconditional and the conditional table;
// `on_cond` gets each conditional node found.
template <class OnCond>
inline void avtab_key_av(const Policydb &db, const AvtabKey &key, AvDecision &avd,
                         OnCond &&on_cond) {
    for (const AvtabNode *n = db.b().te_avtab.search_node(key); n;
         n = Avtab::search_node_next(n, key.specified)) {
        count_work(Work::AvtabNode);
        switch (n->key.specified) {
            case AVTAB_ALLOWED:
                avd.allowed |= n->datum.u.data;
                break;
            case AVTAB_AUDITALLOW:
                avd.auditallow |= n->datum.u.data;
                break;
            case AVTAB_AUDITDENY:
                avd.auditdeny &= n->datum.u.data;
                break;
            default:
                break;
        }
    }
    for (const AvtabNode *n = db.cond->te_cond_avtab.search_node(key); n;
         n = Avtab::search_node_next(n, key.specified)) {
        count_work(Work::AvtabNode);
        on_cond(*n);
    }
}

// TE rules for every (attribute of source, attribute of target) pair.
template <class OnCond>
void te_rules_av(const Policydb &db, uint32_t stype, uint32_t ttype, uint32_t tclass,
                 AvDecision &avd, OnCond &&on_cond) {
    const PolicyBase &p = db.b();
    AvtabKey key;
    key.target_class = static_cast<uint16_t>(tclass);
    key.specified = AVTAB_AV;
    const Ebitmap &sattr = p.type_attr_map[stype - 1];
    const Ebitmap &tattr = p.type_attr_map[ttype - 1];
    // The two maps' nodes are read as the loops walk them (the lists are named by the policy's
    // reader); the target's again for every source attribute, from the cache after the first.
    for (uint32_t i : sattr.bits()) {
        key.source_type = static_cast<uint16_t>(i + 1);
        for (uint32_t j : tattr.bits()) {
            key.target_type = static_cast<uint16_t>(j + 1);
            avtab_key_av(db, key, avd, on_cond);
        }
    }
}

// te_rules_av through the thread's memo (te_rules_memo.h): the same decision bits and the same
// work counted, the searches done once per key and table generation.
void te_rules_av_memo(TeRulesMemo &memo, const Policydb &db, uint32_t stype, uint32_t ttype,
                      uint32_t tclass, AvDecision &avd) {
    WorkCounts *c = ThreadSlot<WorkCounts>::current;
    const Avtab &cond_table = db.cond->te_cond_avtab;
    auto &entries = memo.table(db.b().te_avtab, cond_table, c && c->records_lines());
    auto [it, fresh] = entries.try_emplace(TeRulesMemo::key(stype, ttype, tclass));
    TeRulesMemo::Entry &e = it->second;
    if (fresh) {
        memo.note_filled();
        AvDecision uncond;
        // Every line is recorded first: a line read twice in one call hits the second time, so
        // the entry keeps each once, and then only those the caller's sampling models. They are
        // recorded in the memo's buffer (reused, not grown for every entry), and the entry keeps
        // a copy of the few it needs.
        e.work.line_shift = c && c->records_lines() ? 0 : -1;
        e.work.streams = c && c->streams;
        TeRulesMemo::LineScratch &scratch = memo.line_scratch();
        if (e.work.records_lines()) e.work.lines.swap(scratch.lines);
        {
            WorkMeterScope meter(&e.work);
            te_rules_av(db, stype, ttype, tclass, uncond,
                        [&](const AvtabNode &n) { e.cond.push_back(cond_table.position_of(n)); });
        }
        if (e.work.records_lines()) {
            e.work.lines.swap(scratch.lines);
            e.work.line_shift = c->line_shift;
            e.work.line_touches = keep_distinct_sampled(scratch.lines, c->line_shift, scratch.seen);
            e.work.lines.assign(scratch.lines.begin(), scratch.lines.end());
            scratch.lines.clear();
        }
        e.allowed = uncond.allowed;
        e.auditallow = uncond.auditallow;
        e.auditdeny = uncond.auditdeny;
    }
    if (c) *c += e.work;
    avd.allowed |= e.allowed;
    avd.auditallow |= e.auditallow;
    avd.auditdeny &= e.auditdeny;
    for (const Avtab::Position pos : e.cond) {
        const AvtabNode *n = cond_table.node_at(pos);
        if (!n)  // a layout adopted by a table that does not repeat it
            throw std::logic_error("TE memo: a conditional rule's place is not in the table");
        cond_node_av(*n, avd);
    }
}

void type_attribute_bounds_av(const Policydb &db, const Context &scontext, const Context &tcontext,
                              uint32_t tclass, AvDecision &avd) {
    const PolicyBase &p = db.b();
    const TypeDatum *source = p.types.by_value(scontext.type);
    if (!source || !source->bounds) return;
    const TypeDatum *target = p.types.by_value(tcontext.type);

    // What the bounding types may do; anything beyond it is masked.
    Context lo_s;
    lo_s.user = scontext.user;
    lo_s.role = scontext.role;
    lo_s.type = source->bounds;
    lo_s.range = scontext.range;
    const Context *lo_t = &tcontext;
    Context lo_tcontext;
    if (target && target->bounds) {
        lo_tcontext.user = tcontext.user;
        lo_tcontext.role = tcontext.role;
        lo_tcontext.type = target->bounds;
        lo_tcontext.range = tcontext.range;
        lo_t = &lo_tcontext;
    }
    AvDecision lo;
    context_struct_compute_av(db, lo_s, *lo_t, tclass, lo);
    avd.allowed &= lo.allowed;
}

}  // namespace

void context_struct_compute_av(const Policydb &db, const Context &scontext, const Context &tcontext,
                               uint32_t tclass, AvDecision &avd) {
    const PolicyBase &p = db.b();
    avd.allowed = 0;
    avd.auditallow = 0;
    avd.auditdeny = 0xffffffff;
    const ClassDatum *cls = tclass ? p.classes.by_value(tclass) : nullptr;
    if (!cls || !scontext.type || !tcontext.type || scontext.type > p.type_attr_map.size() ||
        tcontext.type > p.type_attr_map.size())
        return;

    if (TeRulesMemo *memo = ThreadSlot<TeRulesMemo>::current)
        te_rules_av_memo(*memo, db, scontext.type, tcontext.type, tclass, avd);
    else
        te_rules_av(db, scontext.type, tcontext.type, tclass, avd,
                    [&](const AvtabNode &n) { cond_node_av(n, avd); });

    // Constraints, MLS constraints included, remove permissions.
    for (const Constraint &c : cls->constraints) {
        if ((c.permissions & avd.allowed) &&
            !constraint_expr_eval(p, scontext, tcontext, nullptr, c.expr))
            avd.allowed &= ~c.permissions;
    }

    // A process transition that changes the role needs a role allow rule.
    if (tclass == p.process_class && (avd.allowed & p.process_trans_perms) &&
        scontext.role != tcontext.role) {
        bool found = false;
        for (const RoleAllow &ra : p.role_allow) {
            count_work(Work::HashProbe);
            if (ra.role == scontext.role && ra.new_role == tcontext.role) {
                found = true;
                break;
            }
        }
        if (!found) avd.allowed &= ~p.process_trans_perms;
    }

    type_attribute_bounds_av(db, scontext, tcontext, tclass, avd);
}

int compute_av(const PolicyState &st, uint32_t ssid, uint32_t tsid, uint32_t tclass,
               AvDecision *avd) {
    *avd = AvDecision{};
    avd->seqno = st.seqno;
    const Context *s = st.sidtab->search(ssid);
    const Context *t = st.sidtab->search(tsid);
    if (!s || !t) return -EINVAL;
    const PolicyBase &p = st.p();
    if (s->type && p.permissive_map.get_bit(s->type)) avd->flags |= AVD_FLAGS_PERMISSIVE;
    if (!tclass || tclass > p.classes.nprim) {
        if (p.handle_unknown == ALLOW_UNKNOWN) avd->allowed = 0xffffffff;
        return 0;
    }
    context_struct_compute_av(st.db, *s, *t, tclass, *avd);
    return 0;
}

// --- new contexts ----------------------------------------------------------------------------

int compute_sid_context(const Policydb &db, const Context &scontext, const Context &tcontext,
                        uint32_t tclass, uint32_t specified, std::string_view objname, bool sock,
                        Context &newc, LevelCheck how) {
    const PolicyBase &p = db.b();
    const ClassDatum *cls = tclass ? p.classes.by_value(tclass) : nullptr;
    bool process_like = tclass == p.process_class || sock;
    newc = Context{};

    switch (specified) {
        case AVTAB_TRANSITION:
        case AVTAB_CHANGE:
            newc.user = cls && cls->default_user == DEFAULT_TARGET ? tcontext.user : scontext.user;
            break;
        case AVTAB_MEMBER:
            newc.user = tcontext.user;
            break;
        default:
            return -EINVAL;
    }

    if (cls && cls->default_role == DEFAULT_SOURCE)
        newc.role = scontext.role;
    else if (cls && cls->default_role == DEFAULT_TARGET)
        newc.role = tcontext.role;
    else
        newc.role = process_like ? scontext.role : OBJECT_R_VAL;

    if (cls && cls->default_type == DEFAULT_SOURCE)
        newc.type = scontext.type;
    else if (cls && cls->default_type == DEFAULT_TARGET)
        newc.type = tcontext.type;
    else
        newc.type = process_like ? scontext.type : tcontext.type;

    // A type_transition / type_member / type_change rule, unconditional first.
    AvtabKey key;
    key.source_type = static_cast<uint16_t>(scontext.type);
    key.target_type = static_cast<uint16_t>(tcontext.type);
    key.target_class = static_cast<uint16_t>(tclass);
    key.specified = static_cast<uint16_t>(specified);
    const AvtabNode *rule = p.te_avtab.search_node(key);
    if (rule) count_work(Work::AvtabNode);
    if (!rule) {
        for (const AvtabNode *n = db.cond->te_cond_avtab.search_node(key); n;
             n = Avtab::search_node_next(n, key.specified)) {
            count_work(Work::AvtabNode);
            if (n->key.specified & AVTAB_ENABLED) {
                rule = n;
                break;
            }
        }
    }
    if (rule) newc.type = rule->datum.u.data;

    if (!objname.empty()) {
        if (uint32_t otype = p.filename_trans_search(scontext.type, tcontext.type, tclass, objname))
            newc.type = otype;
    }

    if (specified & AVTAB_TRANSITION) {
        if (const uint32_t *r = p.role_trans_search(scontext.role, tcontext.type, tclass))
            newc.role = *r;
    }

    if (int rc = mls_compute_sid(p, scontext, tcontext, tclass, specified, newc, sock)) return rc;

    if (!policydb_context_isvalid(p, newc, how)) return -EACCES;
    return 0;
}

int compute_sid(const PolicyState &st, uint32_t ssid, uint32_t tsid, uint32_t tclass,
                uint32_t specified, std::string_view objname, uint32_t *out_sid, bool sock) {
    const Context *s = st.sidtab->search(ssid);
    const Context *t = st.sidtab->search(tsid);
    if (!s || !t) return -EINVAL;
    Context newc;
    if (int rc = compute_sid_context(st.db, *s, *t, tclass, specified, objname, sock, newc,
                                     st.config.level_check))
        return rc;
    return st.sidtab->context_to_sid(newc, out_sid);
}

// --- get_user_sids ---------------------------------------------------------------------------

int get_user_sids_candidates(const PolicyState &st, uint32_t fromsid, std::string_view username,
                             std::vector<uint32_t> *sids) {
    sids->clear();
    const PolicyBase &p = st.p();
    const Context *fromcon = st.sidtab->search(fromsid);
    if (!fromcon) return -EINVAL;
    const UserDatum *user = p.users.find(username);
    if (!user) return -EINVAL;
    Context usercon;
    usercon.user = user->value;
    for (uint32_t i : user->roles.bits()) {
        const RoleDatum *role = p.roles.by_value(i + 1);
        if (!role) continue;
        usercon.role = i + 1;
        for (uint32_t j : role->types.bits()) {
            usercon.type = j + 1;
            if (mls_setup_user_range(p, *fromcon, *user, usercon)) continue;
            uint32_t sid;
            if (int rc = st.sidtab->context_to_sid(usercon, &sid)) return rc;
            sids->push_back(sid);
        }
    }
    return 0;
}

bool is_socket_class(const PolicyBase &p, uint32_t tclass) {
    std::string_view name = p.classes.name_of(tclass);
    constexpr std::string_view suffix = "_socket";
    return name == "socket" ||
           (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix);
}

uint32_t process_transition_perm(const PolicyBase &p) {
    const ClassDatum *cls = p.classes.by_value(p.process_class);
    if (!cls) return 0;
    const PermDatum *perm = cls->permissions.find("transition");
    if (!perm && cls->comdatum) perm = cls->comdatum->permissions.find("transition");
    return perm ? 1u << (perm->value - 1) : 0;
}

int get_user_sids(const PolicyState &st, uint32_t fromsid, std::string_view username,
                  std::vector<uint32_t> *sids) {
    std::vector<uint32_t> candidates;
    if (int rc = get_user_sids_candidates(st, fromsid, username, &candidates)) return rc;
    uint32_t trans = process_transition_perm(st.p());
    sids->clear();
    for (uint32_t sid : candidates) {
        AvDecision avd;
        if (compute_av(st, fromsid, sid, st.p().process_class, &avd)) continue;
        if (trans && (avd.allowed & trans) == trans) sids->push_back(sid);
    }
    return 0;
}

// --- booleans --------------------------------------------------------------------------------

std::vector<int> get_bools(const PolicyState &st) {
    const auto &bools = st.db.cond->bools;
    std::vector<int> values(bools.nprim, 0);
    for (uint32_t i = 0; i < bools.nprim; ++i)
        if (const BoolDatum *b = bools.by_value(i + 1)) values[i] = b->state;
    return values;
}

uint32_t bool_value(const PolicyState &st, std::string_view name) {
    const BoolDatum *b = st.db.cond->bools.find(name);
    return b ? b->value : 0;
}

int cond_set_bools(CondPolicy &cond, std::span<const int> values) {
    if (values.size() != cond.bools.nprim) return -EINVAL;
    for (uint32_t i = 0; i < values.size(); ++i) {
        BoolDatum *b = cond.bools.by_value(i + 1);
        if (!b || b->state == (values[i] ? 1 : 0)) continue;
        b->state = values[i] ? 1 : 0;
        cond.touch_bool(i + 1, Access::Modified);  // the datum's state, stored in place
    }
    cond_evaluate_nodes(cond);
    return 0;
}

int set_bools_inplace(PolicyState &st, std::span<const int> values) {
    if (int rc = cond_set_bools(*st.db.cond, values)) return rc;
    ++st.seqno;
    return 0;
}

int set_bools_cond_dup(const PolicyState &old, std::span<const int> values, PolicyState *out) {
    if (values.size() != old.db.cond->bools.nprim) return -EINVAL;
    PolicyState n = old;  // the shallow copy
    cond_policydb_dup(n.db, old.db);
    cond_set_bools(*n.db.cond, values);
    n.seqno = old.seqno + 1;
    *out = std::move(n);
    return 0;
}

int set_bools_full_copy(const PolicyState &old, std::span<const int> values, PolicyState *out) {
    if (values.size() != old.db.cond->bools.nprim) return -EINVAL;
    PolicyState n = old;
    n.db = policydb_full_copy(old.db);
    cond_set_bools(*n.db.cond, values);
    n.seqno = old.seqno + 1;
    *out = std::move(n);
    return 0;
}

// --- policy load -----------------------------------------------------------------------------

int convert_context(const PolicyBase &oldp, const PolicyBase &newp, const Context &oldc,
                    Context &newc) {
    newc = Context{};
    if (oldc.is_invalid()) {
        // Formerly invalid: mapped if the new policy accepts it, else kept as it was.
        if (string_to_context(newp, oldc.str, newc) == 0) return 0;
        newc = Context{};
        newc.str = oldc.str;
        return 0;
    }
    auto invalidate = [&] {
        newc = Context{};
        newc.str = context_to_string(oldp, oldc);
        return 0;
    };
    const UserDatum *u = newp.users.find(oldp.users.name_of(oldc.user));
    const RoleDatum *r = newp.roles.find(oldp.roles.name_of(oldc.role));
    const TypeDatum *t = newp.types.find(oldp.types.name_of(oldc.type));
    if (!u || !r || !t) return invalidate();
    newc.user = u->value;
    newc.role = r->value;
    newc.type = t->value;
    if (oldp.mls && newp.mls) {
        newc.range = oldc.range;
        if (mls_convert_context(oldp, newp, newc)) return invalidate();
    } else if (!oldp.mls && newp.mls) {
        // Entering MLS: take the unlabeled initial SID's range.
        const Ocontext *unl = nullptr;
        for (const Ocontext &oc : newp.ocontexts[OCON_ISID])
            if (oc.sid_value == SECINITSID_UNLABELED) unl = &oc;
        if (!unl) return invalidate();
        newc.range = unl->context[0].range;
    }
    if (!policydb_context_isvalid(newp, newc)) return invalidate();
    return 0;
}

int load_policy(const PolicyState *old, Policydb newdb, PolicyState *out) {
    PolicyState n;
    n.db = std::move(newdb);
    n.sidtab = old ? std::make_shared<Sidtab>(old->sidtab->cache_size(), old->sidtab->era(),
                                              old->sidtab->locking())
                   : std::make_shared<Sidtab>();
    if (old) n.config = old->config;
    if (int rc = load_isids(n.p(), *n.sidtab)) return rc;
    if (old) {
        // Booleans keep their values by name.
        CondPolicy &cond = *n.db.cond;
        for (const auto &b : old->db.cond->bools.entries())
            if (BoolDatum *nb = cond.bools.find(b->name)) nb->state = b->state;
        cond_evaluate_nodes(cond);
        const PolicyBase &oldp = old->p();
        const PolicyBase &newp = n.p();
        int rc = old->sidtab->convert(*n.sidtab, [&oldp, &newp](const Context &o, Context &c) {
            return convert_context(oldp, newp, o, c);
        });
        if (rc) return rc;  // sidtab_convert stopped mirroring itself
        n.seqno = old->seqno + 1;
    }
    *out = std::move(n);
    return 0;
}

int load_policy(const PolicyState *old, std::span<const uint8_t> data, PolicyState *out) {
    return load_policy(old, policydb_read(data, "new policy"), out);
}

void commit_load_policy(const PolicyState &old) {
    old.sidtab->freeze();
}

}  // namespace locksim::ss
