/* Groups (phases, windows, slots), mixtures and the CDF error (docs/METHODS.md §7.5, §9). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "synth.h"

static void group_set_operations(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_hist *h = NULL, *pool = NULL;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_create(&pool, err, sizeof err), 0);
    const int ids[] = {5, -2, 0, 9, -1};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(llc_statmodel_groups_ensure(g, ids[i], &h, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_hist_add(h, (uint64_t)(10 + i), 1, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_groups_add_refs(g, ids[i], 100.0 * (i + 1), err, sizeof err),
                         0);
    }
    assert_int_equal(llc_statmodel_groups_count(g), 5);
    const int sorted[] = {-2, -1, 0, 5, 9};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(llc_statmodel_groups_id_at(g, i), sorted[i]);
    assert_null(llc_statmodel_groups_hist(g, 4));
    assert_true(llc_statmodel_groups_refs(g, 9) == 400);
    assert_int_equal(llc_statmodel_groups_add_refs(g, 9, -1, err, sizeof err), -EINVAL);
    assert_int_equal(llc_statmodel_groups_pool(g, pool, err, sizeof err), 0);
    assert_true(llc_statmodel_hist_total(pool) == 5);
    /* Window 9 turns out to be phase 5. */
    assert_int_equal(llc_statmodel_groups_fold(g, 9, 5, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_count(g), 4);
    assert_null(llc_statmodel_groups_hist(g, 9));
    assert_true(llc_statmodel_groups_refs(g, 5) == 500);
    assert_true(llc_statmodel_hist_total(llc_statmodel_groups_hist(g, 5)) == 2);
    assert_int_equal(llc_statmodel_groups_fold(g, 9, 5, err, sizeof err), -ENOENT);
    /* Folding into a new id creates it. */
    assert_int_equal(llc_statmodel_groups_fold(g, -2, 7, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_id_at(g, 3), 7);
    assert_true(llc_statmodel_hist_count(llc_statmodel_groups_hist(g, 7), 11) == 1);
    llc_statmodel_hist_destroy(pool);
    llc_statmodel_groups_destroy(g);
}

static void mixture_is_the_weighted_mean(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m[2];
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    const struct llc_statmodel_bucket_count a[] = {{5, 10}, {2000, 10}},
                                            b[] = {{100, 3}, {2500, 7}};
    assert_int_equal(llc_statmodel_hist_set_pairs(h, a, 2, 2, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(h, &m[0], err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_set_pairs(h, b, 2, 0, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(h, &m[1], err, sizeof err), 0);
    const double lines[] = {16, 256, 4096};
    for (int method = 0; method < 2; method++) {
        struct llc_statmodel_options o;
        llc_statmodel_options_default(&o);
        o.method = method;
        struct llc_statmodel_point mix[3], p0[3], p1[3];
        const double w[] = {1, 3};
        assert_int_equal(llc_statmodel_mixture_curve((const struct llc_statmodel_model *const *)m,
                                                     w, 2, &o, lines, 3, mix, err, sizeof err),
                         0);
        assert_int_equal(llc_statmodel_curve(m[0], &o, lines, 3, p0, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_curve(m[1], &o, lines, 3, p1, err, sizeof err), 0);
        for (int k = 0; k < 3; k++) {
            assert_true(fabs(mix[k].r_total - (p0[k].r_total + 3 * p1[k].r_total) / 4) < 1e-15);
            assert_true(fabs(mix[k].r_capacity - (p0[k].r_capacity + 3 * p1[k].r_capacity) / 4) <
                        1e-15);
            assert_true(mix[k].lines == lines[k]);
        }
        const double zero[] = {0, 0}, neg[] = {1, -1};
        assert_int_equal(llc_statmodel_mixture_curve((const struct llc_statmodel_model *const *)m,
                                                     zero, 2, &o, lines, 3, mix, err, sizeof err),
                         -ENODATA);
        assert_int_equal(llc_statmodel_mixture_curve((const struct llc_statmodel_model *const *)m,
                                                     neg, 2, &o, lines, 3, mix, err, sizeof err),
                         -EINVAL);
    }
    llc_statmodel_release(m[0]);
    llc_statmodel_release(m[1]);
    llc_statmodel_hist_destroy(h);
}

static void cdf_error_hand_cases(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    double e = -1;
    const double r1[] = {0.1, 0.2, 0.3}, e1[] = {0.3, 0.1, 0.2};
    assert_int_equal(llc_statmodel_cdf_error(r1, e1, NULL, 3, &e, err, sizeof err), 0);
    assert_true(e == 0); /* same distribution over time, different order */
    const double r2[] = {0, 1}, e2[] = {0.5, 0.5};
    assert_int_equal(llc_statmodel_cdf_error(r2, e2, NULL, 2, &e, err, sizeof err), 0);
    assert_true(fabs(e - 0.5) < 1e-15);
    const double r3[] = {0.1, 0.4, 0.2, 0.8}, e3[] = {0.3, 0.3, 0.3, 0.3};
    assert_int_equal(llc_statmodel_cdf_error(r3, e3, NULL, 4, &e, err, sizeof err), 0);
    assert_true(fabs(e - (0.2 + 0.1 + 0.1 + 0.5) / 4) < 1e-15);
    /* Unequal windows: values travel with their weights. */
    const double w[] = {1, 3};
    const double r4[] = {0, 1}, e4[] = {1, 0};
    assert_int_equal(llc_statmodel_cdf_error(r4, e4, w, 2, &e, err, sizeof err), 0);
    assert_true(fabs(e - 0.5) < 1e-15);
    assert_int_equal(llc_statmodel_cdf_error(r4, r4, w, 2, &e, err, sizeof err), 0);
    assert_true(e == 0);
    /* Equal weights given explicitly equal the unweighted form. */
    const double ones[] = {2, 2, 2, 2};
    double e_w = -1;
    assert_int_equal(llc_statmodel_cdf_error(r3, e3, ones, 4, &e_w, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_cdf_error(r3, e3, NULL, 4, &e, err, sizeof err), 0);
    assert_true(fabs(e - e_w) < 1e-15);
    assert_int_equal(llc_statmodel_cdf_error(r3, e3, NULL, 0, &e, err, sizeof err), -ENODATA);
    const double nan_est[] = {NAN, 0};
    assert_int_equal(llc_statmodel_cdf_error(r4, nan_est, NULL, 2, &e, err, sizeof err), -EINVAL);
}

/* Two phases alternating in windows of equal length: A is a small hot set,
 * B a medium set plus streaming. Per-phase models should follow the
 * per-window truth; one pooled model cannot (the phase-guided profiling paper). */
enum { WINDOW = 50000, WINDOWS = 12 };

static void phase_models_track_windows(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t n = (size_t)WINDOW * WINDOWS;
    uint64_t *lines = malloc(n * sizeof *lines);
    const struct synth_mix phase_mix[2] = {{0.9, 0.1, 0, 100, 1000, 1},
                                           {0.1, 0.7, 0, 100, 6000, 1}};
    struct synth_rng r = {77};
    uint64_t next = 0;
    int phase_of[WINDOWS];
    for (int w = 0; w < WINDOWS; w++) {
        phase_of[w] = (w / 2) % 2; /* AABBAABB... */
        synth_stream(&phase_mix[phase_of[w]], &r, &next, &lines[(size_t)w * WINDOW], WINDOW);
    }
    const double sizes[] = {256, 1024, 4096};
    double sim_win[3][WINDOWS], sim_all[3];
    for (int k = 0; k < 3; k++)
        sim_all[k] =
            synth_random_cache_windows(lines, n, (size_t)sizes[k], 5 + k, WINDOW, sim_win[k]);

    /* Sample with the phase as group, and in time slots of one window. */
    struct llc_statmodel_groups *phases = NULL, *slots = NULL;
    struct llc_statmodel_sampler *sp = NULL, *ss = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 0.02;
    cfg.seed = 3;
    assert_int_equal(llc_statmodel_groups_create(&phases, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_create(&slots, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, phases, &sp, err, sizeof err), 0);
    cfg.slot_refs = WINDOW;
    assert_int_equal(llc_statmodel_sampler_create(&cfg, slots, &ss, err, sizeof err), 0);
    for (int w = 0; w < WINDOWS; w++) {
        assert_int_equal(llc_statmodel_sampler_set_group(sp, phase_of[w], err, sizeof err), 0);
        assert_int_equal(llc_statmodel_sampler_access_batch(sp, &lines[(size_t)w * WINDOW], WINDOW,
                                                            err, sizeof err),
                         0);
        assert_int_equal(llc_statmodel_sampler_access_batch(ss, &lines[(size_t)w * WINDOW], WINDOW,
                                                            err, sizeof err),
                         0);
    }
    assert_int_equal(llc_statmodel_sampler_finish(sp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(ss, err, sizeof err), 0);
    assert_true(llc_statmodel_groups_refs(phases, 0) == n / 2);
    assert_true(llc_statmodel_groups_refs(phases, 1) == n / 2);
    assert_int_equal(llc_statmodel_groups_count(slots), WINDOWS);

    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    struct llc_statmodel_point whole[3], slot_avg[3], pooled[3], per_phase[2][3];
    size_t skipped = 99;
    assert_int_equal(llc_statmodel_groups_curve(phases, LLC_STATMODEL_WEIGHT_REFS, &o, sizes, 3,
                                                whole, &skipped, err, sizeof err),
                     0);
    assert_int_equal(skipped, 0);
    assert_int_equal(llc_statmodel_groups_curve(slots, LLC_STATMODEL_WEIGHT_REFS, &o, sizes, 3,
                                                slot_avg, &skipped, err, sizeof err),
                     0);
    struct llc_statmodel_hist *pool = NULL;
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_hist_create(&pool, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_pool(phases, pool, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(pool, &m, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_curve(m, &o, sizes, 3, pooled, err, sizeof err), 0);
    llc_statmodel_release(m);
    for (int p = 0; p < 2; p++) {
        assert_int_equal(
            llc_statmodel_prepare(llc_statmodel_groups_hist(phases, p), &m, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_curve(m, &o, sizes, 3, per_phase[p], err, sizeof err), 0);
        llc_statmodel_release(m);
    }
    double cdf_phase = 0, cdf_pooled = 0, abs_phase = 0, abs_pooled = 0, abs_slots = 0;
    for (int k = 0; k < 3; k++) {
        double est_phase[WINDOWS], est_pooled[WINDOWS], e = 0;
        for (int w = 0; w < WINDOWS; w++) {
            est_phase[w] = per_phase[phase_of[w]][k].r_total;
            est_pooled[w] = pooled[k].r_total;
        }
        assert_int_equal(
            llc_statmodel_cdf_error(sim_win[k], est_phase, NULL, WINDOWS, &e, err, sizeof err), 0);
        cdf_phase += e / 3;
        assert_int_equal(
            llc_statmodel_cdf_error(sim_win[k], est_pooled, NULL, WINDOWS, &e, err, sizeof err), 0);
        cdf_pooled += e / 3;
        abs_phase += fabs(whole[k].r_total - sim_all[k]) / 3;
        abs_slots += fabs(slot_avg[k].r_total - sim_all[k]) / 3;
        abs_pooled += fabs(pooled[k].r_total - sim_all[k]) / 3;
        print_message("  L %5.0f: sim %.4f, phase-weighted %.4f, slot average %.4f, pooled %.4f\n",
                      sizes[k], sim_all[k], whole[k].r_total, slot_avg[k].r_total,
                      pooled[k].r_total);
    }
    print_message(
        "phases: CDF error %.4f (pooled %.4f); whole-program |err| phase %.4f, slots %.4f, "
        "pooled %.4f\n",
        cdf_phase, cdf_pooled, abs_phase, abs_slots, abs_pooled);
    assert_true(cdf_phase < 0.02);
    assert_true(cdf_phase < cdf_pooled / 3);
    assert_true(abs_phase < 0.02);
    assert_true(abs_slots < 0.03);
    llc_statmodel_hist_destroy(pool);
    llc_statmodel_sampler_destroy(sp);
    llc_statmodel_sampler_destroy(ss);
    llc_statmodel_groups_destroy(phases);
    llc_statmodel_groups_destroy(slots);
    free(lines);
}

/* Two phases with a known answer: A cycles over 64 lines, B over 4000,
 * equal references, every reference sampled. Each phase alone is
 * stationary, so its StatStack curve is exact LRU; their reference-weighted
 * mixture is then the exact curve of the whole stream. The pooled
 * histogram averages A's short and B's long reuses and puts B's stack
 * distance near 2000 lines: wrong by ~0.47 between 2000 and 4000 lines. */
enum { A_LINES = 64, B_LINES = 4000, PHASE_REFS = 64000, PHASE_WINDOWS = 4 };

static void regroup_windows_by_phase(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t n = 2 * PHASE_REFS, window = PHASE_REFS / PHASE_WINDOWS;
    uint64_t *lines = malloc(n * sizeof *lines), *stack = malloc(n * sizeof *stack);
    assert_non_null(lines);
    assert_non_null(stack);
    for (size_t i = 0; i < PHASE_REFS; i++) {
        lines[i] = i % A_LINES;
        lines[PHASE_REFS + i] = 1000000 + i % B_LINES;
    }
    const double sizes[] = {32, 63, 64, 100, 1000, 3000, 3900, 4100, 5000};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    double exact[NS];
    assert_int_equal(llc_statmodel_exact_distances(lines, n, NULL, stack, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_exact_lru_curve(stack, n, sizes, NS, exact, err, sizeof err), 0);

    struct llc_statmodel_groups *windows = NULL, *phases = NULL, *mixed = NULL;
    struct llc_statmodel_sampler *s = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 1;
    assert_int_equal(llc_statmodel_groups_create(&windows, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_create(&phases, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_create(&mixed, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, windows, &s, err, sizeof err), 0);
    for (size_t w = 0; w < n / window; w++) {
        assert_int_equal(llc_statmodel_sampler_set_group(s, (int)w, err, sizeof err), 0);
        assert_int_equal(
            llc_statmodel_sampler_access_batch(s, &lines[w * window], window, err, sizeof err), 0);
    }
    assert_int_equal(llc_statmodel_sampler_finish(s, err, sizeof err), 0);
    enum { NW = 2 * PHASE_WINDOWS };
    assert_int_equal(llc_statmodel_groups_count(windows), NW);
    int labels[NW];
    for (int w = 0; w < NW; w++)
        labels[w] = w < PHASE_WINDOWS ? 7 : 3; /* any ids */
    assert_int_equal(llc_statmodel_groups_regroup(windows, labels, NW - 1, phases, err, sizeof err),
                     -EINVAL);
    assert_int_equal(llc_statmodel_groups_regroup(windows, labels, NW, phases, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_regroup(windows, labels, NW, phases, err, sizeof err),
                     -EINVAL); /* not empty any more */
    assert_int_equal(llc_statmodel_groups_count(phases), 2);
    assert_true(llc_statmodel_groups_refs(phases, 7) == PHASE_REFS);
    assert_true(llc_statmodel_groups_refs(phases, 3) == PHASE_REFS);
    assert_true(llc_statmodel_hist_total(llc_statmodel_groups_hist(phases, 7)) == PHASE_REFS);
    assert_true(llc_statmodel_hist_dangling(llc_statmodel_groups_hist(phases, 3)) == B_LINES);

    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    o.method = LLC_STATMODEL_STATSTACK;
    struct llc_statmodel_point mix[NS], pooled[NS];
    size_t skipped = 99;
    assert_int_equal(llc_statmodel_groups_curve(phases, LLC_STATMODEL_WEIGHT_REFS, &o, sizes, NS,
                                                mix, &skipped, err, sizeof err),
                     0);
    assert_int_equal(skipped, 0);
    struct llc_statmodel_hist *pool = NULL;
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_hist_create(&pool, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_pool(windows, pool, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(pool, &m, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_curve(m, &o, sizes, NS, pooled, err, sizeof err), 0);
    for (int k = 0; k < NS; k++) {
        print_message("  C %5.0f: exact LRU %.5f, phase mixture %.5f, pooled %.5f\n", sizes[k],
                      exact[k], mix[k].r_total, pooled[k].r_total);
        assert_true(fabs(mix[k].r_total - exact[k]) < 1e-9);
    }
    assert_true(fabs(pooled[5].r_total - exact[5]) > 0.4); /* 3000 lines */

    /* The last window unclassified: it keeps its references and is modelled
     * with every sample; its own samples stay out of phase 3. */
    labels[NW - 1] = -2;
    assert_int_equal(llc_statmodel_groups_regroup(windows, labels, NW, mixed, err, sizeof err), 1);
    assert_int_equal(llc_statmodel_groups_count(mixed), 3);
    assert_true(llc_statmodel_groups_refs(mixed, -2) == window);
    assert_true(llc_statmodel_hist_total(llc_statmodel_groups_hist(mixed, -2)) ==
                llc_statmodel_hist_total(pool));
    assert_true(llc_statmodel_hist_total(llc_statmodel_groups_hist(mixed, 3)) ==
                llc_statmodel_hist_total(pool) - PHASE_REFS - window);
    llc_statmodel_release(m);
    llc_statmodel_hist_destroy(pool);
    llc_statmodel_sampler_destroy(s);
    llc_statmodel_groups_destroy(windows);
    llc_statmodel_groups_destroy(phases);
    llc_statmodel_groups_destroy(mixed);
    free(lines);
    free(stack);
}

/* Exact cold misses for a mixture: one factor on every group's dangling
 * count makes the reference-weighted cold fraction lines / refs, and a
 * cache of at least the distinct lines has only those misses. */
static void groups_set_cold_makes_the_mixture_exact(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    /* Phase 0: short reuses, 2 dangling of 100; phase 1: long reuses, 10
     * dangling of 50; phase 1 has three times the references. */
    assert_int_equal(llc_statmodel_groups_ensure(g, 0, &h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(h, 10, 98, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(h, 2, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_add_refs(g, 0, 1e6, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_ensure(g, 1, &h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(h, 50000, 40, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(h, 10, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_add_refs(g, 1, 3e6, err, sizeof err), 0);
    /* Sampled: (0.02 + 3 * 0.2) / 4 = 0.155; exact: 40000 of 4e6 = 0.01. */
    assert_int_equal(llc_statmodel_groups_set_cold(g, 40000, 4000000, err, sizeof err), 0);
    const struct llc_statmodel_hist *h0 = llc_statmodel_groups_hist(g, 0);
    const struct llc_statmodel_hist *h1 = llc_statmodel_groups_hist(g, 1);
    const double c0 = llc_statmodel_hist_dangling(h0) / llc_statmodel_hist_total(h0);
    const double c1 = llc_statmodel_hist_dangling(h1) / llc_statmodel_hist_total(h1);
    assert_true(fabs(((c0 + 3 * c1) / 4) - (0.01)) < 1e-9);
    /* One factor: the dangling counts keep their ratio 2 : 10. */
    assert_true(fabs((llc_statmodel_hist_dangling(h1) / llc_statmodel_hist_dangling(h0)) - (5)) <
                1e-9);
    /* The mixture's large-cache end is that fraction; with the distinct
     * lines given, so is any cache holding them all (phase 1's footprint
     * would go on growing past them). */
    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    o.method = LLC_STATMODEL_STATSTACK;
    const double lines[] = {20000, 40000, 1e9};
    struct llc_statmodel_point p[3], capped[3];
    assert_int_equal(llc_statmodel_groups_curve(g, LLC_STATMODEL_WEIGHT_REFS, &o, lines, 3, p, NULL,
                                                err, sizeof err),
                     0);
    assert_true(fabs((p[2].r_total) - (0.01)) < 1e-9);
    assert_true(p[1].r_total > 0.01 + 1e-3);
    o.distinct_lines = 40000;
    assert_int_equal(llc_statmodel_groups_curve(g, LLC_STATMODEL_WEIGHT_REFS, &o, lines, 3, capped,
                                                NULL, err, sizeof err),
                     0);
    assert_true(fabs((capped[0].r_total) - (p[0].r_total)) < 1e-12);
    assert_true(fabs((capped[1].r_total) - (0.01)) < 1e-9);
    assert_true(fabs((capped[1].r_capacity) - (0)) < 1e-12);
    /* Impossible targets leave the groups alone. */
    const double d1 = llc_statmodel_hist_dangling(h1);
    assert_int_equal(llc_statmodel_groups_set_cold(g, 0, 100, err, sizeof err), -EINVAL);
    assert_int_equal(llc_statmodel_groups_set_cold(g, 100, 100, err, sizeof err), -EINVAL);
    assert_true(llc_statmodel_hist_dangling(h1) == d1);
    llc_statmodel_groups_destroy(g);
}

/* Splice: past the span a model's footprint grows as the pool's does;
 * up to it, nothing changes. */
static void splice_follows_the_pool_past_the_span(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *a = NULL, *p = NULL;
    struct llc_statmodel_model *ma = NULL, *mp = NULL;
    assert_int_equal(llc_statmodel_hist_create(&a, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_create(&p, err, sizeof err), 0);
    /* a: half its reuses beyond 10^6 (its footprint keeps rising fast);
     * the pool: almost all reuses short. */
    assert_int_equal(llc_statmodel_hist_add(a, 100, 50, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(a, 2000000, 50, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(p, 100, 990, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(p, 2000000, 10, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(a, &ma, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(p, &mp, err, sizeof err), 0);
    const double span = 10000;
    const double f_half = llc_statmodel_footprint(ma, span / 2),
                 f_span = llc_statmodel_footprint(ma, span);
    const double f_far = llc_statmodel_footprint(ma, 1500000);
    llc_statmodel_splice(ma, mp, span);
    /* Anchored at a bucket edge in (span / 2, span]: unchanged below it. */
    assert_true(fabs(llc_statmodel_footprint(ma, span / 2) - f_half) < 1e-9 * f_half);
    const double want =
        f_span + llc_statmodel_footprint(mp, 1500000) - llc_statmodel_footprint(mp, span);
    assert_true(fabs(llc_statmodel_footprint(ma, 1500000) - want) < 0.05 * want);
    assert_true(llc_statmodel_footprint(ma, 1500000) < 0.5 * f_far);
    /* The tail is a's own: the miss ratio of a cache the long reuses
     * overflow is still their share. */
    assert_true(fabs(llc_statmodel_tail(ma, 1000) - 0.5) < 1e-9);
    llc_statmodel_release(ma);
    llc_statmodel_release(mp);
    llc_statmodel_hist_destroy(a);
    llc_statmodel_hist_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(group_set_operations),
        cmocka_unit_test(mixture_is_the_weighted_mean),
        cmocka_unit_test(cdf_error_hand_cases),
        cmocka_unit_test(phase_models_track_windows),
        cmocka_unit_test(regroup_windows_by_phase),
        cmocka_unit_test(groups_set_cold_makes_the_mixture_exact),
        cmocka_unit_test(splice_follows_the_pool_past_the_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
