#include "sepol_counts.h"

#include <sepol/debug.h>
#include <sepol/policydb/avtab.h>
#include <sepol/policydb/conditional.h>
#include <sepol/policydb/ebitmap.h>
#include <sepol/policydb/hashtab.h>
#include <sepol/policydb/policydb.h>
#include <stdlib.h>
#include <string.h>

static void put(struct sepol_counts *c, const char *key, uint64_t v) {
    if (c->n < SEPOL_MAX_COUNTS) {
        c->key[c->n] = key;
        c->value[c->n] = v;
        c->n++;
    }
}

struct type_counts {
    uint64_t types, attributes, aliases, bounds;
};

static int count_type(hashtab_key_t k, hashtab_datum_t d, void *arg) {
    type_datum_t *t = d;
    struct type_counts *c = arg;
    (void)k;
    if (!t->primary)
        c->aliases++;
    else if (t->flavor == TYPE_ATTRIB)
        c->attributes++;
    else
        c->types++;
    if (t->primary && t->bounds)
        c->bounds++;
    return 0;
}

struct class_counts {
    uint64_t perms, constraints, validatetrans;
};

static int count_class(hashtab_key_t k, hashtab_datum_t d, void *arg) {
    class_datum_t *cl = d;
    struct class_counts *c = arg;
    constraint_node_t *n;
    (void)k;
    c->perms += cl->permissions.table->nel;
    for (n = cl->constraints; n; n = n->next)
        c->constraints++;
    for (n = cl->validatetrans; n; n = n->next)
        c->validatetrans++;
    return 0;
}

static int count_common(hashtab_key_t k, hashtab_datum_t d, void *arg) {
    common_datum_t *cm = d;
    (void)k;
    ((struct class_counts *)arg)->perms += cm->permissions.table->nel;
    return 0;
}

struct alias_counts {
    uint64_t primary, alias;
};

static int count_level(hashtab_key_t k, hashtab_datum_t d, void *arg) {
    level_datum_t *l = d;
    struct alias_counts *c = arg;
    (void)k;
    if (l->isalias)
        c->alias++;
    else
        c->primary++;
    return 0;
}

static int count_cat(hashtab_key_t k, hashtab_datum_t d, void *arg) {
    cat_datum_t *l = d;
    struct alias_counts *c = arg;
    (void)k;
    if (l->isalias)
        c->alias++;
    else
        c->primary++;
    return 0;
}

static const uint16_t kinds[] = {AVTAB_ALLOWED,         AVTAB_AUDITALLOW,        AVTAB_AUDITDENY,
                                 AVTAB_TRANSITION,      AVTAB_MEMBER,            AVTAB_CHANGE,
                                 AVTAB_XPERMS_ALLOWED,  AVTAB_XPERMS_AUDITALLOW, AVTAB_XPERMS_DONTAUDIT};
static const char *avtab_keys[] = {"avtab_allow",          "avtab_auditallow",
                                   "avtab_dontaudit",      "avtab_type_transition",
                                   "avtab_type_member",    "avtab_type_change",
                                   "avtab_allowxperm",     "avtab_auditallowxperm",
                                   "avtab_dontauditxperm"};
static const char *cond_keys[] = {"cond_avtab_allow",          "cond_avtab_auditallow",
                                  "cond_avtab_dontaudit",      "cond_avtab_type_transition",
                                  "cond_avtab_type_member",    "cond_avtab_type_change",
                                  "cond_avtab_allowxperm",     "cond_avtab_auditallowxperm",
                                  "cond_avtab_dontauditxperm"};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static int count_avtab(avtab_key_t *k, avtab_datum_t *d, void *arg) {
    uint64_t *by_kind = arg;
    size_t i;
    (void)d;
    for (i = 0; i < NKINDS; i++)
        if (k->specified & kinds[i])
            by_kind[i]++;
    return 0;
}

static void put_avtab(struct sepol_counts *c, avtab_t *t, const char *total, const char **keys) {
    uint64_t by_kind[NKINDS] = {0};
    size_t i;
    avtab_map(t, count_avtab, by_kind);
    put(c, total, t->nel);
    for (i = 0; i < NKINDS; i++)
        put(c, keys[i], by_kind[i]);
}

static policydb_t *load(const void *data, size_t len) {
    policy_file_t pf;
    policydb_t *p = malloc(sizeof(*p));
    if (!p)
        return NULL;
    sepol_debug(0);
    policy_file_init(&pf);
    pf.type = PF_USE_MEMORY;
    pf.data = (char *)data;
    pf.len = len;
    if (policydb_init(p)) {
        free(p);
        return NULL;
    }
    if (policydb_read(p, &pf, 0)) {
        policydb_destroy(p);
        free(p);
        return NULL;
    }
    return p;
}

void *sepol_policy_load(const void *data, size_t len) { return load(data, len); }

void sepol_policy_free(void *policy) {
    if (policy) {
        policydb_destroy(policy);
        free(policy);
    }
}

int sepol_policy_counts(const void *data, size_t len, struct sepol_counts *c) {
    static const char *ocon_keys[] = {"ocon_isid",  "ocon_fs",     "ocon_port",
                                      "ocon_netif", "ocon_node",   "ocon_fsuse",
                                      "ocon_node6", "ocon_ibpkey", "ocon_ibendport"};
    struct type_counts tc = {0, 0, 0, 0};
    struct class_counts cc = {0, 0, 0};
    struct alias_counts lc = {0, 0}, kc = {0, 0};
    uint64_t n, m;
    role_trans_t *rt;
    role_allow_t *ra;
    cond_node_t *cn;
    genfs_t *g;
    ocontext_t *o;
    int i;
    policydb_t *p = load(data, len);

    memset(c, 0, sizeof(*c));
    if (!p)
        return -1;
    c->version = p->policyvers;
    c->mls = p->mls;
    c->handle_unknown = p->handle_unknown;

    hashtab_map(p->p_types.table, count_type, &tc);
    hashtab_map(p->p_classes.table, count_class, &cc);
    hashtab_map(p->p_commons.table, count_common, &cc);
    hashtab_map(p->p_levels.table, count_level, &lc);
    hashtab_map(p->p_cats.table, count_cat, &kc);

    put(c, "types", tc.types);
    put(c, "attributes", tc.attributes);
    put(c, "aliases", tc.aliases);
    put(c, "typebounds", tc.bounds);
    put(c, "permissive_types", ebitmap_cardinality(&p->permissive_map));
    put(c, "roles", p->p_roles.nprim);
    put(c, "users", p->p_users.nprim);
    put(c, "classes", p->p_classes.nprim);
    put(c, "commons", p->p_commons.nprim);
    put(c, "permissions", cc.perms);
    put(c, "booleans", p->p_bools.nprim);
    put(c, "sensitivities", lc.primary);
    put(c, "sensitivity_aliases", lc.alias);
    put(c, "categories", kc.primary);
    put(c, "category_aliases", kc.alias);
    put(c, "policy_capabilities", ebitmap_cardinality(&p->policycaps));
    put_avtab(c, &p->te_avtab, "avtab_entries", avtab_keys);
    put_avtab(c, &p->te_cond_avtab, "cond_avtab_entries", cond_keys);
    for (n = 0, cn = p->cond_list; cn; cn = cn->next)
        n++;
    put(c, "cond_expressions", n);
    put(c, "constraints", cc.constraints);
    put(c, "validatetrans", cc.validatetrans);
    for (n = 0, ra = p->role_allow; ra; ra = ra->next)
        n++;
    put(c, "role_allow", n);
    for (n = 0, rt = p->role_tr; rt; rt = rt->next)
        n++;
    put(c, "role_trans", n);
    put(c, "range_trans", p->range_tr ? p->range_tr->nel : 0);
    put(c, "filename_trans", p->filename_trans_count);
    put(c, "filename_trans_keys", p->filename_trans ? p->filename_trans->nel : 0);
    for (i = 0; i < OCON_NUM; i++) {
        for (n = 0, o = p->ocontexts[i]; o; o = o->next)
            n++;
        put(c, ocon_keys[i], n);
    }
    for (n = 0, m = 0, g = p->genfs; g; g = g->next) {
        n++;
        for (o = g->head; o; o = o->next)
            m++;
    }
    put(c, "genfs_fstypes", n);
    put(c, "genfs_entries", m);

    policydb_destroy(p);
    free(p);
    return 0;
}

int sepol_policy_fan_out(const void *data, size_t len, struct sepol_fan_out *f) {
    policydb_t *p = load(data, len);
    type_datum_t *domain;
    uint32_t i;

    memset(f, 0, sizeof(*f));
    if (!p)
        return -1;
    domain = hashtab_search(p->p_types.table, "domain");
    if (!domain || domain->flavor != TYPE_ATTRIB) {
        sepol_policy_free(p);
        return -1;
    }
    for (i = 0; i < p->p_types.nprim; i++) {
        type_datum_t *t = p->type_val_to_struct[i];
        uint64_t k;
        if (!t || t->flavor == TYPE_ATTRIB)
            continue;
        k = ebitmap_cardinality(&p->type_attr_map[i]);
        if (ebitmap_get_bit(&p->type_attr_map[i], domain->s.value - 1)) {
            f->domains++;
            f->domain_sum += k;
            if (k > f->domain_max)
                f->domain_max = k;
        } else {
            f->others++;
            f->other_sum += k;
            if (k > f->other_max)
                f->other_max = k;
        }
    }
    sepol_policy_free(p);
    return 0;
}
