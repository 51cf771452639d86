/* Eviction tests, reduction and verification against the simulator with a
 * hidden slice hash and latency noise, checked with the true set mapping. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "evset_fixture.h"
#include "llcprobe/common.h"

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_calibrate_threshold(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    uint32_t hit[200], miss[200];
    uint64_t s = 3;
    for (int i = 0; i < 200; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        hit[i] = 90 + (uint32_t)(s >> 59);   /* 90..121 */
        miss[i] = 380 + (uint32_t)(s >> 57); /* 380..507 */
    }
    hit[7] = 2500; /* an interrupt */
    struct llc_evset_calibration c;
    assert_int_equal(llc_evset_calibrate(hit, 200, miss, 200, &c, err, sizeof(err)), 0);
    assert_true(c.separable);
    assert_true(c.threshold > 121 && c.threshold < 380);
    assert_true(c.error_rate <= 1.0 / 400 + 1e-12);
    /* the threshold sits mid-gap, not at an edge */
    assert_true(c.threshold > 200 && c.threshold < 300);

    /* overlapping distributions cannot be separated */
    for (int i = 0; i < 200; i++) {
        hit[i] = 100 + (uint32_t)(i % 50);
        miss[i] = 110 + (uint32_t)(i % 50);
    }
    assert_int_equal(llc_evset_calibrate(hit, 200, miss, 200, &c, err, sizeof(err)), 0);
    assert_false(c.separable);
    assert_int_equal(llc_evset_calibrate(hit, 0, miss, 200, &c, err, sizeof(err)), -EINVAL);
}

/* Reduces from the pool at one index for several victims; every result
 * must be exactly G lines in the victim's true set. */
static void reduce_and_check(struct fx *fx, uint32_t index, unsigned victims)
{
    char err[LLC_ERRLEN];
    const size_t g = llc_evset_finder_reduce_size(fx->finder);
    const size_t cap = 3 * fx->o.slices * (g + 1);
    uint32_t *pool = malloc(cap * sizeof(*pool));
    uint32_t *set = malloc(g * sizeof(*set));
    assert_non_null(pool);
    assert_non_null(set);
    const size_t n = fx_lines_at_index(fx, index, pool, cap);
    assert_true(n >= cap / 2);
    for (unsigned v = 0; v < victims; v++) {
        struct llc_evset_counters before, after;
        llc_evset_finder_counters(fx->finder, &before);
        const double t0 = seconds();
        /* victim v, candidates = the rest of the pool */
        const uint32_t victim = pool[v];
        uint32_t *cands = malloc(n * sizeof(*cands));
        size_t nc = 0;
        for (size_t k = 0; k < n; k++)
            if (k != v)
                cands[nc++] = pool[k];
        const int rc = llc_evset_reduce(fx->finder, victim, cands, nc, set, err, sizeof(err));
        free(cands);
        if (rc)
            fail_msg("reduce: %s", err);
        llc_evset_finder_counters(fx->finder, &after);
        const uint32_t truth = fx_true_set(fx, fx->lines[victim].paddr);
        for (size_t k = 0; k < g; k++)
            assert_int_equal(fx_true_set(fx, fx->lines[set[k]].paddr), truth);
        for (size_t a = 0; a < g; a++)
            for (size_t b = a + 1; b < g; b++)
                assert_int_not_equal(set[a], set[b]);
        printf("reduce G=%zu pool=%zu: %llu tests, %llu timed walks, %llu backtracks, %.1f ms\n", g,
               nc, (unsigned long long)(after.tests - before.tests),
               (unsigned long long)(after.trials - before.trials),
               (unsigned long long)(after.backtracks - before.backtracks), 1e3 * (seconds() - t0));
    }
    free(pool);
    free(set);
}

static void test_reduce_inclusive_minimal(void **state)
{
    (void)state;
    struct fx_opts o;
    fx_opts_default(&o);
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    printf("sim calibration: LLC hit median %u, DRAM median %u, threshold %u\n",
           fx.calib.hit_median, fx.calib.miss_median, fx.oracle->threshold);
    assert_true(fx.calib.separable);
    assert_int_equal(llc_evset_finder_group_size(fx.finder), 16);
    assert_int_equal(llc_evset_finder_reduce_size(fx.finder), 16);
    reduce_and_check(&fx, 5, 4);
    fx_teardown(&fx);
}

/* Victim LLC: the reduction (with the L2 tail) ends with W_LLC congruent
 * lines, while a plain walk, as the stress probe does, needs W_L2 + W_LLC
 * congruent lines to evict: W_L2 + W_LLC - 1 do not. */
static void test_reduce_exclusive_group_size(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct fx_opts o;
    fx_opts_default(&o);
    o.inclusion = LLC_SIM_EXCLUSIVE;
    o.l2_ways = 16;
    o.pages = 800;
    o.seed = 7;
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    assert_int_equal(llc_evset_finder_group_size(fx.finder), 32);
    assert_int_equal(llc_evset_finder_reduce_size(fx.finder), 16);
    reduce_and_check(&fx, 9, 2);

    /* ground-truth congruent lines: 32 evict, 31 do not, 16 (W_LLC) do not */
    uint32_t pool[400], same[64];
    const size_t n = fx_lines_at_index(&fx, 9, pool, 400);
    const uint32_t truth = fx_true_set(&fx, fx.lines[pool[0]].paddr);
    size_t ns = 0;
    for (size_t k = 1; k < n && ns < 33; k++)
        if (fx_true_set(&fx, fx.lines[pool[k]].paddr) == truth)
            same[ns++] = pool[k];
    assert_true(ns >= 32);
    double r32, r31, r16;
    assert_int_equal(
        llc_evset_eviction_rate(fx.finder, pool[0], same, 32, 40, &r32, err, sizeof(err)), 0);
    assert_int_equal(
        llc_evset_eviction_rate(fx.finder, pool[0], same, 31, 40, &r31, err, sizeof(err)), 0);
    assert_int_equal(
        llc_evset_eviction_rate(fx.finder, pool[0], same, 16, 40, &r16, err, sizeof(err)), 0);
    printf("exclusive: eviction rate with 32 / 31 / 16 congruent lines: %.2f / %.2f / %.2f\n", r32,
           r31, r16);
    assert_true(r32 >= 0.9);
    assert_true(r31 < 0.5);
    assert_true(r16 < 0.5);
    fx_teardown(&fx);
}

/* Verification accepts a congruent set and rejects one with a foreign line. */
static void test_verify_rejects_noncongruent(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct fx_opts o;
    fx_opts_default(&o);
    o.seed = 11;
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    uint32_t pool[400], same[17], other = UINT32_MAX;
    const size_t n = fx_lines_at_index(&fx, 3, pool, 400);
    const uint32_t victim = pool[0];
    const uint32_t truth = fx_true_set(&fx, fx.lines[victim].paddr);
    size_t ns = 0;
    for (size_t k = 1; k < n; k++) {
        const uint32_t s = fx_true_set(&fx, fx.lines[pool[k]].paddr);
        if (s == truth && ns < 16)
            same[ns++] = pool[k];
        else if (s != truth && other == UINT32_MAX)
            other = pool[k];
    }
    assert_int_equal(ns, 16);
    assert_int_not_equal(other, UINT32_MAX);
    double good, bad;
    assert_int_equal(
        llc_evset_eviction_rate(fx.finder, victim, same, 16, 50, &good, err, sizeof(err)), 0);
    same[5] = other;
    assert_int_equal(
        llc_evset_eviction_rate(fx.finder, victim, same, 16, 50, &bad, err, sizeof(err)), 0);
    printf("verify: congruent set evicts %.2f, with one foreign line %.2f\n", good, bad);
    assert_true(good >= fx.params.verify_min);
    assert_true(bad < fx.params.verify_min);
    assert_int_equal(llc_evset_evicts(fx.finder, victim, same, 16, err, sizeof(err)), 0);
    fx_teardown(&fx);
}

/* Background traffic and frequent timing outliers: reduction still lands on
 * truly congruent lines (majority votes and backtracking absorb errors). */
static void test_reduce_under_noise(void **state)
{
    (void)state;
    struct fx_opts o;
    fx_opts_default(&o);
    o.noise_rate = 0.5;
    o.outlier_prob = 0.01;
    o.seed = 5;
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    reduce_and_check(&fx, 17, 4);
    fx_teardown(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calibrate_threshold),
        cmocka_unit_test(test_reduce_inclusive_minimal),
        cmocka_unit_test(test_reduce_exclusive_group_size),
        cmocka_unit_test(test_verify_rejects_noncongruent),
        cmocka_unit_test(test_reduce_under_noise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
