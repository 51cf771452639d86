/* The hardware backends' pure pieces on synthetic inputs: option checks,
 * sizes, chains, pacing arithmetic, the self-test and walk verdicts. */
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
#include "maphw/maphw_internal.h"

static struct llc_map_hw_options plausible(void)
{
    struct llc_map_hw_options o;
    memset(&o, 0, sizeof(o));
    o.geo = (struct llc_map_geometry){.line_size = 64,
                                      .sets_per_slice = 1024,
                                      .slices = 1,
                                      .llc_ways = 16,
                                      .l2_ways = 8,
                                      .l2_sets = 2048,
                                      .llc_bytes = 1 << 20};
    o.probe_cpu = -1;
    return o;
}

static void test_options(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_map_hw_options o = plausible();
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), 0);

    o.geo.llc_ways = 0;
    o.geo.sets_per_slice = 0;
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "timing: LLC geometry unknown (0 ways, 0 sets per slice): eviction "
                             "sets and the walk length need both");
    o = plausible();
    o.geo.sets_per_slice = 1000;
    assert_int_equal(llc_maphw_check_options("pmu", &o, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "pmu: 1000 sets per slice is not a power of two"));
    o = plausible();
    o.geo.line_size = 4;
    assert_int_equal(llc_maphw_check_options("pmu", &o, err, sizeof(err)), -EINVAL);
    o = plausible();
    o.geo.slices = 0;
    assert_int_equal(llc_maphw_check_options("pmu", &o, err, sizeof(err)), -EINVAL);
    o = plausible();
    o.geo.victim_llc = true; /* L2 sets 2048 >= 1024 LLC sets: no walk rule holds */
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "victim LLC"));
    o.geo.l2_sets = 512;
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), 0);
    o.geo.l2_ways = 0;
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), -EINVAL);
    o = plausible();
    o.rate = -1;
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), -EINVAL);
    o.rate = NAN;
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), -EINVAL);
    o = plausible();
    o.probe_cpu = -2;
    assert_int_equal(llc_maphw_check_options("timing", &o, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_maphw_check_options("timing", NULL, err, sizeof(err)), -EINVAL);
}

static void test_sizes(void **state)
{
    (void)state;
    struct llc_map_hw_options o = plausible();
    assert_int_equal(llc_maphw_group(&o.geo), 16);
    /* per index: 3 * 17 (pools) + 16 (L2 tail) + 32 (aggressor search) */
    assert_int_equal(llc_maphw_arena_bytes(&o.geo), (size_t)(51 + 16 + 32) * 1024 * 64);
    o.geo.victim_llc = true;
    o.geo.l2_sets = 256;
    assert_int_equal(llc_maphw_group(&o.geo), 24);

    uint32_t counts[256] = {0};
    /* units 0, 256, 512 share L2 set 0; 1 and 257 set 1; slice 1 unit 1024 set 0 too */
    o.geo.slices = 2;
    const uint32_t units[] = {0, 256, 512, 1, 257, 1024};
    assert_int_equal(llc_maphw_units_per_l2_set(&o.geo, units, 6, counts), 4);
    for (int i = 0; i < 256; i++)
        assert_int_equal(counts[i], 0); /* left zeroed for the next call */
    assert_int_equal(llc_maphw_units_per_l2_set(&o.geo, units + 3, 2, counts), 2);
    assert_int_equal(llc_maphw_units_per_l2_set(&o.geo, units + 2, 2, counts), 1);
    assert_int_equal(llc_maphw_units_per_l2_set(&o.geo, units, 0, counts), 1);
    o.geo.l2_sets = 0;
    assert_int_equal(llc_maphw_units_per_l2_set(&o.geo, units, 6, NULL), 1);
}

static void test_pick_cpus(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(2, &s);
    CPU_SET(5, &s);
    int p, o;
    assert_int_equal(llc_maphw_pick_cpus(&s, -1, &p, &o, err, sizeof(err)), 0);
    assert_int_equal(p, 2);
    assert_int_equal(o, 5);
    assert_int_equal(llc_maphw_pick_cpus(&s, 5, &p, &o, err, sizeof(err)), 0);
    assert_int_equal(p, 5);
    assert_int_equal(o, 2);
    assert_int_equal(llc_maphw_pick_cpus(&s, 3, &p, &o, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "CPU 3"));
    CPU_CLR(5, &s);
    assert_int_equal(llc_maphw_pick_cpus(&s, -1, &p, &o, err, sizeof(err)), 0);
    assert_int_equal(p, 2);
    assert_int_equal(o, -1);
    CPU_ZERO(&s);
    assert_int_equal(llc_maphw_pick_cpus(&s, -1, &p, &o, err, sizeof(err)), -EINVAL);
}

static void test_chains(void **state)
{
    (void)state;
    enum { N = 24, LINE = 64 };
    uint8_t *mem = aligned_alloc(LINE, N * LINE);
    assert_non_null(mem);
    void *lines[N];
    for (int i = 0; i < N; i++)
        lines[i] = mem + i * LINE;
    uint32_t perm[N], again[N], other[N];
    llc_maphw_perm(7, 3, perm, N);
    llc_maphw_perm(7, 3, again, N);
    llc_maphw_perm(7, 4, other, N);
    assert_memory_equal(perm, again, sizeof(perm));     /* seeded */
    assert_memory_not_equal(perm, other, sizeof(perm)); /* streams differ */
    bool seen[N] = {false};
    for (int i = 0; i < N; i++) {
        assert_true(perm[i] < N);
        assert_false(seen[perm[i]]);
        seen[perm[i]] = true;
    }
    void *head = llc_maphw_chain_link(lines, perm, N);
    assert_ptr_equal(head, lines[perm[0]]);
    assert_int_equal(llc_maphw_chain_cycle(head, 1000), N);
    /* the walk visits lines in exactly the permutation's order */
    void *p = head;
    for (int k = 0; k < 2 * N; k++) {
        assert_ptr_equal(p, lines[perm[k % N]]);
        p = *(void **)p;
    }
    /* a shorter walk over the first entries is its own cycle */
    head = llc_maphw_chain_link(lines, perm, 16);
    assert_int_equal(llc_maphw_chain_cycle(head, 1000), 16);
    assert_int_equal(llc_maphw_chain_cycle(head, 15), 0);
    assert_null(llc_maphw_chain_link(lines, perm, 0));
    *(void **)lines[perm[15]] = NULL; /* broken chain */
    assert_int_equal(llc_maphw_chain_cycle(head, 1000), 0);
    free(mem);
}

static void test_pace(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_maphw_ticks(2000000000ull, 0.5), 1000000000ull);
    assert_int_equal(llc_maphw_ticks(3000000000ull, 0), 0);
    assert_int_equal(llc_maphw_ticks(3000000000ull, -1), 0);
    struct llc_maphw_pace p;
    /* 1e6 accesses/s per set over 4 sets at 2 GHz: one access every 500 ticks */
    assert_int_equal(llc_maphw_pace_init(&p, 2000000000ull, 1e6, 4, 1000, err, sizeof(err)), 0);
    assert_true(fabs(p.period - 500.0) < 1e-9);
    assert_int_equal(llc_maphw_pace_deadline(&p, 0), 1000);
    assert_int_equal(llc_maphw_pace_deadline(&p, 3), 2500);
    /* no drift over a long walk: deadline j is start + j * period exactly */
    assert_int_equal(llc_maphw_pace_deadline(&p, 2000000000ull), 1000 + 1000000000000ull);
    assert_int_equal(llc_maphw_pace_init(&p, 3000000000ull, 3e5, 1, 0, err, sizeof(err)), 0);
    assert_int_equal(llc_maphw_pace_deadline(&p, 7), 70000);
    assert_int_equal(llc_maphw_pace_init(&p, 2000000000ull, 0, 4, 5, err, sizeof(err)), 0);
    assert_int_equal(llc_maphw_pace_deadline(&p, 1000), 5); /* unpaced: always due */
    assert_int_equal(llc_maphw_pace_init(&p, 0, 1e6, 4, 0, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_maphw_pace_init(&p, 1000, -3, 4, 0, err, sizeof(err)), -EINVAL);
    /* seed's rate: 1 / (t_access + k t_nop): 100 + 300 * 0.3 = 190 ticks at 1.9 GHz */
    assert_true(fabs(llc_maphw_nop_rate(100, 300, 0.3, 1900000000ull) - 1e7) < 1e-3);
    assert_true(isinf(llc_maphw_nop_rate(0, 0, 1, 1000)));
}

static void test_mean_sd(void **state)
{
    (void)state;
    const double x[] = {1, NAN, 2, 3, 4};
    double m, sd;
    assert_int_equal(llc_maphw_mean_sd(x, 5, &m, &sd), 4);
    assert_true(fabs(m - 2.5) < 1e-12);
    assert_true(fabs(sd - sqrt(5.0 / 3.0)) < 1e-12);
    assert_int_equal(llc_maphw_mean_sd(x, 1, &m, &sd), 1);
    assert_true(m == 1 && sd == 0);
    assert_int_equal(llc_maphw_mean_sd(x + 1, 1, &m, &sd), 0);
    assert_true(isnan(m) && isnan(sd));
}

static void test_verdict(void **state)
{
    (void)state;
    struct llc_maphw_rule r;
    llc_maphw_rule_default(&r);
    struct llc_map_selftest st;
    /* a clear aggressor: 45% against 0.8% +- 0.5% */
    const double aggr[] = {0.44, 0.46, 0.45, 0.45};
    const double idle[] = {0.003, 0.008, 0.013, 0.008, 0.003, 0.013, 0.008, 0.008};
    memset(&st, 0, sizeof(st));
    assert_true(llc_maphw_selftest_verdict("timing", "slow", aggr, 4, idle, 8, &r, &st));
    assert_true(st.ran && st.passed);
    assert_true(fabs(st.aggressor_rate - 0.45) < 1e-12);
    assert_true(fabs(st.idle_rate - 0.008) < 1e-12);
    /* sd below the 1% floor: effect is measured against the floor */
    assert_true(fabs(st.effect - (0.45 - 0.008) / 0.01) < 1e-9);
    assert_non_null(strstr(st.text, "timing: self-test passed: aggressor set 45.0% slow vs idle "
                                    "0.8% ± 0.4%"));

    /* the seed's example: no difference */
    const double flat_a[] = {0.019, 0.019, 0.019};
    const double flat_i[] = {0.051, 0.0, 0.012, 0.021};
    memset(&st, 0, sizeof(st));
    assert_false(llc_maphw_selftest_verdict("timing", "slow", flat_a, 3, flat_i, 4, &r, &st));
    assert_true(st.ran && !st.passed);
    assert_true(st.effect < 0);
    assert_non_null(strstr(st.text, "timing: self-test failed: aggressor set 1.9% slow vs idle "
                                    "2.1% ± 2.2%"));

    /* just under and just over 3 sd */
    const double idle2[] = {0.10, 0.14, 0.10, 0.14}; /* mean 0.12, sd 0.02309 */
    double a2[] = {0.18, 0.18, 0.18};
    memset(&st, 0, sizeof(st));
    assert_false(llc_maphw_selftest_verdict("pmu", "missed", a2, 3, idle2, 4, &r, &st));
    a2[0] = a2[1] = a2[2] = 0.19;
    assert_true(llc_maphw_selftest_verdict("pmu", "missed", a2, 3, idle2, 4, &r, &st));
    assert_non_null(strstr(st.text, "pmu: self-test passed: aggressor set 19.0% missed"));

    /* too few dwells with accesses */
    const double empty[] = {NAN, NAN, 0.5};
    memset(&st, 0, sizeof(st));
    assert_false(llc_maphw_selftest_verdict("timing", "slow", empty, 3, idle, 8, &r, &st));
    assert_non_null(strstr(st.text, "only 1 aggressor and 8 idle dwells"));
}

static void test_walk_verdict(void **state)
{
    (void)state;
    char text[LLC_MAP_TEXT_LEN];
    uint32_t t[100];
    for (int i = 0; i < 100; i++)
        t[i] = 100 + (uint32_t)i % 7; /* LLC hits */
    assert_int_equal(llc_maphw_walk_verdict("timing", "idle walk check", 16, 4, t, 100, 60, 250,
                                            text, sizeof(text)),
                     1);
    assert_non_null(strstr(text, "passed"));
    for (int i = 0; i < 6; i++)
        t[i] = 400; /* 6% from memory */
    assert_int_equal(llc_maphw_walk_verdict("timing", "idle walk check", 16, 4, t, 100, 60, 250,
                                            text, sizeof(text)),
                     0);
    assert_non_null(strstr(text, "timing: idle walk check failed: 16-line walks over 4 sets, 100 "
                                 "timed accesses: 6.0% from memory"));
    for (int i = 0; i < 100; i++)
        t[i] = i < 5 ? 400 : 100;
    assert_int_equal(llc_maphw_walk_verdict("timing", "idle walk check", 16, 4, t, 100, 60, 250,
                                            text, sizeof(text)),
                     1);
    for (int i = 0; i < 100; i++)
        t[i] = i < 11 ? 40 : 100; /* 11% L2-fast: walk too short */
    assert_int_equal(llc_maphw_walk_verdict("timing", "idle walk check", 16, 4, t, 100, 60, 250,
                                            text, sizeof(text)),
                     0);
    assert_non_null(strstr(text, "11.0% L2-fast (< 60 ticks)"));
    /* without an L2 bound the same samples pass */
    assert_int_equal(llc_maphw_walk_verdict("timing", "idle walk check", 16, 4, t, 100, 0, 250,
                                            text, sizeof(text)),
                     1);
    assert_non_null(strstr(text, "median 100 ticks"));
    assert_int_equal(llc_maphw_walk_verdict("timing", "idle walk check", 16, 4, t, 0, 0, 250, text,
                                            sizeof(text)),
                     -EINVAL);
}

static void test_recheck(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_evset_calibration c = {
        .threshold = 260, .hit_median = 110, .miss_median = 420, .separable = true};
    uint32_t next = 0;
    assert_int_equal(llc_maphw_recheck(250, &c, &next, err, sizeof(err)), 0);
    assert_int_equal(next, 260);
    c.separable = false;
    c.error_rate = 0.2;
    next = 7;
    assert_int_equal(llc_maphw_recheck(250, &c, &next, err, sizeof(err)), -EIO);
    assert_int_equal(next, 7);
    assert_non_null(strstr(err, "timing: threshold re-check failed: LLC-hit median 110"));
    assert_non_null(strstr(err, "20.0% misclassified at 260 (was 250)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),   cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_pick_cpus), cmocka_unit_test(test_chains),
        cmocka_unit_test(test_pace),      cmocka_unit_test(test_mean_sd),
        cmocka_unit_test(test_verdict),   cmocka_unit_test(test_walk_verdict),
        cmocka_unit_test(test_recheck),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
