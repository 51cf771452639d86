/* Bootstrap confidence band (docs/METHODS.md §7.6): multinomial resampling of the N_s
 * samples over the buckets and n_inf, one curve per replicate, per-size
 * quantiles. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

void llc_statmodel_bootstrap_config_default(struct llc_statmodel_bootstrap_config *cfg)
{
    *cfg = (struct llc_statmodel_bootstrap_config){
        .replicates = 200, .seed = 1, .lo_quantile = 0.05, .hi_quantile = 0.95};
}

int llc_statmodel_bootstrap(const struct llc_statmodel_hist *h,
                            const struct llc_statmodel_bootstrap_config *cfg,
                            const struct llc_statmodel_options *o, const double *lines, size_t n,
                            double *lo, double *hi, char *err, size_t errlen)
{
    if (cfg->replicates < 2)
        return llc_errf(err, errlen, -EINVAL, "bootstrap: %u replicates (need at least 2)",
                        cfg->replicates);
    if (!(cfg->lo_quantile >= 0 && cfg->lo_quantile <= cfg->hi_quantile && cfg->hi_quantile <= 1))
        return llc_errf(err, errlen, -EINVAL, "bootstrap: quantiles %g..%g", cfg->lo_quantile,
                        cfg->hi_quantile);
    const double total = llc_statmodel_hist_total(h);
    if (!(total >= 0.5) || total > (double)UINT32_MAX)
        return llc_errf(err, errlen, -ENODATA, "bootstrap: %g samples cannot be resampled", total);
    const double f = cfg->cold_fraction;
    if (!(f >= 0 && f < 1))
        return llc_errf(err, errlen, -EINVAL, "bootstrap: cold fraction %g is not in [0, 1)", f);
    /* An exact cold fraction: only the finite samples are uncertain. */
    const unsigned draws = (unsigned)nearbyint(f > 0 ? llc_statmodel_hist_finite(h) : total);
    if (draws == 0)
        return llc_errf(err, errlen, -ENODATA, "bootstrap: no finite sample to resample");
    const unsigned reps = cfg->replicates;
    int rc = 0;
    /* Categories: buckets 0..nb-1, then the dangling samples. */
    size_t nb = 0;
    for (size_t b = llc_statmodel_hist_next(h, 0); b < LLC_STATMODEL_BUCKETS;
         b = llc_statmodel_hist_next(h, b + 1))
        nb = b + 1;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double *p = calloc(nb + 1, sizeof *p);
    unsigned *counts = calloc(nb + 1, sizeof *counts);
    double *dense = calloc(nb + 1, sizeof *dense);
    struct llc_statmodel_point *pts = calloc(n ? n : 1, sizeof *pts);
    double *r = calloc((n ? n : 1) * (size_t)reps, sizeof *r); /* r[k * reps + rep] */
    struct llc_statmodel_model *m = NULL;
    if (!rng || !p || !counts || !dense || !pts || !r) {
        rc = llc_errf(err, errlen, -ENOMEM, "bootstrap: out of memory");
        goto out;
    }
    /* mt19937 takes an unsigned long seed; fold the 64-bit seed into it. */
    gsl_rng_set(rng, (unsigned long)(cfg->seed ^ (cfg->seed >> 32)));
    for (size_t b = 0; b < nb; b++)
        p[b] = llc_statmodel_hist_count(h, b);
    p[nb] = f > 0 ? 0 : llc_statmodel_hist_dangling(h);
    for (unsigned rep = 0; rep < reps; rep++) {
        gsl_ran_multinomial(rng, nb + 1, draws, p, counts);
        for (size_t b = 0; b < nb; b++)
            dense[b] = counts[b];
        const double n_inf = f > 0 ? draws * f / (1 - f) : counts[nb];
        rc = sm_model_from_dense(dense, nb, n_inf, &m, err, errlen);
        if (!rc)
            rc = llc_statmodel_curve(m, o, lines, n, pts, err, errlen);
        llc_statmodel_release(m);
        m = NULL;
        if (rc)
            goto out;
        for (size_t k = 0; k < n; k++)
            r[k * reps + rep] = pts[k].r_total;
    }
    for (size_t k = 0; k < n; k++) {
        double *col = &r[k * reps];
        gsl_sort(col, 1, reps);
        lo[k] = gsl_stats_quantile_from_sorted_data(col, 1, reps, cfg->lo_quantile);
        hi[k] = gsl_stats_quantile_from_sorted_data(col, 1, reps, cfg->hi_quantile);
    }
out:
    gsl_rng_free(rng);
    free(p);
    free(counts);
    free(dense);
    free(pts);
    free(r);
    return rc;
}
