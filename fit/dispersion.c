/* Is the set-to-set spread more than counting noise? The dispersion index
 * of event counts (docs/METHODS.md §2.4) and the test-retest correlation of two sweeps
 * (docs/METHODS.md §1.5), turned into a verdict a user can act on. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

#include "fit_internal.h"
#include "llcprobe/common.h"

int llc_fit_dispersion(const double *miss, size_t n, const uint8_t *excluded, unsigned ways,
                       struct llc_fit_dispersion *out, char *err, size_t errlen)
{
    if (ways == 0)
        return llc_errf(err, errlen, -EINVAL, "the dispersion check needs the way count W");
    double *e = NULL;
    size_t ne = 0;
    const int rc = llc_fitp_gather(miss, n, excluded, &e, &ne, err, errlen);
    if (rc < 0)
        return rc;
    for (size_t k = 0; k < ne; k++)
        e[k] /= ways;
    *out = (struct llc_fit_dispersion){
        .status = LLC_FIT_DEGENERATE,
        .n = ne,
        .ways = ways,
        .disp = NAN,
        .cv_true = NAN,
        .structure_share = NAN,
        .p_over = NAN,
        .p_under = NAN,
    };
    llc_fitp_moments(e, ne, &out->mean_events, &out->var_events);
    free(e);
    if (ne < 2 || !(out->mean_events > 0))
        return 0;
    const double mean = out->mean_events, var = out->var_events;
    out->status = LLC_FIT_OK;
    out->disp = var / mean;
    out->cv_true = sqrt(fmax(0.0, var - mean)) / mean;
    out->structure_share = out->disp > 0 ? fmax(0.0, 1.0 - 1.0 / out->disp) : 0.0;
    /* For Poisson counts (N-1) Disp is chi-square with N-1 degrees of freedom. */
    const double dof = (double)(ne - 1), stat = dof * out->disp;
    out->p_over = gsl_cdf_chisq_Q(stat, dof);
    out->p_under = gsl_cdf_chisq_P(stat, dof);
    return 0;
}

double llc_fit_test_retest(const double *sweep1, const double *sweep2, size_t n,
                           const uint8_t *excluded)
{
    double *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    double r = NAN;
    if (!a || !b)
        goto out;
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (!llc_fitp_usable(excluded, k))
            continue;
        if (!isfinite(sweep1[k]) || !isfinite(sweep2[k]))
            goto out;
        a[m] = sweep1[k];
        b[m] = sweep2[k];
        m++;
    }
    llc_fit_pearson(a, b, m, &r);
out:
    free(a);
    free(b);
    return r;
}

enum llc_fit_verdict llc_fit_verdict(const struct llc_fit_dispersion *d, double retest_r)
{
    const bool repeats_poorly = isfinite(retest_r) && retest_r < LLC_FIT_RETEST_MIN;
    if (d->status == LLC_FIT_NOT_APPLICABLE)
        return repeats_poorly ? LLC_FIT_VERDICT_NOT_REPEATABLE : LLC_FIT_VERDICT_UNCHECKED;
    if (!(d->mean_events > 0))
        return LLC_FIT_VERDICT_NO_SIGNAL;
    if (d->status != LLC_FIT_OK)
        return LLC_FIT_VERDICT_TOO_FEW;
    if (d->p_under < LLC_FIT_DISP_ALPHA)
        return LLC_FIT_VERDICT_UNDERDISPERSED;
    if (d->p_over >= LLC_FIT_DISP_ALPHA)
        return LLC_FIT_VERDICT_COUNTING_NOISE;
    /* Two sweeps that each hold the same structure plus independent Poisson
     * noise correlate by about structure_share, so both tests use one bar. */
    if (d->structure_share < LLC_FIT_RETEST_MIN)
        return LLC_FIT_VERDICT_MOSTLY_NOISE;
    if (repeats_poorly)
        return LLC_FIT_VERDICT_NOT_REPEATABLE;
    return LLC_FIT_VERDICT_STRUCTURED;
}
