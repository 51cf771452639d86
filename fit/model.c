/* Densities, bin masses and scoring of fitted families: the log-likelihood,
 * AIC and the binned Pearson R of docs/METHODS.md §2.3, the same for every family. */
#include <limits.h>
#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_statistics_double.h>

#include "fit_internal.h"

void llc_fitp_moments(const double *v, size_t nv, double *mean, double *var)
{
    *mean = gsl_stats_mean(v, 1, nv);
    *var = nv >= 2 ? gsl_stats_variance_m(v, 1, nv, *mean) : 0.0;
}

/* Poisson CDF at an integer-valued double, 0 below 0. */
static double poisson_cdf(double k, double lambda)
{
    if (k < 0)
        return 0.0;
    if (k >= (double)UINT_MAX)
        return 1.0;
    return gsl_cdf_poisson_P((unsigned)k, lambda);
}

/* Above this mean the Poisson is the normal N(lambda, lambda) to within its
 * skewness 1/sqrt(lambda) < 3e-5: GSL's pmf takes an unsigned k, and
 * summing it over the 80 sqrt(lambda) integers that matter would not end
 * for a mean like 1e300 (a damaged map). */
#define POISSON_NORMAL_MIN_MEAN 1e9

static double poisson_pmf(double k, double lambda)
{
    if (k < 0)
        return 0.0;
    if (lambda > POISSON_NORMAL_MIN_MEAN)
        return gsl_ran_gaussian_pdf(k - lambda, sqrt(lambda));
    if (k > (double)UINT_MAX)
        return 0.0;
    return gsl_ran_poisson_pdf((unsigned)k, lambda);
}

/* GSL evaluates the Poisson, gamma and beta CDFs by series and continued
 * fractions with fixed iteration caps (5000, 512) that need roughly
 * sqrt(parameter) steps near the mode; beyond these bounds they fail, and
 * GSL's default error handler aborts the process. Above them the bin
 * masses are summed (Poisson) or integrated (gamma, beta) from the pmf/pdf,
 * which GSL evaluates from log-gamma functions at any size. */
#define POISSON_CDF_MAX_MEAN 1e5
#define INCOMPLETE_CDF_MAX_SHAPE 1e5

/* P(first <= J <= last) for integer-valued first and last. Above
 * POISSON_CDF_MAX_MEAN the pmf is summed instead, over at most the
 * 80 sqrt(lambda) integers around lambda where it is not negligible. */
static double poisson_between(double first, double last, double lambda)
{
    first = fmax(first, 0);
    if (last < first)
        return 0.0;
    if (lambda <= POISSON_CDF_MAX_MEAN)
        return poisson_cdf(last, lambda) - poisson_cdf(first - 1, lambda);
    if (lambda > POISSON_NORMAL_MIN_MEAN) /* with continuity correction */
        return gsl_cdf_gaussian_P(last + 0.5 - lambda, sqrt(lambda)) -
               gsl_cdf_gaussian_P(first - 0.5 - lambda, sqrt(lambda));
    /* Beyond 40 standard deviations the pmf is below 1e-300. */
    const double reach = 40 * sqrt(lambda);
    first = fmax(first, floor(lambda - reach));
    last = fmin(last, ceil(lambda + reach));
    double sum = 0;
    for (double j = first; j <= last; j++)
        sum += poisson_pmf(j, lambda);
    return sum;
}

/* Edges computed as a + i w may sit an ulp off the integer they mean. */
static double snap_integer(double v)
{
    const double r = nearbyint(v);
    return fabs(v - r) < 1e-9 * fmax(1.0, fabs(v)) ? r : v;
}

/* Mass of the POISSON_EVENTS model in [lo, hi) of x: pmf(j) is spread
 * evenly over [W (j - 1/2), W (j + 1/2)), the x that round to event count j. */
static double events_mass(const double *p, double lo, double hi)
{
    const double tlo = lo / p[1] + 0.5, thi = hi / p[1] + 0.5;
    const double jlo = floor(tlo), jhi = floor(thi);
    if (jlo == jhi)
        return poisson_pmf(jlo, p[0]) * (thi - tlo);
    return poisson_pmf(jlo, p[0]) * (jlo + 1 - tlo) + poisson_between(jlo + 1, jhi - 1, p[0]) +
           poisson_pmf(jhi, p[0]) * (thi - jhi);
}

static double pdf_at(double x, void *r)
{
    return llc_fit_family_pdf(r, x);
}

/* 21-point Gauss-Kronrod rule of the density over [lo, hi]: one fixed rule,
 * so no GSL error path; bins are narrow against the distribution's width
 * whenever its shape parameter is this large. */
static double integrated_mass(const struct llc_fit_family_result *r, double lo, double hi)
{
    const gsl_function f = {.function = pdf_at, .params = (void *)r};
    double mass, abserr, resabs, resasc;
    gsl_integration_qk21(&f, lo, hi, &mass, &abserr, &resabs, &resasc);
    return mass;
}

static double continuous_cdf(const struct llc_fit_family_result *r, double x)
{
    const double *p = r->param;
    switch (r->family) {
    case LLC_FIT_GAUSSIAN:
        return gsl_cdf_gaussian_P(x - p[0], p[1]);
    case LLC_FIT_GAMMA:
        return x <= 0 ? 0.0 : gsl_cdf_gamma_P(x, p[0], p[1]);
    case LLC_FIT_BETA: {
        const double u = (x - p[2]) / (p[3] - p[2]);
        return u <= 0 ? 0.0 : u >= 1 ? 1.0 : gsl_cdf_beta_P(u, p[0], p[1]);
    }
    case LLC_FIT_STUDENT_T:
        return gsl_cdf_tdist_P((x - p[0]) / p[1], p[2]);
    case LLC_FIT_LOGNORMAL:
        return x <= 0 ? 0.0 : gsl_cdf_lognormal_P(x, p[0], p[1]);
    default:
        return NAN;
    }
}

/* Mass in [lo, hi), or [lo, hi] if closed: the last histogram bin is closed. */
static double bin_mass(const struct llc_fit_family_result *r, double lo, double hi, bool closed)
{
    if (r->family == LLC_FIT_POISSON_EVENTS)
        return events_mass(r->param, lo, hi);
    const bool large_shape = fmax(r->param[0], r->param[1]) > INCOMPLETE_CDF_MAX_SHAPE;
    if ((r->family == LLC_FIT_GAMMA || r->family == LLC_FIT_BETA) && large_shape)
        return integrated_mass(r, lo, hi);
    if (r->family != LLC_FIT_POISSON)
        return continuous_cdf(r, hi) - continuous_cdf(r, lo);
    lo = snap_integer(lo);
    hi = snap_integer(hi);
    return poisson_between(ceil(lo), closed ? floor(hi) : ceil(hi) - 1, r->param[0]);
}

double llc_fitp_logpdf(const struct llc_fit_family_result *r, double x)
{
    const double *p = r->param;
    switch (r->family) {
    case LLC_FIT_GAUSSIAN: {
        const double z = (x - p[0]) / p[1];
        return -0.5 * z * z - log(p[1]) - 0.5 * log(2 * M_PI);
    }
    case LLC_FIT_GAMMA:
        if (x < 0)
            return -INFINITY;
        if (x == 0) /* a singularity (alpha < 1) or a zero (alpha > 1) of the density */
            return p[0] < 1 ? INFINITY : p[0] > 1 ? -INFINITY : -log(p[1]);
        return (p[0] - 1) * log(x) - x / p[1] - gsl_sf_lngamma(p[0]) - p[0] * log(p[1]);
    case LLC_FIT_POISSON:
        if (x < 0 || x != nearbyint(x))
            return -INFINITY;
        return x * log(p[0]) - p[0] - gsl_sf_lngamma(x + 1);
    case LLC_FIT_POISSON_EVENTS: {
        const double j = floor(x / p[1] + 0.5);
        if (j < 0)
            return -INFINITY;
        return j * log(p[0]) - p[0] - gsl_sf_lngamma(j + 1) - log(p[1]);
    }
    case LLC_FIT_BETA: {
        const double range = p[3] - p[2];
        const double u = (x - p[2]) / range;
        if (u <= 0 || u >= 1)
            return -INFINITY;
        return (p[0] - 1) * log(u) + (p[1] - 1) * log1p(-u) - gsl_sf_lnbeta(p[0], p[1]) -
               log(range);
    }
    case LLC_FIT_STUDENT_T: {
        const double z = (x - p[0]) / p[1], nu = p[2];
        return gsl_sf_lngamma((nu + 1) / 2) - gsl_sf_lngamma(nu / 2) - 0.5 * log(nu * M_PI) -
               log(p[1]) - (nu + 1) / 2 * log1p(z * z / nu);
    }
    case LLC_FIT_LOGNORMAL: {
        if (x <= 0)
            return -INFINITY;
        const double z = (log(x) - p[0]) / p[1];
        return -log(x) - log(p[1]) - 0.5 * log(2 * M_PI) - 0.5 * z * z;
    }
    default:
        return NAN;
    }
}

static bool has_parameters(const struct llc_fit_family_result *r)
{
    if (r->nparams == 0 || (r->status != LLC_FIT_OK && r->status != LLC_FIT_DEGENERATE))
        return false;
    for (size_t i = 0; i < r->nparams; i++)
        if (!isfinite(r->param[i]))
            return false;
    return true;
}

double llc_fit_family_pdf(const struct llc_fit_family_result *r, double x)
{
    if (!has_parameters(r))
        return NAN;
    const double *p = r->param;
    switch (r->family) {
    case LLC_FIT_GAUSSIAN:
        return p[1] > 0 ? gsl_ran_gaussian_pdf(x - p[0], p[1]) : NAN;
    case LLC_FIT_GAMMA:
        return gsl_ran_gamma_pdf(x, p[0], p[1]);
    case LLC_FIT_POISSON:
        return poisson_pmf(floor(x + 0.5), p[0]);
    case LLC_FIT_POISSON_EVENTS:
        return poisson_pmf(floor(x / p[1] + 0.5), p[0]) / p[1];
    case LLC_FIT_BETA:
        return gsl_ran_beta_pdf((x - p[2]) / (p[3] - p[2]), p[0], p[1]) / (p[3] - p[2]);
    case LLC_FIT_STUDENT_T:
        return gsl_ran_tdist_pdf((x - p[0]) / p[1], p[2]) / p[1];
    case LLC_FIT_LOGNORMAL:
        return gsl_ran_lognormal_pdf(x, p[0], p[1]);
    default:
        return NAN;
    }
}

enum llc_fit_status llc_fit_pearson(const double *y, const double *Y, size_t m, double *r)
{
    *r = NAN;
    if (m < 2)
        return LLC_FIT_DEGENERATE;
    const double vy = gsl_stats_variance(y, 1, m), vY = gsl_stats_variance(Y, 1, m);
    if (!(vy > 0) || !(vY > 0) || !isfinite(vy) || !isfinite(vY))
        return LLC_FIT_DEGENERATE;
    *r = gsl_stats_correlation(y, 1, Y, 1, m);
    return LLC_FIT_OK;
}

static void bin_model(const struct llc_fit_family_result *r, const struct llc_fit_histogram *h,
                      bool bin_integrated, double *Y)
{
    const bool discrete = r->family == LLC_FIT_POISSON || r->family == LLC_FIT_POISSON_EVENTS;
    for (size_t i = 0; i < h->m; i++) {
        if (!(h->width > 0))
            Y[i] = NAN;
        else if (discrete || bin_integrated)
            Y[i] = bin_mass(r, h->edges[i], h->edges[i + 1],
                            i + 1 == h->m && h->binning == LLC_FIT_BINS_PAPER) /
                   h->width;
        else
            Y[i] = llc_fit_family_pdf(r, h->centres[i]);
    }
}

void llc_fitp_score(struct llc_fit_family_result *r, const double *v, size_t nv,
                    const struct llc_fit_histogram *h, bool bin_integrated, double *model)
{
    double ll = 0;
    for (size_t k = 0; k < nv; k++)
        ll += llc_fitp_logpdf(r, v[k]);
    r->loglik = ll;
    r->aic = 2.0 * (double)r->nfree - 2.0 * ll;
    bin_model(r, h, bin_integrated, model);
    const enum llc_fit_status st = llc_fit_pearson(h->density, model, h->m, &r->r);
    r->r2 = r->r * r->r;
    if (st != LLC_FIT_OK && r->status == LLC_FIT_OK)
        r->status = st;
}
