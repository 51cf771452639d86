/* Sessions through the library API on the simulator: open -> map ->
 * close, the usage/failure split of open's errors, the baseline, and an
 * interrupted map coming back incomplete. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/session.h"

static void small_sim(struct llc_session_config *c, const char *workload)
{
    llc_session_config_default(c);
    c->cmd = "test";
    c->backend = "sim";
    c->preset = "intel8";
    c->workload = workload;
    c->rate = 1e8;
    c->dwell_s = 0.0005;
    c->dwell_given = true;
    c->sweeps = 1;
    c->no_baseline = true;
}

static void test_open_map_close(void **state)
{
    (void)state;
    struct llc_session_config c;
    small_sim(&c, "gaussian:size=16M,cv=0.5");
    c.sweeps = 2;
    c.dwell_given = false; /* sized to the target: 150 accesses per set */
    c.dwell_s = 0;
    struct llc_session *s = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_session_open(&c, &s, err, sizeof(err)), 0);
    const struct llc_session_info *in = llc_session_info(s);
    assert_true(in->sim);
    assert_string_equal(in->backend, "sim");
    assert_string_equal(in->machine, "simulator preset intel8, LLC lru");
    assert_string_equal(in->target, "workload gaussian:size=16M,cv=0.5");
    assert_int_equal(in->mode, LLC_MAP_GLOBAL); /* the simulator's default */
    assert_true(in->rate == 1e8);
    assert_true(fabs(in->dwell_s - 150.0 * 8192 / 1e7) < 1e-9);
    assert_null(in->rate_selection);
    assert_null(in->baseline);
    struct llc_session_map_result m;
    assert_int_equal(llc_session_map(s, &m, err, sizeof(err)), 0);
    const uint32_t units = llc_map_units(&llc_session_backend(s)->geo);
    assert_int_equal(units, 8192);
    assert_true(m.result->complete);
    assert_int_equal(m.result->sweeps, 2);
    assert_non_null(m.truth);
    double *x = malloc(units * sizeof(*x));
    assert_non_null(x);
    for (uint32_t u = 0; u < units; u++) {
        assert_true(m.result->measured[u]);
        x[u] = (double)m.result->misses[u];
    }
    /* The probe's misses rank the sets as the target's true occupancy. */
    const double rho = llc_map_spearman(x, m.truth, units);
    assert_true(rho > 0.8);
    struct llc_map_meta meta;
    llc_session_map_meta(s, &m, &meta);
    assert_ptr_equal(meta.truth_occupancy, m.truth);
    assert_string_equal(meta.policy, "lru");
    free(x);
    llc_session_map_result_free(&m);
    llc_session_close(s);
}

static void test_errors(void **state)
{
    (void)state;
    struct llc_session_config c;
    struct llc_session *s = NULL;
    char err[LLC_ERRLEN];
    small_sim(&c, "uniform:size=1M");
    c.preset = "nope";
    assert_int_equal(llc_session_open(&c, &s, err, sizeof(err)), LLC_SESSION_EUSAGE);
    assert_null(s);
    assert_non_null(strstr(err, "--preset"));
    /* A bad workload is the input's fault, not the usage's. */
    small_sim(&c, "nonsense:size=1M");
    const int rc = llc_session_open(&c, &s, err, sizeof(err));
    assert_true(rc < 0 && rc != LLC_SESSION_EUSAGE);
    assert_null(s);
}

static void test_baseline(void **state)
{
    (void)state;
    struct llc_session_config c;
    small_sim(&c, "uniform:size=16M");
    c.policy = "drrip";
    c.no_baseline = false;
    struct llc_session *s = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_session_open(&c, &s, err, sizeof(err)), 0);
    const struct llc_session_info *in = llc_session_info(s);
    assert_non_null(in->baseline);
    assert_int_equal(in->baseline->n_leader, 64); /* DRRIP's leader sets */
    struct llc_session_map_result m;
    assert_int_equal(llc_session_map(s, &m, err, sizeof(err)), 0);
    assert_non_null(m.result->excluded);
    llc_session_map_result_free(&m);
    llc_session_close(s);
}

/* The stop flag ends a global map inside its one long dwell: the map comes
 * back incomplete, with what was measured. */
static volatile sig_atomic_t stop_flag;

static void stop_at_once(void *ctx, double f)
{
    (void)ctx;
    (void)f;
    stop_flag = 1;
}

static void test_stop(void **state)
{
    (void)state;
    struct llc_session_config c;
    small_sim(&c, "uniform:size=4M");
    c.sweeps = 3;
    c.stop = &stop_flag;
    c.progress = stop_at_once; /* after the first sweep's one group */
    struct llc_session *s = NULL;
    char err[LLC_ERRLEN];
    stop_flag = 0;
    assert_int_equal(llc_session_open(&c, &s, err, sizeof(err)), 0);
    struct llc_session_map_result m;
    assert_int_equal(llc_session_map(s, &m, err, sizeof(err)), 0);
    assert_false(m.result->complete);
    assert_int_equal(m.result->sweeps, 1);
    assert_non_null(strstr(m.result->incomplete_reason, "interrupted"));
    llc_session_map_result_free(&m);
    llc_session_close(s);
}

/* open -> calibrate -> close on an idle simulated target: a fast
 * co-runner saturates the probe from k = 2 on (as calibrate_cli checks
 * through the CLI), and every k's search estimate lies in 0..ways. */
static void test_calibrate(void **state)
{
    (void)state;
    struct llc_session_config c;
    small_sim(&c, "uniform:size=64");
    c.target_rate = 1e-6;
    c.dwell_s = 0.002;
    c.purpose = LLC_SESSION_CALIBRATE;
    struct llc_session *s = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_session_open(&c, &s, err, sizeof(err)), 0);
    struct llc_calibrate_config cc = {.touch_rate = 2e5, .probed = 25};
    llc_occ_params_default(&cc.search);
    cc.search.cycle_s = 0.005;
    cc.search.cycles = 1;
    struct llc_calibrate_result r;
    assert_int_equal(llc_calibrate_run(s, &cc, &r, err, sizeof(err)), 0);
    assert_int_equal(r.ways, 16);
    assert_int_equal(r.probed, 25);
    assert_true(r.rate == 1e8);
    for (unsigned k = 2; k <= r.ways; k++)
        for (uint32_t i = 0; i < r.probed; i++)
            assert_true(fabs(r.per_set[k * r.probed + i] / (r.rate / r.probed) - 1) < 0.01);
    for (size_t i = 0; i < (size_t)(r.ways + 1) * r.probed; i++)
        assert_true(r.estimate[i] >= 0 && r.estimate[i] <= r.ways);
    llc_calibrate_result_free(&r);
    /* More sets than the LLC has: the caller's mistake. */
    cc.probed = 9000;
    assert_int_equal(llc_calibrate_run(s, &cc, &r, err, sizeof(err)), LLC_SESSION_EUSAGE);
    llc_session_close(s);
}

/* open -> sample -> close: a random baseline (its estimate is N/n times the
 * sampled misses), then Gaussian-25 on an in-run map and fit. */
static void test_sample(void **state)
{
    (void)state;
    struct llc_session_config c;
    small_sim(&c, "gaussian:size=16M,cv=0.5");
    c.purpose = LLC_SESSION_SAMPLE;
    c.dwell_given = false;
    c.dwell_s = 0;
    struct llc_session *s = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_session_open(&c, &s, err, sizeof(err)), 0);
    assert_null(llc_session_info(s)->baseline); /* the map's, not sample's */
    uint32_t *units = NULL;
    size_t n = 0;
    assert_int_equal(
        llc_sample_pick(s, LLC_SAMPLE_RANDOM, 9000, 0, NULL, 0, &units, &n, err, sizeof(err)),
        LLC_SESSION_EUSAGE);
    assert_int_equal(
        llc_sample_pick(s, LLC_SAMPLE_RANDOM, 40, 0, NULL, 0, &units, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 40);
    const struct llc_sample_config sc = {
        .method = LLC_SAMPLE_RANDOM, .units = units, .n = n, .interval = 0.002, .intervals = 3};
    struct llc_sample_result r;
    assert_int_equal(llc_sample_run(s, &sc, &r, err, sizeof(err)), 0);
    assert_int_equal(r.count, 3);
    assert_true(r.truth);
    for (size_t i = 0; i < r.count; i++) {
        assert_true(r.iv[i].sampled > 0);
        assert_true(fabs(r.iv[i].scale_up - 8192.0 / 40 * r.iv[i].sampled) <
                    1e-6 * r.iv[i].scale_up);
        assert_true(isnan(r.iv[i].stratified)); /* no strata without a fit */
        assert_true(r.iv[i].true_occ_lines > 0);
    }
    assert_true(isnan(r.search_cycle_s));
    llc_sample_result_free(&r);
    free(units);
    /* Gaussian-25: the in-run map of every set, a fit, its key-point sets. */
    struct llc_session_map_result m;
    assert_int_equal(llc_sample_in_run_map(s, &m, err, sizeof(err)), 0);
    const uint32_t all = m.result->units;
    double *x = malloc(all * sizeof(*x));
    assert_non_null(x);
    for (uint32_t u = 0; u < all; u++)
        x[u] = (double)m.result->misses[u];
    struct llc_fit_select_config fc;
    llc_fit_select_config_default(&fc);
    struct llc_fit_selection *sel = NULL;
    assert_int_equal(llc_fit_select(x, all, NULL, &fc, &sel, err, sizeof(err)), 0);
    units = malloc(sel->n * sizeof(*units));
    assert_non_null(units);
    for (size_t i = 0; i < sel->n; i++)
        units[i] = (uint32_t)sel->unit[i];
    const struct llc_sample_config gc = {.method = LLC_SAMPLE_GAUSSIAN,
                                         .units = units,
                                         .n = sel->n,
                                         .sel = sel,
                                         .interval = 0.002,
                                         .intervals = 2};
    assert_int_equal(llc_sample_run(s, &gc, &r, err, sizeof(err)), 0);
    for (size_t i = 0; i < r.count; i++)
        assert_true(fabs(r.iv[i].stratified / r.iv[i].scale_up - 1) < 0.3);
    llc_sample_result_free(&r);
    llc_fit_selection_destroy(sel);
    llc_session_map_result_free(&m);
    free(units);
    free(x);
    llc_session_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_map_close), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_baseline),       cmocka_unit_test(test_stop),
        cmocka_unit_test(test_calibrate),      cmocka_unit_test(test_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
