/* A list of units ("0-15,100,4096-4100"), as --sets takes it. */
#include "llcprobe/map.h"

#include "llcprobe/common.h"
#include "util/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int llc_map_parse_sets(const char *list, uint32_t **out, size_t *n, char *err, size_t errlen)
{
    size_t cap = 64, count = 0;
    uint32_t *v = malloc(cap * sizeof(*v));
    char *copy = strdup(list);
    int rc = 0;
    if (!v || !copy) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(tok, '-');
        uint64_t lo, hi;
        if (dash)
            *dash = '\0';
        if (llc_parse_u64_range(tok, 0, UINT32_MAX, &lo) < 0 ||
            (dash && llc_parse_u64_range(dash + 1, 0, UINT32_MAX, &hi) < 0) || (dash && hi < lo)) {
            rc = llc_errf(err, errlen, -EINVAL, "'%s' is not a list of set ids like 0-63,4096",
                          list);
            goto out;
        }
        if (!dash)
            hi = lo;
        /* Before the loop: "0-4000000000" took seconds and 0.5 GB to refuse. */
        if (hi - lo >= LLC_MAP_MAX_SET_IDS - count) {
            rc = llc_errf(err, errlen, -E2BIG, "'%s' names more than %u sets", list,
                          LLC_MAP_MAX_SET_IDS);
            goto out;
        }
        for (uint64_t s = lo; s <= hi; s++) {
            if (count == cap) {
                uint32_t *nv = realloc(v, 2 * cap * sizeof(*v));
                if (!nv) {
                    rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
                    goto out;
                }
                v = nv;
                cap *= 2;
            }
            v[count++] = (uint32_t)s;
        }
    }
    if (count == 0)
        rc = llc_errf(err, errlen, -EINVAL, "'%s' names no sets", list);
out:
    free(copy);
    if (rc < 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n = count;
    return 0;
}
