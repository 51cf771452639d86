/* Whole-program co-runners on the timeline (docs/METHODS.md §12.7): a
 * cyclic victim V of 1400..3400 lines beside a program J that alternates a
 * phase of 200 lines and one of 20,000, interleaved 1 : 1, in a fully
 * associative LRU cache of 4000 lines, against an exact LRU stack
 * simulation of the merged stream.
 *  - Short phase runs (600 and 1500 references, less than T*): V's lines
 *    wait across J's phase changes. With J's whole-program footprint the
 *    model must come within 0.03 of the simulation wherever V's miss ratio
 *    is near 0 or 1, and halve the mean error of each phase alone (which
 *    has V fit beside the small phase and thrash beside the large one).
 *    Near V's cliff (2600 lines) a reuse window's share of J's large phase
 *    decides hit or miss and the mean footprint cannot: both are off there
 *    (printed).
 *  - Long phase runs (200,000 references, far more than T*): nothing is
 *    marked and both give the same figures.
 * And J alone in a 16-way cache (docs/METHODS.md §12.7, a phase's reuses
 * across its other phases), against an exact simulation of LRU in sets
 * (lines placed by a hash): with runs long enough for the large phase to
 * push the small one out, every run of the small phase starts by fetching
 * its 200 lines again; each phase alone prices those reuses with the
 * small phase's footprint (they hit), the lines the other phase adds make
 * them miss. The model with them must halve the error of the small
 * phase's miss ratio and of J's.
 * Each program's reuse histograms are exact (every reference; a phase's
 * are the references in its windows, their distances in the program's own
 * references, as a profile records them). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/contention.h"
#include "llcprobe/statmodel.h"

#define LINES_SMALL 200u
#define LINES_LARGE 20000u
#define CAPACITY 4000.0
#define ID_J 1000000u /* J's lines are numbered from here */

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A model from the references `own[i]` with sel[i] (NULL: all) of a
 * program's reuse distances reuse[0..n). */
static struct llc_statmodel_model *model_of(const uint64_t *reuse, const bool *sel, size_t n)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++)
        if (!sel || sel[i])
            assert_int_equal(llc_statmodel_hist_add(h, reuse[i], 1, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
    llc_statmodel_hist_destroy(h);
    return m;
}

struct outcome {
    double sim_v, sim_j;     /* exact, after the first 3 of V's cycles */
    double local_v, whole_v; /* the model's, each phase's own / whole program */
    double local_j, whole_j;
    size_t whole_segments;
};

static void run_case(size_t lines_v, size_t run, size_t windows, struct outcome *o)
{
    char err[LLC_ERRLEN];
    const size_t n = run * windows; /* references of each program */
    uint64_t *v = malloc(n * sizeof(uint64_t)), *j = malloc(n * sizeof(uint64_t)),
             *merged = malloc(2 * n * sizeof(uint64_t)), *stack = malloc(2 * n * sizeof(uint64_t)),
             *rv = malloc(n * sizeof(uint64_t)), *rj = malloc(n * sizeof(uint64_t));
    bool *small = malloc(n * sizeof(bool)), *large = malloc(n * sizeof(bool));
    assert_true(v && j && merged && stack && rv && rj && small && large);
    uint64_t seed = 7;
    for (size_t i = 0; i < n; i++) {
        small[i] = (i / run) % 2 == 0;
        large[i] = !small[i];
        v[i] = i % lines_v;
        j[i] = ID_J + (small[i] ? next_u64(&seed) % LINES_SMALL
                                : LINES_SMALL + next_u64(&seed) % LINES_LARGE);
        merged[2 * i] = v[i];
        merged[2 * i + 1] = j[i];
    }
    assert_int_equal(llc_statmodel_exact_distances(merged, 2 * n, NULL, stack, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_exact_distances(v, n, rv, NULL, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_exact_distances(j, n, rj, NULL, err, sizeof err), 0);
    double miss[2] = {0, 0}, refs[2] = {0, 0};
    for (size_t i = 6 * lines_v; i < 2 * n; i++) {
        refs[i % 2]++;
        miss[i % 2] += stack[i] == LLC_STATMODEL_COLD || (double)stack[i] >= CAPACITY;
    }
    o->sim_v = miss[0] / refs[0];
    o->sim_j = miss[1] / refs[1];

    struct llc_statmodel_model *mv = model_of(rv, NULL, n), *ms = model_of(rj, small, n),
                               *ml = model_of(rj, large, n), *mw = model_of(rj, NULL, n);
    /* api 1, CPI 1, no miss penalty: both run at 3e9 references/s, 1 : 1
     * as merged; no cold start (references 0): the simulated figures skip
     * the warm-up */
    const struct llc_contention_phase pv = {.model = mv, .api = 1, .cpi0 = 1, .gamma = 1};
    const struct llc_contention_phase pj[3] = {{.model = ms, .api = 1, .cpi0 = 1, .gamma = 1},
                                               {.model = ml, .api = 1, .cpi0 = 1, .gamma = 1},
                                               {.model = mw, .api = 1, .cpi0 = 1, .gamma = 1}};
    int *wj = malloc(windows * sizeof(int)), *wv = calloc(windows, sizeof(int));
    double *ins = malloc(windows * sizeof(double));
    assert_true(wj && wv && ins);
    for (size_t w = 0; w < windows; w++) {
        wj[w] = (int)(w % 2);
        ins[w] = (double)run;
    }
    struct llc_contention_prog progs[2] = {{.freq_hz = 3e9,
                                            .phases = &pv,
                                            .n_phases = 1,
                                            .window_phase = wv,
                                            .window_instructions = ins,
                                            .n_windows = windows},
                                           {.freq_hz = 3e9,
                                            .phases = pj,
                                            .n_phases = 3,
                                            .window_phase = wj,
                                            .window_instructions = ins,
                                            .n_windows = windows}};
    struct llc_contention_config cfg;
    llc_contention_config_default(&cfg);
    cfg.capacity = CAPACITY;
    cfg.policy = LLC_CONTENTION_LRU;
    cfg.coupling = false;
    cfg.skew = false;
    cfg.assoc = false;
    struct llc_contention_run *r = NULL;
    assert_int_equal(llc_contention_timeline(progs, 2, &cfg, &r, err, sizeof err), 0);
    o->local_v = r->summary[0].miss_ratio;
    o->local_j = r->summary[1].miss_ratio;
    assert_int_equal(r->whole_segments, 0);
    llc_contention_run_free(r);
    progs[1].whole = &pj[2];
    assert_int_equal(llc_contention_timeline(progs, 2, &cfg, &r, err, sizeof err), 0);
    o->whole_v = r->summary[0].miss_ratio;
    o->whole_j = r->summary[1].miss_ratio;
    o->whole_segments = r->whole_segments;
    llc_contention_run_free(r);
    /* a whole phase that is not one of the program's phases is refused */
    const struct llc_contention_phase stray = pj[2];
    progs[1].whole = &stray;
    assert_int_equal(llc_contention_timeline(progs, 2, &cfg, &r, err, sizeof err), -EINVAL);
    printf(
        "  V of %zu lines, runs of %6zu: V miss ratio sim %.4f, phase-local %.4f, whole %.4f; J sim %.4f, "
        "phase-local %.4f, whole %.4f; %zu segments marked\n",
        lines_v, run, o->sim_v, o->local_v, o->whole_v, o->sim_j, o->local_j, o->whole_j,
        o->whole_segments);
    llc_statmodel_release(mv);
    llc_statmodel_release(ms);
    llc_statmodel_release(ml);
    llc_statmodel_release(mw);
    free(wj);
    free(wv);
    free(ins);
    free(v);
    free(j);
    free(merged);
    free(stack);
    free(rv);
    free(rj);
    free(small);
    free(large);
}

static void short_runs_see_the_whole_program(void **state)
{
    (void)state;
    static const size_t lines_v[] = {1400, 2200, 2600, 3000, 3400}, runs[] = {600, 1500};
    double err_whole = 0, err_local = 0, worst_clear = 0;
    size_t npts = 0;
    for (size_t a = 0; a < LLC_ARRAY_LEN(lines_v); a++)
        for (size_t b = 0; b < LLC_ARRAY_LEN(runs); b++) {
            struct outcome o;
            run_case(lines_v[a], runs[b], 120000 / runs[b], &o);
            assert_true(o.whole_segments > 0);
            /* J's own figures stay its phases' */
            assert_true(fabs(o.whole_j - o.local_j) <= 1e-9);
            err_whole += fabs(o.whole_v - o.sim_v);
            err_local += fabs(o.local_v - o.sim_v);
            npts++;
            /* away from V's cliff, where a reuse window's share of J's
             * large phase decides hit or miss */
            if (fabs(o.sim_v - 0.5) > 0.45)
                worst_clear = fmax(worst_clear, fabs(o.whole_v - o.sim_v));
        }
    printf("  mean |model - sim| of V: whole %.4f, phase-local %.4f; whole, away from the "
           "cliff: worst %.4f (tolerance 0.03)\n",
           err_whole / npts, err_local / npts, worst_clear);
    assert_true(worst_clear <= 0.03);
    assert_true(err_whole < 0.5 * err_local);
}

static void long_runs_stay_phase_local(void **state)
{
    (void)state;
    struct outcome o;
    run_case(3000, 200000, 4, &o);
    assert_int_equal(o.whole_segments, 0);
    assert_true(o.whole_v == o.local_v && o.whole_j == o.local_j);
}

#define WAYS 16u

/* Misses of an exact LRU simulation in CAPACITY / WAYS sets, a line's set
 * from a hash of its number; per phase of sel (0/1), references from
 * `from` on. */
static void assoc_lru(const uint64_t *trace, const bool *small, size_t n, size_t from, double *miss,
                      double *refs)
{
    const size_t sets = (size_t)CAPACITY / WAYS;
    uint64_t *tag = malloc(sets * WAYS * sizeof(uint64_t)), *stamp = calloc(sets * WAYS, 8);
    assert_true(tag && stamp);
    for (size_t k = 0; k < sets * WAYS; k++)
        tag[k] = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = trace[i];
        const size_t set = (size_t)(next_u64(&h) % sets);
        uint64_t *t = &tag[set * WAYS], *st = &stamp[set * WAYS];
        size_t way = WAYS, victim = 0;
        for (size_t w = 0; w < WAYS; w++) {
            if (t[w] == trace[i])
                way = w;
            if (st[w] < st[victim])
                victim = w;
        }
        const bool hit = way < WAYS;
        if (!hit) {
            way = victim;
            t[way] = trace[i];
        }
        st[way] = i + 1;
        if (i >= from) {
            refs[small[i] ? 0 : 1]++;
            miss[small[i] ? 0 : 1] += !hit;
        }
    }
    free(tag);
    free(stamp);
}

/* Phase k's miss ratio over a run's tuples (program 0). */
static double phase_miss_ratio(const struct llc_contention_run *r, int k)
{
    double m = 0, a = 0;
    for (size_t t = 0; t < r->n_tuples; t++)
        if (r->tuples[t].phase[0] == k) {
            m += r->tuples[t].seconds * r->tuples[t].share[0].miss_rate;
            a += r->tuples[t].seconds * r->tuples[t].share[0].rate;
        }
    return a > 0 ? m / a : NAN;
}

/* J of runs `run` long, alternating its phases (small first), 320,000
 * references: its trace, which phase each reference is in, its models
 * (small phase, large phase, whole program: exact histograms) and
 * windows (one per run). */
struct jprog {
    size_t run, windows, n;
    uint64_t *trace;
    bool *small, *large;
    struct llc_statmodel_model *m[3];
    int *wj;
    double *ins;
};

static void jprog_make(size_t run, struct jprog *p)
{
    char err[LLC_ERRLEN];
    p->run = run;
    p->windows = 320000 / run;
    p->n = run * p->windows;
    const size_t n = p->n;
    uint64_t *rj = malloc(n * sizeof(uint64_t));
    p->trace = malloc(n * sizeof(uint64_t));
    p->small = malloc(n * sizeof(bool));
    p->large = malloc(n * sizeof(bool));
    p->wj = malloc(p->windows * sizeof(int));
    p->ins = malloc(p->windows * sizeof(double));
    assert_true(rj && p->trace && p->small && p->large && p->wj && p->ins);
    uint64_t seed = 11;
    for (size_t i = 0; i < n; i++) {
        p->small[i] = (i / run) % 2 == 0;
        p->large[i] = !p->small[i];
        p->trace[i] = p->small[i] ? next_u64(&seed) % LINES_SMALL
                                  : LINES_SMALL + next_u64(&seed) % LINES_LARGE;
    }
    assert_int_equal(llc_statmodel_exact_distances(p->trace, n, rj, NULL, err, sizeof err), 0);
    p->m[0] = model_of(rj, p->small, n);
    p->m[1] = model_of(rj, p->large, n);
    p->m[2] = model_of(rj, NULL, n);
    for (size_t w = 0; w < p->windows; w++) {
        p->wj[w] = (int)(w % 2);
        p->ins[w] = (double)run;
    }
    free(rj);
}

static void jprog_free(struct jprog *p)
{
    for (size_t k = 0; k < 3; k++)
        llc_statmodel_release(p->m[k]);
    free(p->trace);
    free(p->small);
    free(p->large);
    free(p->wj);
    free(p->ins);
}

/* J's excess per phase, with the phases' miss ratios mr (NULL: none). */
static void jprog_excess(const struct jprog *p, const double *mr, struct llc_contention_excess *ex)
{
    char err[LLC_ERRLEN];
    for (size_t k = 0; k < 2; k++)
        assert_int_equal(
            llc_contention_excess_build((const struct llc_statmodel_model *const *)p->m, 3, p->wj,
                                        p->ins, p->windows, k, mr, &ex[k], err, sizeof err),
            0);
}

/* J alone on the timeline with cfg, phases with excess ex (NULL: none)
 * and, with caps, their lines (as predict gives them); jprog_predict: the
 * small phase's miss ratio and J's. */
static int jprog_timeline(const struct jprog *p, const struct llc_contention_config *cfg,
                          const struct llc_contention_excess *ex, bool caps,
                          struct llc_contention_run **r)
{
    char err[LLC_ERRLEN];
    struct llc_contention_phase pj[3] = {{.model = p->m[0],
                                          .api = 1,
                                          .cpi0 = 1,
                                          .gamma = 1,
                                          .lines = caps ? LINES_SMALL : 0,
                                          .excess = ex ? &ex[0] : NULL},
                                         {.model = p->m[1],
                                          .api = 1,
                                          .cpi0 = 1,
                                          .gamma = 1,
                                          .lines = caps ? LINES_LARGE : 0,
                                          .excess = ex ? &ex[1] : NULL},
                                         {.model = p->m[2],
                                          .api = 1,
                                          .cpi0 = 1,
                                          .gamma = 1,
                                          .lines = caps ? LINES_SMALL + LINES_LARGE : 0}};
    const struct llc_contention_prog prog = {.freq_hz = 3e9,
                                             .phases = pj,
                                             .n_phases = 3,
                                             .window_phase = p->wj,
                                             .window_instructions = p->ins,
                                             .n_windows = p->windows};
    return llc_contention_timeline(&prog, 1, cfg, r, err, sizeof err);
}

static void jprog_predict(const struct jprog *p, const struct llc_contention_config *cfg,
                          const struct llc_contention_excess *ex, bool caps, double *small,
                          double *whole)
{
    struct llc_contention_run *r = NULL;
    assert_int_equal(jprog_timeline(p, cfg, ex, caps, &r), 0);
    *small = phase_miss_ratio(r, 0);
    *whole = r->summary[0].miss_ratio;
    llc_contention_run_free(r);
}

static void reuses_across_phases(void **state)
{
    (void)state;
    static const size_t runs[] = {4000, 8000, 16000};
    double err_with = 0, err_without = 0, err_with_j = 0, err_without_j = 0;
    for (size_t c = 0; c < LLC_ARRAY_LEN(runs); c++) {
        struct jprog jp;
        jprog_make(runs[c], &jp);
        double miss[2] = {0, 0}, refs[2] = {0, 0};
        assoc_lru(jp.trace, jp.small, jp.n, 2 * jp.run, miss, refs);
        const double sim_small = miss[0] / refs[0],
                     sim_j = (miss[0] + miss[1]) / (refs[0] + refs[1]);
        struct llc_contention_excess ex[2];
        jprog_excess(&jp, NULL, ex);
        struct llc_contention_config cfg;
        llc_contention_config_default(&cfg);
        cfg.capacity = CAPACITY;
        cfg.ways = WAYS;
        cfg.policy = LLC_CONTENTION_LRU;
        cfg.coupling = false;
        cfg.skew = false;
        cfg.assoc = true;
        double with_small, with_j, without_small, without_j, capped_small, capped_j;
        jprog_predict(&jp, &cfg, ex, false, &with_small, &with_j);
        jprog_predict(&jp, &cfg, NULL, false, &without_small, &without_j);
        /* the phases' lines as caps (their true footprints) take none of it
         * away: a phase at its cap still meets the other phases' lines */
        jprog_predict(&jp, &cfg, ex, true, &capped_small, &capped_j);
        printf("  J alone, runs of %5zu: small phase sim %.4f, model %.4f (each phase alone "
               "%.4f, capped %.4f); J sim %.4f, model %.4f (%.4f)\n",
               jp.run, sim_small, with_small, without_small, capped_small, sim_j, with_j,
               without_j);
        assert_true(fabs(capped_small - with_small) <= 0.003);
        err_with += fabs(with_small - sim_small);
        err_without += fabs(without_small - sim_small);
        err_with_j += fabs(with_j - sim_j);
        err_without_j += fabs(without_j - sim_j);
        jprog_free(&jp);
    }
    printf("  mean |model - sim|: small phase %.4f (each phase alone %.4f), J %.4f (%.4f)\n",
           err_with / 3, err_without / 3, err_with_j / 3, err_without_j / 3);
    assert_true(err_with < 0.5 * err_without);
    assert_true(err_with_j < 0.5 * err_without_j);
}

/* A fully associative random-replacement cache of CAPACITY lines over
 * J's trace (lines below LINES_SMALL + LINES_LARGE): misses and
 * references per phase from reference `from` on. */
static void random_fa(const uint64_t *trace, const bool *small, size_t n, size_t from, double *miss,
                      double *refs)
{
    const size_t cap = (size_t)CAPACITY, ids = LINES_SMALL + LINES_LARGE;
    size_t *slot = malloc(ids * sizeof(size_t)), *line = malloc(cap * sizeof(size_t)), used = 0;
    assert_true(slot && line);
    for (size_t k = 0; k < ids; k++)
        slot[k] = SIZE_MAX;
    uint64_t seed = 5;
    for (size_t i = 0; i < n; i++) {
        const size_t id = (size_t)trace[i];
        const bool hit = slot[id] != SIZE_MAX;
        if (!hit) {
            size_t s = used;
            if (used < cap)
                used++;
            else {
                s = (size_t)(next_u64(&seed) % cap);
                slot[line[s]] = SIZE_MAX;
            }
            line[s] = id;
            slot[id] = s;
        }
        if (i >= from) {
            refs[small[i] ? 0 : 1]++;
            miss[small[i] ? 0 : 1] += !hit;
        }
    }
    free(slot);
    free(line);
}

/* The same program J under random replacement (docs/METHODS.md §12.7):
 * the large phase's misses evict the small phase's lines between its
 * runs. Each phase alone prices the small phase's reuses across them
 * with its own misses (none: its 200 lines fit); the other phases'
 * misses, weighted by their evictions per reference (each phase alone,
 * then in J's timeline on those, as predict takes them), make them miss.
 * The model with them must halve the error of the small phase's miss
 * ratio. J's is printed, not checked: the model keeps pricing the large
 * phase's reuses across the small runs at the large phase's own rate
 * (where the other phases evict less, the phase's own rate stays), which
 * over-prices them by 0.09 here with or without the excess, and the small
 * phase's added misses move J further from the simulation. */
static void random_reuses_across_phases(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    static const size_t runs[] = {2000, 4000, 16000};
    double err_with = 0, err_without = 0, err_with_j = 0, err_without_j = 0;
    for (size_t c = 0; c < LLC_ARRAY_LEN(runs); c++) {
        struct jprog jp;
        jprog_make(runs[c], &jp);
        double miss[2] = {0, 0}, refs[2] = {0, 0};
        random_fa(jp.trace, jp.small, jp.n, 2 * jp.run, miss, refs);
        const double sim_small = miss[0] / refs[0],
                     sim_j = (miss[0] + miss[1]) / (refs[0] + refs[1]);
        struct llc_contention_config cfg;
        llc_contention_config_default(&cfg);
        cfg.capacity = CAPACITY;
        cfg.policy = LLC_CONTENTION_RANDOM;
        cfg.coupling = false;
        cfg.skew = false;
        double ev[3] = {0, 0, 0};
        for (size_t k = 0; k < 2; k++) {
            const struct llc_contention_phase ph = {.model = jp.m[k],
                                                    .api = 1,
                                                    .cpi0 = 1,
                                                    .gamma = 1,
                                                    .lines = k ? LINES_LARGE : LINES_SMALL};
            assert_int_equal(
                llc_contention_evictions_alone(&ph, 3e9, &cfg, &ev[k], err, sizeof err), 0);
        }
        /* the small phase fits: alone it evicts nothing; the large one
         * nearly misses every reference */
        assert_true(ev[0] == 0);
        assert_true(ev[1] > 0.7 && ev[1] < 1);
        /* then, as predict does, in J's own timeline on those (the small
         * phase, at its cap, still evicts nothing: the lines it fetches
         * again count in its misses, not in its insertions) */
        struct llc_contention_excess first[2], ex[2];
        jprog_excess(&jp, ev, first);
        struct llc_contention_run *r = NULL;
        assert_int_equal(jprog_timeline(&jp, &cfg, first, true, &r), 0);
        assert_int_equal(llc_contention_evictions_in(r, 0, 2, cfg.capacity, ev), 0);
        llc_contention_run_free(r);
        assert_true(ev[0] == 0);
        jprog_excess(&jp, ev, ex);
        double with_small, with_j, without_small, without_j;
        jprog_predict(&jp, &cfg, ex, true, &with_small, &with_j);
        jprog_predict(&jp, &cfg, NULL, true, &without_small, &without_j);
        printf("  J alone, random, runs of %5zu: small phase sim %.4f, model %.4f (each phase "
               "alone %.4f); J sim %.4f, model %.4f (%.4f)\n",
               jp.run, sim_small, with_small, without_small, sim_j, with_j, without_j);
        err_with += fabs(with_small - sim_small);
        err_without += fabs(without_small - sim_small);
        err_with_j += fabs(with_j - sim_j);
        err_without_j += fabs(without_j - sim_j);
        jprog_free(&jp);
    }
    printf("  mean |model - sim|, random: small phase %.4f (each phase alone %.4f), J %.4f "
           "(%.4f)\n",
           err_with / 3, err_without / 3, err_with_j / 3, err_without_j / 3);
    assert_true(err_with < 0.5 * err_without);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_runs_see_the_whole_program),
        cmocka_unit_test(long_runs_stay_phase_local),
        cmocka_unit_test(reuses_across_phases),
        cmocka_unit_test(random_reuses_across_phases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
