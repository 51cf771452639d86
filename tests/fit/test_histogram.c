/* Histogram of docs/METHODS.md §2.1: bin count, paper bins, integer-aware bins, degenerate data. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fit_testdata.h"
#include "llcprobe/common.h"
#include "llcprobe/fit.h"

static void test_bin_count(void **state)
{
    (void)state;
    assert_int_equal(llc_fit_bin_count(2048), 39);
    assert_int_equal(llc_fit_bin_count(512), 23);
    assert_int_equal(llc_fit_bin_count(1024), 30);
    assert_int_equal(llc_fit_bin_count(8192), 69);
    assert_int_equal(llc_fit_bin_count(16384), 91);
    assert_int_equal(llc_fit_bin_count(0), 1);
    assert_int_equal(llc_fit_bin_count(1), 1);
    assert_int_equal(llc_fit_bin_count(2), 2);
}

static void test_paper_bins(void **state)
{
    (void)state;
    /* N = 10 -> m = 5 bins of width 2 over [0,10]; the middle two are empty. */
    const double x[] = {0, 0.5, 1, 1.5, 2.5, 3, 8.5, 9, 9.5, 10};
    struct llc_fit_histogram *h;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_histogram_create(x, 10, NULL, LLC_FIT_BINS_AUTO, &h, err, sizeof err),
                     0);
    assert_int_equal(h->binning, LLC_FIT_BINS_PAPER);
    assert_int_equal(h->m, 5);
    assert_int_equal(h->n, 10);
    assert_false(h->degenerate);
    assert_near(h->a, 0, 0);
    assert_near(h->b, 10, 0);
    assert_near(h->width, 2, 1e-12);
    const size_t counts[] = {4, 2, 0, 0, 4};
    double mass = 0;
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(h->counts[i], counts[i]);
        assert_near(h->centres[i], 1 + 2.0 * i, 1e-12);
        assert_near(h->edges[i], 2.0 * i, 1e-12);
        assert_near(h->density[i], counts[i] / 20.0, 1e-12);
        mass += h->density[i] * h->width;
    }
    assert_near(h->edges[5], 10, 0);
    assert_near(mass, 1, 1e-12);
    /* The last bin is closed; values outside [a,b] clamp. */
    assert_int_equal(llc_fit_histogram_bin(h, 10), 4);
    assert_int_equal(llc_fit_histogram_bin(h, 1.999), 0);
    assert_int_equal(llc_fit_histogram_bin(h, 2), 1);
    assert_int_equal(llc_fit_histogram_bin(h, -5), 0);
    assert_int_equal(llc_fit_histogram_bin(h, 50), 4);
    llc_fit_histogram_destroy(h);
}

static void test_integer_bins(void **state)
{
    (void)state;
    /* N = 10, [0,10]: m = 5, w = ceil(11/5) = 3, m' = ceil(11/3) = 4,
     * edges -0.5, 2.5, 5.5, 8.5, 11.5: every bin holds 3 integers. */
    const double x[] = {0, 1, 2, 3, 5, 6, 8, 9, 10, 10};
    struct llc_fit_histogram *h;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_histogram_create(x, 10, NULL, LLC_FIT_BINS_AUTO, &h, err, sizeof err),
                     0);
    assert_int_equal(h->binning, LLC_FIT_BINS_INTEGER);
    assert_int_equal(h->m, 4);
    assert_near(h->width, 3, 0);
    const size_t counts[] = {3, 2, 2, 3};
    const double edges[] = {-0.5, 2.5, 5.5, 8.5, 11.5};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(h->counts[i], counts[i]);
        assert_near(h->centres[i], 1 + 3.0 * i, 1e-12);
        assert_near(h->density[i], counts[i] / 30.0, 1e-12);
    }
    for (size_t i = 0; i < 5; i++)
        assert_near(h->edges[i], edges[i], 1e-12);
    llc_fit_histogram_destroy(h);

    /* Paper binning of the same counts on request. */
    assert_int_equal(llc_fit_histogram_create(x, 10, NULL, LLC_FIT_BINS_PAPER, &h, err, sizeof err),
                     0);
    assert_int_equal(h->m, 5);
    llc_fit_histogram_destroy(h);
}

static void test_integer_bins_narrow_range(void **state)
{
    (void)state;
    /* b - a + 1 = 10 < m = 39: unit-wide bins, one integer each, none empty by construction. */
    double x[2048];
    for (size_t k = 0; k < 2048; k++)
        x[k] = 100 + (double)(k % 10);
    struct llc_fit_histogram *h;
    char err[LLC_ERRLEN];
    assert_int_equal(
        llc_fit_histogram_create(x, 2048, NULL, LLC_FIT_BINS_INTEGER, &h, err, sizeof err), 0);
    assert_int_equal(h->m, 10);
    assert_near(h->width, 1, 0);
    for (size_t i = 0; i < 10; i++) {
        assert_near(h->centres[i], 100 + (double)i, 1e-12);
        assert_true(h->counts[i] == 205 || h->counts[i] == 204);
    }
    llc_fit_histogram_destroy(h);
    /* The paper formula on the same data leaves bins empty: the reason for the integer mode. */
    assert_int_equal(
        llc_fit_histogram_create(x, 2048, NULL, LLC_FIT_BINS_PAPER, &h, err, sizeof err), 0);
    assert_int_equal(h->m, 39);
    size_t empty = 0;
    for (size_t i = 0; i < h->m; i++)
        empty += h->counts[i] == 0;
    assert_int_equal(empty, 29);
    llc_fit_histogram_destroy(h);
}

static void test_degenerate(void **state)
{
    (void)state;
    double x[50];
    for (size_t k = 0; k < 50; k++)
        x[k] = 7;
    struct llc_fit_histogram *h;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_histogram_create(x, 50, NULL, LLC_FIT_BINS_PAPER, &h, err, sizeof err),
                     0);
    assert_true(h->degenerate);
    assert_int_equal(h->m, 1);
    assert_int_equal(h->counts[0], 50);
    assert_near(h->width, 0, 0);
    assert_true(isnan(h->density[0]));
    assert_int_equal(llc_fit_histogram_bin(h, 7), 0);
    llc_fit_histogram_destroy(h);

    assert_int_equal(
        llc_fit_histogram_create(x, 50, NULL, LLC_FIT_BINS_INTEGER, &h, err, sizeof err), 0);
    assert_true(h->degenerate);
    assert_int_equal(h->m, 1);
    assert_near(h->edges[0], 6.5, 0);
    assert_near(h->edges[1], 7.5, 0);
    assert_near(h->density[0], 1, 0);
    llc_fit_histogram_destroy(h);
}

static void test_mask_and_errors(void **state)
{
    (void)state;
    const double x[] = {1, 2, NAN, 4, 1000, 2.5};
    const uint8_t mask[] = {0, 0, 1, 0, 1, 0};
    struct llc_fit_histogram *h = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_fit_histogram_create(x, 6, mask, LLC_FIT_BINS_AUTO, &h, err, sizeof err),
                     0);
    assert_int_equal(h->n, 4);
    assert_near(h->b, 4, 0);
    assert_int_equal(h->binning, LLC_FIT_BINS_PAPER);
    llc_fit_histogram_destroy(h);

    assert_int_equal(llc_fit_histogram_create(x, 6, NULL, LLC_FIT_BINS_AUTO, &h, err, sizeof err),
                     -EINVAL);
    assert_null(h);
    assert_non_null(strstr(err, "not finite"));
    assert_int_equal(
        llc_fit_histogram_create(x, 6, mask, LLC_FIT_BINS_INTEGER, &h, err, sizeof err), -EINVAL);
    const uint8_t all[] = {1, 1, 1, 1, 1, 1};
    assert_int_equal(llc_fit_histogram_create(x, 6, all, LLC_FIT_BINS_AUTO, &h, err, sizeof err),
                     -ENODATA);
    assert_true(llc_fit_all_integers(x, 2, NULL));
    assert_false(llc_fit_all_integers(x, 6, mask));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bin_count),    cmocka_unit_test(test_paper_bins),
        cmocka_unit_test(test_integer_bins), cmocka_unit_test(test_integer_bins_narrow_range),
        cmocka_unit_test(test_degenerate),   cmocka_unit_test(test_mask_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
