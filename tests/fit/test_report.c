/* All families at once: best family by AIC and R^2, dispersion, degenerate data. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fit_testdata.h"
#include "llcprobe/common.h"
#include "llcprobe/fit.h"

static struct llc_fit_report *report(const double *x, size_t n, const uint8_t *mask,
                                     const struct llc_fit_options *opt)
{
    struct llc_fit_report *r = NULL;
    char err[LLC_ERRLEN] = "";
    const int rc = llc_fit_report_create(x, n, mask, opt, &r, err, sizeof err);
    if (rc != 0)
        fail_msg("llc_fit_report_create: %d %s", rc, err);
    return r;
}

static void test_gaussian_data(void **state)
{
    (void)state;
    double *x = testdata(TD_NORMAL, 2048, 3000, 200, 0, 1, 41);
    struct llc_fit_report *r = report(x, 2048, NULL, NULL);
    assert_int_equal(r->hist->m, 39);
    const struct llc_fit_family_result *g = &r->fit[LLC_FIT_GAUSSIAN];
    assert_int_equal(g->status, LLC_FIT_OK);
    assert_true(g->r2 > 0.95);
    assert_true(r->gaussian_accepted);
    assert_int_equal(r->fit[LLC_FIT_POISSON].status, LLC_FIT_NOT_APPLICABLE);
    assert_int_equal(r->fit[LLC_FIT_POISSON_EVENTS].status, LLC_FIT_NOT_APPLICABLE);
    assert_int_equal(r->dispersion.status, LLC_FIT_NOT_APPLICABLE);
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        assert_int_equal(r->fit[f].family, f);
        if (r->fit[f].status == LLC_FIT_OK)
            for (size_t i = 0; i < r->hist->m; i++)
                assert_true(isfinite(r->model[f][i]));
    }
    assert_true(r->best_aic >= 0 && r->best_r2 >= 0);
    /* Gaussian-like shapes win; a gamma of alpha ~ 225 or a t of nu = 100 are Gaussian-like too. */
    assert_true(r->fit[r->best_r2].r2 >= g->r2);
    assert_true(r->fit[r->best_aic].aic <= g->aic);
    assert_true(g->aic - r->fit[r->best_aic].aic < 10);
    llc_fit_report_destroy(r);
    free(x);
}

static void test_best_family(void **state)
{
    (void)state;
    double *x = testdata(TD_GAMMA, 4000, 2, 500, 0, 1, 42);
    struct llc_fit_report *r = report(x, 4000, NULL, NULL);
    assert_int_equal(r->best_aic, LLC_FIT_GAMMA);
    assert_false(r->gaussian_accepted);
    llc_fit_report_destroy(r);
    free(x);

    x = testdata(TD_T, 4000, 2, 0, 10000, 50, 43);
    r = report(x, 4000, NULL, NULL);
    assert_int_equal(r->best_aic, LLC_FIT_STUDENT_T);
    assert_near(r->fit[LLC_FIT_STUDENT_T].param[2], 2, 0);
    llc_fit_report_destroy(r);
    free(x);

    x = testdata(TD_LOGNORMAL, 4000, 6, 0.8, 0, 1, 44);
    r = report(x, 4000, NULL, NULL);
    assert_int_equal(r->best_aic, LLC_FIT_LOGNORMAL);
    llc_fit_report_destroy(r);
    free(x);
}

static void test_counts_with_ways(void **state)
{
    (void)state;
    double *x = testdata(TD_POISSON, 2048, 400, 0, 0, 16, 45);
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.ways = 16;
    struct llc_fit_report *r = report(x, 2048, NULL, &opt);
    assert_int_equal(r->hist->binning, LLC_FIT_BINS_INTEGER);
    assert_int_equal(r->fit[LLC_FIT_POISSON_EVENTS].status, LLC_FIT_OK);
    /* Raw misses are W times too dispersed for a Poisson of misses. */
    assert_int_equal(r->fit[LLC_FIT_POISSON].status, LLC_FIT_OK);
    assert_true(r->fit[LLC_FIT_POISSON].r2 < r->fit[LLC_FIT_POISSON_EVENTS].r2);
    assert_int_equal(r->dispersion.status, LLC_FIT_OK);
    assert_true(fabs(r->dispersion.disp - 1) < 0.1);
    assert_int_equal(llc_fit_verdict(&r->dispersion, NAN), LLC_FIT_VERDICT_COUNTING_NOISE);
    llc_fit_report_destroy(r);
    free(x);
}

static void test_mask_matches_compacted(void **state)
{
    (void)state;
    double *x = testdata(TD_GAMMA, 1000, 6, 10, 0, 1, 46);
    uint8_t mask[1000] = {0};
    double kept[1000];
    size_t m = 0;
    for (size_t k = 0; k < 1000; k++) {
        mask[k] = k % 9 == 4;
        if (!mask[k])
            kept[m++] = x[k];
    }
    struct llc_fit_report *a = report(x, 1000, mask, NULL), *b = report(kept, m, NULL, NULL);
    assert_int_equal(a->hist->n, m);
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        assert_int_equal(a->fit[f].status, b->fit[f].status);
        assert_memory_equal(a->fit[f].param, b->fit[f].param, sizeof a->fit[f].param);
    }
    llc_fit_report_destroy(a);
    llc_fit_report_destroy(b);
    free(x);
}

static void test_degenerate(void **state)
{
    (void)state;
    double x[64];
    for (size_t k = 0; k < 64; k++)
        x[k] = 1234;
    struct llc_fit_options opt;
    llc_fit_options_default(&opt);
    opt.ways = 16;
    struct llc_fit_report *r = report(x, 64, NULL, &opt);
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        assert_int_equal(r->fit[f].status, LLC_FIT_DEGENERATE);
        assert_true(isnan(r->fit[f].r2));
    }
    assert_near(r->fit[LLC_FIT_GAUSSIAN].param[0], 1234, 0);
    assert_int_equal(r->best_aic, LLC_FIT_FAMILY_NONE);
    assert_int_equal(r->best_r2, LLC_FIT_FAMILY_NONE);
    assert_false(r->gaussian_accepted);
    /* All units equal: Disp = 0, far below counting noise. */
    assert_near(r->dispersion.disp, 0, 0);
    llc_fit_report_destroy(r);

    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_report_create(x, 0, NULL, NULL, &r, err, sizeof err), -ENODATA);
    assert_null(r);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(llc_fit_status_name(LLC_FIT_DEGENERATE), "degenerate");
    assert_string_equal(llc_fit_status_name(LLC_FIT_NOT_APPLICABLE), "not-applicable");
    assert_string_equal(llc_fit_method_name(LLC_FIT_METHOD_MOM), "mom");
    assert_string_equal(llc_fit_binning_name(LLC_FIT_BINS_INTEGER), "integer");
    assert_string_equal(llc_fit_family_name(LLC_FIT_STUDENT_T), "student-t");
    assert_string_equal(llc_fit_status_name((enum llc_fit_status)17), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaussian_data),    cmocka_unit_test(test_best_family),
        cmocka_unit_test(test_counts_with_ways), cmocka_unit_test(test_mask_matches_compacted),
        cmocka_unit_test(test_degenerate),       cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
