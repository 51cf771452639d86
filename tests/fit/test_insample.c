/* The default estimator applied to the profile it was fitted from gives
 * back the profile's total (in-sample check) on the shapes real programs
 * give: a long right tail and two levels; quantile keys give distinct
 * strata labelled as quantiles. */
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

#define N 16384

/* Each estimator on x = factor * profile of the selected sets, in % of
 * factor * the profile's total. */
static void deviations(const struct llc_fit_selection *sel, double factor,
                       struct llc_fit_estimates *e, double *dev_headline, double *dev_means)
{
    double x[LLC_FIT_MAX_KEYS * 8];
    assert_true(sel->n <= LLC_ARRAY_LEN(x));
    for (size_t i = 0; i < sel->n; i++)
        x[i] = factor * sel->profile[i];
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_estimate(sel, x, e, err, sizeof err), 0);
    const double g = factor * sel->profile_total;
    *dev_headline = 100 * (e->headline - g) / g;
    *dev_means = 100 * (e->stratified - g) / g;
}

static struct llc_fit_selection *select_mode(const double *v, enum llc_fit_key_mode mode)
{
    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    cfg.mode = mode;
    struct llc_fit_selection *s;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_select(v, N, NULL, &cfg, &s, err, sizeof err), 0);
    return s;
}

/* A skewed map (lognormal, sd of ln 1: a few sets carry much of the
 * total): the stratum means miss the total by several percent, the
 * default stratified-ratio estimator gives it back, in every key mode,
 * and also on a later run where every set is 1.7 times as busy. */
static void test_skewed_in_sample(void **state)
{
    (void)state;
    double *v = testdata(TD_LOGNORMAL, N, 7, 1.0, 0, 1, 41);
    for (size_t k = 0; k < N; k++)
        v[k] = round(v[k]);
    const enum llc_fit_key_mode modes[] = {LLC_FIT_KEYS_AUTO, LLC_FIT_KEYS_SIGMA2,
                                           LLC_FIT_KEYS_QUANTILE, LLC_FIT_KEYS_RANGE};
    for (size_t m = 0; m < LLC_ARRAY_LEN(modes); m++) {
        struct llc_fit_selection *s = select_mode(v, modes[m]);
        assert_int_equal(s->estimator, LLC_FIT_EST_STRATIFIED_RATIO);
        double sum = 0;
        for (size_t g = 0; g < s->strata.count; g++)
            sum += s->strata.profile_sum[g];
        assert_near(sum, s->profile_total, 1e-9 * s->profile_total);
        struct llc_fit_estimates e;
        double dh, dm;
        deviations(s, 1.0, &e, &dh, &dm);
        print_message(
            "skewed, %s keys: in-sample D stratified-ratio %+.4f%%, stratified means %+.3f%%\n",
            llc_fit_key_mode_name(s->mode), dh, dm);
        assert_true(fabs(dh) < 1e-9);
        assert_near(e.headline, e.stratified_ratio, 0);
        deviations(s, 1.7, &e, &dh, &dm);
        assert_true(fabs(dh) < 1e-9);
        llc_fit_selection_destroy(s);
    }
    free(v);
}

/* Two levels, as a program whose pages cover half of the sets: half the
 * sets read 0, the rest near 4000. The plain quantiles at 2.3% and 15.9%
 * are both 0; the keys move to distinct values, so there are 5 strata,
 * each with selected sets, labelled as the quantiles they are. */
static void test_two_level_quantile(void **state)
{
    (void)state;
    double *v = testdata(TD_NORMAL, N, 4000, 300, 0, 1, 42);
    for (size_t k = 0; k < N; k++)
        v[k] = k % 2 ? 0 : round(fabs(v[k]));
    struct llc_fit_selection *s = select_mode(v, LLC_FIT_KEYS_QUANTILE);
    assert_int_equal(s->strata.count, 5);
    for (size_t j = 0; j < s->nkeys; j++)
        for (size_t i = 0; i < j; i++)
            assert_true(s->key[i] != s->key[j]);
    size_t per_stratum[LLC_FIT_MAX_KEYS] = {0};
    for (size_t i = 0; i < s->n; i++) {
        per_stratum[s->stratum[i]]++;
        assert_true(s->label[i] >= LLC_FIT_KEY_Q50 && s->label[i] <= LLC_FIT_KEY_Q98);
    }
    for (size_t g = 0; g < 5; g++)
        assert_true(per_stratum[g] >= 1);
    assert_string_equal(llc_fit_key_name(s->label[0]), "median");
    assert_string_equal(
        llc_fit_key_name(llc_fit_key_label(LLC_FIT_KEYS_QUANTILE, LLC_FIT_KEY_START)), "q2.3");
    assert_string_equal(llc_fit_key_name(llc_fit_key_label(LLC_FIT_KEYS_SIGMA2, LLC_FIT_KEY_START)),
                        "start");
    /* Half the sets are 0: the lowest key is 0 and covers them; the next
     * one is the smallest non-zero value. */
    double smallest = INFINITY;
    for (size_t k = 0; k < N; k++)
        if (v[k] > 0 && v[k] < smallest)
            smallest = v[k];
    assert_near(s->strata.key[0], 0, 0);
    assert_near(s->strata.key[1], smallest, 0);
    struct llc_fit_estimates e;
    double dh, dm;
    deviations(s, 1.0, &e, &dh, &dm);
    print_message(
        "two levels, quantile keys: in-sample D stratified-ratio %+.4f%%, stratified means %+.3f%%\n",
        dh, dm);
    assert_true(fabs(dh) < 1e-9);
    llc_fit_selection_destroy(s);
    /* auto takes quantile keys here, and the same strata. */
    s = select_mode(v, LLC_FIT_KEYS_AUTO);
    assert_int_equal(s->mode, LLC_FIT_KEYS_QUANTILE);
    assert_int_equal(s->strata.count, 5);
    llc_fit_selection_destroy(s);
    free(v);
}

/* --pick mean: per key the sets of its stratum nearest the stratum's
 * mean; each lies in its key's stratum, and the stratum means of the
 * chosen sets are those of their strata (to within the nearest set). */
static void test_pick_mean(void **state)
{
    (void)state;
    double *v = testdata(TD_LOGNORMAL, N, 7, 1.0, 0, 1, 43);
    for (size_t k = 0; k < N; k++)
        v[k] = round(v[k]);
    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    cfg.mode = LLC_FIT_KEYS_QUANTILE;
    cfg.pick_mean = true;
    struct llc_fit_selection *s;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_select(v, N, NULL, &cfg, &s, err, sizeof err), 0);
    assert_true(s->pick_mean);
    assert_int_equal(s->n, 25);
    for (size_t i = 0; i < s->n; i++) {
        const size_t g = llc_fit_stratum_of(&s->strata, s->key[i / 5]);
        assert_int_equal(s->stratum[i], g);
    }
    struct llc_fit_estimates e;
    double dh, dm;
    deviations(s, 1.0, &e, &dh, &dm);
    print_message(
        "skewed, quantile keys, pick mean: in-sample D stratified-ratio %+.4f%%, stratified means %+.3f%%\n",
        dh, dm);
    assert_true(fabs(dh) < 1e-9);
    assert_true(fabs(dm) < 2.0);
    llc_fit_selection_destroy(s);
    free(v);
}

/* 99% of the sets at 0 and the rest at one level (a small program on a
 * large LLC: misses come W at a time): both values get a key, so the sets
 * at the level are a stratum of their own and the total comes back. */
static void test_zeros_and_one_level(void **state)
{
    (void)state;
    double *v = calloc(N, sizeof *v);
    for (size_t k = 0; k < N; k += 97)
        v[k] = 16;
    struct llc_fit_selection *s = select_mode(v, LLC_FIT_KEYS_AUTO);
    assert_int_equal(s->strata.count, 2);
    assert_near(s->strata.key[1], 16, 0);
    size_t at_level = 0;
    for (size_t i = 0; i < s->n; i++)
        at_level += s->profile[i] == 16;
    assert_true(at_level >= 1);
    struct llc_fit_estimates e;
    double dh, dm;
    deviations(s, 1.0, &e, &dh, &dm);
    assert_true(fabs(dh) < 1e-9);
    llc_fit_selection_destroy(s);
    free(v);
}

/* Fewer distinct values than keys: as many strata as values, no more. */
static void test_few_values(void **state)
{
    (void)state;
    double *v = malloc(N * sizeof *v);
    for (size_t k = 0; k < N; k++)
        v[k] = (double)(k % 3) * 100;
    struct llc_fit_selection *s = select_mode(v, LLC_FIT_KEYS_QUANTILE);
    assert_int_equal(s->strata.count, 3);
    struct llc_fit_estimates e;
    double dh, dm;
    deviations(s, 1.0, &e, &dh, &dm);
    assert_true(fabs(dh) < 1e-9);
    llc_fit_selection_destroy(s);
    free(v);
}

/* A stratum whose selected sets all read 0 in the profile has no ratio:
 * it takes its mean term; strata without profile sums (a fit file from
 * before them) make the ratio estimator undefined, not wrong. */
static void test_ratio_fallbacks(void **state)
{
    (void)state;
    struct llc_fit_strata st = {.count = 2,
                                .key = {0, 100},
                                .upper = {50, INFINITY},
                                .pi = {0.5, 0.5},
                                .members = {5, 5},
                                .profile_sum = {0, 500},
                                .centre = 1};
    const double prof[] = {0, 0, 90, 110}, x[] = {3, 5, 180, 220};
    struct llc_fit_stratified out;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_stratified_total(&st, prof, x, 4, 10, &out, err, sizeof err), 0);
    /* stratum 0: mean term 10 * 0.5 * 4 = 20; stratum 1: 500 * 400 / 200 = 1000 */
    assert_near(out.ratio_total, 1020, 1e-9);
    assert_near(out.total, 10 * (0.5 * 4 + 0.5 * 200), 1e-9);
    st.profile_sum[0] = st.profile_sum[1] = NAN;
    assert_int_equal(llc_fit_stratified_total(&st, prof, x, 4, 10, &out, err, sizeof err), 0);
    assert_true(isnan(out.ratio_total));
    assert_true(isfinite(out.total));
}

static void test_estimator_names(void **state)
{
    (void)state;
    for (int e = 0; e < LLC_FIT_EST_COUNT; e++) {
        enum llc_fit_estimator back;
        assert_int_equal(
            llc_fit_estimator_parse(llc_fit_estimator_name((enum llc_fit_estimator)e), &back), 0);
        assert_int_equal(back, e);
    }
    enum llc_fit_estimator back;
    assert_int_equal(llc_fit_estimator_parse("median", &back), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skewed_in_sample),    cmocka_unit_test(test_two_level_quantile),
        cmocka_unit_test(test_few_values),          cmocka_unit_test(test_ratio_fallbacks),
        cmocka_unit_test(test_estimator_names),     cmocka_unit_test(test_pick_mean),
        cmocka_unit_test(test_zeros_and_one_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
