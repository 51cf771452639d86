/* Size grid and working-set graphs: order, deduplication, monotonicity. */
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

static void default_grid_is_eight_per_octave_1k_to_256m(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_grid_config gc;
    llc_statmodel_grid_config_default(&gc);
    const int n = llc_statmodel_grid(&gc, NULL, 0, err, sizeof err);
    assert_int_equal(n, 18 * 8 + 1);
    double *v = malloc((size_t)n * sizeof *v);
    assert_int_equal(llc_statmodel_grid(&gc, v, (size_t)n - 1, err, sizeof err), -ENOSPC);
    assert_int_equal(llc_statmodel_grid(&gc, v, (size_t)n, err, sizeof err), n);
    assert_true(v[0] == 16 && v[n - 1] == 4194304);
    for (int k = 0; k < n; k += 8)
        assert_true(v[k] == ldexp(16, k / 8));
    for (int k = 1; k < n; k++)
        assert_true(v[k] > v[k - 1] && v[k] == floor(v[k]));
    free(v);

    /* Machine sizes join the grid, sorted, once each. */
    const double extra[] = {524288, 16, 12288.4, 20, 20};
    gc.extra_lines = extra;
    gc.n_extra = 5;
    const int m = llc_statmodel_grid(&gc, NULL, 0, err, sizeof err);
    assert_int_equal(m, n + 2); /* 16 and 524288 = 16 * 2^15 are on the grid, 20 twice */
    v = malloc((size_t)m * sizeof *v);
    assert_int_equal(llc_statmodel_grid(&gc, v, (size_t)m, err, sizeof err), m);
    int found = 0;
    for (int k = 0; k < m; k++) {
        if (k)
            assert_true(v[k] > v[k - 1]);
        found += v[k] == 524288 || v[k] == 12288 || v[k] == 20;
    }
    assert_int_equal(found, 3);
    free(v);

    const double bad_extra[] = {0.5};
    gc.extra_lines = bad_extra;
    gc.n_extra = 1;
    assert_int_equal(llc_statmodel_grid(&gc, NULL, 0, err, sizeof err), -EINVAL);
    llc_statmodel_grid_config_default(&gc);
    gc.per_octave = 0;
    assert_int_equal(llc_statmodel_grid(&gc, NULL, 0, err, sizeof err), -EINVAL);
    llc_statmodel_grid_config_default(&gc);
    gc.max_lines = 8;
    assert_int_equal(llc_statmodel_grid(&gc, NULL, 0, err, sizeof err), -EINVAL);
}

static void curves_are_monotone_and_order_free(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t n = 300000;
    uint64_t *lines = malloc(n * sizeof *lines);
    const struct synth_mix mix = {0.3, 0.3, 0.3, 64, 8000, 400000};
    struct synth_rng r = {1234};
    uint64_t next = 0;
    synth_stream(&mix, &r, &next, lines, n);
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config scfg;
    llc_statmodel_sampler_config_default(&scfg);
    scfg.rate = 0.03;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&scfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_access_batch(smp, lines, n, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_prepare(llc_statmodel_groups_hist(g, 0), &m, err, sizeof err),
                     0);

    struct llc_statmodel_grid_config gc;
    llc_statmodel_grid_config_default(&gc);
    const int ng = llc_statmodel_grid(&gc, NULL, 0, err, sizeof err);
    double *grid = malloc((size_t)ng * sizeof *grid), *rev = malloc((size_t)ng * sizeof *rev);
    assert_int_equal(llc_statmodel_grid(&gc, grid, (size_t)ng, err, sizeof err), ng);
    for (int k = 0; k < ng; k++)
        rev[k] = grid[ng - 1 - k];
    struct llc_statmodel_point *a = malloc((size_t)ng * sizeof *a),
                               *b = malloc((size_t)ng * sizeof *b);
    for (int method = 0; method < 2; method++) {
        struct llc_statmodel_options o;
        llc_statmodel_options_default(&o);
        o.method = method;
        assert_int_equal(llc_statmodel_curve(m, &o, grid, (size_t)ng, a, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_curve(m, &o, rev, (size_t)ng, b, err, sizeof err), 0);
        for (int k = 0; k < ng; k++) {
            const struct llc_statmodel_point *p = &a[k], *q = &b[ng - 1 - k];
            assert_true(p->lines == grid[k] && p->bytes == grid[k] * 64);
            assert_true(fabs(p->r_total - q->r_total) < 2 * (1e-12 + 1e-9 * p->r_total) + 1e-12);
            if (k)
                assert_true(p->r_total <= a[k - 1].r_total + 1e-9);
            assert_true(p->r_total >= 0 && p->r_total <= 1);
            assert_true(p->r_capacity >= 0);
        }
        /* The large set does not fit at 1 KiB and does at 256 MiB. */
        assert_true(a[0].r_total > 0.5);
        assert_true(fabs(a[ng - 1].r_capacity) < 0.01);
    }
    /* The checker flags a rise, in either order. */
    assert_int_equal(llc_statmodel_check_monotone(a, (size_t)ng, 0, err, sizeof err), 0);
    a[10].r_total = a[9].r_total + 1e-6;
    assert_int_equal(llc_statmodel_check_monotone(a, (size_t)ng, 1e-9, err, sizeof err), -ERANGE);
    assert_non_null(strstr(err, "rises"));
    for (int k = 0; k < ng; k++)
        b[k] = a[ng - 1 - k];
    assert_int_equal(llc_statmodel_check_monotone(b, (size_t)ng, 1e-9, err, sizeof err), -ERANGE);
    assert_int_equal(llc_statmodel_check_monotone(b, (size_t)ng, 1e-5, err, sizeof err), 0);
    free(a);
    free(b);
    free(grid);
    free(rev);
    llc_statmodel_release(m);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
    free(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_grid_is_eight_per_octave_1k_to_256m),
        cmocka_unit_test(curves_are_monotone_and_order_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
