/* Key points (docs/METHODS.md §3.1), deterministic selection (docs/METHODS.md §3.2), degenerate
 * cases (docs/METHODS.md §2.5). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>

#include "fit_testdata.h"
#include "llcprobe/common.h"
#include "llcprobe/fit.h"

#define N 2048

/* The documented unit hash, re-implemented from its specification. */
static uint64_t unit_hash(uint64_t k, uint64_t seed)
{
    uint64_t z = (k ^ seed) + UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static struct llc_fit_selection *select_ok(const double *x, size_t n, const uint8_t *mask,
                                           const struct llc_fit_select_config *cfg)
{
    struct llc_fit_selection *s = NULL;
    char err[LLC_ERRLEN] = "";
    const int rc = llc_fit_select(x, n, mask, cfg, &s, err, sizeof err);
    if (rc != 0)
        fail_msg("llc_fit_select: %d %s", rc, err);
    return s;
}

static void assert_unique_usable(const struct llc_fit_selection *s, const uint8_t *mask)
{
    for (size_t i = 0; i < s->n; i++) {
        assert_true(s->unit[i] < s->n_units);
        if (mask)
            assert_int_equal(mask[s->unit[i]], 0);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(s->unit[i], s->unit[j]);
    }
}

static void test_default_selection(void **state)
{
    (void)state;
    double *x = testdata(TD_NORMAL, N, 5000, 300, 0, 1, 21);
    /* The paper's rule of docs/METHODS.md §3.2, sets nearest the key (--pick key); the
     * default picks at the stratum's mean (test_insample.c). */
    struct llc_fit_select_config key_pick;
    llc_fit_select_config_default(&key_pick);
    key_pick.pick_mean = false;
    struct llc_fit_selection *s = select_ok(x, N, NULL, &key_pick);
    assert_int_equal(s->status, LLC_FIT_SELECT_KEYS);
    assert_int_equal(s->n, 25);
    assert_int_equal(s->nkeys, 5);
    assert_int_equal(s->bins, 39);
    assert_int_equal(s->seed, LLC_FIT_DEFAULT_SEED);
    assert_unique_usable(s, NULL);
    assert_true(s->r2 > 0.95);
    assert_true(isnan(s->disp));
    const double mu = gsl_stats_mean(x, 1, N), sigma = gsl_stats_sd(x, 1, N);
    assert_near(s->mu, mu, 1e-9);
    assert_near(s->sigma, sigma, 1e-9);
    const double t[] = {0, -1, 1, -2, 2};
    for (size_t j = 0; j < 5; j++)
        assert_near(s->key[j], mu + t[j] * sigma, 1e-9);

    /* Per key: 5 units from the key's bin, the nearest ones in it. */
    struct llc_fit_histogram *h;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_fit_histogram_create(x, N, NULL, LLC_FIT_BINS_AUTO, &h, err, sizeof err),
                     0);
    bool chosen[N] = {false};
    for (size_t j = 0; j < 5; j++) {
        const size_t bin = llc_fit_histogram_bin(h, s->key[j]);
        double farthest = 0;
        for (size_t i = 5 * j; i < 5 * j + 5; i++) {
            assert_int_equal(s->label[i], (enum llc_fit_key)j);
            assert_int_equal(llc_fit_histogram_bin(h, s->profile[i]), bin);
            assert_near(s->profile[i], x[s->unit[i]], 0);
            assert_int_equal(s->stratum[i], llc_fit_stratum_of(&s->strata, s->profile[i]));
            farthest = fmax(farthest, fabs(s->profile[i] - s->key[j]));
        }
        for (size_t i = 5 * j; i < 5 * j + 5; i++)
            chosen[s->unit[i]] = true;
        for (size_t k = 0; k < N; k++)
            if (!chosen[k] && llc_fit_histogram_bin(h, x[k]) == bin)
                assert_true(fabs(x[k] - s->key[j]) >= farthest);
    }
    llc_fit_histogram_destroy(h);
    llc_fit_selection_destroy(s);
    free(x);
}

static void test_pure_and_permutation_consistent(void **state)
{
    (void)state;
    double *x = testdata(TD_GAMMA, N, 20, 30, 0, 1, 22);
    uint8_t mask[N] = {0};
    for (size_t k = 0; k < N; k += 37)
        mask[k] = 1;
    const enum llc_fit_key_mode modes[] = {LLC_FIT_KEYS_SIGMA2, LLC_FIT_KEYS_RANGE,
                                           LLC_FIT_KEYS_QUANTILE};
    size_t perm[N];
    for (size_t k = 0; k < N; k++)
        perm[k] = k;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 23);
    gsl_ran_shuffle(r, perm, N, sizeof perm[0]);
    gsl_rng_free(r);
    double px[N];
    uint8_t pmask[N];
    for (size_t k = 0; k < N; k++) {
        px[perm[k]] = x[k];
        pmask[perm[k]] = mask[k];
    }
    for (size_t m = 0; m < 3; m++) {
        struct llc_fit_select_config cfg;
        llc_fit_select_config_default(&cfg);
        cfg.mode = modes[m];
        struct llc_fit_selection *a = select_ok(x, N, mask, &cfg);
        struct llc_fit_selection *b = select_ok(x, N, mask, &cfg);
        struct llc_fit_selection *p = select_ok(px, N, pmask, &cfg);
        assert_int_equal(a->n, 25);
        assert_unique_usable(a, mask);
        assert_int_equal(a->n_usable, N - (N + 36) / 37);
        assert_int_equal(b->n, a->n);
        assert_int_equal(p->n, a->n);
        assert_memory_equal(a->unit, b->unit, a->n * sizeof a->unit[0]);
        assert_memory_equal(a->key, p->key, sizeof a->key);
        assert_memory_equal(&a->strata, &p->strata, sizeof a->strata);
        for (size_t i = 0; i < a->n; i++) {
            assert_int_equal(p->unit[i], perm[a->unit[i]]);
            assert_int_equal(p->label[i], a->label[i]);
        }
        llc_fit_selection_destroy(a);
        llc_fit_selection_destroy(b);
        llc_fit_selection_destroy(p);
    }
    free(x);
}

static void test_hash_tie_break(void **state)
{
    (void)state;
    /* Seven values repeated by unit id: the nearest value to mu is tied across
     * ~290 units, and the hash (not the unit id) picks among them. */
    double x[N];
    for (size_t k = 0; k < N; k++)
        x[k] = 100 + (double)(k % 7);
    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    cfg.pick_mean = false; /* the key rule's ties */
    for (int round = 0; round < 2; round++) {
        cfg.seed = round ? 12345 : LLC_FIT_DEFAULT_SEED;
        struct llc_fit_selection *s = select_ok(x, N, NULL, &cfg);
        const double v = s->profile[0];
        for (size_t i = 0; i < 5; i++)
            assert_near(s->profile[i], v, 0);
        /* The five smallest hashes among units with that value, in hash order. */
        uint64_t prev = 0;
        for (size_t i = 0; i < 5; i++) {
            const uint64_t h = unit_hash(s->unit[i], cfg.seed);
            assert_true(i == 0 || h > prev);
            prev = h;
        }
        for (size_t k = 0; k < N; k++) {
            bool in = false;
            for (size_t i = 0; i < 5; i++)
                in |= s->unit[i] == k;
            if (!in && x[k] == v)
                assert_true(unit_hash(k, cfg.seed) > prev);
        }
        /* Not clustered on low unit ids. */
        size_t max_id = 0;
        for (size_t i = 0; i < 5; i++)
            max_id = s->unit[i] > max_id ? s->unit[i] : max_id;
        assert_true(max_id > 100);
        llc_fit_selection_destroy(s);
    }
}

static void test_fill_outward(void **state)
{
    (void)state;
    /* mu = 1303/26 = 50.115; 7 bins of width 100/7; mu's bin [42.9,57.1)
     * holds 50, 50, 45; then the nearest outside: 58 and 70 (70 is closer than 30). */
    double x[26];
    for (size_t k = 0; k < 10; k++) {
        x[k] = 0;
        x[10 + k] = 100;
    }
    const double rest[] = {50, 50, 45, 58, 30, 70};
    memcpy(x + 20, rest, sizeof rest);
    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    cfg.points = 1;
    cfg.mode =
        LLC_FIT_KEYS_SIGMA2; /* the bin rule (auto would take quantile keys for these two levels) */
    cfg.pick_mean = false;
    struct llc_fit_selection *s = select_ok(x, 26, NULL, &cfg);
    assert_int_equal(s->bins, 7);
    assert_int_equal(s->n, 5);
    const double want[] = {50, 50, 45, 58, 70};
    for (size_t i = 0; i < 5; i++) {
        assert_near(s->profile[i], want[i], 0);
        assert_int_equal(s->label[i], LLC_FIT_KEY_PEAK);
    }
    llc_fit_selection_destroy(s);
}

static void test_even_when_sigma_zero(void **state)
{
    (void)state;
    double x[N];
    uint8_t mask[N] = {0};
    for (size_t k = 0; k < N; k++)
        x[k] = 7;
    mask[40] = 1; /* k_0 = floor(0.5 * 2048 / 25) = 40 moves to 41 */
    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    cfg.ways = 16;
    struct llc_fit_selection *s = select_ok(x, N, mask, &cfg);
    assert_true(isnan(s->r2));
    assert_near(s->disp, 0, 0);
    assert_int_equal(s->status, LLC_FIT_SELECT_EVEN);
    assert_int_equal(s->n, 25);
    assert_near(s->sigma, 0, 0);
    assert_int_equal(s->unit[0], 41);
    for (size_t j = 1; j < 25; j++) {
        assert_int_equal(s->unit[j], (2 * j + 1) * N / 50);
        assert_int_equal(s->label[j], LLC_FIT_KEY_EVEN);
    }
    assert_int_equal(s->strata.count, 1);
    assert_near(s->strata.pi[0], 1, 0);
    llc_fit_selection_destroy(s);
}

static void test_few_units_and_no_signal(void **state)
{
    (void)state;
    double x[30];
    uint8_t mask[30] = {0};
    for (size_t k = 0; k < 30; k++)
        x[k] = (double)(k * k % 11);
    for (size_t k = 0; k < 12; k++)
        mask[2 * k] = 1;
    struct llc_fit_selection *s = select_ok(x, 30, mask, NULL);
    assert_int_equal(s->status, LLC_FIT_SELECT_ALL);
    assert_int_equal(s->n, 18);
    assert_int_equal(s->n_usable, 18);
    assert_unique_usable(s, mask);
    for (size_t i = 0; i < s->n; i++)
        assert_int_equal(s->label[i], LLC_FIT_KEY_ALL);
    llc_fit_selection_destroy(s);

    char err[LLC_ERRLEN] = "";
    double zero[40] = {0};
    s = NULL;
    assert_int_equal(llc_fit_select(zero, 40, NULL, NULL, &s, err, sizeof err), -ENODATA);
    assert_null(s);
    assert_non_null(strstr(err, "no measurable probe misses"));
    uint8_t all[30];
    memset(all, 1, sizeof all);
    assert_int_equal(llc_fit_select(x, 30, all, NULL, &s, err, sizeof err), -ENODATA);

    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    cfg.points = 6;
    assert_int_equal(llc_fit_select(x, 30, NULL, &cfg, &s, err, sizeof err), -EINVAL);
    cfg.points = 5;
    cfg.per_point = 0;
    assert_int_equal(llc_fit_select(x, 30, NULL, &cfg, &s, err, sizeof err), -EINVAL);
}

static void test_modes(void **state)
{
    (void)state;
    /* Skewed data: mu - 2 sigma falls below the minimum. */
    double *x = testdata(TD_GAMMA, N, 2, 100, 0, 1, 24);
    double sorted[N];
    memcpy(sorted, x, sizeof sorted);
    gsl_sort(sorted, 1, N);
    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    cfg.mode = LLC_FIT_KEYS_SIGMA2;
    cfg.pick_mean = false; /* where each key's sets lie: the key rule */

    struct llc_fit_selection *s = select_ok(x, N, NULL, &cfg);
    assert_true(s->mu - 2 * s->sigma < s->a);
    assert_near(s->key[LLC_FIT_KEY_START], s->a, 0);
    assert_near(s->key[LLC_FIT_KEY_END], s->mu + 2 * s->sigma, 1e-9);
    llc_fit_selection_destroy(s);

    cfg.mode = LLC_FIT_KEYS_RANGE;
    s = select_ok(x, N, NULL, &cfg);
    assert_near(s->key[LLC_FIT_KEY_START], sorted[0], 0);
    assert_near(s->key[LLC_FIT_KEY_END], sorted[N - 1], 0);
    /* The extremes themselves are the nearest units to those keys. */
    assert_near(s->profile[15], sorted[0], 0);
    assert_near(s->profile[20], sorted[N - 1], 0);
    llc_fit_selection_destroy(s);

    cfg.mode = LLC_FIT_KEYS_QUANTILE;
    s = select_ok(x, N, NULL, &cfg);
    const double p[] = {0.5, 0.15865525393145707, 0.8413447460685429, 0.022750131948179195,
                        0.9772498680518208};
    const double half_window = N / (2.0 * 39);
    for (size_t j = 0; j < 5; j++) {
        assert_near(s->key_p[j], p[j], 1e-12);
        assert_near(s->key[j], gsl_stats_quantile_from_sorted_data(sorted, 1, N, p[j]),
                    1e-9 * s->key[j]);
        for (size_t i = 5 * j; i < 5 * j + 5; i++) {
            /* Rank of the unit's value (values are distinct here). */
            size_t rank = 0;
            while (sorted[rank] != s->profile[i])
                rank++;
            assert_true(fabs(rank + 0.5 - p[j] * N) <= half_window);
        }
    }
    llc_fit_selection_destroy(s);

    cfg.mode = LLC_FIT_KEYS_SIGMA2;
    cfg.points = 3;
    cfg.per_point = 4;
    s = select_ok(x, N, NULL, &cfg);
    assert_int_equal(s->n, 12);
    assert_int_equal(s->nkeys, 3);
    assert_int_equal(s->strata.count, 3);
    assert_int_equal(s->label[11], LLC_FIT_KEY_PLUS);
    llc_fit_selection_destroy(s);
    free(x);
}

static void test_gaussian_strata(void **state)
{
    (void)state;
    /* docs/METHODS.md §4: for a Gaussian and the sigma2 grid, pi = 0.0668, 0.2417, 0.3829, 0.2417,
     * 0.0668. */
    double *x = testdata(TD_NORMAL, 20000, 1000, 40, 0, 1, 25);
    struct llc_fit_selection *s = select_ok(x, 20000, NULL, NULL);
    const double pi[] = {0.0668, 0.2417, 0.3829, 0.2417, 0.0668};
    assert_int_equal(s->strata.count, 5);
    assert_int_equal(s->strata.centre, 2);
    size_t members = 0;
    double total = 0;
    for (size_t g = 0; g < 5; g++) {
        assert_true(fabs(s->strata.pi[g] - pi[g]) < 0.01);
        members += s->strata.members[g];
        total += s->strata.pi[g];
    }
    assert_int_equal(members, 20000);
    assert_near(total, 1, 1e-12);
    assert_near(s->strata.upper[1], s->mu - 0.5 * s->sigma, 1e-9);
    assert_true(isinf(s->strata.upper[4]));
    llc_fit_selection_destroy(s);
    free(x);
}

/* auto (the default) keeps sigma2 keys for a bell and takes quantile keys for
 * two levels (the hot-sets shape: R^2 near 0), whose mu - sigma lies below
 * every set; an explicit mode is kept whatever the fit. */
static void test_auto_mode(void **state)
{
    (void)state;
    const size_t n = 8192;
    double *bell = testdata(TD_NORMAL, n, 1000, 40, 0, 1, 26);
    double *levels = testdata(TD_NORMAL, n, 0, 30, 0, 1, 27);
    for (size_t k = 0; k < n; k++)
        levels[k] += k % 4 == 0 ? 4000 : 1500;
    struct llc_fit_selection *s = select_ok(bell, n, NULL, NULL);
    assert_true(s->r2 > LLC_FIT_R2_ACCEPT);
    assert_int_equal(s->mode, LLC_FIT_KEYS_SIGMA2);
    llc_fit_selection_destroy(s);
    s = select_ok(levels, n, NULL, NULL);
    assert_true(s->r2 <= LLC_FIT_R2_ACCEPT);
    assert_int_equal(s->mode, LLC_FIT_KEYS_QUANTILE);
    assert_true(s->mu - s->sigma < s->a);
    for (size_t j = 0; j < s->nkeys; j++)
        assert_true(s->key[j] >= s->a && s->key[j] <= s->b);
    llc_fit_selection_destroy(s);
    struct llc_fit_select_config cfg;
    llc_fit_select_config_default(&cfg);
    assert_int_equal(cfg.mode, LLC_FIT_KEYS_AUTO);
    cfg.mode = LLC_FIT_KEYS_SIGMA2;
    s = select_ok(levels, n, NULL, &cfg);
    assert_int_equal(s->mode, LLC_FIT_KEYS_SIGMA2);
    llc_fit_selection_destroy(s);
    free(bell);
    free(levels);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(llc_fit_key_name(LLC_FIT_KEY_PEAK), "mu");
    assert_string_equal(llc_fit_key_name(LLC_FIT_KEY_MINUS), "mu-sigma");
    assert_string_equal(llc_fit_key_mode_name(LLC_FIT_KEYS_SIGMA2), "sigma2");
    assert_string_equal(llc_fit_key_mode_name(LLC_FIT_KEYS_AUTO), "auto");
    assert_string_equal(llc_fit_select_status_name(LLC_FIT_SELECT_EVEN), "even");
    assert_string_equal(llc_fit_key_name((enum llc_fit_key)42), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_selection),
        cmocka_unit_test(test_pure_and_permutation_consistent),
        cmocka_unit_test(test_hash_tie_break),
        cmocka_unit_test(test_fill_outward),
        cmocka_unit_test(test_even_when_sigma_zero),
        cmocka_unit_test(test_few_units_and_no_signal),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_gaussian_strata),
        cmocka_unit_test(test_auto_mode),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
