/* The coverage plan: which units are walked together, for how long, in
 * which order, over how many sweeps; counts kept per sweep. */
#include "llcprobe/map.h"

#include "llcprobe/common.h"
#include "llcprobe/rng.h"
#include "util/clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void llc_map_result_free(struct llc_map_result *r)
{
    if (!r)
        return;
    free(r->measured);
    free(r->misses);
    free(r->accesses);
    free(r->dwell_s);
    free(r->sweep_misses);
    free(r->sweep_accesses);
    free(r->excluded);
    free(r->raw_misses);
    free(r);
}

static struct llc_map_result *result_new(uint32_t units, unsigned sweeps)
{
    struct llc_map_result *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->units = units;
    r->measured = calloc(units, sizeof(*r->measured));
    r->misses = calloc(units, sizeof(*r->misses));
    r->accesses = calloc(units, sizeof(*r->accesses));
    r->dwell_s = calloc(units, sizeof(*r->dwell_s));
    r->sweep_misses = calloc((size_t)units * sweeps, sizeof(*r->sweep_misses));
    r->sweep_accesses = calloc((size_t)units * sweeps, sizeof(*r->sweep_accesses));
    if (!r->measured || !r->misses || !r->accesses || !r->dwell_s || !r->sweep_misses ||
        !r->sweep_accesses) {
        llc_map_result_free(r);
        return NULL;
    }
    return r;
}

/* The plan's units, shuffled so that one group mixes slices and indexes
 * (and so neighbouring units never share a dwell by construction). */
static int plan_units(const struct llc_map_plan *p, uint32_t units, uint32_t **out, size_t *n,
                      char *err, size_t errlen)
{
    const size_t count = p->mode == LLC_MAP_SETS ? p->n_sets : units;
    uint32_t *u = malloc((count ? count : 1) * sizeof(*u));
    if (!u)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        u[i] = p->mode == LLC_MAP_SETS ? p->sets[i] : (uint32_t)i;
        if (u[i] >= units) {
            const uint32_t bad = u[i];
            free(u);
            return llc_errf(err, errlen, -EINVAL, "set %u is out of range (the LLC has %u sets)",
                            bad, units);
        }
    }
    uint64_t s = p->seed ^ 0x6d6170ULL;
    for (size_t i = count; i > 1; i--) {
        const size_t j = (size_t)(llc_splitmix_next(&s) % i);
        const uint32_t t = u[i - 1];
        u[i - 1] = u[j];
        u[j] = t;
    }
    *out = u;
    *n = count;
    return 0;
}

int llc_map_run(struct llc_map_backend *b, const struct llc_map_plan *p,
                struct llc_map_result **out, char *err, size_t errlen)
{
    *out = NULL;
    const uint32_t units = llc_map_units(&b->geo);
    if (p->sweeps < 1 || p->sweeps > LLC_MAP_MAX_SWEEPS)
        return llc_errf(err, errlen, -EINVAL, "sweeps must be 1..%d", LLC_MAP_MAX_SWEEPS);
    if (!(p->dwell_s > 0))
        return llc_errf(err, errlen, -EINVAL, "dwell must be positive");
    if (p->mode == LLC_MAP_GLOBAL && !b->all_at_once)
        return llc_errf(
            err, errlen, -ENOTSUP,
            "the %s backend counts one set at a time, so it cannot map all sets at once (global)",
            b->name);
    uint32_t *order = NULL;
    size_t n = 0;
    int rc = plan_units(p, units, &order, &n, err, errlen);
    if (rc < 0)
        return rc;
    struct llc_map_result *r = result_new(units, p->sweeps);
    if (!r) {
        free(order);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    r->sweeps_planned = p->sweeps;
    size_t group = p->mode == LLC_MAP_GLOBAL ? n : p->group;
    if (group == 0)
        group = b->all_at_once ? n : 1;
    if (!b->all_at_once)
        group = 1;
    if (group > n)
        group = n;
    const size_t groups = n ? (n + group - 1) / group : 0;
    const double t0 = llc_now();
    bool ended = false, stopped = false;
    for (unsigned sw = 0; sw < p->sweeps && !ended && !stopped; sw++) {
        uint64_t *sm = r->sweep_misses + (size_t)sw * units,
                 *sa = r->sweep_accesses + (size_t)sw * units;
        for (size_t g = 0; g < groups; g++) {
            if (p->stop && *p->stop) {
                stopped = true;
                break;
            }
            const uint32_t *grp = order + g * group;
            const size_t gn = g + 1 == groups ? n - g * group : group;
            if (p->restart_target && (rc = p->restart_target(p->restart_ctx, err, errlen)) < 0)
                goto fail;
            rc = b->ops->measure(b->ctx, grp, gn, p->dwell_s, sm, sa, err, errlen);
            if (rc < 0)
                goto fail;
            if (rc == 1 && p->restart_target)
                rc = 0; /* this run ended; the next group gets its own */
            for (size_t i = 0; i < gn; i++) {
                r->measured[grp[i]] = true;
                r->dwell_s[grp[i]] += p->dwell_s;
            }
            /* A backend may end a dwell early on the stop flag (the
             * simulator's global map is one long dwell): that sweep is
             * partial. */
            if (p->stop && *p->stop) {
                stopped = true;
                break;
            }
            if (p->progress)
                p->progress(p->progress_ctx,
                            ((double)sw * groups + g + 1) / ((double)p->sweeps * groups));
            if (rc == 1) {
                ended = true;
                /* The rest of this sweep was not measured. */
                r->sweeps = sw + (g + 1 == groups ? 1 : 0);
                break;
            }
        }
        if (!ended)
            r->sweeps = sw + (stopped ? 0 : 1);
    }
    for (unsigned sw = 0; sw < p->sweeps; sw++)
        for (uint32_t u = 0; u < units; u++) {
            r->misses[u] += r->sweep_misses[(size_t)sw * units + u];
            r->accesses[u] += r->sweep_accesses[(size_t)sw * units + u];
        }
    r->complete = !ended && !stopped && r->sweeps == p->sweeps;
    if (stopped)
        snprintf(r->incomplete_reason, sizeof(r->incomplete_reason),
                 "interrupted after %u of %u sweeps", r->sweeps, p->sweeps);
    else if (ended)
        snprintf(r->incomplete_reason, sizeof(r->incomplete_reason),
                 "the target ended after %u complete sweeps of %u (use --repeat, or a longer run)",
                 r->sweeps, p->sweeps);
    r->seconds = llc_now() - t0;
    free(order);
    *out = r;
    return 0;
fail:
    free(order);
    llc_map_result_free(r);
    return rc;
}
