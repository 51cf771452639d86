/* The linear-regime rate search (probe/map/rate_search.c): on a model
 * whose q falls as 1 / rate, on models no rate satisfies, and against the
 * simulator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/map.h"
#include "llcprobe/sim.h"
#include "map/rate_search.h"

/* q of the median, p95 and busiest set: c / rate each, capped at 1
 * (saturation), as a probe in the linear regime sees them. */
struct model {
    double c_median, c_p95, c_max;
    unsigned calls;
};

static int model_trial(void *ctx, double rate, struct llc_map_rate_trial *t, char *err,
                       size_t errlen)
{
    (void)err;
    (void)errlen;
    struct model *m = ctx;
    m->calls++;
    t->q_median = fmin(1, m->c_median / rate);
    t->q_p95 = fmin(1, m->c_p95 / rate);
    t->q_max = fmin(1, m->c_max / rate);
    return 0;
}

static void search(struct model *m, struct llc_map_rate_selection *sel)
{
    struct llc_map_rate_search_config c;
    llc_map_rate_search_config_default(&c);
    char err[256];
    memset(sel, 0, sizeof(*sel));
    assert_int_equal(llc_map_rate_search(&c, model_trial, m, sel, err, sizeof(err)), 0);
    assert_int_equal(sel->n, m->calls);
    assert_true(sel->chosen >= 0 && (size_t)sel->chosen < sel->n);
    assert_true(sel->rate == sel->trials[sel->chosen].rate);
    print_message("%zu trials, rate %.3g: %s\n", sel->n, sel->rate, sel->why);
}

/* Saturated at the start (q p95 1 at 1e8): two or three trials reach the
 * rule, at most 1.6x above the lowest rate that meets it. */
static void test_model_converges(void **state)
{
    (void)state;
    struct model m = {.c_median = 2e7, .c_p95 = 3e8, .c_max = 2e9};
    struct llc_map_rate_selection sel;
    search(&m, &sel);
    const struct llc_map_rate_trial *t = &sel.trials[sel.chosen];
    assert_true(t->q_p95 <= 0.1 && t->q_median <= 0.05 && t->q_median >= 0.002);
    assert_true(sel.n <= 3);
    assert_true(sel.rate >= 3e9 && sel.rate <= 1.6 * 3e9);
    assert_non_null(strstr(sel.why, "rule met"));
    assert_non_null(strstr(sel.why, "busiest sets saturate")); /* max q 0.5 > 0.3 */
}

/* Too fast at the start (median q below 0.002 at 1e8): the search slows
 * the probe down. */
static void test_model_slows_down(void **state)
{
    (void)state;
    struct model m = {.c_median = 1e4, .c_p95 = 1e5, .c_max = 3e5};
    struct llc_map_rate_selection sel;
    search(&m, &sel);
    const struct llc_map_rate_trial *t = &sel.trials[sel.chosen];
    assert_true(sel.rate < 1e8);
    assert_true(t->q_p95 <= 0.1 && t->q_median >= 0.002);
}

/* p95 50x over the median (a few busy sets, most barely touched): no
 * rate meets both bounds; the lowest rate in the linear regime is kept
 * and why says the signal is weak. */
static void test_model_weak_signal(void **state)
{
    (void)state;
    struct model m = {.c_median = 1e5, .c_p95 = 1e8, .c_max = 1e9};
    struct llc_map_rate_selection sel;
    search(&m, &sel);
    const struct llc_map_rate_trial *t = &sel.trials[sel.chosen];
    assert_true(t->q_p95 <= 0.1);
    assert_non_null(strstr(sel.why, "weak signal"));
}

/* Out of reach within the range: why says so, the nearest trial is kept. */
static void test_model_unreachable(void **state)
{
    (void)state;
    struct model m = {.c_median = 1e12, .c_p95 = 1e13, .c_max = 1e13};
    struct llc_map_rate_selection sel;
    search(&m, &sel);
    assert_non_null(strstr(sel.why, "not reached"));
    assert_true(sel.rate == 1e11);
}

/* A trial that counted nothing is an error, not a choice. */
static int empty_trial(void *ctx, double rate, struct llc_map_rate_trial *t, char *err,
                       size_t errlen)
{
    (void)ctx, (void)rate, (void)err, (void)errlen;
    t->q_median = t->q_p95 = t->q_max = NAN;
    return 0;
}

static void test_empty_trial(void **state)
{
    (void)state;
    struct llc_map_rate_search_config c;
    llc_map_rate_search_config_default(&c);
    struct llc_map_rate_selection sel;
    char err[256];
    assert_int_equal(llc_map_rate_search(&c, empty_trial, NULL, &sel, err, sizeof(err)), -ENODATA);
    c.start = 1e12;
    assert_int_equal(llc_map_rate_search(&c, empty_trial, NULL, &sel, err, sizeof(err)), -EINVAL);
}

/* ---- against the simulator ---- */

struct sim_ctx {
    struct llc_sim_config cfg;
    const char *workload;
};

/* One global map of the target alone at rate, 500 probe accesses per set
 * (as map --rate linear's trials), scored for q. */
static int sim_trial(void *ctx, double rate, struct llc_map_rate_trial *t, char *err, size_t errlen)
{
    const struct sim_ctx *c = ctx;
    struct llc_map_sim_options o;
    llc_map_sim_options_default(&o);
    o.workload = c->workload;
    o.probe_rate = rate / 1e9;
    struct llc_map_backend *b = NULL;
    struct llc_map_result *r = NULL;
    int rc = llc_map_backend_sim(&c->cfg, &o, &b, err, errlen);
    if (rc < 0)
        return rc;
    const uint32_t units = llc_map_units(&b->geo);
    const double warm = 2.0 * c->cfg.llc.ways * units / rate;
    const struct llc_map_plan p = {
        .mode = LLC_MAP_GLOBAL, .dwell_s = 500.0 * units / rate + warm, .sweeps = 1};
    rc = llc_map_run(b, &p, &r, err, errlen);
    if (rc == 0) {
        uint8_t *none = calloc(units, 1);
        const uint32_t all[1] = {0};
        llc_map_rate_score(r, none, all, 0, t);
        free(none);
        print_message("sim trial at %.3g: q median %.4f p95 %.4f max %.4f\n", rate, t->q_median,
                      t->q_p95, t->q_max);
    }
    llc_map_result_free(r);
    llc_map_backend_release(b);
    return rc;
}

/* intel8 (LRU) with a Gaussian workload: the search ends in the linear
 * regime, or says why not, in at most 6 short trials; the regime it
 * reports holds in a fresh map at the chosen rate. */
static void test_sim_gaussian(void **state)
{
    (void)state;
    struct sim_ctx c = {.workload = "gaussian:size=16M,cv=0.3"};
    char err[256];
    assert_int_equal(llc_sim_preset("intel8", &c.cfg, err, sizeof(err)), 0);
    struct llc_map_rate_search_config cfg;
    llc_map_rate_search_config_default(&cfg);
    struct llc_map_rate_selection sel;
    memset(&sel, 0, sizeof(sel));
    assert_int_equal(llc_map_rate_search(&cfg, sim_trial, &c, &sel, err, sizeof(err)), 0);
    print_message("%zu trials, rate %.3g: %s\n", sel.n, sel.rate, sel.why);
    assert_true(sel.n <= 6);
    const struct llc_map_rate_trial *t = &sel.trials[sel.chosen];
    if (strstr(sel.why, "rule met")) {
        assert_true(t->q_p95 <= 0.1 && t->q_median <= 0.05 && t->q_median >= 0.002);
        struct llc_map_rate_trial again = {0};
        assert_int_equal(sim_trial(&c, sel.rate, &again, err, sizeof(err)), 0);
        assert_true(again.q_p95 <= 0.15);
    } else {
        assert_true(strstr(sel.why, "weak signal") || strstr(sel.why, "not reached"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_converges),   cmocka_unit_test(test_model_slows_down),
        cmocka_unit_test(test_model_weak_signal), cmocka_unit_test(test_model_unreachable),
        cmocka_unit_test(test_empty_trial),       cmocka_unit_test(test_sim_gaussian),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
