/* The other families of docs/METHODS.md §2.6 recover known parameters from seeded samples. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_psi.h>

#include "fit_testdata.h"
#include "llcprobe/common.h"
#include "llcprobe/fit.h"

struct fitted {
    struct llc_fit_family_result r;
    struct llc_fit_histogram *h;
    double model[512];
};

static void fit_with(enum llc_fit_family f, const double *x, size_t n,
                     const struct llc_fit_options *opt, struct fitted *out)
{
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_histogram_create(x, n, NULL, opt->binning, &out->h, err, sizeof err),
                     0);
    assert_true(out->h->m <= 512);
    assert_int_equal(
        llc_fit_family(f, x, n, NULL, out->h, opt, &out->r, out->model, err, sizeof err), 0);
}

/* The fitted density's mass over the histogram's range. */
static double model_mass(const struct fitted *f)
{
    double mass = 0;
    for (size_t b = 0; b < f->h->m; b++)
        mass += f->model[b] * f->h->width;
    return mass;
}

static void fit_default(enum llc_fit_family f, const double *x, size_t n, struct fitted *out)
{
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    fit_with(f, x, n, &opt, out);
}

/* The reported LL is the sum of log densities of the reported pdf. */
static void assert_consistent(const struct fitted *f, const double *x, size_t n)
{
    double ll = 0;
    for (size_t k = 0; k < n; k++)
        ll += log(llc_fit_family_pdf(&f->r, x[k]));
    assert_near(f->r.loglik, ll, 1e-8 * fabs(ll));
    assert_near(f->r.aic, 2.0 * (double)f->r.nfree - 2 * ll, 1e-7 * fabs(ll));
    assert_near(f->r.r2, f->r.r * f->r.r, 1e-15);
}

static void test_gamma_mle(void **state)
{
    (void)state;
    const size_t n = 4000;
    double *x = testdata(TD_GAMMA, n, 4, 50, 0, 1, 11);
    struct fitted f;
    fit_default(LLC_FIT_GAMMA, x, n, &f);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_int_equal(f.r.method, LLC_FIT_METHOD_MLE);
    assert_int_equal(f.r.nparams, 2);
    const double alpha = f.r.param[0], theta = f.r.param[1];
    /* Standard error of alpha-hat is about 2% here. */
    assert_true(fabs(alpha / 4 - 1) < 0.08);
    assert_true(fabs(theta / 50 - 1) < 0.08);
    /* The root of ln a - psi(a) = s, and alpha theta = mean. */
    double mean = 0, mean_log = 0;
    for (size_t k = 0; k < n; k++) {
        mean += x[k] / n;
        mean_log += log(x[k]) / n;
    }
    assert_near(log(alpha) - gsl_sf_psi(alpha), log(mean) - mean_log, 1e-10);
    assert_near(alpha * theta, mean, 1e-9 * mean);
    assert_true(f.r.iterations >= 1 && f.r.iterations < 10);
    assert_true(f.r.r2 > 0.95);
    assert_consistent(&f, x, n);
    llc_fit_histogram_destroy(f.h);

    /* A zero makes ln x unusable: moments, flagged as such. */
    x[7] = 0;
    fit_default(LLC_FIT_GAMMA, x, n, &f);
    assert_int_equal(f.r.method, LLC_FIT_METHOD_MOM);
    double m = 0, v = 0;
    for (size_t k = 0; k < n; k++)
        m += x[k] / n;
    for (size_t k = 0; k < n; k++)
        v += (x[k] - m) * (x[k] - m) / (n - 1);
    assert_near(f.r.param[0], m * m / v, 1e-9);
    assert_near(f.r.param[1], v / m, 1e-9);
    /* alpha > 1 puts zero density at x = 0. */
    assert_true(f.r.param[0] > 1);
    assert_true(isinf(f.r.loglik) && f.r.loglik < 0);
    llc_fit_histogram_destroy(f.h);
    free(x);
}

static void test_poisson(void **state)
{
    (void)state;
    const size_t n = 4000;
    double *x = testdata(TD_POISSON, n, 30, 0, 0, 1, 12);
    struct fitted f;
    fit_default(LLC_FIT_POISSON, x, n, &f);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_int_equal(f.h->binning, LLC_FIT_BINS_INTEGER);
    assert_true(fabs(f.r.param[0] - 30) < 0.5);
    assert_true(f.r.r2 > 0.95);
    double mass = 0;
    for (size_t i = 0; i < f.h->m; i++)
        mass += f.model[i] * f.h->width;
    assert_true(mass > 0.99 && mass < 1 + 1e-12);
    assert_consistent(&f, x, n);
    llc_fit_histogram_destroy(f.h);

    x[3] += 0.5; /* not a count */
    fit_default(LLC_FIT_POISSON, x, n, &f);
    assert_int_equal(f.r.status, LLC_FIT_NOT_APPLICABLE);
    assert_true(isnan(f.r.r2) && isnan(f.r.aic));
    llc_fit_histogram_destroy(f.h);
    free(x);
}

static void test_poisson_events(void **state)
{
    (void)state;
    /* docs/METHODS.md §5.5: event counts of mean 400, each worth W = 16 misses. */
    const size_t n = 2048;
    double *x = testdata(TD_POISSON, n, 400, 0, 0, 16, 13);
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.ways = 16;
    struct fitted f;
    fit_with(LLC_FIT_POISSON_EVENTS, x, n, &opt, &f);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_int_equal(f.r.nfree, 1);
    assert_near(f.r.param[1], 16, 0);
    assert_true(fabs(f.r.param[0] - 400) < 2);
    assert_true(f.r.r2 > 0.9);
    assert_consistent(&f, x, n);
    llc_fit_histogram_destroy(f.h);

    opt.ways = 0;
    fit_with(LLC_FIT_POISSON_EVENTS, x, n, &opt, &f);
    assert_int_equal(f.r.status, LLC_FIT_NOT_APPLICABLE);
    llc_fit_histogram_destroy(f.h);
    free(x);
}

static void test_beta(void **state)
{
    (void)state;
    /* Beta(2,3) stretched over [100,300]. The fit maps the data's own
     * [a - w/2, b + w/2] to (0,1), slightly wider than the true support. */
    const size_t n = 5000;
    double *x = testdata(TD_BETA, n, 2, 3, 100, 200, 14);
    struct fitted mom, mle;
    fit_default(LLC_FIT_BETA, x, n, &mom);
    assert_int_equal(mom.r.status, LLC_FIT_OK);
    assert_int_equal(mom.r.method, LLC_FIT_METHOD_MOM);
    assert_near(mom.r.param[2], mom.h->a - mom.h->width / 2, 1e-12);
    assert_near(mom.r.param[3], mom.h->b + mom.h->width / 2, 1e-12);
    assert_true(fabs(mom.r.param[0] / 2 - 1) < 0.1);
    assert_true(fabs(mom.r.param[1] / 3 - 1) < 0.1);
    assert_true(mom.r.r2 > 0.95);
    assert_consistent(&mom, x, n);

    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.beta_mle = true;
    fit_with(LLC_FIT_BETA, x, n, &opt, &mle);
    assert_int_equal(mle.r.status, LLC_FIT_OK);
    assert_int_equal(mle.r.method, LLC_FIT_METHOD_MLE);
    assert_true(fabs(mle.r.param[0] / 2 - 1) < 0.1);
    assert_true(fabs(mle.r.param[1] / 3 - 1) < 0.1);
    /* The MLE solves its score equations and beats the moments' likelihood. */
    const double a = mle.r.param[0], b = mle.r.param[1];
    const double lo = mle.r.param[2], range = mle.r.param[3] - lo;
    double mlu = 0, ml1u = 0;
    for (size_t k = 0; k < n; k++) {
        mlu += log((x[k] - lo) / range) / n;
        ml1u += log1p(-(x[k] - lo) / range) / n;
    }
    assert_near(gsl_sf_psi(a) - gsl_sf_psi(a + b), mlu, 1e-9);
    assert_near(gsl_sf_psi(b) - gsl_sf_psi(a + b), ml1u, 1e-9);
    assert_true(mle.r.loglik >= mom.r.loglik);
    assert_consistent(&mle, x, n);
    llc_fit_histogram_destroy(mom.h);
    llc_fit_histogram_destroy(mle.h);
    free(x);
}

static void test_student_t(void **state)
{
    (void)state;
    const size_t n = 5000;
    double *x = testdata(TD_T, n, 5, 0, 1000, 20, 15);
    struct fitted f;
    fit_default(LLC_FIT_STUDENT_T, x, n, &f);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_int_equal(f.r.method, LLC_FIT_METHOD_EM);
    assert_int_equal(f.r.nparams, 3);
    const double nu = f.r.param[2];
    assert_true(nu == 4 || nu == 5 || nu == 7);
    assert_true(fabs(f.r.param[0] - 1000) < 1.5);
    assert_true(fabs(f.r.param[1] / 20 - 1) < 0.06);
    assert_true(f.r.iterations > 0);
    assert_consistent(&f, x, n);
    llc_fit_histogram_destroy(f.h);

    /* Heavy tails beat the Gaussian on likelihood, even after the extra parameter. */
    struct fitted g;
    fit_default(LLC_FIT_GAUSSIAN, x, n, &g);
    fit_default(LLC_FIT_STUDENT_T, x, n, &f);
    assert_true(f.r.aic < g.r.aic);
    llc_fit_histogram_destroy(f.h);
    llc_fit_histogram_destroy(g.h);
    free(x);
}

static void test_lognormal(void **state)
{
    (void)state;
    const size_t n = 5000;
    double *x = testdata(TD_LOGNORMAL, n, 5, 0.3, 0, 1, 16);
    struct fitted f;
    fit_default(LLC_FIT_LOGNORMAL, x, n, &f);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_true(fabs(f.r.param[0] - 5) < 0.02);
    assert_true(fabs(f.r.param[1] / 0.3 - 1) < 0.05);
    assert_true(f.r.r2 > 0.95);
    assert_consistent(&f, x, n);
    llc_fit_histogram_destroy(f.h);

    x[0] = -1;
    fit_default(LLC_FIT_LOGNORMAL, x, n, &f);
    assert_int_equal(f.r.status, LLC_FIT_NOT_APPLICABLE);
    assert_true(isnan(llc_fit_family_pdf(&f.r, 100)));
    llc_fit_histogram_destroy(f.h);
    free(x);
}

static void test_bin_integrated_mass(void **state)
{
    (void)state;
    /* With bin-integrated models every family's bins add up to about 1. */
    const size_t n = 3000;
    double *x = testdata(TD_GAMMA, n, 9, 10, 0, 1, 17);
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.bin_integrated = true;
    opt.ways = 1;
    const enum llc_fit_family fams[] = {LLC_FIT_GAUSSIAN,  LLC_FIT_GAMMA,
                                        LLC_FIT_BETA,      LLC_FIT_STUDENT_T,
                                        LLC_FIT_LOGNORMAL, LLC_FIT_POISSON_EVENTS};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        struct fitted f;
        fit_with(fams[i], x, n, &opt, &f);
        assert_int_equal(f.r.status, LLC_FIT_OK);
        const double mass = model_mass(&f);
        assert_true(mass > 0.97 && mass < 1 + 1e-9);
        llc_fit_histogram_destroy(f.h);
    }
    free(x);
}

static void test_huge_poisson_mean(void **state)
{
    (void)state;
    /* A mean of 1e12 misses per set: past GSL's unsigned Poisson pmf and
     * too wide to sum, the Poisson is its normal limit. Counts are whole
     * numbers, as in a map. */
    const size_t n = 2048;
    double *x = testdata(TD_NORMAL, n, 1e12, 1e6, 0, 1, 21);
    for (size_t k = 0; k < n; k++)
        x[k] = nearbyint(x[k]);
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.ways = 16;
    const enum llc_fit_family fams[] = {LLC_FIT_POISSON, LLC_FIT_POISSON_EVENTS};
    for (size_t i = 0; i < 2; i++) {
        struct fitted f;
        fit_with(fams[i], x, n, &opt, &f);
        assert_int_equal(f.r.status, LLC_FIT_OK);
        const double mass = model_mass(&f);
        if (fams[i] == LLC_FIT_POISSON) {
            /* sd 1e6, as the data: a good fit. */
            assert_true(mass > 0.99 && mass < 1 + 1e-6);
            assert_true(f.r.r2 > 0.95);
        } else {
            /* Events of W misses: sd W sqrt(1e12 / W) = 4e6, wider than the
             * data, so the histogram's range holds only part of the mass. */
            const double mu = f.r.param[0] * 16, sd = 16 * sqrt(f.r.param[0]);
            const double want = gsl_cdf_gaussian_P(f.h->edges[f.h->m] - mu, sd) -
                                gsl_cdf_gaussian_P(f.h->edges[0] - mu, sd);
            assert_near(mass, want, 1e-3);
            assert_true(isfinite(f.r.r2));
        }
        llc_fit_histogram_destroy(f.h);
    }
    free(x);
}

static void test_large_parameters(void **state)
{
    (void)state;
    /* Past GSL's convergent range of the incomplete gamma/beta and Poisson
     * CDFs the masses come from the pmf/pdf; they still add up and fit. */
    const size_t n = 2048;
    double *x = testdata(TD_POISSON, n, 2e5, 0, 0, 1, 18);
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.bin_integrated = true;
    struct fitted f;
    fit_with(LLC_FIT_POISSON, x, n, &opt, &f);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_true(f.r.r2 > 0.95);
    double mass = 0;
    for (size_t i = 0; i < f.h->m; i++)
        mass += f.model[i] * f.h->width;
    assert_true(mass > 0.99 && mass < 1 + 1e-9);
    /* Gamma shape ~ 2e5 here: integrated by quadrature. */
    llc_fit_histogram_destroy(f.h);
    fit_with(LLC_FIT_GAMMA, x, n, &opt, &f);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_true(f.r.param[0] > 1e5);
    assert_true(f.r.r2 > 0.95);
    mass = 0;
    for (size_t i = 0; i < f.h->m; i++)
        mass += f.model[i] * f.h->width;
    assert_true(mass > 0.99 && mass < 1 + 1e-9);
    llc_fit_histogram_destroy(f.h);
    free(x);

    /* CV ~ 1e-7: ln(mean) - mean(ln x) is rounding noise, so moments, and
     * with shape ~ 1e14 the gamma density is not evaluable in doubles. */
    x = testdata(TD_NORMAL, n, 1e9, 100, 0, 1, 19);
    fit_default(LLC_FIT_GAMMA, x, n, &f);
    assert_int_equal(f.r.method, LLC_FIT_METHOD_MOM);
    assert_int_equal(f.r.status, LLC_FIT_NOT_APPLICABLE);
    assert_int_equal(f.h->m, 39);
    llc_fit_histogram_destroy(f.h);
    free(x);
    /* CV ~ 1e-4, shape ~ 1e8: Newton stops at the rounding floor of its residual. */
    x = testdata(TD_NORMAL, n, 1e6, 100, 0, 1, 20);
    fit_default(LLC_FIT_GAMMA, x, n, &f);
    assert_int_equal(f.r.method, LLC_FIT_METHOD_MLE);
    assert_int_equal(f.r.status, LLC_FIT_OK);
    assert_true(fabs(f.r.param[0] / 1e8 - 1) < 0.1);
    assert_true(f.r.r2 > 0.95);
    llc_fit_histogram_destroy(f.h);
    free(x);
}

static void test_param_names(void **state)
{
    (void)state;
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        assert_string_not_equal(llc_fit_family_name((enum llc_fit_family)f), "unknown");
        assert_non_null(llc_fit_param_name((enum llc_fit_family)f, 0));
    }
    assert_string_equal(llc_fit_param_name(LLC_FIT_GAMMA, 1), "theta");
    assert_string_equal(llc_fit_param_name(LLC_FIT_STUDENT_T, 2), "nu");
    assert_null(llc_fit_param_name(LLC_FIT_POISSON, 1));
    assert_null(llc_fit_param_name((enum llc_fit_family)LLC_FIT_FAMILY_COUNT, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gamma_mle),           cmocka_unit_test(test_poisson),
        cmocka_unit_test(test_poisson_events),      cmocka_unit_test(test_beta),
        cmocka_unit_test(test_student_t),           cmocka_unit_test(test_lognormal),
        cmocka_unit_test(test_bin_integrated_mass), cmocka_unit_test(test_large_parameters),
        cmocka_unit_test(test_huge_poisson_mean),   cmocka_unit_test(test_param_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
