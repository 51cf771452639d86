/* Rate selection (planted pattern, scoring, choice, the linear-regime
 * step), the baseline exclusion mask, leader sets, and --repeat in the
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
#include <unistd.h>

#include "llcprobe/map.h"
#include "llcprobe/sim.h"
#include "llcprobe/trace.h"

/* ---- the planted pattern ---- */

static void check_pattern(const struct llc_map_geometry *g, uint32_t want, uint32_t expect)
{
    const uint32_t units = llc_map_units(g);
    uint8_t *k = malloc(units);
    uint32_t *scored = malloc(2 * want * sizeof(*scored));
    bool *l2_used = calloc(g->l2_sets ? g->l2_sets : 1, sizeof(*l2_used));
    bool *slice_used = calloc(g->slices, sizeof(*slice_used));
    const uint32_t n = llc_map_plant_pattern(g, want, k, scored);
    assert_int_equal(n, expect);
    unsigned levels[9] = {0};
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t u = scored[i];
        assert_true(k[u] == 1 || k[u] == 2 || k[u] == 4 || k[u] == 8);
        levels[k[u]]++;
        slice_used[u / g->sets_per_slice] = true;
        if (g->l2_sets) {
            const uint32_t l2 = (u % g->sets_per_slice) & (g->l2_sets - 1);
            assert_false(l2_used[l2]); /* one planted unit per L2 set */
            l2_used[l2] = true;
        }
    }
    for (unsigned lv = 1; lv <= 8; lv *= 2)
        assert_true(levels[lv] >= n / LLC_MAP_PLANT_LEVELS);
    for (uint32_t s = 0; s < g->slices; s++)
        assert_true(slice_used[s]);
    uint32_t planted = 0;
    for (uint32_t u = 0; u < units; u++)
        planted += k[u] != 0;
    assert_int_equal(planted, n);
    for (uint32_t i = n; i < 2 * n; i++) {
        assert_int_equal(k[scored[i]], 0);
        for (uint32_t j = n; j < i; j++)
            assert_int_not_equal(scored[i], scored[j]);
    }
    /* The swapped pattern of a pair's second trial: the same levels on
     * the idle units, none left on the planted ones, and still one
     * planted unit per L2 set. */
    uint8_t *kb = malloc(units);
    llc_map_plant_swap(units, k, scored, n, kb);
    memset(l2_used, 0, (g->l2_sets ? g->l2_sets : 1) * sizeof(*l2_used));
    uint32_t n_kb = 0;
    for (uint32_t u = 0; u < units; u++)
        n_kb += kb[u] != 0;
    assert_int_equal(n_kb, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(kb[scored[i]], 0);
        assert_int_equal(kb[scored[n + i]], k[scored[i]]);
        if (g->l2_sets) {
            const uint32_t l2 = (scored[n + i] % g->sets_per_slice) & (g->l2_sets - 1);
            assert_false(l2_used[l2]);
            l2_used[l2] = true;
        }
    }
    free(kb);
    free(k);
    free(scored);
    free(l2_used);
    free(slice_used);
}

static void test_plant_pattern(void **state)
{
    (void)state;
    const struct llc_map_geometry intel8 = {.line_size = 64,
                                            .sets_per_slice = 2048,
                                            .slices = 4,
                                            .llc_ways = 16,
                                            .l2_ways = 8,
                                            .l2_sets = 512};
    check_pattern(&intel8, 1024, 512); /* capped by the L2's sets */
    check_pattern(&intel8, 100, 100);
    const struct llc_map_geometry amd32 = {.line_size = 64,
                                           .sets_per_slice = 4096,
                                           .slices = 8,
                                           .llc_ways = 16,
                                           .l2_ways = 16,
                                           .l2_sets = 1024,
                                           .victim_llc = true};
    check_pattern(&amd32, 1024, 1024);
    const struct llc_map_geometry tiny = {
        .line_size = 64, .sets_per_slice = 4, .slices = 1, .llc_ways = 4};
    uint8_t k[4];
    uint32_t scored[8];
    assert_int_equal(llc_map_plant_pattern(&tiny, 2, k, scored), 0); /* under 8 units */
}

/* ---- scoring and choosing ---- */

static struct llc_map_result *fake_result(uint32_t units)
{
    struct llc_map_result *r = calloc(1, sizeof(*r));
    r->units = units;
    r->sweeps = r->sweeps_planned = 2;
    r->measured = calloc(units, sizeof(*r->measured));
    r->misses = calloc(units, sizeof(*r->misses));
    r->accesses = calloc(units, sizeof(*r->accesses));
    r->dwell_s = calloc(units, sizeof(*r->dwell_s));
    r->sweep_misses = calloc(2 * (size_t)units, sizeof(*r->sweep_misses));
    r->sweep_accesses = calloc(2 * (size_t)units, sizeof(*r->sweep_accesses));
    return r;
}

static void test_rate_score(void **state)
{
    (void)state;
    const uint32_t units = 64;
    struct llc_map_result *r = fake_result(units);
    uint8_t k[64] = {0};
    uint32_t scored[32];
    for (uint32_t i = 0; i < 16; i++) {
        scored[i] = i; /* planted 1, 2, 4, 8 */
        k[i] = (uint8_t)(1u << (i % 4));
        scored[16 + i] = 32 + i; /* idle */
    }
    for (uint32_t u = 0; u < units; u++) {
        r->measured[u] = true;
        r->accesses[u] = 1000;
        r->misses[u] = 10 + 20u * k[u] + u % 3; /* target's own: 10..12 */
    }
    struct llc_map_rate_trial t = {.rate = 1e8};
    llc_map_rate_score(r, k, scored, 32, &t);
    assert_true(t.measured);
    assert_true(t.spearman > 0.9);
    assert_true(t.effect > 10);
    /* q over the 48 units without planted lines: 0.010..0.012. */
    assert_true(fabs(t.q_median - 0.011) < 1e-9);
    assert_true(fabs(t.q_max - 0.012) < 1e-9);
    /* Planted sets no different from idle ones: no effect. */
    for (uint32_t u = 0; u < 16; u++)
        r->misses[u] = 10 + u % 3;
    llc_map_rate_score(r, k, scored, 32, &t);
    assert_true(fabs(t.effect) < 0.5);
    /* No scored units: q only. */
    llc_map_rate_score(r, k, scored, 0, &t);
    assert_false(t.measured);
    assert_true(isnan(t.spearman) && fabs(t.q_median - 0.011) < 1e-9);
    /* Nothing measured: not a trial. */
    memset(r->measured, 0, units * sizeof(*r->measured));
    llc_map_rate_score(r, k, scored, 32, &t);
    assert_false(t.measured);
    llc_map_result_free(r);
}

static void test_rate_paired(void **state)
{
    (void)state;
    double d[64];
    uint8_t k[64];
    struct llc_map_rate_trial t;
    /* Increments that grow with k, over a noise of +-0.002: a clean score. */
    for (unsigned i = 0; i < 64; i++) {
        k[i] = (uint8_t)(1u << (i % 4));
        d[i] = 0.01 * k[i] + 0.002 * ((double)(i % 3) - 1);
    }
    llc_map_rate_paired(d, k, 64, &t);
    assert_true(t.score > 0.95);
    assert_true(fabs(t.score_se - sqrt(1.06 / 61)) < 1e-12);
    assert_true(fabs(t.increment[0] - 0.01) < 1e-3 && fabs(t.increment[3] - 0.08) < 1e-3);
    /* Saturated: 1 line already costs what 8 do, increments flat in k
     * up to noise: no score, though every increment is positive. */
    for (unsigned i = 0; i < 64; i++)
        d[i] = 0.05 + 0.002 * ((double)((i * 7) % 5) - 2);
    llc_map_rate_paired(d, k, 64, &t);
    assert_true(fabs(t.score) < 2 * t.score_se);
    assert_true(t.increment[0] > 0.04);
    /* Not monotone: 8 lines below 1 line scores negative. */
    for (unsigned i = 0; i < 64; i++)
        d[i] = 0.1 - 0.01 * k[i];
    llc_map_rate_paired(d, k, 64, &t);
    assert_true(t.score < -0.9);
    /* Too few pairs: no score. */
    llc_map_rate_paired(d, k, 7, &t);
    assert_true(isnan(t.score) && isnan(t.score_se));
}

static void test_rate_score_pair(void **state)
{
    (void)state;
    const uint32_t units = 128;
    struct llc_map_result *a = fake_result(units), *b = fake_result(units);
    uint8_t ka[128] = {0}, kb[128];
    uint32_t scored[64];
    for (uint32_t i = 0; i < 32; i++) {
        scored[i] = i;
        ka[i] = (uint8_t)(1u << (i % 4));
        scored[32 + i] = 64 + i;
    }
    llc_map_plant_swap(units, ka, scored, 32, kb);
    for (uint32_t u = 0; u < units; u++) {
        a->measured[u] = b->measured[u] = true;
        a->accesses[u] = b->accesses[u] = 1000;
        /* The target's own level varies over 0..300 misses, far more than
         * a planted line adds (3 per line): in one map the planted sets
         * hardly stand out; paired, the target's level cancels. */
        const uint64_t own = (u * 37u) % 301u;
        a->misses[u] = own + 3u * ka[u] + (u % 2);
        b->misses[u] = own + 3u * kb[u] + ((u + 1) % 2);
    }
    struct llc_map_rate_trial t = {.rate = 1e8};
    llc_map_rate_score_pair(a, b, ka, kb, scored, 64, &t);
    assert_true(t.measured);
    assert_true(fabs(t.effect) < 0.5);
    assert_true(t.score > 0.9);
    assert_true(fabs(t.increment[0] - 0.003) < 0.0011 && fabs(t.increment[3] - 0.024) < 0.0011);
    /* No planted effect at all: the score is noise. */
    for (uint32_t u = 0; u < units; u++)
        a->misses[u] = b->misses[u] = (u * 37u) % 301u;
    llc_map_rate_score_pair(a, b, ka, kb, scored, 64, &t);
    assert_false(t.score > 2 * t.score_se);
    /* An unmeasured second map: no pairs, no score. */
    memset(b->measured, 0, units * sizeof(*b->measured));
    llc_map_rate_score_pair(a, b, ka, kb, scored, 64, &t);
    assert_false(t.measured);
    llc_map_result_free(a);
    llc_map_result_free(b);
}

static void test_rate_pick(void **state)
{
    (void)state;
    char why[LLC_MAP_TEXT_LEN];
    const double se = 0.03; /* 2 combined se: 0.085 */
    struct llc_map_rate_trial t[4] = {
        {.rate = 1e7,
         .score = 0.95,
         .score_se = se,
         .q_median = 0.97,
         .measured = true}, /* saturated */
        {.rate = 3.2e7, .score = 0.80, .score_se = se, .q_median = 0.40, .measured = true},
        {.rate = 1e8, .score = 0.75, .score_se = se, .q_median = 0.30, .measured = true},
        {.rate = 3.2e8,
         .score = 0.50,
         .score_se = se,
         .q_median = 0.001,
         .measured = true}, /* too weak */
    };
    assert_false(llc_map_rate_safe(&t[0]));
    assert_true(llc_map_rate_safe(&t[1]));
    assert_false(llc_map_rate_safe(&t[3]));
    /* 1e8 is within noise of the best safe one: the default wins the tie. */
    assert_int_equal(llc_map_rate_pick(t, 4, 1e8, why, sizeof(why)), 2);
    assert_non_null(strstr(why, "default preferred"));
    assert_non_null(strstr(why, "2 of 4"));
    /* Beyond noise: the best. */
    t[2].score = 0.70;
    assert_int_equal(llc_map_rate_pick(t, 4, 1e8, why, sizeof(why)), 1);
    /* Tied without the default: the lowest median q. */
    t[2].score = 0.78;
    assert_int_equal(llc_map_rate_pick(t, 4, 5e8, NULL, 0), 2);
    t[2].q_median = 0.45;
    assert_int_equal(llc_map_rate_pick(t, 4, 5e8, NULL, 0), 1);
    /* A larger standard error widens the tie. */
    t[2].score = 0.65;
    assert_int_equal(llc_map_rate_pick(t, 4, 1e8, NULL, 0), 1);
    t[2].score_se = 0.1;
    assert_int_equal(llc_map_rate_pick(t, 4, 1e8, NULL, 0), 2);
    /* None safe: the best of all. */
    t[1].q_median = t[2].q_median = 0.9;
    assert_int_equal(llc_map_rate_pick(t, 4, 1e8, why, sizeof(why)), 0);
    assert_non_null(strstr(why, "none q-safe"));
    /* No score: not a candidate. */
    t[0].score = NAN;
    assert_int_equal(llc_map_rate_pick(t, 4, 1e8, NULL, 0), 2);
    for (int i = 0; i < 4; i++)
        t[i].measured = false;
    assert_int_equal(llc_map_rate_pick(t, 4, 1e8, why, sizeof(why)), -1);
}

static void test_rate_linear_step(void **state)
{
    (void)state;
    double lo = 1e6, hi = 1e10, next = 0;
    struct llc_map_rate_trial t = {.q_median = 0.2, .q_p95 = 0.4, .q_max = 0.9};
    assert_int_equal(llc_map_rate_linear_step(1e8, &t, &lo, &hi, &next), 1);
    assert_true(lo == 1e8 && hi == 1e10 && fabs(next - 1e9) < 1);
    t = (struct llc_map_rate_trial){.q_median = 0.04, .q_p95 = 0.08, .q_max = 0.2};
    assert_int_equal(llc_map_rate_linear_step(1e9, &t, &lo, &hi, &next), 0);
    t = (struct llc_map_rate_trial){
        .q_median = 0.04, .q_p95 = 0.12, .q_max = 0.2}; /* p95 over 0.1 */
    assert_int_equal(llc_map_rate_linear_step(1e9, &t, &lo, &hi, &next), 1);
    assert_true(lo == 1e9 && next > 1e9);
    t = (struct llc_map_rate_trial){
        .q_median = NAN, .q_p95 = NAN, .q_max = NAN}; /* nothing counted */
    assert_int_equal(llc_map_rate_linear_step(1e9, &t, &lo, &hi, &next), -1);
    t = (struct llc_map_rate_trial){.q_median = 0.001, .q_p95 = 0.01, .q_max = 0.05}; /* too weak */
    lo = 1e6;
    hi = 1e10;
    assert_int_equal(llc_map_rate_linear_step(1e9, &t, &lo, &hi, &next), 1);
    assert_true(hi == 1e9 && next < 1e9);
}

/* ---- baseline mask and subtraction ---- */

static void test_baseline_mask(void **state)
{
    (void)state;
    char err[256];
    const uint32_t units = 8;
    struct llc_map_result *base = fake_result(units);
    for (uint32_t u = 0; u < units; u++) {
        base->measured[u] = u != 7;
        base->accesses[u] = 1000;
    }
    base->misses[2] = 11; /* 1.1%: out */
    base->misses[3] = 10; /* 1.0%: kept (the bound is "exceeds") */
    base->misses[4] = 5;  /* kept, subtracted */
    const bool leaders[8] = {[5] = true};
    struct llc_map_baseline *b;
    assert_int_equal(llc_map_baseline_new(base, leaders, &b, err, sizeof(err)), 0);
    assert_int_equal(b->n_baseline, 1);
    assert_int_equal(b->n_leader, 1);
    assert_int_equal(b->n_excluded, 2);
    assert_true(b->why[2] == LLC_MAP_EXCL_BASELINE && b->why[5] == LLC_MAP_EXCL_LEADER &&
                b->why[3] == 0);
    assert_true(isnan(b->q[7]));

    struct llc_map_result *r = fake_result(units);
    for (uint32_t u = 0; u < units; u++) {
        r->measured[u] = true;
        for (unsigned sw = 0; sw < 2; sw++) {
            r->sweep_accesses[sw * units + u] = 2000;
            r->sweep_misses[sw * units + u] = 100 + u;
        }
        r->accesses[u] = 4000;
        r->misses[u] = 200 + 2 * u;
    }
    r->sweep_misses[4] = 3; /* below its baseline of 10: clamped at 0 */
    r->misses[4] = 3 + 104;
    assert_int_equal(llc_map_baseline_apply(b, r, err, sizeof(err)), 0);
    assert_int_equal(r->raw_misses[4], 107);
    assert_int_equal(r->sweep_misses[4], 0);
    assert_int_equal(r->sweep_misses[units + 4], 104 - 10);
    assert_int_equal(r->misses[4], 94);
    assert_int_equal(r->misses[3], 2 * (103 - 20));
    assert_int_equal(r->misses[0], 200); /* no baseline misses */
    for (uint32_t u = 0; u < units; u++)
        assert_int_equal(r->misses[u], r->sweep_misses[u] + r->sweep_misses[units + u]);
    assert_true(r->excluded[2] && r->excluded[5] && !r->excluded[3]);
    /* Excluded sets leave the summary. */
    struct llc_map_summary s;
    llc_map_summarize(r, &s);
    assert_int_equal(s.n, 6);
    struct llc_map_result *wrong = fake_result(4);
    assert_int_equal(llc_map_baseline_apply(b, wrong, err, sizeof(err)), -EINVAL);
    llc_map_result_free(wrong);
    llc_map_result_free(r);
    llc_map_result_free(base);
    llc_map_baseline_free(b);
}

/* A co-runner that pollutes known sets with no target: exactly those sets
 * land in the mask; on DRRIP the leader sets too. */
static void test_sim_baseline_polluted(void **state)
{
    (void)state;
    char err[256];
    struct llc_sim_config cfg;
    assert_int_equal(llc_sim_preset("intel8", &cfg, err, sizeof(err)), 0);
    const uint32_t units = 8192, dirty[5] = {3, 777, 2048 + 100, 4096 + 4000, 8191};
    uint8_t *k = calloc(units, 1);
    for (int i = 0; i < 5; i++)
        k[dirty[i]] = 2;
    struct llc_map_sim_options o;
    llc_map_sim_options_default(&o);
    o.baseline = true;
    o.plant_lines = k;
    o.plant_rate = 1e-5; /* 10^4 touches per line per simulated second */
    struct llc_map_backend *b;
    assert_int_equal(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)), 0);
    const struct llc_map_plan p = {.mode = LLC_MAP_GLOBAL, .dwell_s = 0.01, .sweeps = 1};
    struct llc_map_result *r;
    assert_int_equal(llc_map_run(b, &p, &r, err, sizeof(err)), 0);
    bool *leaders = calloc(units, sizeof(*leaders));
    assert_int_equal(llc_map_sim_leaders(b, leaders), 0);              /* LRU: none */
    assert_int_equal(llc_map_sim_truth(b, NULL, NULL, NULL), -EINVAL); /* no target */
    struct llc_map_baseline *bl;
    assert_int_equal(llc_map_baseline_new(r, leaders, &bl, err, sizeof(err)), 0);
    print_message("baseline: %u sets excluded; q of a dirty set %.3f\n", bl->n_excluded,
                  bl->q[dirty[0]]);
    assert_int_equal(bl->n_baseline, 5);
    for (int i = 0; i < 5; i++)
        assert_true(bl->why[dirty[i]] & LLC_MAP_EXCL_BASELINE);
    llc_map_baseline_free(bl);
    llc_map_result_free(r);
    llc_map_backend_release(b);

    /* DRRIP: 32 leader sets per policy, one of each per constituency of 256. */
    cfg.llc_policy = LLC_SIM_DRRIP;
    o.plant_lines = NULL;
    assert_int_equal(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)), 0);
    assert_int_equal(llc_map_sim_leaders(b, leaders), 64);
    assert_true(leaders[0] && leaders[255]); /* constituency 0: SRRIP at 0, BRRIP at 255 */
    assert_true(leaders[256 + 1] && leaders[256 + 254]);
    llc_map_backend_release(b);
    free(leaders);
    free(k);
}

/* ---- --repeat: a trace target restarts until the map is done ---- */

static void write_trace(const char *path, unsigned lines)
{
    struct llc_trace_info info = {.page_size = 4096};
    snprintf(info.recorder, sizeof(info.recorder), "synthetic");
    struct llc_trace_writer *w;
    char err[256];
    assert_int_equal(llc_trace_writer_open(path, &info, &w, err, sizeof(err)), 0);
    for (unsigned i = 0; i < lines; i++) {
        const struct llc_trace_rec rec = {
            .addr = 0x10000000ULL + 64ULL * i, .size = 8, .kind = LLC_TRACE_LOAD};
        assert_int_equal(llc_trace_writer_put(w, &rec), 0);
    }
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof(err)), 0);
}

static void test_sim_repeat(void **state)
{
    (void)state;
    char err[256], path[] = "/tmp/llcprobe-map-repeat-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_trace(path, 20000);
    struct llc_sim_config cfg;
    assert_int_equal(llc_sim_preset("intel8", &cfg, err, sizeof(err)), 0);
    struct llc_map_sim_options o;
    llc_map_sim_options_default(&o);
    o.trace = path;
    /* Four times the trace per sweep, two sweeps. */
    const struct llc_map_plan p = {.mode = LLC_MAP_GLOBAL, .dwell_s = 80000 / 1e7, .sweeps = 2};
    struct llc_map_backend *b;
    struct llc_map_result *r;
    assert_int_equal(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)), 0);
    assert_int_equal(llc_map_run(b, &p, &r, err, sizeof(err)), 0);
    assert_false(r->complete); /* the trace ends in the first sweep */
    assert_int_equal(llc_map_sim_target_runs(b), 1);
    llc_map_result_free(r);
    llc_map_backend_release(b);
    o.repeat = true;
    assert_int_equal(llc_map_backend_sim(&cfg, &o, &b, err, sizeof(err)), 0);
    assert_int_equal(llc_map_run(b, &p, &r, err, sizeof(err)), 0);
    assert_true(r->complete);
    print_message("repeat: the target ran %u times\n", llc_map_sim_target_runs(b));
    assert_true(llc_map_sim_target_runs(b) >= 8);
    double *occ = malloc(8192 * sizeof(*occ));
    assert_int_equal(llc_map_sim_truth(b, occ, NULL, NULL), 0);
    double sum = 0;
    for (int u = 0; u < 8192; u++)
        sum += occ[u];
    assert_true(sum > 0); /* the replayed target is the one the truth follows */
    free(occ);
    llc_map_result_free(r);
    llc_map_backend_release(b);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plant_pattern), cmocka_unit_test(test_rate_score),
        cmocka_unit_test(test_rate_paired),   cmocka_unit_test(test_rate_score_pair),
        cmocka_unit_test(test_rate_pick),     cmocka_unit_test(test_rate_linear_step),
        cmocka_unit_test(test_baseline_mask), cmocka_unit_test(test_sim_baseline_polluted),
        cmocka_unit_test(test_sim_repeat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
