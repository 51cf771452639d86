/* Gaussian fit (docs/METHODS.md §2.2) and binned goodness of fit (docs/METHODS.md §2.3). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <gsl/gsl_randist.h>

#include "fit_testdata.h"
#include "llcprobe/common.h"
#include "llcprobe/fit.h"

/* Fits the Gaussian with a fresh histogram; returns the model (caller frees). */
static double *fit(const double *x, size_t n, const uint8_t *mask, enum llc_fit_binning binning,
                   bool integrated, struct llc_fit_family_result *r, struct llc_fit_histogram **hp)
{
    char err[LLC_ERRLEN];
    struct llc_fit_histogram *h;
    assert_int_equal(llc_fit_histogram_create(x, n, mask, binning, &h, err, sizeof err), 0);
    double *model = malloc(h->m * sizeof *model);
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.bin_integrated = integrated;
    assert_int_equal(
        llc_fit_family(LLC_FIT_GAUSSIAN, x, n, mask, h, &opt, r, model, err, sizeof err), 0);
    *hp = h;
    return model;
}

static void test_moments_by_hand(void **state)
{
    (void)state;
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    struct llc_fit_family_result r;
    struct llc_fit_histogram *h;
    double *model = fit(x, 8, NULL, LLC_FIT_BINS_PAPER, false, &r, &h);
    assert_int_equal(r.status, LLC_FIT_OK);
    assert_int_equal(r.method, LLC_FIT_METHOD_SAMPLE_MOMENTS);
    assert_int_equal(r.n, 8);
    assert_near(r.param[0], 5, 1e-12);
    /* N-1 as in the paper (eq. 6), not the 1/N of the true MLE. */
    const double sigma = sqrt(32.0 / 7.0);
    assert_near(r.param[1], sigma, 1e-12);
    double ll = 0;
    for (size_t k = 0; k < 8; k++)
        ll += log(gsl_ran_gaussian_pdf(x[k] - 5, sigma));
    assert_near(r.loglik, ll, 1e-9);
    assert_near(r.aic, 4 - 2 * ll, 1e-9);
    for (size_t i = 0; i < h->m; i++)
        assert_near(model[i], gsl_ran_gaussian_pdf(h->centres[i] - 5, sigma), 1e-15);
    assert_near(r.r2, r.r * r.r, 1e-15);
    assert_near(llc_fit_family_pdf(&r, 6), gsl_ran_gaussian_pdf(1, sigma), 1e-15);
    free(model);
    llc_fit_histogram_destroy(h);
}

static void test_synthetic_normal(void **state)
{
    (void)state;
    /* docs/METHODS.md §5.5: N = 2048 normal data give R^2 > 0.95. */
    double *x = testdata(TD_NORMAL, 2048, 1000, 50, 0, 1, 1);
    struct llc_fit_family_result r;
    struct llc_fit_histogram *h;
    double *model = fit(x, 2048, NULL, LLC_FIT_BINS_AUTO, false, &r, &h);
    assert_int_equal(h->m, 39);
    assert_int_equal(r.status, LLC_FIT_OK);
    assert_true(r.r2 > 0.95);
    assert_near(r.param[0], 1000, 5);
    assert_near(r.param[1], 50, 3);
    free(model);
    llc_fit_histogram_destroy(h);

    /* Bin-integrated model: a proper probability per bin. */
    model = fit(x, 2048, NULL, LLC_FIT_BINS_AUTO, true, &r, &h);
    double mass = 0;
    for (size_t i = 0; i < h->m; i++)
        mass += model[i] * h->width;
    assert_true(mass > 0.99 && mass <= 1.0 + 1e-12);
    assert_true(r.r2 > 0.95);
    free(model);
    llc_fit_histogram_destroy(h);

    /* Raw counts: rounded values, integer-aware bins. */
    for (size_t k = 0; k < 2048; k++)
        x[k] = round(x[k]);
    model = fit(x, 2048, NULL, LLC_FIT_BINS_AUTO, false, &r, &h);
    assert_int_equal(h->binning, LLC_FIT_BINS_INTEGER);
    assert_true(r.r2 > 0.95);
    free(model);
    llc_fit_histogram_destroy(h);
    free(x);
}

static void test_non_gaussian_scores_lower(void **state)
{
    (void)state;
    /* Strongly skewed data: the Gaussian R^2 falls below the paper's 0.85 bar. */
    double *x = testdata(TD_GAMMA, 2048, 0.7, 100, 0, 1, 2);
    struct llc_fit_family_result r;
    struct llc_fit_histogram *h;
    double *model = fit(x, 2048, NULL, LLC_FIT_BINS_AUTO, false, &r, &h);
    assert_int_equal(r.status, LLC_FIT_OK);
    assert_true(r.r2 < LLC_FIT_R2_ACCEPT);
    free(model);
    llc_fit_histogram_destroy(h);
    free(x);
}

static void test_degenerate(void **state)
{
    (void)state;
    double x[30];
    for (size_t k = 0; k < 30; k++)
        x[k] = 42;
    struct llc_fit_family_result r;
    struct llc_fit_histogram *h;
    double *model = fit(x, 30, NULL, LLC_FIT_BINS_AUTO, false, &r, &h);
    assert_int_equal(r.status, LLC_FIT_DEGENERATE);
    assert_near(r.param[0], 42, 0);
    assert_near(r.param[1], 0, 0);
    assert_true(isnan(r.r) && isnan(r.r2));
    assert_true(isnan(model[0]));
    assert_true(isnan(llc_fit_family_pdf(&r, 42)));
    free(model);
    llc_fit_histogram_destroy(h);

    /* One usable unit. */
    const uint8_t mask[] = {1, 0, 1};
    const double y[] = {1, 5, 9};
    model = fit(y, 3, mask, LLC_FIT_BINS_AUTO, false, &r, &h);
    assert_int_equal(r.status, LLC_FIT_DEGENERATE);
    assert_near(r.param[0], 5, 0);
    free(model);
    llc_fit_histogram_destroy(h);
}

static void test_pearson(void **state)
{
    (void)state;
    double r;
    const double y[] = {1, 2, 3, 4}, Y[] = {2, 4, 6, 8}, flat[] = {1, 1, 1, 1};
    const double neg[] = {4, 3, 2, 1};
    assert_int_equal(llc_fit_pearson(y, Y, 4, &r), LLC_FIT_OK);
    assert_near(r, 1, 1e-12);
    assert_int_equal(llc_fit_pearson(y, neg, 4, &r), LLC_FIT_OK);
    assert_near(r, -1, 1e-12);
    assert_int_equal(llc_fit_pearson(y, flat, 4, &r), LLC_FIT_DEGENERATE);
    assert_true(isnan(r));
    assert_int_equal(llc_fit_pearson(y, Y, 1, &r), LLC_FIT_DEGENERATE);
    assert_true(isnan(r));
}

static void test_bad_arguments(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4};
    const double other[] = {1, 2, 3};
    char err[LLC_ERRLEN];
    struct llc_fit_histogram *h;
    struct llc_fit_family_result r;
    assert_int_equal(
        llc_fit_histogram_create(other, 3, NULL, LLC_FIT_BINS_AUTO, &h, err, sizeof err), 0);
    assert_int_equal(
        llc_fit_family(LLC_FIT_GAUSSIAN, x, 4, NULL, h, NULL, &r, NULL, err, sizeof err), -EINVAL);
    assert_int_equal(
        llc_fit_family((enum llc_fit_family)99, x, 4, NULL, h, NULL, &r, NULL, err, sizeof err),
        -EINVAL);
    llc_fit_histogram_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moments_by_hand),
        cmocka_unit_test(test_synthetic_normal),
        cmocka_unit_test(test_non_gaussian_scores_lower),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_pearson),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
