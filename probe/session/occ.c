/* The occupancy estimator of `sample` and `calibrate`: a walk-length
 * search per sampled set. The stress probe at its mapping rate measures how
 * often foreign lines enter a set (each costs it about W misses, whatever
 * stays), not how many stay. A slow probe that walks only w of the W ways
 * instead keeps hitting while w plus the foreign lines alive in the set fit
 * in W, and starts missing once they do not; so the largest w that still
 * hits leaves W - w for everything else. The probe must be slow (a line
 * revisited once per `cycle_s`) so that its lines are older than the
 * target's live ones: a fast probe always wins the LRU order and never
 * misses below w = W. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/session.h"
#include "llcprobe/common.h"

void llc_occ_params_default(struct llc_occ_params *p)
{
    p->cycle_s = LLC_OCC_DEFAULT_CYCLE;
    p->cycles = LLC_OCC_DEFAULT_CYCLES;
    p->threshold = LLC_OCC_DEFAULT_THRESHOLD;
}

int llc_occ_search(struct llc_map_backend *b, const uint32_t *units, size_t n,
                   const struct llc_occ_params *p, volatile sig_atomic_t *stop, double *held,
                   char *err, size_t errlen)
{
    const unsigned ways = b->geo.llc_ways;
    const uint32_t all = llc_map_units(&b->geo);
    uint8_t *walk = malloc(all);
    unsigned *lo = malloc(n * sizeof(*lo)), *hi = malloc(n * sizeof(*hi));
    uint64_t *miss = calloc(all, sizeof(*miss)), *acc = calloc(all, sizeof(*acc));
    bool paced = false;
    int rc = 0;
    if (!walk || !lo || !hi || !miss || !acc) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    if (!b->ops->probe_set) {
        rc = llc_errf(err, errlen, -ENOTSUP,
                      "the %s backend cannot change its walk length or pace mid-run", b->name);
        goto out;
    }
    memset(walk, ways, all);
    /* Invariant: walk lo hits (0 lines trivially do), walk hi misses
     * (ways + 1 lines cannot fit). Binary search per set, all sets in
     * each step, so the search takes ceil(log2(ways + 1)) dwells. */
    for (size_t i = 0; i < n; i++) {
        lo[i] = 0;
        hi[i] = ways + 1;
    }
    /* Paced on the LLC's share of the walk: on a victim LLC a probe line
     * lies in the LLC only between its eviction from the L2 and its next
     * visit, w accesses later, and that stay must outlast the target's
     * lines for the probe to lose to them. */
    const double per_set = ways / p->cycle_s;
    const double dwell = (p->cycles + 2) * p->cycle_s; /* 2: the warm-up rounds */
    for (;;) {
        bool open = false;
        for (size_t i = 0; i < n; i++) {
            /* A closed search keeps walking a length in 1..ways. */
            const unsigned mid = (lo[i] + hi[i]) / 2;
            walk[units[i]] = (uint8_t)(mid < 1 ? 1 : mid > ways ? ways : mid);
            open |= hi[i] - lo[i] > 1;
        }
        if (!open)
            break;
        if (stop && *stop) {
            rc = llc_errf(err, errlen, -EINTR, "occupancy search interrupted");
            goto out;
        }
        paced = true;
        if ((rc = b->ops->probe_set(b->ctx, per_set, n, walk, err, errlen)) < 0)
            goto out;
        for (size_t i = 0; i < n; i++)
            miss[units[i]] = acc[units[i]] = 0;
        rc = b->ops->measure(b->ctx, units, n, dwell, miss, acc, err, errlen);
        if (rc < 0)
            goto out;
        if (rc == 1) {
            rc = llc_errf(err, errlen, -EPIPE, "the target ended during the occupancy search");
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            if (hi[i] - lo[i] <= 1)
                continue;
            const uint32_t u = units[i];
            const double q = acc[u] ? (double)miss[u] / (double)acc[u] : 1;
            if (q <= p->threshold)
                lo[i] = walk[u];
            else
                hi[i] = walk[u];
        }
    }
    for (size_t i = 0; i < n; i++)
        held[i] = (double)(ways - lo[i]);
    rc = 0;
out:
    if (paced) { /* the full walk at the backend's own pace again */
        char why[LLC_ERRLEN];
        const int r2 = b->ops->probe_set(b->ctx, 0, n, NULL, why, sizeof(why));
        if (r2 < 0 && rc == 0)
            rc = llc_errf(err, errlen, r2, "cannot restore the probe's walk and pace: %s", why);
    }
    free(walk);
    free(lo);
    free(hi);
    free(miss);
    free(acc);
    return rc;
}
