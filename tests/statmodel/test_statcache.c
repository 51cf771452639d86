/* StatCache: closed forms, an independent bisection, the fast curve solver
 * against the reference Brent solver, and a random-replacement cache. */
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
#include <gsl/gsl_sf_lambert.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "synth.h"

/* Tolerance of one solve (docs/METHODS.md §7.3), for comparing two solves. */
static double tol2(double r)
{
    return 2 * (1e-12 + 1e-9 * r) + 1e-12;
}

/* Every reuse at distance d: R = 1 - exp(-c d R), so
 * R = 1 + W0(-y e^-y) / y with y = c d when y > 1, else R = 0. */
static void single_distance_matches_lambert_w(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t buckets[] = {500, llc_statmodel_bucket_of(50000)};
    for (size_t t = 0; t < 2; t++) {
        const struct llc_statmodel_bucket_count pair = {buckets[t], 1000};
        struct llc_statmodel_model *m = synth_model_of_pairs(&pair, 1, 0);
        const double d = llc_statmodel_bucket_mid(buckets[t]);
        double lines[64];
        size_t n = 0;
        for (double l = d / 20; l < d * 3; l *= 1.13)
            lines[n++] = l < 2 ? 2 : l;
        struct llc_statmodel_point pts[64];
        assert_int_equal(llc_statmodel_curve(m, &(struct llc_statmodel_options){0}, lines, n, pts,
                                             err, sizeof err),
                         0);
        for (size_t k = 0; k < n; k++) {
            const double y = -log1p(-1 / lines[k]) * d;
            const double want = y > 1 ? 1 + gsl_sf_lambert_W0(-y * exp(-y)) / y : 0;
            struct llc_statmodel_point ref;
            assert_int_equal(llc_statmodel_statcache(m, lines[k], LLC_STATMODEL_COLD_COUNT, &ref,
                                                     err, sizeof err),
                             0);
            /* Lambert W near the branch point (y -> 1) loses digits. */
            const double lam_tol = 1e-9 + (fabs(y - 1) < 0.05 ? 1e-6 : 0);
            assert_true(fabs(ref.r_total - want) < lam_tol);
            assert_true(fabs(pts[k].r_total - ref.r_total) < tol2(ref.r_total));
            assert_true(pts[k].r_capacity == pts[k].r_total);
        }
        llc_statmodel_release(m);
    }
}

/* With dangling samples: an independent bisection on the equation written
 * with pow(), as in the paper. */
static double bisect_pow(const double *d, const double *h, size_t n, double n_inf, double lines)
{
    double total = n_inf;
    for (size_t i = 0; i < n; i++)
        total += h[i];
    double lo = 0, hi = 1;
    for (int it = 0; it < 200; it++) {
        const double r = (lo + hi) / 2;
        double g = n_inf - total * r;
        for (size_t i = 0; i < n; i++)
            g += h[i] * (1 - pow(1 - 1 / lines, d[i] * r));
        if (g > 0)
            lo = r;
        else
            hi = r;
    }
    return (lo + hi) / 2;
}

static void dangling_samples_match_bisection(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const struct llc_statmodel_bucket_count pairs[] = {{0, 50},
                                                       {7, 300},
                                                       {900, 200},
                                                       {llc_statmodel_bucket_of(40000), 120},
                                                       {llc_statmodel_bucket_of(3000000), 30}};
    double d[5], h[5];
    for (int i = 0; i < 5; i++) {
        d[i] = llc_statmodel_bucket_mid(pairs[i].bucket);
        h[i] = pairs[i].count;
    }
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, 5, 100);
    const double lines[] = {1, 2, 16, 100, 1000, 12345.5, 1e5, 1e6, 1e7};
    struct llc_statmodel_point pts[9];
    assert_int_equal(
        llc_statmodel_curve(m, &(struct llc_statmodel_options){0}, lines, 9, pts, err, sizeof err),
        0);
    for (size_t k = 0; k < 9; k++) {
        const double want =
            lines[k] == 1 ? (100.0 + 650) / 800 : bisect_pow(d, h, 5, 100, lines[k]);
        struct llc_statmodel_point ref;
        assert_int_equal(
            llc_statmodel_statcache(m, lines[k], LLC_STATMODEL_COLD_COUNT, &ref, err, sizeof err),
            0);
        assert_true(fabs(ref.r_total - want) < 1e-9);
        assert_true(fabs(pts[k].r_total - want) < 1e-9);
        assert_true(fabs(pts[k].r_capacity - (pts[k].r_total - 100.0 / 800)) < 1e-15);
        assert_true(pts[k].r_total >= 100.0 / 800);
    }
    llc_statmodel_release(m);
}

static void degenerate_histograms(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_point p;
    /* Only d = 0: the cold share, whatever the size. */
    const struct llc_statmodel_bucket_count zero = {0, 30};
    struct llc_statmodel_model *m = synth_model_of_pairs(&zero, 1, 10);
    for (double l = 1; l < 1e6; l *= 10) {
        assert_int_equal(
            llc_statmodel_statcache(m, l, LLC_STATMODEL_COLD_COUNT, &p, err, sizeof err), 0);
        assert_true(fabs(p.r_total - 0.25) < 1e-12);
    }
    assert_int_equal(llc_statmodel_statcache(m, 0.5, LLC_STATMODEL_COLD_COUNT, &p, err, sizeof err),
                     -EINVAL);
    llc_statmodel_release(m);
    /* Only dangling samples: every reference misses; ignoring them leaves nothing. */
    m = synth_model_of_pairs(NULL, 0, 10);
    assert_int_equal(llc_statmodel_statcache(m, 64, LLC_STATMODEL_COLD_COUNT, &p, err, sizeof err),
                     0);
    assert_true(p.r_total == 1);
    assert_int_equal(llc_statmodel_statcache(m, 64, LLC_STATMODEL_COLD_IGNORE, &p, err, sizeof err),
                     -ENODATA);
    llc_statmodel_release(m);
    /* No samples at all. */
    m = synth_model_of_pairs(NULL, 0, 0);
    assert_int_equal(llc_statmodel_statcache(m, 64, LLC_STATMODEL_COLD_COUNT, &p, err, sizeof err),
                     -ENODATA);
    llc_statmodel_release(m);
}

static struct llc_statmodel_hist *sampled_hist(const uint64_t *lines, size_t n, double rate,
                                               uint64_t seed)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = rate;
    cfg.seed = seed;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_access_batch(smp, lines, n, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_merge(h, llc_statmodel_groups_hist(g, 0), err, sizeof err),
                     0);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
    return h;
}

static void fast_curve_agrees_with_reference_solver(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const struct synth_mix mixes[] = {
        {0.5, 0.25, 0.09, 300, 3000, 30000},     /* 16% streaming */
        {0.7, 0.3, 0.0, 50, 20000, 1},           /* no cold at all */
        {0.2, 0.2, 0.55, 1000, 100000, 2000000}, /* long reuses */
    };
    const size_t n = 400000;
    uint64_t *lines = malloc(n * sizeof *lines);
    struct llc_statmodel_grid_config gc;
    llc_statmodel_grid_config_default(&gc);
    const double extra[] = {1, 2, 3, 24576, 524288};
    gc.extra_lines = extra;
    gc.n_extra = 5;
    const int ng = llc_statmodel_grid(&gc, NULL, 0, err, sizeof err);
    assert_true(ng > 0);
    double *grid = malloc((size_t)ng * sizeof *grid);
    struct llc_statmodel_point *pts = malloc((size_t)ng * sizeof *pts);
    assert_int_equal(llc_statmodel_grid(&gc, grid, (size_t)ng, err, sizeof err), ng);
    double worst = 0;
    for (size_t t = 0; t < LLC_ARRAY_LEN(mixes); t++) {
        struct synth_rng r = {100 + t};
        uint64_t next = 0;
        synth_stream(&mixes[t], &r, &next, lines, n);
        for (int rate_k = 0; rate_k < 2; rate_k++) {
            struct llc_statmodel_hist *h = sampled_hist(lines, n, rate_k ? 0.02 : 1.0, 9);
            struct llc_statmodel_model *m = NULL;
            assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
            for (int cold = 0; cold < 2; cold++) {
                struct llc_statmodel_options o;
                llc_statmodel_options_default(&o);
                o.cold = cold;
                assert_int_equal(llc_statmodel_curve(m, &o, grid, (size_t)ng, pts, err, sizeof err),
                                 0);
                for (int k = 0; k < ng; k++) {
                    struct llc_statmodel_point ref;
                    assert_int_equal(
                        llc_statmodel_statcache(m, grid[k], cold, &ref, err, sizeof err), 0);
                    const double diff = fabs(pts[k].r_total - ref.r_total);
                    if (diff > worst)
                        worst = diff;
                    if (diff > tol2(ref.r_total))
                        fail_msg("mix %zu rate %d cold %d L %g: fast %.15g ref %.15g", t, rate_k,
                                 cold, grid[k], pts[k].r_total, ref.r_total);
                }
            }
            llc_statmodel_release(m);
            llc_statmodel_hist_destroy(h);
        }
    }
    print_message("statcache: fast vs Brent, worst difference %.3g over %d sizes x 12 curves\n",
                  worst, ng);
    free(grid);
    free(pts);
    free(lines);
}

/* StatCache models a fully associative random-replacement cache: compare
 * with one (cold misses included, as the default model counts them). */
static void matches_random_replacement_simulation(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t n = 300000;
    uint64_t *lines = malloc(n * sizeof *lines);
    const struct synth_mix mix = {0.5, 0.25, 0.09, 300, 3000, 30000};
    struct synth_rng r = {42};
    uint64_t next = 0;
    synth_stream(&mix, &r, &next, lines, n);
    double sizes[12];
    for (int k = 0; k < 12; k++)
        sizes[k] = nearbyint(100 * pow(2, k / 2.0)); /* 100 .. 4525 lines */
    double sim[12];
    for (int k = 0; k < 12; k++)
        sim[k] = synth_random_cache(lines, n, (size_t)sizes[k], 77 + k);
    const double rates[] = {1.0, 0.05};
    for (int rk = 0; rk < 2; rk++) {
        struct llc_statmodel_hist *h = sampled_hist(lines, n, rates[rk], 3);
        struct llc_statmodel_model *m = NULL;
        assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
        struct llc_statmodel_point count[12], ignore[12];
        struct llc_statmodel_options o;
        llc_statmodel_options_default(&o);
        assert_int_equal(llc_statmodel_curve(m, &o, sizes, 12, count, err, sizeof err), 0);
        o.cold = LLC_STATMODEL_COLD_IGNORE;
        assert_int_equal(llc_statmodel_curve(m, &o, sizes, 12, ignore, err, sizeof err), 0);
        double mae = 0, mae_ignore = 0, worst = 0;
        for (int k = 0; k < 12; k++) {
            const double e = fabs(count[k].r_total - sim[k]);
            mae += e / 12;
            mae_ignore += fabs(ignore[k].r_total - sim[k]) / 12;
            worst = e > worst ? e : worst;
        }
        print_message("statcache vs random replacement (rate %g, %.0f samples, %.1f%% dangling): "
                      "MAE %.4f (max %.4f), cold=ignore MAE %.4f\n",
                      rates[rk], llc_statmodel_hist_total(h),
                      100 * llc_statmodel_hist_dangling(h) / llc_statmodel_hist_total(h), mae,
                      worst, mae_ignore);
        assert_true(mae < 0.01);
        /* docs/METHODS.md §7.2: counting cold samples as misses is the better model. */
        assert_true(mae < mae_ignore);
        llc_statmodel_release(m);
        llc_statmodel_hist_destroy(h);
    }
    free(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_distance_matches_lambert_w),
        cmocka_unit_test(dangling_samples_match_bisection),
        cmocka_unit_test(degenerate_histograms),
        cmocka_unit_test(fast_curve_agrees_with_reference_solver),
        cmocka_unit_test(matches_random_replacement_simulation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
