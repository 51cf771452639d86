/* Key values of the fitted Gaussian (docs/METHODS.md §3.1) and the strata they define for
 * the stratified estimator (docs/METHODS.md §4). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

#include "fit_internal.h"

/* Offsets of K1..K5 in sigmas, in processing order (docs/METHODS.md §3.1). */
static const double key_sigmas[LLC_FIT_MAX_KEYS] = {0, -1, 1, -2, 2};

/* Index among the distinct values of sorted[rank]. */
static size_t distinct_index(const double *sorted, size_t rank)
{
    size_t d = 0;
    for (size_t i = 1; i <= rank; i++)
        d += sorted[i] != sorted[i - 1];
    return d;
}

/* First rank of the d-th distinct value; nv if there is none. */
static size_t distinct_start(const double *sorted, size_t nv, size_t d)
{
    for (size_t i = 0; i < nv; i++) {
        if (i > 0 && sorted[i] != sorted[i - 1])
            d--;
        if (d == 0)
            return i;
    }
    return nv;
}

/* Quantile keys: the empirical quantiles at the Gaussian's probabilities.
 * Where the data have long runs of one value (a two-level map's zeros),
 * neighbouring quantiles coincide and their strata would merge; the keys
 * are then taken on distinct values: each moves to the next distinct value in
 * the direction away from its neighbour, so there are as many strata as
 * keys whenever the data have that many distinct values. key_p becomes
 * the mid-rank of the key's run of equal values over nv, the rank the
 * selection's window is centred on. */
static void quantile_keys(size_t points, const double *sorted, size_t nv, double *key,
                          double *key_p)
{
    /* The plain empirical quantiles when they are distinct. */
    bool distinct = true;
    for (size_t j = 0; j < points; j++) {
        key_p[j] = gsl_cdf_ugaussian_P(key_sigmas[j]);
        key[j] = gsl_stats_quantile_from_sorted_data(sorted, 1, nv, key_p[j]);
        for (size_t i = 0; i < j; i++)
            distinct = distinct && key[i] != key[j];
    }
    if (distinct)
        return;
    size_t ord[LLC_FIT_MAX_KEYS], idx[LLC_FIT_MAX_KEYS];
    for (size_t j = 0; j < points; j++)
        ord[j] = j;
    for (size_t i = 1; i < points; i++) /* insertion sort by probability */
        for (size_t j = i; j > 0 && key_sigmas[ord[j]] < key_sigmas[ord[j - 1]]; j--) {
            const size_t t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    const size_t nd = distinct_index(sorted, nv - 1) + 1;
    for (size_t i = 0; i < points; i++) {
        const double p = gsl_cdf_ugaussian_P(key_sigmas[ord[i]]);
        idx[i] = distinct_index(sorted, (size_t)lround(p * (double)(nv - 1)));
    }
    /* Fewer distinct values than keys (a map of 0s and one level): every
     * value gets a key, the last ones share the top value. */
    for (size_t i = 1; i < points; i++)
        if (idx[i] <= idx[i - 1])
            idx[i] = idx[i - 1] + 1 < nd ? idx[i - 1] + 1 : nd - 1;
    if (nd >= points) {
        if (idx[points - 1] > nd - 1)
            idx[points - 1] = nd - 1;
        for (size_t i = points - 1; i-- > 0;)
            if (idx[i] >= idx[i + 1])
                idx[i] = idx[i + 1] - 1;
    }
    for (size_t i = 0; i < points; i++) {
        const size_t lo = distinct_start(sorted, nv, idx[i]);
        size_t hi = lo;
        while (hi + 1 < nv && sorted[hi + 1] == sorted[lo])
            hi++;
        key[ord[i]] = sorted[lo];
        key_p[ord[i]] = 0.5 * (double)(lo + hi + 1) / (double)nv;
    }
}

void llc_fitp_keys(enum llc_fit_key_mode mode, size_t points, double mu, double sigma,
                   const double *sorted, size_t nv, double *key, double *key_p)
{
    const double a = sorted[0], b = sorted[nv - 1];
    if (mode == LLC_FIT_KEYS_QUANTILE) {
        quantile_keys(points, sorted, nv, key, key_p);
        return;
    }
    for (size_t j = 0; j < points; j++) {
        key_p[j] = NAN;
        switch (mode) {
        case LLC_FIT_KEYS_RANGE:
            key[j] = j == LLC_FIT_KEY_START ? a
                     : j == LLC_FIT_KEY_END ? b
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
    for (size_t k = 0; k < nv; k++) {
        const size_t g = llc_fit_stratum_of(s, v[k]);
        s->members[g]++;
        s->profile_sum[g] += v[k];
    }
    for (size_t g = 0; g < s->count; g++)
        s->pi[g] = (double)s->members[g] / (double)nv;
    s->centre = llc_fit_stratum_of(s, mu);
}
