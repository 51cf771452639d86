/* statmodel/contention's tables of the random model's R (contention_rtab.c)
 * against the exact sum: R and dR/dx at points between the nodes, on
 * hand-built histograms (a power law over the exact and octave buckets,
 * sparse point masses with empty buckets between them, a single distance,
 * all samples dangling), warm and at ages that cut the histogram, in a
 * large and in tiny caches; then whole equilibria and a timeline with and
 * without the tables.
 *
 * Tolerances (what the tables promise): |R_tab - R| <= 1e-9 warm and
 * 2e-8 young (the exact sum's midpoint rule for young buckets with k w <
 * 1e-3 is not smooth where it switches to the bucket mean: a step of about
 * (k w)^2 / 24 of the bucket's mass), |dR/dx| within 1e-5 of its scale
 * max(|dR/dx|, R / x) warm, 1e-3 young (the same switch: the exact
 * derivative jumps by about k w^2 / 12 of the bucket's; Newton's steps
 * only need the slope roughly); miss ratios of an equilibrium within 1e-8,
 * occupancies within 1e-7 of the cache. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/contention.h"
#include "llcprobe/statmodel.h"
#include "contention_internal.h"
#include "synth.h"

/* A few point masses with empty buckets between them: at 3, 40, 1000 and
 * in two octave buckets far apart. */
static struct llc_statmodel_model *model_sparse(void)
{
    const size_t far = LLC_STATMODEL_BUCKETS - 5 * LLC_STATMODEL_SUBBUCKETS;
    const struct llc_statmodel_bucket_count pairs[] = {
        {.bucket = 3, .count = 500},
        {.bucket = 40, .count = 200},
        {.bucket = 1000, .count = 50},
        {.bucket = LLC_STATMODEL_EXACT_LIMIT + 3 * LLC_STATMODEL_SUBBUCKETS + 1, .count = 80},
        {.bucket = far, .count = 10}};
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, LLC_ARRAY_LEN(pairs), 7);
    assert_non_null(m);
    return m;
}

static struct llc_statmodel_model *model_single(void)
{
    const struct llc_statmodel_bucket_count pairs[] = {{.bucket = 1, .count = 10}};
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, 1, 0);
    assert_non_null(m);
    return m;
}

static struct llc_statmodel_model *model_dangling(void)
{
    struct llc_statmodel_model *m = synth_model_of_pairs(NULL, 0, 100);
    assert_non_null(m);
    return m;
}

/* Every x of a dense grid with irrational offsets from the nodes (ratio
 * 1.0137 from 1e-9 to 1e7, x = 0 too): R and dR/dx, tables against the
 * exact sum. Returns the queries the tables answered from their nodes. */
static size_t compare(const struct llc_statmodel_model *m, double cap, double age, double rtol)
{
    char err[LLC_ERRLEN];
    struct llc_contention_tables *t = NULL;
    assert_int_equal(llc_contention_tables_create(&t, err, sizeof err), 0);
    const double c_log = -log1p(-1 / cap);
    for (double x = 1e-9; x < 1e7; x *= 1.0137) {
        double dt, de;
        const double rt = sm_contention_random_r_tab(t, m, NULL, x, c_log, age, 0, &dt);
        const double re = sm_contention_random_r(m, x, c_log, age, &de);
        if (!(fabs(rt - re) <= rtol))
            fail_msg("cap %g age %g x %.9g: R %.17g, exact %.17g", cap, age, x, rt, re);
        const double scale = fmax(fabs(de), re / x);
        if (!(fabs(dt - de) <= (isinf(age) ? 1e-5 : 1e-3) * scale))
            fail_msg("cap %g age %g x %.9g: dR/dx %.17g, exact %.17g", cap, age, x, dt, de);
    }
    double d0;
    assert_true(sm_contention_random_r_tab(t, m, NULL, 0, c_log, age, 0, NULL) ==
                sm_contention_random_r(m, 0, c_log, age, NULL));
    assert_true(sm_contention_random_r_tab(NULL, m, NULL, 1e-3, c_log, age, 0, &d0) ==
                sm_contention_random_r(m, 1e-3, c_log, age, &d0));
    size_t tables, nodes, queries;
    llc_contention_tables_stats(t, &tables, &nodes, &queries);
    llc_contention_tables_free(t);
    return queries;
}

static void tab_matches_exact(void **state)
{
    (void)state;
    struct llc_statmodel_model *ms[] = {synth_model_power(0.05), synth_model_power(0),
                                        model_sparse(), model_single()};
    const double caps[] = {131072, 16, 2};
    const double ages[] = {INFINITY, 2.5, 300.5, 1024, 5000.25, 3e6};
    for (size_t k = 0; k < LLC_ARRAY_LEN(ms); k++)
        for (size_t c = 0; c < LLC_ARRAY_LEN(caps); c++)
            for (size_t a = 0; a < LLC_ARRAY_LEN(ages); a++) {
                const size_t q = compare(ms[k], caps[c], ages[a], isinf(ages[a]) ? 1e-9 : 2e-8);
                /* the tables answer where R varies (the power law's
                 * range spans most of the grid of x) */
                if (k == 0 && isinf(ages[a]) && q < 500)
                    fail_msg("cap %g: only %zu queries from the table", caps[c], q);
            }
    for (size_t k = 0; k < LLC_ARRAY_LEN(ms); k++)
        llc_statmodel_release(ms[k]);
}

/* With a phase's other phases' misses (docs/METHODS.md §12.7): phase 0
 * (a power law) alternating with point masses, runs of 10,000 and 1,000
 * references, missing 0.01 and 0.4 per reference. The tables (keyed by
 * the excess too) against the exact sums, R and dR/dx as above, x = 0
 * included; the misses only add (R with them >= R without, by a share
 * that grows with x's lifetimes until every reuse they span misses). */
static void tab_with_excess(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m[2] = {synth_model_power(0.05), model_sparse()};
    int phase[40];
    double refs[40];
    for (size_t w = 0; w < 40; w++) {
        phase[w] = (int)(w % 2);
        refs[w] = w % 2 ? 1000 : 10000;
    }
    const double mr[2] = {0.01, 0.4};
    struct llc_contention_excess ex;
    assert_int_equal(llc_contention_excess_build((const struct llc_statmodel_model *const *)m, 2,
                                                 phase, refs, 40, 0, mr, &ex, err, sizeof err),
                     0);
    assert_true(ex.has_misses && ex.n > 0);
    struct llc_contention_tables *t = NULL;
    assert_int_equal(llc_contention_tables_create(&t, err, sizeof err), 0);
    const double c_log = -log1p(-1 / 4096.0);
    size_t more = 0;
    for (double x = 1e-9; x < 1e7; x *= 1.0137) {
        double dt, de, dx, d0;
        const double rt = sm_contention_random_r_tab(t, m[0], &ex, x, c_log, INFINITY, 0, &dt);
        const double r0 = sm_contention_random_r(m[0], x, c_log, INFINITY, &d0);
        const double re = r0 + sm_contention_random_r_excess(m[0], &ex, x, c_log, INFINITY, 0, &dx);
        de = d0 + dx;
        if (!(fabs(rt - re) <= 1e-9))
            fail_msg("x %.9g: R %.17g, exact %.17g", x, rt, re);
        if (!(fabs(dt - de) <= 1e-5 * fmax(fabs(de), re / x)))
            fail_msg("x %.9g: dR/dx %.17g, exact %.17g", x, dt, de);
        assert_true(re >= r0);
        more += re > r0 + 1e-6;
    }
    assert_true(more > 100);
    const double z = sm_contention_random_r_tab(t, m[0], &ex, 0, c_log, INFINITY, 0, NULL);
    assert_true(z == sm_contention_random_r(m[0], 0, c_log, INFINITY, NULL) +
                         sm_contention_random_r_excess(m[0], &ex, 0, c_log, INFINITY, 0, NULL));
    /* without miss ratios the excess adds nothing: the plain table */
    struct llc_contention_excess lines_only = ex;
    lines_only.has_misses = false;
    double d1, d2;
    assert_true(sm_contention_random_r_tab(t, m[0], &lines_only, 0.5, c_log, INFINITY, 0, &d1) ==
                sm_contention_random_r_tab(t, m[0], NULL, 0.5, c_log, INFINITY, 0, &d2));
    llc_contention_tables_free(t);
    llc_statmodel_release(m[0]);
    llc_statmodel_release(m[1]);
}

/* No finite reuse: no table, R = 1 exactly. */
static void tab_all_dangling(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m = model_dangling();
    struct llc_contention_tables *t = NULL;
    assert_int_equal(llc_contention_tables_create(&t, err, sizeof err), 0);
    const double c_log = -log1p(-1 / 1024.0);
    for (double x = 1e-6; x < 1e6; x *= 3.3) {
        double dt, de;
        const double rt = sm_contention_random_r_tab(t, m, NULL, x, c_log, INFINITY, 0, &dt);
        assert_true(rt == sm_contention_random_r(m, x, c_log, INFINITY, &de));
        assert_true(rt == 1 && dt == de);
    }
    size_t tables, nodes, queries;
    llc_contention_tables_stats(t, &tables, &nodes, &queries);
    assert_int_equal(nodes, 0);
    assert_int_equal(queries, 0);
    llc_contention_tables_free(t);
    llc_statmodel_release(m);
}

/* Equilibria of two and three programs, warm, young and capped, at
 * several rates: the same shares with and without the tables. */
static void tab_equilibrium_same(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = synth_model_power(0.05), *b = model_sparse(),
                               *c = synth_model_power(0);
    struct llc_contention_tables *t = NULL;
    assert_int_equal(llc_contention_tables_create(&t, err, sizeof err), 0);
    const double caps[] = {131072, 4096, 16};
    for (size_t ci = 0; ci < LLC_ARRAY_LEN(caps); ci++)
        for (double ra = 1e7; ra < 1e10; ra *= 4.1) {
            struct llc_contention_party p[3] = {
                {.model = a, .rate = ra, .gamma = 1, .weight = 1},
                {.model = b, .rate = 3e8, .gamma = 1.2, .weight = 1.5, .lines_max = 900},
                {.model = c,
                 .rate = 1e9,
                 .gamma = 1,
                 .weight = 1,
                 .cold = true,
                 .steady = 0.01,
                 .age = 5000.25}};
            struct llc_contention_share exact[3], tab[3];
            struct llc_contention_info ie, it;
            assert_int_equal(llc_contention_equilibrium(p, 3, caps[ci], LLC_CONTENTION_RANDOM,
                                                        exact, &ie, err, sizeof err),
                             0);
            for (size_t i = 0; i < 3; i++)
                p[i].tables = t;
            assert_int_equal(llc_contention_equilibrium(p, 3, caps[ci], LLC_CONTENTION_RANDOM, tab,
                                                        &it, err, sizeof err),
                             0);
            NEAR(it.mu, ie.mu, 1e-8 * ie.mu);
            for (size_t i = 0; i < 3; i++) {
                NEAR(tab[i].miss_ratio, exact[i].miss_ratio, 1e-8);
                NEAR(tab[i].occupancy, exact[i].occupancy, 1e-7 * caps[ci]);
            }
        }
    size_t tables, nodes, queries;
    llc_contention_tables_stats(t, &tables, &nodes, &queries);
    if (!(tables >= 3 && nodes > 0 && queries > 0)) /* the tables answered */
        fail_msg("%zu tables, %zu nodes, %zu queries", tables, nodes, queries);
    llc_contention_tables_free(t);
    llc_statmodel_release(a);
    llc_statmodel_release(b);
    llc_statmodel_release(c);
}

/* A cold-start timeline of two programs (young tuples at many ages, set
 * skew, coupling): the same summaries with the tables. */
static void tab_timeline_same(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = synth_model_power(0.05), *b = model_sparse(),
                               *c = synth_model_power(0.01);
    struct llc_contention_phase pa[2] = {
        {.model = a,
         .api = 0.4,
         .cpi0 = 1,
         .penalty = 100,
         .gamma = 1,
         .cv = 0.3,
         .references = 4e7},
        {.model = b, .api = 0.3, .cpi0 = 1.2, .penalty = 100, .gamma = 1, .references = 3e7}};
    struct llc_contention_phase pb[1] = {
        {.model = c, .api = 0.3, .cpi0 = 1, .penalty = 150, .gamma = 1, .references = 9e7}};
    const int wa[4] = {0, 1, 0, 1}, wb[3] = {0, 0, 0};
    const double ia[4] = {5e7, 5e7, 5e7, 5e7}, ib[3] = {1e8, 1e8, 1e8};
    const struct llc_contention_prog progs[2] = {{.freq_hz = 3e9,
                                                  .phases = pa,
                                                  .n_phases = 2,
                                                  .window_phase = wa,
                                                  .window_instructions = ia,
                                                  .n_windows = 4},
                                                 {.freq_hz = 3e9,
                                                  .phases = pb,
                                                  .n_phases = 1,
                                                  .window_phase = wb,
                                                  .window_instructions = ib,
                                                  .n_windows = 3}};
    struct llc_contention_config cfg;
    llc_contention_config_default(&cfg);
    cfg.capacity = 131072;
    cfg.policy = LLC_CONTENTION_RANDOM;
    cfg.together = true;
    struct llc_contention_run *r0 = NULL, *r1 = NULL;
    assert_int_equal(llc_contention_timeline(progs, 2, &cfg, &r0, err, sizeof err), 0);
    assert_int_equal(llc_contention_tables_create(&cfg.tables, err, sizeof err), 0);
    assert_int_equal(llc_contention_timeline(progs, 2, &cfg, &r1, err, sizeof err), 0);
    assert_int_equal(r1->n_tuples, r0->n_tuples);
    assert_true(r0->n_tuples > 3); /* young tuples met */
    for (size_t i = 0; i < 2; i++) {
        const struct llc_contention_prog_summary *u0 = &r0->summary[i], *u1 = &r1->summary[i];
        NEAR(u1->miss_ratio, u0->miss_ratio, 1e-8);
        NEAR(u1->slowdown, u0->slowdown, 1e-7 * u0->slowdown);
        NEAR(u1->occupancy, u0->occupancy, 1e-7 * cfg.capacity);
    }
    size_t tables, nodes, queries;
    llc_contention_tables_stats(cfg.tables, &tables, &nodes, &queries);
    assert_true(queries > 2 * nodes);
    llc_contention_tables_free(cfg.tables);
    llc_contention_run_free(r0);
    llc_contention_run_free(r1);
    llc_statmodel_release(a);
    llc_statmodel_release(b);
    llc_statmodel_release(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tab_matches_exact), cmocka_unit_test(tab_all_dangling),
        cmocka_unit_test(tab_with_excess),   cmocka_unit_test(tab_equilibrium_same),
        cmocka_unit_test(tab_timeline_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
