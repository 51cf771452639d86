/* Prepared model: a histogram compiled into dense arrays for the StatCache
 * solvers and into the StatStack tables Q and F at bucket edges (docs/METHODS.md §8.3). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

void llc_statmodel_release(struct llc_statmodel_model *m)
{
    if (!m)
        return;
    free(m->count);
    free(m->suffix);
    free(m->nz_mid);
    free(m->nz_count);
    free(m->edge);
    free(m->q);
    free(m->f);
    free(m);
}

/* Q is linear inside a bucket because its samples are taken as spread
 * evenly over the bucket's distances; summing that line over the bucket's
 * w distances gives F's increment exactly (the trapezoid rule). */
static void build_stack_tables(struct llc_statmodel_model *m)
{
    const double ns = m->total;
    m->f[0] = 0;
    for (size_t b = 0; b < m->nb; b++) {
        const double w = (double)llc_statmodel_bucket_width(b);
        m->edge[b] = (double)llc_statmodel_bucket_lo(b);
        m->q[b] = (m->n_inf + m->suffix[b]) / ns;
        m->f[b + 1] = m->f[b] + w * m->q[b] - m->count[b] * (w - 1) / (2 * ns);
    }
    const size_t last = m->nb;
    m->edge[last] = last ? m->edge[last - 1] + (double)llc_statmodel_bucket_width(last - 1) : 0;
    m->q[last] = m->n_inf / ns;
}

int sm_model_from_dense(const double *count, size_t nb, double n_inf,
                        struct llc_statmodel_model **out, char *err, size_t errlen)
{
    int rc = 0;
    while (nb && count[nb - 1] <= 0)
        nb--;
    struct llc_statmodel_model *m = calloc(1, sizeof *m);
    if (!m)
        return llc_errf(err, errlen, -ENOMEM, "reuse model: out of memory");
    m->nb = nb;
    m->ne = nb + 1;
    m->n_inf = n_inf;
    m->count = calloc(nb + 1, sizeof *m->count);
    m->suffix = calloc(nb + 1, sizeof *m->suffix);
    m->nz_mid = calloc(nb + 1, sizeof *m->nz_mid);
    m->nz_count = calloc(nb + 1, sizeof *m->nz_count);
    m->edge = calloc(m->ne, sizeof *m->edge);
    m->q = calloc(m->ne, sizeof *m->q);
    m->f = calloc(m->ne, sizeof *m->f);
    if (!m->count || !m->suffix || !m->nz_mid || !m->nz_count || !m->edge || !m->q || !m->f) {
        rc = llc_errf(err, errlen, -ENOMEM, "reuse model: out of memory");
        goto out;
    }
    if (nb)
        memcpy(m->count, count, nb * sizeof *count);
    for (size_t b = nb; b-- > 0;)
        m->suffix[b] = m->suffix[b + 1] + m->count[b];
    for (size_t b = 0; b < nb; b++) {
        if (m->count[b] > 0) {
            m->nz_mid[m->nz] = llc_statmodel_bucket_mid(b);
            m->nz_count[m->nz] = m->count[b];
            m->nz++;
        }
    }
    m->finite = m->suffix[0];
    m->total = m->finite + m->n_inf;
    if (m->total > 0)
        build_stack_tables(m);
    *out = m;
    return 0;
out:
    llc_statmodel_release(m);
    return rc;
}

int llc_statmodel_prepare(const struct llc_statmodel_hist *h, struct llc_statmodel_model **out,
                          char *err, size_t errlen)
{
    double *dense = calloc(LLC_STATMODEL_BUCKETS, sizeof *dense);
    if (!dense)
        return llc_errf(err, errlen, -ENOMEM, "reuse model: out of memory");
    size_t nb = 0;
    for (size_t b = llc_statmodel_hist_next(h, 0); b < LLC_STATMODEL_BUCKETS;
         b = llc_statmodel_hist_next(h, b + 1)) {
        dense[b] = llc_statmodel_hist_count(h, b);
        nb = b + 1;
    }
    const int rc = sm_model_from_dense(dense, nb, llc_statmodel_hist_dangling(h), out, err, errlen);
    free(dense);
    return rc;
}

double llc_statmodel_model_total(const struct llc_statmodel_model *m)
{
    return m->total;
}

double llc_statmodel_model_dangling(const struct llc_statmodel_model *m)
{
    return m->n_inf;
}

void sm_point_finish(const struct llc_statmodel_model *m, double lines, double r_total,
                     struct llc_statmodel_point *out)
{
    double cap = r_total - m->n_inf / m->total;
    /* Solver rounding can leave a few ulps below zero; anything larger is
     * a real inconsistency and is left visible. */
    if (cap < 0 && cap > -SM_EPSABS)
        cap = 0;
    *out = (struct llc_statmodel_point){
        .lines = lines, .bytes = lines * 64.0, .r_total = r_total, .r_capacity = cap};
}
