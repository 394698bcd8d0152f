/* A plain C interface to libsepol's security server (static libsepol, tests only), so that C++
 * tests can compare decisions without including libsepol's headers (one of which has a member
 * named `bool`). One policy at a time. */
#ifndef LOCKSIM_TESTS_SEPOL_ORACLE_H
#define LOCKSIM_TESTS_SEPOL_ORACLE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Loads a binary policy; 0 or -1. Replaces any loaded one. */
int so_load(const char *path);
void so_unload(void);

/* Empties libsepol's SID table (its context lookup is a linear scan, so the tests keep it
 * short); earlier SIDs become unknown. */
void so_reset_sids(void);

/* Class value by name, 0 when unknown. */
unsigned so_class_value(const char *name);

/* The libsepol SID of a context string, 0 when libsepol rejects it. */
unsigned so_sid(const char *con);
/* sepol_compute_av on two SIDs: 0 or libsepol's negative errno. */
int so_compute_av_sid(unsigned ssid, unsigned tsid, unsigned tclass, unsigned *allowed,
                      unsigned *auditallow, unsigned *auditdeny);
/* sepol_transition_sid + sepol_sid_to_context on two SIDs: 0 with *out malloc'ed, or libsepol's
 * negative errno. */
int so_create_sid(unsigned ssid, unsigned tsid, unsigned tclass, char **out);

/* sepol_compute_sid for `kind` 0 (transition_sid), 1 (member_sid) or 2 (change_sid): 0 with
 * *out the new context written with every category listed (so_render), or libsepol's negative
 * errno. */
int so_compute_sid_kind(unsigned ssid, unsigned tsid, unsigned tclass, int kind, char **out);

/* A SID's context as "user:role:type:s0:c1,c2,c9-s1:c3" with every category listed one by one
 * (no c1.c5 runs), from libsepol's context structure itself, so category sets compare as sets
 * whatever libsepol's own printer does with them. malloc'ed; NULL for an unknown SID. */
char *so_render(unsigned sid);

/* The kernel's type_transition result for a socket class, which libsepol does not model: libsepol's
 * result with the kernel's socket defaults put where no rule or class default decided (the
 * source's role and type, the source's full range), then checked for validity by libsepol.
 * 0 with *out rendered as so_render does, -EACCES when that context is not valid, or libsepol's
 * own error for the query. */
int so_socket_sid(unsigned ssid, unsigned tsid, unsigned tclass, char **out);

/* The new type of a named type transition in libsepol's policy (stype, ttype, tclass, name), or
 * 0 when there is none. */
unsigned so_filename_otype(unsigned stype, unsigned ttype, unsigned tclass, const char *name);

/* sepol_compute_av on two context strings: 0, -1 for an invalid context, else libsepol's
 * negative errno. */
int so_compute_av(const char *scon, const char *tcon, unsigned tclass, unsigned *allowed,
                  unsigned *auditallow, unsigned *auditdeny);

/* sepol_transition_sid then sepol_sid_to_context: 0 with *out malloc'ed, -1 for an invalid
 * input context, else libsepol's negative errno. */
int so_create(const char *scon, const char *tcon, unsigned tclass, char **out);

/* 1 when libsepol accepts the context (sepol_check_context). */
int so_valid(const char *con);

/* Sets a boolean by name and re-evaluates the conditional rules; 0 or -1 (unknown). */
int so_set_bool(const char *name, int value);

/* sepol_get_user_sids: 0 with *out an array of *n malloc'ed contexts as so_render writes them
 * (free with so_free_strings),
 * -1 for an invalid context, else libsepol's negative errno. */
int so_get_user_sids(const char *fromcon, const char *user, char ***out, unsigned *n);
void so_free_strings(char **strs, unsigned n);

#ifdef __cplusplus
}
#endif

#endif
