/* Key values of the fitted Gaussian (§3.1) and the strata they define for
 * the stratified estimator (§4). */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

#include "fit_internal.h"

/* Offsets of K1..K5 in sigmas, in processing order (§3.1). */
static const double key_sigmas[LLC_FIT_MAX_KEYS] = {0, -1, 1, -2, 2};

void llc_fitp_keys(enum llc_fit_key_mode mode, size_t points, double mu, double sigma,
                   const double *sorted, size_t nv, double *key, double *key_p)
{
    const double a = sorted[0], b = sorted[nv - 1];
    for (size_t j = 0; j < points; j++) {
        key_p[j] = NAN;
        switch (mode) {
        case LLC_FIT_KEYS_QUANTILE:
            /* The probabilities the Gaussian puts below mu + t sigma. */
            key_p[j] = gsl_cdf_ugaussian_P(key_sigmas[j]);
            key[j] = gsl_stats_quantile_from_sorted_data(sorted, 1, nv, key_p[j]);
            break;
        case LLC_FIT_KEYS_RANGE:
            key[j] = j == LLC_FIT_KEY_START ? a : j == LLC_FIT_KEY_END ? b
                                                                     : mu + key_sigmas[j] * sigma;
            break;
        case LLC_FIT_KEYS_SIGMA2:
        default:
            key[j] = mu + key_sigmas[j] * sigma;
            if (j == LLC_FIT_KEY_START)
                key[j] = fmax(a, key[j]);
            else if (j == LLC_FIT_KEY_END)
                key[j] = fmin(b, key[j]);
            break;
        }
    }
}

static int cmp_double(const void *pa, const void *pb)
{
    const double x = *(const double *)pa, y = *(const double *)pb;
    return (x > y) - (x < y);
}

size_t llc_fit_stratum_of(const struct llc_fit_strata *s, double v)
{
    for (size_t g = 0; g + 1 < s->count; g++)
        if (v < s->upper[g])
            return g;
    return s->count ? s->count - 1 : 0;
}

void llc_fitp_strata(const double *key, size_t nkeys, const double *v, size_t nv, double mu,
                     struct llc_fit_strata *s)
{
    *s = (struct llc_fit_strata){0};
    double sorted[LLC_FIT_MAX_KEYS];
    for (size_t j = 0; j < nkeys; j++)
        sorted[j] = key[j];
    qsort(sorted, nkeys, sizeof sorted[0], cmp_double);
    /* Coinciding keys (clipped start/end, sigma = 0) share one stratum. */
    for (size_t j = 0; j < nkeys; j++)
        if (s->count == 0 || sorted[j] != s->key[s->count - 1])
            s->key[s->count++] = sorted[j];
    for (size_t g = 0; g < s->count; g++)
        s->upper[g] = g + 1 < s->count ? (s->key[g] + s->key[g + 1]) / 2 : INFINITY;
    for (size_t k = 0; k < nv; k++)
        s->members[llc_fit_stratum_of(s, v[k])]++;
    for (size_t g = 0; g < s->count; g++)
        s->pi[g] = (double)s->members[g] / (double)nv;
    s->centre = llc_fit_stratum_of(s, mu);
}
