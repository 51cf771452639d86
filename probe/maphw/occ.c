/* What the occupancy search of `sample` and `calibrate` needs from the
 * hardware backends: per-unit walk lengths that measure() keeps, a slow
 * pace with batches short enough to survive it, a warm-up before a slow
 * call counts, and a pace refused unless a slow idle walk was checked at
 * it. The arithmetic is pure; probe_set only records what the next
 * measure() relinks (and flushes) on the probe thread. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "util/tsc.h"

unsigned llc_maphw_unit_walk(unsigned full, unsigned llc_ways, const uint8_t *llc_walk, uint32_t u)
{
    if (!llc_walk)
        return full;
    /* the L2's share stays: on a victim LLC the L2 keeps it, and only the
     * rest of the walk competes for the LLC's ways */
    const unsigned l2 = full > llc_ways ? full - llc_ways : 0;
    const unsigned w = l2 + llc_walk[u];
    return w < 1 ? 1 : w;
}

unsigned llc_maphw_batch_for(double rate, size_t units, double batch_s, unsigned max)
{
    if (!(rate > 0) || !units)
        return max;
    const double fit = floor(rate * (double)units * batch_s);
    return fit < 1 ? 1 : fit >= max ? max : (unsigned)fit;
}

void llc_maphw_warm_split(double dwell_s, double rate, unsigned ways, double *warm_s,
                          double *count_s)
{
    double warm = rate > 0 ? LLC_MAPHW_WARM_ROUNDS * ways / rate : 0;
    if (warm > dwell_s / 2)
        warm = dwell_s / 2;
    *warm_s = warm;
    *count_s = dwell_s - warm;
}

int llc_maphw_pace_checked(const char *backend, double asked, double checked, bool passed,
                           const char *check_text, char *err, size_t errlen)
{
    if (!(checked > 0))
        return llc_errf(err, errlen, -ENOTSUP,
                        "%s: a pace of %.4g accesses per set per second was asked, but no slow "
                        "idle walk was checked when the backend was built (no search cycle given)",
                        backend, asked);
    if (!passed)
        return llc_errf(err, errlen, -EIO, "%s", check_text);
    if (fabs(asked - checked) > 1e-9 * checked)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: a pace of %.6g accesses per set per second was asked; the slow idle "
                        "walk was checked at %.6g only",
                        backend, asked, checked);
    return 0;
}

size_t llc_maphw_dropped(const struct maphw *m, uint32_t u, unsigned from, unsigned to, void **out)
{
    const struct llc_evset_set *s = &m->sets->sets[u];
    const uint32_t *perm = m->perm + (size_t)u * m->group;
    size_t n = 0;
    for (unsigned k = to; k < from && k < m->group; k++)
        out[n++] = (void *)(uintptr_t)m->sets->lines[s->first + perm[k]].addr;
    return n;
}

void llc_maphw_walk_cfg(const struct maphw *m, size_t units, struct llc_maphw_walk_cfg *c)
{
    memset(c, 0, sizeof(*c));
    c->tsc_hz = m->tsc_hz;
    c->threshold = m->threshold;
    c->discard_ticks = m->discard_ticks;
    c->journal = m->journal;
    if (m->occ_rate > 0) {
        /* the search's pace is a clock pace whatever --delay says: it is
         * what the slow idle walk was checked at */
        c->rate = m->occ_rate;
        c->batch = llc_maphw_batch_for(m->occ_rate, units, LLC_MAPHW_BATCH_SECONDS, m->batch);
    } else {
        c->delay_nops = m->opt.delay_nops;
        c->rate = m->opt.rate;
        c->batch = m->batch;
    }
}

int llc_maphw_probe_set_op(void *ctx, double per_set_rate, size_t together, const uint8_t *llc_walk,
                           char *err, size_t errlen)
{
    struct maphw *m = ctx;
    (void)together; /* the hardware paces each unit on its own (llc_maphw_pace_init) */
    const unsigned ways = m->opt.geo.llc_ways;
    if (!isfinite(per_set_rate) || per_set_rate < 0)
        return llc_errf(err, errlen, -EINVAL, "%s: pace %g is not a non-negative number", m->name,
                        per_set_rate);
    for (uint32_t u = 0; llc_walk && u < m->units; u++)
        if (llc_walk[u] < 1 || llc_walk[u] > ways)
            return llc_errf(err, errlen, -EINVAL,
                            "%s: set %u: a walk of %u LLC lines is not in 1..%u", m->name, u,
                            llc_walk[u], ways);
    if (per_set_rate > 0) {
        const int rc = llc_maphw_pace_checked(m->name, per_set_rate, m->slow_rate, m->slow_passed,
                                              m->be.slow_walk_check, err, errlen);
        if (rc < 0)
            return rc;
    }
    if (!llc_walk) {
        free(m->llc_walk);
        m->llc_walk = NULL;
    } else {
        if (!m->llc_walk && !(m->llc_walk = malloc(m->units)))
            return llc_errf(err, errlen, -ENOMEM, "%s: out of memory", m->name);
        memcpy(m->llc_walk, llc_walk, m->units);
    }
    m->occ_rate = per_set_rate;
    return 0;
}

void llc_maphw_clflush(const void *line)
{
#if LLC_HAVE_TSC
    __asm__ volatile("clflush (%0)" : : "r"(line) : "memory");
#else
    (void)line; /* no x86-64: the backends refuse at their clock check first */
#endif
}
