/* Estimators (docs/METHODS.md §4), baselines and the deviation D (docs/METHODS.md §5). */
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

/* Keys 10, 20, 30 over the profile {8,9,12,14 | 18,20,22,24 | 31,35}:
 * pi = 0.4, 0.4, 0.2; mu = 19.3 lies in the middle stratum. */
static const struct llc_fit_strata three = {
    .count = 3,
    .key = {10, 20, 30},
    .upper = {15, 25, INFINITY},
    .pi = {0.4, 0.4, 0.2},
    .members = {4, 4, 2},
    .centre = 1,
};

static void test_stratified_by_hand(void **state)
{
    (void)state;
    struct llc_fit_stratified st;
    char err[LLC_ERRLEN];
    /* Means per stratum 120, 200, 330: T = 10 (0.4*120 + 0.4*200 + 0.2*330) = 1940. */
    const double p4[] = {9, 14, 20, 31}, x4[] = {90, 150, 200, 330};
    assert_int_equal(llc_fit_stratified_total(&three, p4, x4, 4, 10, &st, err, sizeof err), 0);
    assert_near(st.total, 1940, 1e-9);
    assert_int_equal(st.count, 3);
    assert_int_equal(st.sampled[0], 2);
    assert_int_equal(st.sampled[1], 1);
    assert_int_equal(st.sampled[2], 1);

    /* Empty centre stratum: its weight goes to the nearest stratum with
     * units, the lower on a tie: pi = 0.8, 0, 0.2 -> 10 (96 + 66) = 1620. */
    const double p3[] = {9, 14, 31}, x3[] = {90, 150, 330};
    assert_int_equal(llc_fit_stratified_total(&three, p3, x3, 3, 10, &st, err, sizeof err), 0);
    assert_near(st.total, 1620, 1e-9);
    assert_near(st.pi[0], 0.8, 1e-12);
    assert_near(st.pi[1], 0, 0);

    /* Empty outer stratum merges towards mu: pi = 0, 0.8, 0.2 -> 10 (176 + 66) = 2420. */
    const double q3[] = {20, 22, 31}, y3[] = {200, 240, 330};
    assert_int_equal(llc_fit_stratified_total(&three, q3, y3, 3, 10, &st, err, sizeof err), 0);
    assert_near(st.total, 2420, 1e-9);
    assert_near(st.pi[1], 0.8, 1e-12);

    /* Strata are chosen by the units' profile values, whatever x they have now. */
    const double xs[] = {1000, 1000, 1000, 1000};
    assert_int_equal(llc_fit_stratified_total(&three, p4, xs, 4, 10, &st, err, sizeof err), 0);
    assert_near(st.total, 10000, 1e-9);

    assert_int_equal(llc_fit_stratified_total(&three, p4, x4, 0, 10, &st, err, sizeof err),
                     -EINVAL);
}

static void test_stratified_cascade(void **state)
{
    (void)state;
    /* Five strata, units only in 2 and 4: 0 -> 1 -> 2 and 3 -> 2. */
    const struct llc_fit_strata five = {
        .count = 5,
        .key = {1, 2, 3, 4, 5},
        .upper = {1.5, 2.5, 3.5, 4.5, INFINITY},
        .pi = {0.1, 0.2, 0.4, 0.2, 0.1},
        .members = {1, 2, 4, 2, 1},
        .centre = 2,
    };
    const double p[] = {3, 3.2, 5}, x[] = {10, 20, 100};
    struct llc_fit_stratified st;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_stratified_total(&five, p, x, 3, 10, &st, err, sizeof err), 0);
    const double pi[] = {0, 0, 0.9, 0, 0.1};
    for (size_t g = 0; g < 5; g++)
        assert_near(st.pi[g], pi[g], 1e-12);
    assert_near(st.total, 10 * (0.9 * 15 + 0.1 * 100), 1e-9);
}

static void test_scale_up_and_ratio(void **state)
{
    (void)state;
    const double p[] = {9, 14, 20, 31}, x[] = {90, 150, 200, 330};
    double t;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_scale_up(x, 4, 10, &t, err, sizeof err), 0);
    assert_near(t, 1925, 1e-9);
    assert_int_equal(llc_fit_ratio(x, p, 4, 193, &t, err, sizeof err), 0);
    assert_near(t, 193.0 * 770 / 74, 1e-9);
    const double zero[] = {0, 0, 0, 0};
    assert_int_equal(llc_fit_ratio(x, zero, 4, 193, &t, err, sizeof err), -EDOM);
    assert_true(isnan(t));
    assert_int_equal(llc_fit_scale_up(x, 0, 10, &t, err, sizeof err), -EINVAL);
}

static void test_global_scale_up_is_exact(void **state)
{
    (void)state;
    /* docs/METHODS.md §5.5: scale-up with S = all usable units reproduces G exactly (D = 0). */
    const size_t n = 2048;
    double *x = testdata(TD_GAMMA, n, 3, 1e5, 0, 1, 31);
    uint8_t mask[2048] = {0};
    for (size_t k = 0; k < n; k += 97)
        mask[k] = 1;
    double all[2048];
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (!mask[k])
            all[m++] = x[k];
    const double g = llc_fit_global_total(x, n, mask);
    double t;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_scale_up(all, m, (double)m, &t, err, sizeof err), 0);
    assert_true(t == g);
    const struct llc_fit_deviation d = llc_fit_deviation(t, g);
    assert_true(d.defined);
    assert_true(d.percent == 0 && d.abs_diff == 0);

    /* Random-N and Continuous-N (all units) agree with G up to summation order. */
    struct llc_fit_baseline_summary s;
    assert_int_equal(llc_fit_eval_random(x, n, mask, m, 3, &s, err, sizeof err), 0);
    assert_true(s.worst_percent < 1e-9);
    free(x);
}

static void test_deviation(void **state)
{
    (void)state;
    struct llc_fit_deviation d = llc_fit_deviation(110, 100);
    assert_true(d.defined);
    assert_near(d.percent, 10, 1e-12);
    assert_near(d.abs_diff, 10, 1e-12);
    d = llc_fit_deviation(90, 100);
    assert_near(d.percent, 10, 1e-12);
    /* G = 0: report |T - G|, D undefined. */
    d = llc_fit_deviation(3, 0);
    assert_false(d.defined);
    assert_true(isnan(d.percent));
    assert_near(d.abs_diff, 3, 0);
}

static void test_random_units(void **state)
{
    (void)state;
    uint8_t mask[10] = {0};
    mask[3] = 1;
    size_t a[3], b[3];
    char err[LLC_ERRLEN];
    unsigned freq[10] = {0};
    const size_t seeds = 20000;
    for (uint64_t seed = 0; seed < seeds; seed++) {
        assert_int_equal(llc_fit_random_units(10, mask, 3, seed, a, err, sizeof err), 0);
        for (size_t i = 0; i < 3; i++) {
            assert_true(a[i] < 10 && a[i] != 3);
            for (size_t j = 0; j < i; j++)
                assert_int_not_equal(a[i], a[j]);
            freq[a[i]]++;
        }
    }
    /* Uniform: each usable unit in 1/3 of the picks (sd 0.0033). */
    for (size_t k = 0; k < 10; k++)
        if (k != 3)
            assert_true(fabs(freq[k] / (double)seeds - 1.0 / 3) < 0.015);
    assert_int_equal(freq[3], 0);

    assert_int_equal(llc_fit_random_units(10, mask, 3, 99, a, err, sizeof err), 0);
    assert_int_equal(llc_fit_random_units(10, mask, 3, 99, b, err, sizeof err), 0);
    assert_memory_equal(a, b, sizeof a);
    size_t big1[50], big2[50];
    assert_int_equal(llc_fit_random_units(2048, NULL, 50, 1, big1, err, sizeof err), 0);
    assert_int_equal(llc_fit_random_units(2048, NULL, 50, 2, big2, err, sizeof err), 0);
    assert_memory_not_equal(big1, big2, sizeof big1);
    assert_int_equal(llc_fit_random_units(10, mask, 10, 1, big1, err, sizeof err), -EINVAL);
}

static void test_continuous(void **state)
{
    (void)state;
    uint8_t mask[10] = {0};
    mask[2] = 1;
    size_t u[4];
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_continuous_units(10, mask, 8, 4, u, err, sizeof err), 0);
    const size_t want[] = {8, 9, 0, 1};
    assert_memory_equal(u, want, sizeof want);
    assert_int_equal(llc_fit_continuous_units(10, mask, 1, 4, u, err, sizeof err), 0);
    const size_t want2[] = {1, 3, 4, 5};
    assert_memory_equal(u, want2, sizeof want2);
    assert_int_equal(llc_fit_continuous_units(10, mask, 10, 4, u, err, sizeof err), -EINVAL);

    /* x_k = k, windows of 3 at 0, 3, 6: totals 10, 40, 70 against G = 45. */
    double x[10];
    for (size_t k = 0; k < 10; k++)
        x[k] = (double)k;
    struct llc_fit_baseline_summary s;
    assert_int_equal(llc_fit_eval_continuous(x, 10, NULL, 3, &s, err, sizeof err), 0);
    assert_int_equal(s.trials, 3);
    assert_near(s.global, 45, 0);
    assert_near(s.first_total, 10, 1e-12);
    assert_near(s.first_percent, 3500.0 / 45, 1e-9);
    assert_near(s.worst_percent, 3500.0 / 45, 1e-9);
    assert_near(s.mean_percent, (3500.0 + 500 + 2500) / 45 / 3, 1e-9);
    assert_near(s.mean_abs, (35.0 + 5 + 25) / 3, 1e-9);

    /* G = 0: percentages undefined, absolute differences still reported. */
    double z[10] = {0, 0, 0, 0, 1, -1, 0, 0, 0, 0};
    assert_int_equal(llc_fit_eval_continuous(z, 10, NULL, 5, &s, err, sizeof err), 0);
    assert_true(isnan(s.mean_percent) && isnan(s.first_percent));
    assert_near(s.worst_abs, 2, 1e-12);
}

static void test_estimate_selection(void **state)
{
    (void)state;
    const size_t n = 2048;
    double *x = testdata(TD_NORMAL, n, 5000, 300, 0, 1, 32);
    struct llc_fit_selection *sel;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_select(x, n, NULL, NULL, &sel, err, sizeof err), 0);
    const double g = llc_fit_global_total(x, n, NULL);
    /* A later run where every set is twice as busy. */
    double x_sel[25];
    for (size_t i = 0; i < sel->n; i++)
        x_sel[i] = 2 * x[sel->unit[i]];
    struct llc_fit_estimates e;
    assert_int_equal(llc_fit_estimate(sel, x_sel, &e, err, sizeof err), 0);
    assert_near(e.ratio, 2 * g, 1e-9 * g);
    assert_true(fabs(e.stratified / (2 * g) - 1) < 0.01);
    assert_true(fabs(e.scale_up / (2 * g) - 1) < 0.01);
    assert_near(e.stratified, e.strata.total, 0);
    llc_fit_selection_destroy(sel);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stratified_by_hand), cmocka_unit_test(test_stratified_cascade),
        cmocka_unit_test(test_scale_up_and_ratio), cmocka_unit_test(test_global_scale_up_is_exact),
        cmocka_unit_test(test_deviation),          cmocka_unit_test(test_random_units),
        cmocka_unit_test(test_continuous),         cmocka_unit_test(test_estimate_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
