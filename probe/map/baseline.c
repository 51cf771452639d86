/* The baseline sweep's use (docs/METHODS.md §1.2, §1.4): units the probe cannot
 * measure cleanly are masked, and every unit's own miss rate without a
 * target is subtracted from its counts. */
#include "llcprobe/map.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void llc_map_baseline_free(struct llc_map_baseline *b)
{
    if (!b)
        return;
    free(b->q);
    free(b->why);
    free(b);
}

int llc_map_baseline_new(const struct llc_map_result *base, const bool *leaders,
                         struct llc_map_baseline **out, char *err, size_t errlen)
{
    *out = NULL;
    struct llc_map_baseline *b = calloc(1, sizeof(*b));
    if (!b)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    b->units = base->units;
    b->q = malloc(base->units * sizeof(*b->q));
    b->why = calloc(base->units, sizeof(*b->why));
    if (!b->q || !b->why) {
        llc_map_baseline_free(b);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    for (uint32_t u = 0; u < base->units; u++) {
        const bool seen = base->measured[u] && base->accesses[u] > 0;
        b->q[u] = seen ? (double)base->misses[u] / (double)base->accesses[u] : NAN;
        if (seen && b->q[u] > LLC_MAP_BASELINE_MAX_Q) {
            b->why[u] |= LLC_MAP_EXCL_BASELINE;
            b->n_baseline++;
        }
        if (leaders && leaders[u]) {
            b->why[u] |= LLC_MAP_EXCL_LEADER;
            b->n_leader++;
        }
        b->n_excluded += b->why[u] != 0;
    }
    *out = b;
    return 0;
}

int llc_map_baseline_apply(const struct llc_map_baseline *b, struct llc_map_result *r, char *err,
                           size_t errlen)
{
    if (b->units != r->units)
        return llc_errf(err, errlen, -EINVAL, "the baseline has %u sets, the map %u", b->units,
                        r->units);
    free(r->excluded);
    free(r->raw_misses);
    r->excluded = calloc(r->units, sizeof(*r->excluded));
    r->raw_misses = malloc(r->units * sizeof(*r->raw_misses));
    if (!r->excluded || !r->raw_misses)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    memcpy(r->raw_misses, r->misses, r->units * sizeof(*r->raw_misses));
    for (uint32_t u = 0; u < r->units; u++) {
        r->excluded[u] = b->why[u] != 0;
        const double q = isfinite(b->q[u]) ? b->q[u] : 0;
        r->misses[u] = 0;
        for (unsigned sw = 0; sw < r->sweeps_planned; sw++) {
            uint64_t *m = &r->sweep_misses[(size_t)sw * r->units + u];
            const double expect = q * (double)r->sweep_accesses[(size_t)sw * r->units + u];
            const uint64_t sub = (uint64_t)llround(expect);
            *m = *m > sub ? *m - sub : 0;
            r->misses[u] += *m;
        }
    }
    return 0;
}
