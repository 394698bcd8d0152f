/* libsepol as the oracle for the services tests. */
#include "sepol_oracle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sepol/context.h>
#include <sepol/debug.h>
#include <sepol/policydb/avtab.h>
#include <sepol/policydb/conditional.h>
#include <sepol/policydb/context.h>
#include <sepol/policydb/ebitmap.h>
#include <sepol/policydb/mls_types.h>
#include <sepol/policydb/policydb.h>
#include <sepol/policydb/services.h>
#include <sepol/policydb/sidtab.h>

static policydb_t policy;
static sidtab_t sids;
static int loaded;

void so_unload(void) {
    if (!loaded) return;
    sepol_sidtab_destroy(&sids);
    policydb_destroy(&policy);
    loaded = 0;
}

int so_load(const char *path) {
    so_unload();
    sepol_debug(0);
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    struct policy_file pf;
    policy_file_init(&pf);
    pf.type = PF_USE_STDIO;
    pf.fp = fp;
    if (policydb_init(&policy)) {
        fclose(fp);
        return -1;
    }
    int rc = policydb_read(&policy, &pf, 0);
    fclose(fp);
    if (rc) {
        policydb_destroy(&policy);
        return -1;
    }
    sepol_sidtab_init(&sids);
    sepol_set_policydb(&policy);
    sepol_set_sidtab(&sids);
    loaded = 1;
    return 0;
}

void so_reset_sids(void) {
    sepol_sidtab_destroy(&sids);
    sepol_sidtab_init(&sids);
}

static int to_sid(const char *con, sepol_security_id_t *sid) {
    return sepol_context_to_sid(con, strlen(con), sid) ? -1 : 0;
}

unsigned so_class_value(const char *name) {
    class_datum_t *c = hashtab_search(policy.p_classes.table, (hashtab_key_t)name);
    return c ? c->s.value : 0;
}

unsigned so_sid(const char *con) {
    sepol_security_id_t sid;
    return to_sid(con, &sid) ? 0 : sid;
}

int so_compute_av_sid(unsigned ssid, unsigned tsid, unsigned tclass, unsigned *allowed,
                      unsigned *auditallow, unsigned *auditdeny) {
    struct sepol_av_decision avd;
    int rc = sepol_compute_av(ssid, tsid, (sepol_security_class_t)tclass, 0, &avd);
    if (rc) return rc < 0 ? rc : -rc;
    *allowed = avd.allowed;
    *auditallow = avd.auditallow;
    *auditdeny = avd.auditdeny;
    return 0;
}

int so_create_sid(unsigned ssid, unsigned tsid, unsigned tclass, char **out) {
    sepol_security_id_t nsid;
    int rc = sepol_transition_sid(ssid, tsid, (sepol_security_class_t)tclass, &nsid);
    if (rc) return rc < 0 ? rc : -rc;
    size_t len;
    rc = sepol_sid_to_context(nsid, out, &len);
    return rc ? -EINVAL : 0;
}

int so_compute_av(const char *scon, const char *tcon, unsigned tclass, unsigned *allowed,
                  unsigned *auditallow, unsigned *auditdeny) {
    sepol_security_id_t ssid, tsid;
    if (to_sid(scon, &ssid) || to_sid(tcon, &tsid)) return -1;
    return so_compute_av_sid(ssid, tsid, tclass, allowed, auditallow, auditdeny);
}

int so_create(const char *scon, const char *tcon, unsigned tclass, char **out) {
    sepol_security_id_t ssid, tsid;
    if (to_sid(scon, &ssid) || to_sid(tcon, &tsid)) return -1;
    return so_create_sid(ssid, tsid, tclass, out);
}

int so_valid(const char *con) {
    return sepol_check_context(con) == 0;
}

int so_set_bool(const char *name, int value) {
    cond_bool_datum_t *b = hashtab_search(policy.p_bools.table, (hashtab_key_t)name);
    if (!b) return -1;
    b->state = value ? 1 : 0;
    return evaluate_conds(&policy) ? -1 : 0;
}

int so_get_user_sids(const char *fromcon, const char *user, char ***out, unsigned *n) {
    sepol_security_id_t from, *list = NULL;
    uint32_t nel = 0;
    if (to_sid(fromcon, &from)) return -1;
    char *u = strdup(user);
    int rc = sepol_get_user_sids(from, u, &list, &nel);
    free(u);
    if (rc) return rc < 0 ? rc : -rc;
    char **strs = calloc(nel ? nel : 1, sizeof(char *));
    for (uint32_t i = 0; i < nel; ++i) {
        strs[i] = so_render(list[i]);
        if (!strs[i]) strs[i] = strdup("?");
    }
    free(list);
    *out = strs;
    *n = nel;
    return 0;
}

void so_free_strings(char **strs, unsigned n) {
    for (unsigned i = 0; i < n; ++i)
        free(strs[i]);
    free(strs);
}

int so_compute_sid_kind(unsigned ssid, unsigned tsid, unsigned tclass, int kind, char **out) {
    sepol_security_id_t nsid;
    sepol_security_class_t c = (sepol_security_class_t)tclass;
    int rc = kind == 0   ? sepol_transition_sid(ssid, tsid, c, &nsid)
             : kind == 1 ? sepol_member_sid(ssid, tsid, c, &nsid)
                         : sepol_change_sid(ssid, tsid, c, &nsid);
    if (rc) return rc < 0 ? rc : -rc;
    *out = so_render(nsid);
    return *out ? 0 : -EINVAL;
}

static void append(char **buf, size_t *len, size_t *cap, const char *s) {
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *buf = realloc(*buf, *cap);
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

static void append_level(char **buf, size_t *len, size_t *cap, const mls_level_t *l) {
    append(buf, len, cap, policy.p_sens_val_to_name[l->sens - 1]);
    ebitmap_node_t *node;
    unsigned bit;
    int first = 1;
    ebitmap_for_each_positive_bit(&l->cat, node, bit) {
        append(buf, len, cap, first ? ":" : ",");
        append(buf, len, cap, policy.p_cat_val_to_name[bit]);
        first = 0;
    }
}

char *so_render(unsigned sid) {
    context_struct_t *c = sepol_sidtab_search(&sids, sid);
    if (!c) return NULL;
    size_t len = 0, cap = 256;
    char *buf = malloc(cap);
    buf[0] = 0;
    append(&buf, &len, &cap, policy.p_user_val_to_name[c->user - 1]);
    append(&buf, &len, &cap, ":");
    append(&buf, &len, &cap, policy.p_role_val_to_name[c->role - 1]);
    append(&buf, &len, &cap, ":");
    append(&buf, &len, &cap, policy.p_type_val_to_name[c->type - 1]);
    if (policy.mls) {
        append(&buf, &len, &cap, ":");
        append_level(&buf, &len, &cap, &c->range.level[0]);
        if (!mls_level_eq(&c->range.level[0], &c->range.level[1])) {
            append(&buf, &len, &cap, "-");
            append_level(&buf, &len, &cap, &c->range.level[1]);
        }
    }
    return buf;
}

unsigned so_filename_otype(unsigned stype, unsigned ttype, unsigned tclass, const char *name) {
    filename_trans_key_t key = {.ttype = ttype, .tclass = tclass, .name = (char *)name};
    filename_trans_datum_t *d = hashtab_search(policy.filename_trans, (hashtab_key_t)&key);
    for (; d; d = d->next)
        if (ebitmap_get_bit(&d->stypes, stype - 1)) return d->otype;
    return 0;
}

/* A type rule of `specified` for the key, unconditional or in an enabled conditional branch, as
 * libsepol's own compute_sid looks it up. */
static int have_type_rule(unsigned stype, unsigned ttype, unsigned tclass, unsigned specified) {
    avtab_key_t key = {.source_type = (uint16_t)stype,
                       .target_type = (uint16_t)ttype,
                       .target_class = (uint16_t)tclass,
                       .specified = (uint16_t)specified};
    if (avtab_search(&policy.te_avtab, &key)) return 1;
    for (avtab_ptr_t n = avtab_search_node(&policy.te_cond_avtab, &key); n;
         n = avtab_search_node_next(n, (int)specified))
        if (n->key.specified & AVTAB_ENABLED) return 1;
    return 0;
}

int so_socket_sid(unsigned ssid, unsigned tsid, unsigned tclass, char **out) {
    sepol_security_id_t rsid;
    int rc = sepol_transition_sid(ssid, tsid, (sepol_security_class_t)tclass, &rsid);
    if (rc) return rc < 0 ? rc : -rc;
    context_struct_t *s = sepol_sidtab_search(&sids, ssid);
    context_struct_t *t = sepol_sidtab_search(&sids, tsid);
    context_struct_t *r = sepol_sidtab_search(&sids, rsid);
    if (!s || !t || !r) return -EINVAL;
    const class_datum_t *cls = policy.class_val_to_struct[tclass - 1];
    context_struct_t e;
    context_init(&e);
    if (context_cpy(&e, r)) return -ENOMEM;
    int role_rule = 0;
    for (role_trans_t *rt = policy.role_tr; rt; rt = rt->next)
        role_rule |= rt->role == s->role && rt->type == t->type && rt->tclass == tclass;
    if (!cls->default_role && !role_rule) e.role = s->role;
    if (!cls->default_type && !have_type_rule(s->type, t->type, tclass, AVTAB_TRANSITION))
        e.type = s->type;
    range_trans_t key = {.source_type = s->type, .target_type = t->type, .target_class = tclass};
    if (policy.mls && !cls->default_range &&
        !hashtab_search(policy.range_tr, (hashtab_key_t)&key)) {
        mls_context_destroy(&e);
        if (mls_context_cpy(&e, s)) return -ENOMEM;
    }
    sepol_security_id_t esid;
    if (!policydb_context_isvalid(&policy, &e))
        rc = -EACCES;
    else if (sepol_sidtab_context_to_sid(&sids, &e, &esid))
        rc = -ENOMEM;
    context_destroy(&e);
    if (rc) return rc;
    *out = so_render(esid);
    return *out ? 0 : -EINVAL;
}
