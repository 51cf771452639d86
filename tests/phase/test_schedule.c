/* Phase-guided profiling schedules (docs/METHODS.md §11) and the profile-once estimate. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_test.h"

enum { A = 0, B = 1 };

static struct llc_phase_schedule *make(enum llc_phase_schedule_kind kind, uint64_t seed)
{
    struct llc_phase_schedule_config cfg;
    llc_phase_schedule_config_default(&cfg);
    cfg.kind = kind;
    cfg.seed = seed;
    struct llc_phase_schedule *s = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_schedule_create(&cfg, &s, err, sizeof err), 0);
    return s;
}

/* One window: decide on the prediction, then report what happened. */
static bool window(struct llc_phase_schedule *s, int predicted, int actual)
{
    const bool profile = llc_phase_schedule_decide(s, predicted);
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_schedule_observe(s, actual, profile, err, sizeof err), 0);
    return profile;
}

static void test_defaults_match_spec(void **state)
{
    (void)state;
    struct llc_phase_schedule_config cfg;
    llc_phase_schedule_config_default(&cfg);
    assert_int_equal(cfg.k_seen, 2);
    assert_int_equal(cfg.g0, 1);
    assert_int_equal(cfg.g_max, 64);
    assert_near(cfg.periodic_mean, 8.0, 0.0);
}

static void test_profile_once_after_k_seen(void **state)
{
    (void)state;
    struct llc_phase_schedule *s = make(LLC_PHASE_SCHEDULE_ONCE, 1);
    const int seq[] = {A, A, A, A, B, B, B, A, A, B, B};
    const bool want[] = {0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
    int predicted = LLC_PHASE_UNCLASSIFIED; /* last-value predictions */
    for (size_t t = 0; t < sizeof seq / sizeof seq[0]; t++) {
        assert_int_equal(window(s, predicted, seq[t]), want[t]);
        predicted = seq[t];
    }
    assert_int_equal(llc_phase_schedule_profiled(s, A), 1);
    assert_int_equal(llc_phase_schedule_profiled(s, B), 1);
    assert_int_equal(llc_phase_schedule_seen(s, A), 6);
    assert_int_equal(llc_phase_schedule_seen(s, B), 5);
    assert_int_equal(llc_phase_schedule_seen(s, 7), 0);
    llc_phase_schedule_destroy(s);
}

static void test_profile_once_credits_actual_phase(void **state)
{
    (void)state;
    struct llc_phase_schedule *s = make(LLC_PHASE_SCHEDULE_ONCE, 1);
    window(s, LLC_PHASE_UNCLASSIFIED, A);
    window(s, A, A);
    window(s, B, B);
    window(s, B, B);
    /* Predicted A (eligible), but the window was B: B's profile. */
    assert_true(window(s, A, B));
    assert_int_equal(llc_phase_schedule_profiled(s, A), 0);
    assert_int_equal(llc_phase_schedule_profiled(s, B), 1);
    assert_true(window(s, A, A)); /* A still needs one */
    assert_false(window(s, B, B));
    assert_false(window(s, LLC_PHASE_UNCLASSIFIED, LLC_PHASE_UNCLASSIFIED));
    llc_phase_schedule_destroy(s);
}

/* Windows of one long phase; returns profiled count, checks each gap. */
static size_t run_spread_single(uint64_t seed, size_t n, size_t *profiled_at,
                                double *mean_gap_at_cap)
{
    struct llc_phase_schedule *s = make(LLC_PHASE_SCHEDULE_SPREAD, seed);
    size_t count = 0, last = 0, cap_gaps = 0;
    double cap_sum = 0.0;
    long expected_gap = -1;
    unsigned want_period = 1;
    for (size_t t = 0; t < n; t++) {
        const int predicted = t ? A : LLC_PHASE_UNCLASSIFIED;
        if (!window(s, predicted, A))
            continue;
        if (count == 0)
            assert_int_equal(t, 2); /* eligible after K_seen = 2 windows */
        else
            assert_int_equal((long)(t - last), expected_gap);
        if (want_period == 64 && count > 0) {
            cap_sum += (double)(t - last);
            cap_gaps++;
        }
        want_period = want_period * 2 > 64 ? 64 : want_period * 2;
        assert_int_equal(llc_phase_schedule_period(s, A), want_period);
        /* The profiled window counted itself: countdown = gap - 1. */
        expected_gap = llc_phase_schedule_countdown(s, A) + 1;
        assert_true(expected_gap >= 1);
        if (profiled_at && count < 64)
            profiled_at[count] = t;
        count++;
        last = t;
    }
    if (mean_gap_at_cap)
        *mean_gap_at_cap = cap_gaps ? cap_sum / (double)cap_gaps : 0.0;
    llc_phase_schedule_destroy(s);
    return count;
}

static void test_spread_period_doubles_to_cap(void **state)
{
    (void)state;
    double mean_gap = 0.0;
    const size_t n = run_spread_single(42, 20000, NULL, &mean_gap);
    /* 20000 windows at mean gap 64: about 300 profiles. */
    assert_true(n > 200 && n < 450);
    /* max(1, round(Exp(64))) has mean 64.0; ~300 draws: sd of mean ~3.7. */
    assert_true(mean_gap > 52.0 && mean_gap < 76.0);
}

static void test_spread_counts_windows_of_its_own_phase(void **state)
{
    (void)state;
    struct llc_phase_schedule *s = make(LLC_PHASE_SCHEDULE_SPREAD, 7);
    long countdown_a = -1;
    size_t a_windows_since = 0;
    size_t profiles_a = 0;
    for (size_t t = 0; t < 4000; t++) {
        const int phase = t % 2 ? B : A; /* alternate; predictions are perfect */
        const bool p = window(s, phase, phase);
        if (phase != A)
            continue;
        a_windows_since++;
        if (!p)
            continue;
        if (profiles_a > 0)
            assert_int_equal((long)a_windows_since, countdown_a + 1);
        countdown_a = llc_phase_schedule_countdown(s, A);
        a_windows_since = 0;
        profiles_a++;
    }
    assert_true(profiles_a > 10);
    assert_true(llc_phase_schedule_profiled(s, B) > 10);
    llc_phase_schedule_destroy(s);
}

static void test_seeded_reproducibility(void **state)
{
    (void)state;
    size_t a[64] = {0}, b[64] = {0}, c[64] = {0};
    const size_t na = run_spread_single(123, 3000, a, NULL);
    const size_t nb = run_spread_single(123, 3000, b, NULL);
    const size_t nc = run_spread_single(124, 3000, c, NULL);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, sizeof a);
    assert_true(na != nc || memcmp(a, c, sizeof a) != 0);
}

static void test_periodic_baseline(void **state)
{
    (void)state;
    struct llc_phase_schedule *s1 = make(LLC_PHASE_SCHEDULE_PERIODIC, 99);
    struct llc_phase_schedule *s2 = make(LLC_PHASE_SCHEDULE_PERIODIC, 99);
    size_t profiles = 0, first = 0, last = 0;
    for (size_t t = 0; t < 16000; t++) {
        /* Phase-blind: labels and predictions do not matter. */
        const bool p1 = window(s1, (int)(t % 3), LLC_PHASE_UNCLASSIFIED);
        const bool p2 = window(s2, A, (int)(t % 5));
        assert_int_equal(p1, p2);
        if (p1) {
            if (!profiles)
                first = t;
            last = t;
            profiles++;
        }
    }
    /* ~2000 gaps of mean 8.06 (max(1, round(Exp(8)))): sd of mean ~0.18. */
    const double mean_gap = (double)(last - first) / (double)(profiles - 1);
    assert_true(mean_gap > 7.4 && mean_gap < 8.7);
    llc_phase_schedule_destroy(s1);
    llc_phase_schedule_destroy(s2);
}

static void test_bad_config(void **state)
{
    (void)state;
    struct llc_phase_schedule_config cfg;
    llc_phase_schedule_config_default(&cfg);
    cfg.g_max = 0;
    struct llc_phase_schedule *s = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_schedule_create(&cfg, &s, err, sizeof err), -EINVAL);
    llc_phase_schedule_config_default(&cfg);
    cfg.kind = LLC_PHASE_SCHEDULE_PERIODIC;
    cfg.periodic_mean = 0.5;
    assert_int_equal(llc_phase_schedule_create(&cfg, &s, err, sizeof err), -EINVAL);
    assert_null(s);
}

static void test_profile_estimate(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    double est, cov;
    /* Phase 1 profiled twice (median of 2 and 4 = 3), phase 0 once (1). */
    const int phases[] = {0, 0, 0, 1, 1, LLC_PHASE_UNCLASSIFIED};
    const bool profiled[] = {false, true, false, true, true, true};
    const double values[] = {NAN, 1.0, NAN, 2.0, 4.0, 100.0};
    assert_int_equal(
        llc_phase_profile_estimate(phases, profiled, values, 6, &est, &cov, err, sizeof err), 0);
    assert_near(est, (3 * 1.0 + 2 * 3.0) / 5, 1e-12);
    assert_near(cov, 5.0 / 6, 1e-12);

    const int p2[] = {0, 0, 1, 1};
    const bool f2[] = {true, false, false, false};
    const double v2[] = {5.0, 0, 0, 0};
    assert_int_equal(llc_phase_profile_estimate(p2, f2, v2, 4, &est, &cov, err, sizeof err), 0);
    assert_near(est, 5.0, 0.0);
    assert_near(cov, 0.5, 0.0);

    const bool none[] = {false, false, false, false};
    assert_int_equal(llc_phase_profile_estimate(p2, none, v2, 4, &est, &cov, err, sizeof err),
                     -EDOM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_match_spec),
        cmocka_unit_test(test_profile_once_after_k_seen),
        cmocka_unit_test(test_profile_once_credits_actual_phase),
        cmocka_unit_test(test_spread_period_doubles_to_cap),
        cmocka_unit_test(test_spread_counts_windows_of_its_own_phase),
        cmocka_unit_test(test_seeded_reproducibility),
        cmocka_unit_test(test_periodic_baseline),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_profile_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
