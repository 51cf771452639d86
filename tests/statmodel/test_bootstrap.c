/* Bootstrap band (docs/METHODS.md §7.6): contains the point estimate, narrows with more
 * samples, reproducible from its seed. */
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

static struct llc_statmodel_hist *sampled(double rate)
{
    char err[LLC_ERRLEN];
    const size_t n = 200000;
    uint64_t *lines = malloc(n * sizeof *lines);
    const struct synth_mix mix = {0.5, 0.3, 0.1, 200, 4000, 50000};
    struct synth_rng r = {99};
    uint64_t next = 0;
    synth_stream(&mix, &r, &next, lines, n);
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = rate;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_access_batch(smp, lines, n, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_pool(g, h, err, sizeof err), 0);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
    free(lines);
    return h;
}

static void band_contains_point_estimate(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_grid_config gc;
    llc_statmodel_grid_config_default(&gc);
    gc.per_octave = 2;
    gc.max_lines = 65536;
    const int ng = llc_statmodel_grid(&gc, NULL, 0, err, sizeof err);
    double *grid = malloc((size_t)ng * sizeof *grid);
    assert_int_equal(llc_statmodel_grid(&gc, grid, (size_t)ng, err, sizeof err), ng);
    double *lo = malloc((size_t)ng * sizeof *lo), *hi = malloc((size_t)ng * sizeof *hi);
    double *lo2 = malloc((size_t)ng * sizeof *lo2), *hi2 = malloc((size_t)ng * sizeof *hi2);
    struct llc_statmodel_point *pt = malloc((size_t)ng * sizeof *pt);
    double width[2] = {0, 0};
    const double rates[2] = {0.01, 0.1};
    for (int ri = 0; ri < 2; ri++) {
        struct llc_statmodel_hist *h = sampled(rates[ri]);
        struct llc_statmodel_model *m = NULL;
        assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
        for (int method = 0; method < 2; method++) {
            struct llc_statmodel_options o;
            llc_statmodel_options_default(&o);
            o.method = method;
            struct llc_statmodel_bootstrap_config bc;
            llc_statmodel_bootstrap_config_default(&bc);
            bc.replicates = 100;
            bc.seed = 17;
            assert_int_equal(llc_statmodel_curve(m, &o, grid, (size_t)ng, pt, err, sizeof err), 0);
            assert_int_equal(
                llc_statmodel_bootstrap(h, &bc, &o, grid, (size_t)ng, lo, hi, err, sizeof err), 0);
            assert_int_equal(
                llc_statmodel_bootstrap(h, &bc, &o, grid, (size_t)ng, lo2, hi2, err, sizeof err),
                0);
            assert_memory_equal(lo, lo2, (size_t)ng * sizeof *lo);
            assert_memory_equal(hi, hi2, (size_t)ng * sizeof *hi);
            for (int k = 0; k < ng; k++) {
                if (!(lo[k] <= pt[k].r_total && pt[k].r_total <= hi[k]))
                    fail_msg("rate %g method %d L %g: %.5f outside [%.5f, %.5f]", rates[ri], method,
                             grid[k], pt[k].r_total, lo[k], hi[k]);
                width[ri] += (hi[k] - lo[k]) / ng / 2;
            }
        }
        print_message("bootstrap: %.0f samples, mean 5-95%% band width %.4f\n",
                      llc_statmodel_hist_total(h), width[ri]);
        llc_statmodel_release(m);
        llc_statmodel_hist_destroy(h);
    }
    assert_true(width[0] > 0);
    /* Ten times the samples: about sqrt(10) narrower. */
    assert_true(width[1] < width[0] / 2);
    struct llc_statmodel_bootstrap_config bc;
    llc_statmodel_bootstrap_config_default(&bc);
    bc.replicates = 1;
    struct llc_statmodel_hist *empty = NULL;
    assert_int_equal(llc_statmodel_hist_create(&empty, err, sizeof err), 0);
    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    assert_int_equal(
        llc_statmodel_bootstrap(empty, &bc, &o, grid, (size_t)ng, lo, hi, err, sizeof err),
        -EINVAL);
    bc.replicates = 10;
    assert_int_equal(
        llc_statmodel_bootstrap(empty, &bc, &o, grid, (size_t)ng, lo, hi, err, sizeof err),
        -ENODATA);
    llc_statmodel_hist_destroy(empty);
    free(grid);
    free(lo);
    free(hi);
    free(lo2);
    free(hi2);
    free(pt);
}

/* With an exact cold fraction the replicates keep it: at a size past
 * every distance the band is that fraction, without width; at smaller
 * sizes the finite samples still spread it. */
static void exact_cold_fraction_has_no_spread(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = sampled(0.05);
    const double f = 0.3;
    assert_int_equal(llc_statmodel_hist_set_cold(h, 3, 10, err, sizeof err), 0);
    const double sizes[2] = {64, 1e12};
    double lo[2], hi[2];
    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    struct llc_statmodel_bootstrap_config bc;
    llc_statmodel_bootstrap_config_default(&bc);
    bc.replicates = 50;
    bc.cold_fraction = f;
    assert_int_equal(llc_statmodel_bootstrap(h, &bc, &o, sizes, 2, lo, hi, err, sizeof err), 0);
    assert_true(fabs(lo[1] - f) < 1e-6 * f && fabs(hi[1] - f) < 1e-6 * f);
    assert_true(hi[0] > lo[0]);
    bc.cold_fraction = 0;
    assert_int_equal(llc_statmodel_bootstrap(h, &bc, &o, sizes, 2, lo, hi, err, sizeof err), 0);
    assert_true(hi[1] - lo[1] > 1e-3);
    bc.cold_fraction = 1;
    assert_int_equal(llc_statmodel_bootstrap(h, &bc, &o, sizes, 2, lo, hi, err, sizeof err),
                     -EINVAL);
    llc_statmodel_hist_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(band_contains_point_estimate),
        cmocka_unit_test(exact_cold_fraction_has_no_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
