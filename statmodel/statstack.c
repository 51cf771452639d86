/* StatStack (docs/METHODS.md §8): LRU miss ratio from the expected stack distance
 * F(d) = sum_{m<d} Q(m), with Q the tail of the reuse distribution (dangling
 * samples in every tail). Tables at bucket edges come from model.c. */
#include <errno.h>
#include <limits.h>
#include <math.h>

#include <gsl/gsl_cdf.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

/* Largest i with edge[i] <= d (d >= 0). The edges are the histogram's
 * integer bucket bounds (model.c), so below the last one that is d's
 * bucket, found without a search (the contention models ask this millions
 * of times per prediction); checked, and searched where it does not hold. */
static size_t edge_index(const struct llc_statmodel_model *m, double d)
{
    if (d >= m->edge[m->ne - 1])
        return m->ne - 1;
    if (d >= 0) {
        const size_t b = llc_statmodel_bucket_of((uint64_t)d);
        if (b + 1 < m->ne && m->edge[b] <= d && d < m->edge[b + 1])
            return b;
    }
    return sm_last_at_most(m->edge, m->ne, d);
}

static double interpolate(const struct llc_statmodel_model *m, const double *v, size_t i, double d)
{
    const double t = (d - m->edge[i]) / (m->edge[i + 1] - m->edge[i]);
    return v[i] + t * (v[i + 1] - v[i]);
}

double llc_statmodel_tail(const struct llc_statmodel_model *m, double d)
{
    if (!(m->total > 0))
        return NAN;
    if (d <= 0)
        return 1;
    const size_t i = edge_index(m, d);
    return i + 1 >= m->ne ? m->q[m->ne - 1] : interpolate(m, m->q, i, d);
}

double llc_statmodel_footprint(const struct llc_statmodel_model *m, double d)
{
    if (!(m->total > 0))
        return NAN;
    if (d <= 0)
        return 0;
    const size_t i = edge_index(m, d);
    if (i + 1 >= m->ne)
        return m->f[m->ne - 1] + (d - m->edge[m->ne - 1]) * m->n_inf / m->total;
    return interpolate(m, m->f, i, d);
}

void llc_statmodel_footprint_table(const struct llc_statmodel_model *m, const double **edges,
                                   const double **q, const double **f, size_t *n,
                                   double *slope_beyond)
{
    *edges = m->edge;
    *q = m->q;
    *f = m->f;
    *n = m->total > 0 ? m->ne : 0;
    *slope_beyond = m->total > 0 ? m->n_inf / m->total : 0;
}

static int check(const struct llc_statmodel_model *m, double lines, char *err, size_t errlen)
{
    if (!(m->total > 0))
        return llc_errf(err, errlen, -ENODATA, "StatStack: no reuse samples");
    if (!(lines >= 1) || !isfinite(lines))
        return llc_errf(err, errlen, -EINVAL, "StatStack: cache of %g lines", lines);
    return 0;
}

int llc_statmodel_statstack(const struct llc_statmodel_model *m, double lines,
                            struct llc_statmodel_point *out, char *err, size_t errlen)
{
    const int rc = check(m, lines, err, errlen);
    if (rc)
        return rc;
    /* d*(C) = min{d : F(d) >= C}; past the last edge Q is n_inf/N_s, which
     * is also the everything-fits answer. */
    double mr = m->q[m->ne - 1];
    if (m->f[m->ne - 1] >= lines) {
        size_t lo = 0, hi = m->ne - 1; /* f[lo] < C <= f[hi] */
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            if (m->f[mid] < lines)
                lo = mid;
            else
                hi = mid;
        }
        const double t = (lines - m->f[lo]) / (m->f[hi] - m->f[lo]);
        mr = m->q[lo] + t * (m->q[hi] - m->q[lo]);
    }
    sm_point_finish(m, lines, mr, out);
    return 0;
}

double sm_assoc_miss(double sd, double lines, unsigned ways)
{
    double sets = floor(lines / ways);
    if (sets < 1)
        sets = 1;
    const double p = 1 / sets;
    const double fd = nearbyint(sd);
    const unsigned trials = fd >= (double)UINT_MAX ? UINT_MAX : (unsigned)fd;
    if (trials < ways)
        return 0;
    return p >= 1 ? 1.0 : gsl_cdf_binomial_Q(ways - 1, p, trials);
}

int llc_statmodel_statstack_assoc(const struct llc_statmodel_model *m, double lines, unsigned ways,
                                  struct llc_statmodel_point *out, char *err, size_t errlen)
{
    int rc = check(m, lines, err, errlen);
    if (rc)
        return rc;
    if (ways == 0)
        return llc_errf(err, errlen, -EINVAL, "StatStack: associativity of 0 ways");
    double misses = m->n_inf;
    for (size_t i = 0; i < m->nz; i++)
        misses +=
            m->nz_count[i] * sm_assoc_miss(llc_statmodel_footprint(m, m->nz_mid[i]), lines, ways);
    sm_point_finish(m, lines, misses / m->total, out);
    return 0;
}

void llc_statmodel_splice(struct llc_statmodel_model *m, const struct llc_statmodel_model *pool,
                          double span)
{
    if (!(m->total > 0) || !(pool->total > 0) || !(span > 0))
        return;
    /* Anchored at the last edge at or below span, so F stays continuous
     * and unchanged up to it (F is linear between edges). */
    size_t i0 = 0;
    while (i0 + 1 < m->ne && m->edge[i0 + 1] <= span)
        i0++;
    const double base = m->f[i0], pbase = llc_statmodel_footprint(pool, m->edge[i0]);
    for (size_t i = i0 + 1; i < m->ne; i++)
        m->f[i] = base + llc_statmodel_footprint(pool, m->edge[i]) - pbase;
}
