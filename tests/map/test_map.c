/* The map driver, walk-length rule, statistics and sim backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include "llcprobe/map.h"
#include "llcprobe/sim.h"

/* ---- walk length ---- */

static void test_walk_length(void **state)
{
    (void)state;
    struct llc_map_geometry g = {.line_size = 64,
                                 .sets_per_slice = 2048,
                                 .slices = 4,
                                 .llc_ways = 16,
                                 .l2_ways = 8,
                                 .l2_sets = 512};
    assert_int_equal(llc_map_walk_length(&g, 1), 16); /* inclusive: W_LLC */
    assert_int_equal(llc_map_walk_length(&g, 7), 16);
    g.victim_llc = true;
    g.l2_ways = 16;
    assert_int_equal(llc_map_walk_length(&g, 1), 32); /* one unit: W_L2 + W_LLC */
    assert_int_equal(llc_map_walk_length(&g, 0), 32);
    assert_int_equal(llc_map_walk_length(&g, 3), 21); /* floor(16/3) */
    assert_int_equal(llc_map_walk_length(&g, 32), 16);
    g.l2_ways = 0;
    assert_int_equal(llc_map_walk_length(&g, 1), 16);
}

/* ---- correlations ---- */

static void test_correlations(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4, 5}, y[] = {2, 4, 6, 8, 10}, z[] = {1, 4, 9, 16, 25},
                 r[] = {5, 4, 3, 2, 1};
    assert_true(fabs(llc_map_pearson(x, y, 5) - 1) < 1e-12);
    assert_true(fabs(llc_map_spearman(x, z, 5) - 1) < 1e-12); /* monotone, not linear */
    assert_true(llc_map_pearson(x, z, 5) < 0.99);
    assert_true(fabs(llc_map_spearman(x, r, 5) + 1) < 1e-12);
    /* Ties share mean ranks: ranks of t are 1.5 1.5 3 4 5. */
    const double t[] = {7, 7, 8, 9, 10};
    const double expect = llc_map_pearson((const double[]){1.5, 1.5, 3, 4, 5}, x, 5);
    assert_true(fabs(llc_map_spearman(t, x, 5) - expect) < 1e-12);
    const double c[] = {3, 3, 3};
    assert_true(isnan(llc_map_pearson(c, x, 3)));
    assert_true(isnan(llc_map_spearman(x, y, 1)));
}

/* ---- driver, with a backend whose counts are known ---- */

struct fake {
    struct llc_map_backend pub;
    unsigned calls, end_after;
    size_t max_group_seen;
    uint32_t seen[64];
};

static int fake_measure(void *ctx, const uint32_t *units, size_t n, double dwell_s,
                        uint64_t *misses, uint64_t *accesses, char *err, size_t errlen)
{
    (void)dwell_s;
    (void)err;
    (void)errlen;
    struct fake *f = ctx;
    f->calls++;
    if (n > f->max_group_seen)
        f->max_group_seen = n;
    for (size_t i = 0; i < n; i++) {
        misses[units[i]] += units[i]; /* unit u misses u times per visit */
        accesses[units[i]] += 100;
        f->seen[units[i]]++;
    }
    return f->end_after && f->calls >= f->end_after ? 1 : 0;
}

static bool fake_alive(void *ctx)
{
    (void)ctx;
    return true;
}

static void fake_release(void *ctx)
{
    (void)ctx;
}

static const struct llc_map_backend_ops fake_ops = {
    .measure = fake_measure, .target_alive = fake_alive, .release = fake_release};

static void fake_init(struct fake *f, bool all_at_once)
{
    memset(f, 0, sizeof(*f));
    f->pub.ops = &fake_ops;
    f->pub.ctx = f;
    f->pub.name = "fake";
    f->pub.all_at_once = all_at_once;
    f->pub.geo = (struct llc_map_geometry){
        .line_size = 64, .sets_per_slice = 16, .slices = 4, .llc_ways = 4};
}

static void test_driver_sweep(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f, true);
    const struct llc_map_plan p = {
        .mode = LLC_MAP_SWEEP, .group = 10, .dwell_s = 0.01, .sweeps = 3, .seed = 5};
    struct llc_map_result *r;
    char err[256];
    assert_int_equal(llc_map_run(&f.pub, &p, &r, err, sizeof(err)), 0);
    assert_true(r->complete);
    assert_int_equal(r->sweeps, 3);
    assert_int_equal(f.calls, 3 * 7); /* 64 units in groups of 10 */
    assert_int_equal(f.max_group_seen, 10);
    for (uint32_t u = 0; u < 64; u++) {
        assert_true(r->measured[u]);
        assert_int_equal(f.seen[u], 3);
        assert_int_equal(r->misses[u], 3 * u);
        assert_int_equal(r->sweep_misses[64 + u], u);
        assert_true(fabs(r->dwell_s[u] - 0.03) < 1e-12);
    }
    struct llc_map_summary s;
    llc_map_summarize(r, &s);
    assert_int_equal(s.n, 64);
    assert_int_equal(s.hottest[0], 63);
    assert_int_equal(s.hottest[9], 54);
    assert_true(fabs(s.retest_pearson - 1) < 1e-12);
    assert_true(fabs(s.mean - 3 * 31.5) < 1e-9);
    llc_map_result_free(r);
}

static void test_driver_one_at_a_time_and_sets(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f, false);
    const uint32_t sets[] = {3, 7, 63};
    const struct llc_map_plan p = {
        .mode = LLC_MAP_SETS, .group = 8, .dwell_s = 0.01, .sweeps = 2, .sets = sets, .n_sets = 3};
    struct llc_map_result *r;
    char err[256];
    assert_int_equal(llc_map_run(&f.pub, &p, &r, err, sizeof(err)), 0);
    assert_int_equal(f.max_group_seen, 1); /* a pmu-like backend: one unit per dwell */
    assert_int_equal(f.calls, 6);
    assert_true(r->measured[7] && !r->measured[8]);
    llc_map_result_free(r);

    /* Global needs per-access attribution. */
    const struct llc_map_plan g = {.mode = LLC_MAP_GLOBAL, .dwell_s = 1, .sweeps = 1};
    assert_int_equal(llc_map_run(&f.pub, &g, &r, err, sizeof(err)), -ENOTSUP);
    assert_non_null(strstr(err, "one set at a time"));
    /* A set beyond the geometry. */
    const uint32_t bad[] = {64};
    const struct llc_map_plan b = {
        .mode = LLC_MAP_SETS, .dwell_s = 1, .sweeps = 1, .sets = bad, .n_sets = 1};
    assert_int_equal(llc_map_run(&f.pub, &b, &r, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "out of range"));
}

static void test_driver_target_ends_and_stop(void **state)
{
    (void)state;
    struct fake f;
    fake_init(&f, true);
    f.end_after = 9; /* the target ends in the second sweep */
    const struct llc_map_plan p = {.mode = LLC_MAP_SWEEP, .group = 8, .dwell_s = 0.01, .sweeps = 3};
    struct llc_map_result *r;
    char err[256];
    assert_int_equal(llc_map_run(&f.pub, &p, &r, err, sizeof(err)), 0);
    assert_false(r->complete);
    assert_int_equal(r->sweeps, 1);
    assert_non_null(strstr(r->incomplete_reason, "target ended"));
    llc_map_result_free(r);

    volatile sig_atomic_t stop = 1;
    fake_init(&f, true);
    const struct llc_map_plan q = {
        .mode = LLC_MAP_SWEEP, .group = 8, .dwell_s = 0.01, .sweeps = 2, .stop = &stop};
    assert_int_equal(llc_map_run(&f.pub, &q, &r, err, sizeof(err)), 0);
    assert_false(r->complete);
    assert_int_equal(f.calls, 0);
    assert_non_null(strstr(r->incomplete_reason, "interrupted"));
    llc_map_result_free(r);
}

static void test_parse_sets(void **state)
{
    (void)state;
    uint32_t *v;
    size_t n;
    char err[256];
    assert_int_equal(llc_map_parse_sets("0-3,10,4096-4097", &v, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 7);
    assert_int_equal(v[4], 10);
    assert_int_equal(v[6], 4097);
    free(v);
    assert_true(llc_map_parse_sets("5-2", &v, &n, err, sizeof(err)) < 0);
    assert_true(llc_map_parse_sets("x", &v, &n, err, sizeof(err)) < 0);
    assert_true(llc_map_parse_sets(",", &v, &n, err, sizeof(err)) < 0);
    /* Bounded before it counts (found by fuzzing: 0-157009699 took 11 s under ASan). */
    assert_int_equal(llc_map_parse_sets("0-4000000000", &v, &n, err, sizeof(err)), -E2BIG);
    assert_non_null(strstr(err, "names more than 4194304 sets"));
    assert_int_equal(llc_map_parse_sets("0-4194303,7", &v, &n, err, sizeof(err)), -E2BIG);
    assert_int_equal(llc_map_parse_sets("0-4194303", &v, &n, err, sizeof(err)), 0);
    assert_int_equal(n, LLC_MAP_MAX_SET_IDS);
    free(v);
}

/* ---- sim backend: the map recovers a planted hot-set pattern ---- */

static void test_sim_backend_hotsets(void **state)
{
    (void)state;
    struct llc_sim_config cfg;
    char err[256];
    assert_int_equal(llc_sim_preset("intel8", &cfg, err, sizeof(err)), 0);
    struct llc_map_sim_options o;
    llc_map_sim_options_default(&o);
    o.workload = "hotsets:size=16M,frac=0.25,weight=0.75";
    struct llc_map_backend *b;
    assert_int_equal(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)), 0);
    assert_int_equal(b->walk, 16);
    assert_non_null(strstr(b->walk_check, "100.0% LLC hits"));
    const uint32_t units = llc_map_units(&b->geo);
    assert_int_equal(units, 8192);
    const struct llc_map_plan p = {
        .mode = LLC_MAP_GLOBAL, .dwell_s = 50.0 * units / 1e7, .sweeps = 1};
    struct llc_map_result *r;
    assert_int_equal(llc_map_run(b, &p, &r, err, sizeof(err)), 0);
    double *truth = malloc(units * sizeof(*truth)), *m = malloc(units * sizeof(*m));
    uint64_t *acc = malloc(units * sizeof(*acc));
    assert_int_equal(llc_map_sim_truth(b, truth, acc, NULL), 0);
    for (uint32_t u = 0; u < units; u++)
        m[u] = (double)r->misses[u];
    const double rho = llc_map_spearman(m, truth, units);
    print_message("intel8 hotsets: Spearman(probe misses, true occupancy) = %.3f\n", rho);
    assert_true(rho >= 0.9);
    /* Hot sets (3x the accesses of a cold one on average) miss more. */
    double hot = 0, cold = 0;
    unsigned nh = 0, nc = 0;
    uint64_t amax = 0;
    for (uint32_t u = 0; u < units; u++)
        amax = acc[u] > amax ? acc[u] : amax;
    for (uint32_t u = 0; u < units; u++) {
        if (acc[u] > amax / 2) {
            hot += m[u];
            nh++;
        } else {
            cold += m[u];
            nc++;
        }
    }
    assert_true(nh > 0 && nc > 0);
    assert_true(hot / nh > 2 * cold / nc);
    free(truth);
    free(m);
    free(acc);
    llc_map_result_free(r);
    llc_map_backend_release(b);
    /* Not a sim backend. */
    struct fake f;
    fake_init(&f, true);
    assert_int_equal(llc_map_sim_truth(&f.pub, NULL, NULL, NULL), -EINVAL);
}

static void test_sim_backend_victim_walk(void **state)
{
    (void)state;
    struct llc_sim_config cfg;
    char err[256];
    assert_int_equal(llc_sim_preset("amd32", &cfg, err, sizeof(err)), 0);
    struct llc_map_sim_options o;
    llc_map_sim_options_default(&o);
    o.workload = "uniform:size=1M";
    struct llc_map_backend *b;
    assert_int_equal(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)), 0);
    assert_true(b->geo.victim_llc);
    assert_int_equal(b->walk, 32); /* W_L2 16 + W_LLC 16 */
    assert_non_null(strstr(b->walk_check, "100.0% LLC hits"));
    llc_map_backend_release(b);
    /* Bad inputs. */
    o.workload = NULL;
    assert_true(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)) < 0);
    o.workload = "nonsense:size=1M";
    assert_true(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)) < 0);
    o.workload = "uniform:size=1M";
    o.probe_rate = 0;
    assert_true(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_length),
        cmocka_unit_test(test_correlations),
        cmocka_unit_test(test_driver_sweep),
        cmocka_unit_test(test_driver_one_at_a_time_and_sets),
        cmocka_unit_test(test_driver_target_ends_and_stop),
        cmocka_unit_test(test_parse_sets),
        cmocka_unit_test(test_sim_backend_hotsets),
        cmocka_unit_test(test_sim_backend_victim_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
