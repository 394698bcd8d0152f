/* The libsepol oracle for the policy tests and benchmarks: reads a binary policy with
 * libsepol's own policydb_read and reports the same counts as `locksim policy info`,
 * under the same keys. C, because libsepol's headers are not valid C++. */
#ifndef LOCKSIM_TESTS_SS_SEPOL_COUNTS_H
#define LOCKSIM_TESTS_SS_SEPOL_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SEPOL_MAX_COUNTS 96

struct sepol_counts {
    uint32_t version;
    uint32_t mls;
    uint32_t handle_unknown;
    int n;
    const char *key[SEPOL_MAX_COUNTS];
    uint64_t value[SEPOL_MAX_COUNTS];
};

/* 0 on success, -1 when libsepol refuses the policy. */
int sepol_policy_counts(const void *data, size_t len, struct sepol_counts *out);

/* The type -> attribute fan-out as libsepol reads it: for the concrete types in the attribute
 * `domain` and for the others, how many, the sum and the largest of their type_attr_map sizes
 * (the type itself included). 0 on success, -1 when libsepol refuses the policy or it has no
 * attribute `domain`. */
struct sepol_fan_out {
    uint64_t domains, domain_sum, domain_max;
    uint64_t others, other_sum, other_max;
};
int sepol_policy_fan_out(const void *data, size_t len, struct sepol_fan_out *out);

/* Reads and frees a policy (for timing libsepol's reader); NULL on failure. */
void *sepol_policy_load(const void *data, size_t len);
void sepol_policy_free(void *policy);

#ifdef __cplusplus
}
#endif

#endif
