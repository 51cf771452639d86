/* Dispersion check (docs/METHODS.md §2.4), test-retest correlation (docs/METHODS.md §1.5) and the
 * verdict. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_cdf.h>

#include "fit_testdata.h"
#include "llcprobe/common.h"
#include "llcprobe/fit.h"

#define W 16
#define N 2048

/* Per-unit event rates lambda_k ~ gamma(shape, 400/shape) (CV 1/sqrt(shape)),
 * then one sweep of raw misses W * Poisson(lambda_k). */
static void sweeps(double shape, unsigned long placement_seed, unsigned long noise_seed,
                   double *miss)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, placement_seed);
    double lambda[N];
    for (size_t k = 0; k < N; k++)
        lambda[k] = shape > 0 ? gsl_ran_gamma(r, shape, 400 / shape) : 400;
    gsl_rng_set(r, noise_seed);
    for (size_t k = 0; k < N; k++)
        miss[k] = W * (double)gsl_ran_poisson(r, lambda[k]);
    gsl_rng_free(r);
}

static void test_poisson_noise(void **state)
{
    (void)state;
    /* docs/METHODS.md §5.5: Poisson event counts of mean 400, W misses each: Disp within 1 +- 0.1.
     */
    double miss[N];
    sweeps(0, 1, 2, miss);
    struct llc_fit_dispersion d;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_dispersion(miss, N, NULL, W, &d, err, sizeof err), 0);
    assert_int_equal(d.status, LLC_FIT_OK);
    assert_int_equal(d.n, N);
    assert_true(fabs(d.disp - 1) < 0.1);
    assert_near(d.mean_events, 400, 2);
    assert_true(d.cv_true < 0.02);
    assert_true(d.p_over >= LLC_FIT_DISP_ALPHA && d.p_under >= LLC_FIT_DISP_ALPHA);
    assert_int_equal(llc_fit_verdict(&d, NAN), LLC_FIT_VERDICT_COUNTING_NOISE);
    assert_string_equal(llc_fit_verdict_text(LLC_FIT_VERDICT_COUNTING_NOISE),
                        "spread is consistent with counting noise: the Gaussian shape carries "
                        "no information about the program");
    /* On raw misses the pure-noise value is about W, not 1 (docs/METHODS.md §2.4). */
    assert_int_equal(llc_fit_dispersion(miss, N, NULL, 1, &d, err, sizeof err), 0);
    assert_true(fabs(d.disp / W - 1) < 0.1);
}

static void test_by_hand(void **state)
{
    (void)state;
    const double miss[] = {4, 8, 12, 16, 20, 999};
    const uint8_t mask[] = {0, 0, 0, 0, 0, 1};
    struct llc_fit_dispersion d;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_dispersion(miss, 6, mask, 4, &d, err, sizeof err), 0);
    assert_int_equal(d.n, 5);
    assert_near(d.mean_events, 3, 1e-12);
    assert_near(d.var_events, 2.5, 1e-12);
    assert_near(d.disp, 2.5 / 3, 1e-12);
    assert_near(d.cv_true, 0, 0);
    assert_near(d.structure_share, 0, 0);
    assert_near(d.p_over, gsl_cdf_chisq_Q(4 * 2.5 / 3, 4), 1e-12);
    assert_near(d.p_over + d.p_under, 1, 1e-12);

    assert_int_equal(llc_fit_dispersion(miss, 6, mask, 0, &d, err, sizeof err), -EINVAL);
}

static void test_structured(void **state)
{
    (void)state;
    /* CV of lambda 0.2: Disp = 1 + var(lambda) / mean = 1 + 6400/400 = 17. */
    double s1[N], s2[N], other[N];
    sweeps(25, 3, 4, s1);
    sweeps(25, 3, 5, s2);    /* same placement, new counting noise */
    sweeps(25, 6, 7, other); /* a restarted target: new placement */
    struct llc_fit_dispersion d;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_dispersion(s1, N, NULL, W, &d, err, sizeof err), 0);
    assert_true(fabs(d.disp / 17 - 1) < 0.15);
    assert_true(fabs(d.cv_true - 0.2) < 0.02);
    assert_true(d.p_over < 1e-6);
    const double r = llc_fit_test_retest(s1, s2, N, NULL);
    /* Two noisy copies of one structure correlate by its share of the variance. */
    assert_true(fabs(r - d.structure_share) < 0.05);
    assert_int_equal(llc_fit_verdict(&d, r), LLC_FIT_VERDICT_STRUCTURED);
    assert_int_equal(llc_fit_verdict(&d, NAN), LLC_FIT_VERDICT_STRUCTURED);
    const double r_other = llc_fit_test_retest(s1, other, N, NULL);
    assert_true(fabs(r_other) < 0.1);
    assert_int_equal(llc_fit_verdict(&d, r_other), LLC_FIT_VERDICT_NOT_REPEATABLE);
}

static void test_mostly_noise(void **state)
{
    (void)state;
    /* CV of lambda 0.02: var(lambda) = 64, Disp = 1.16: real but small structure. */
    double miss[N];
    sweeps(2500, 8, 9, miss);
    struct llc_fit_dispersion d;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_dispersion(miss, N, NULL, W, &d, err, sizeof err), 0);
    assert_true(d.p_over < LLC_FIT_DISP_ALPHA);
    assert_true(d.structure_share < LLC_FIT_RETEST_MIN);
    assert_int_equal(llc_fit_verdict(&d, NAN), LLC_FIT_VERDICT_MOSTLY_NOISE);
}

static void test_underdispersed_and_degenerate(void **state)
{
    (void)state;
    double miss[N];
    for (size_t k = 0; k < N; k++)
        miss[k] = W * (400.0 + (double)(k % 3) - 1);
    struct llc_fit_dispersion d;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_dispersion(miss, N, NULL, W, &d, err, sizeof err), 0);
    assert_true(d.disp < 0.01);
    assert_int_equal(llc_fit_verdict(&d, NAN), LLC_FIT_VERDICT_UNDERDISPERSED);

    memset(miss, 0, sizeof miss);
    assert_int_equal(llc_fit_dispersion(miss, N, NULL, W, &d, err, sizeof err), 0);
    assert_int_equal(d.status, LLC_FIT_DEGENERATE);
    assert_true(isnan(d.disp));
    assert_int_equal(llc_fit_verdict(&d, NAN), LLC_FIT_VERDICT_NO_SIGNAL);

    miss[0] = 64;
    assert_int_equal(llc_fit_dispersion(miss, 1, NULL, W, &d, err, sizeof err), 0);
    assert_int_equal(d.status, LLC_FIT_DEGENERATE);
    assert_int_equal(llc_fit_verdict(&d, NAN), LLC_FIT_VERDICT_TOO_FEW);

    /* No W: only the retest can speak. */
    d = (struct llc_fit_dispersion){.status = LLC_FIT_NOT_APPLICABLE, .mean_events = NAN};
    assert_int_equal(llc_fit_verdict(&d, NAN), LLC_FIT_VERDICT_UNCHECKED);
    assert_int_equal(llc_fit_verdict(&d, 0.1), LLC_FIT_VERDICT_NOT_REPEATABLE);
    assert_int_equal(llc_fit_verdict(&d, 0.9), LLC_FIT_VERDICT_UNCHECKED);
}

static void test_retest_edges(void **state)
{
    (void)state;
    const double a[] = {1, 2, 3, 4, 100};
    const double b[] = {2, 4, 6, 8, -100};
    const double flat[] = {5, 5, 5, 5, 5};
    const uint8_t mask[] = {0, 0, 0, 0, 1};
    assert_near(llc_fit_test_retest(a, b, 5, mask), 1, 1e-12);
    assert_true(llc_fit_test_retest(a, b, 5, NULL) < 0);
    assert_true(isnan(llc_fit_test_retest(a, flat, 5, NULL)));
    assert_true(isnan(llc_fit_test_retest(a, b, 1, NULL)));
    for (int v = LLC_FIT_VERDICT_NO_SIGNAL; v <= LLC_FIT_VERDICT_STRUCTURED; v++) {
        assert_string_not_equal(llc_fit_verdict_name((enum llc_fit_verdict)v), "unknown");
        assert_true(strlen(llc_fit_verdict_text((enum llc_fit_verdict)v)) > 20);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poisson_noise),
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_structured),
        cmocka_unit_test(test_mostly_noise),
        cmocka_unit_test(test_underdispersed_and_degenerate),
        cmocka_unit_test(test_retest_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
