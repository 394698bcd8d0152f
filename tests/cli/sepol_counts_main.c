/* sepol_counts POLICY: libsepol's own counts of a binary policy (tests/ss/sepol_counts.c) and
 * its type -> attribute fan-out, as one JSON object on stdout, for the tests that check what
 * `locksim policy info` prints against libsepol. Exit status 1 when libsepol refuses the file. */
#include <stdio.h>
#include <stdlib.h>

#include "sepol_counts.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: sepol_counts POLICY\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1 << 20, len = 0;
    char *data = malloc(cap);
    for (size_t n; data && (n = fread(data + len, 1, cap - len, f)) > 0;) {
        len += n;
        if (len == cap) data = realloc(data, cap *= 2);
    }
    fclose(f);
    struct sepol_counts c;
    if (!data || sepol_policy_counts(data, len, &c) != 0) {
        fprintf(stderr, "%s: libsepol cannot read the policy\n", argv[1]);
        return 1;
    }
    printf("{\"version\": %u, \"counts\": {", c.version);
    for (int i = 0; i < c.n; ++i)
        printf("%s\"%s\": %llu", i ? ", " : "", c.key[i], (unsigned long long)c.value[i]);
    printf("}");
    struct sepol_fan_out fo;
    if (sepol_policy_fan_out(data, len, &fo) == 0)
        printf(", \"fan_out\": {\"domains\": %llu, \"domain_sum\": %llu, \"domain_max\": %llu, "
               "\"others\": %llu, \"other_sum\": %llu, \"other_max\": %llu}",
               (unsigned long long)fo.domains, (unsigned long long)fo.domain_sum,
               (unsigned long long)fo.domain_max, (unsigned long long)fo.others,
               (unsigned long long)fo.other_sum, (unsigned long long)fo.other_max);
    printf("}\n");
    free(data);
    return 0;
}
