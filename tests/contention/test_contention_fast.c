/* statmodel/contention's fast paths against the direct computation: the
 * random model's R (exp carried from edge to edge, the stop at 40
 * lifetimes, the age cut in the same loop) against a bucket-by-bucket sum
 * with an exp per bucket over the whole table (and R at 0 by search), and
 * the set-associative LRU grid (bucket cursors) against the same grid on llc_statmodel_footprint
 * and llc_statmodel_tail, for warm, young and capped parties; the solo
 * cache of a study against the timeline without it, and the accelerated
 * coupling against its fixed point. */
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

/* R directly: every bucket, exp(-k e) afresh, the same quadrature per
 * bucket (point masses of width 1; a bucket's mean of 1 - e^(-kt), at its
 * middle when k w < 1e-3: the whole mean for a warm party past 1e-9, the
 * middle always for a young one). */
static double direct_r(const struct llc_statmodel_model *m, double x, double c_log, double age,
                       double *dr)
{
    const double *e, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(m, &e, &q, &f, &ne, &slope);
    const double k = c_log * x;
    double r = q[ne - 1], d = 0;
    for (size_t i = 0; i + 1 < ne; i++) {
        const double lo = e[i], w = e[i + 1] - lo, mass = q[i] - q[i + 1];
        if (!(mass > 0))
            continue;
        if (lo >= age) {
            r += mass;
            continue;
        }
        const double el = exp(-k * lo);
        if (w <= 1) {
            r += mass * (1 - el);
            d += mass * c_log * lo * el;
            continue;
        }
        const double top = fmin(e[i + 1], age), span = top - lo, frac = span / w;
        r += mass * (1 - frac);
        if (k * span < 1e-3) {
            const double mid = lo + 0.5 * span;
            const double mean = isfinite(age) || k * span < 1e-9
                                    ? -expm1(-k * mid)
                                    : 1 - (el - exp(-k * top)) / (k * span);
            r += mass * frac * mean;
            d += mass * frac * c_log * mid * exp(-k * mid);
        } else {
            const double eb = exp(-k * top);
            r += mass * frac * (1 - (el - eb) / (k * span));
            d += mass * frac * c_log *
                 ((lo / k + 1 / (k * k)) * el - (top / k + 1 / (k * k)) * eb) / span;
        }
    }
    *dr = d;
    return r;
}

static void random_r_matches_direct(void **state)
{
    (void)state;
    struct llc_statmodel_model *m = synth_model_power(0.05);
    const double cap = 131072, c_log = -log1p(-1 / cap);
    const double ages[] = {INFINITY, 300.5, 1024, 5000.25, 3e6};
    size_t cut = 0;
    for (size_t a = 0; a < LLC_ARRAY_LEN(ages); a++)
        for (double x = 1e-3; x < 1e5; x *= 3.7) {
            double df, dd;
            const double fast = sm_contention_random_r(m, x, c_log, ages[a], &df);
            const double direct = direct_r(m, x, c_log, ages[a], &dd);
            /* exp carried over ~1,500 edges drifts by ~1e-13, which
             * 1 - E / (k w) amplifies where k w is small: 1e-10 of R */
            if (!(fabs(fast - direct) <= 1e-10 * direct))
                fail_msg("age %g x %g: R %.17g, direct %.17g", ages[a], x, fast, direct);
            if (!(fabs(df - dd) <= 1e-9 * fabs(dd) + 1e-300))
                fail_msg("age %g x %g: dR/dx %.17g, direct %.17g", ages[a], x, df, dd);
            cut += c_log * x * (1u << 22) > 40; /* the stop at 40 lifetimes was taken */
        }
    /* x = 0 without the derivative: a search, the loop's sum exactly */
    for (size_t a = 0; a < LLC_ARRAY_LEN(ages); a++) {
        double df, dd;
        const double r0 = sm_contention_random_r(m, 0, c_log, ages[a], NULL);
        assert_true(r0 == sm_contention_random_r(m, 0, c_log, ages[a], &df));
        const double direct = direct_r(m, 0, c_log, ages[a], &dd);
        if (!(fabs(r0 - direct) <= 1e-12 * direct))
            fail_msg("age %g x 0: R %.17g, direct %.17g", ages[a], r0, direct);
    }
    assert_true(cut > 0);
    llc_statmodel_release(m);
}

/* The shifted sum's shortcuts (only first touches miss): at x = 0 without
 * the derivative, and where the shift reaches past every distance before
 * the age, at any x; each against the loop it skips (x = 0 with the
 * derivative, and a shift just below the reach, which the loop takes). */
static void random_r_shifted_shortcuts(void **state)
{
    (void)state;
    struct llc_statmodel_model *m = synth_model_power(0.05);
    const double cap = 131072, c_log = -log1p(-1 / cap);
    const double ages[] = {INFINITY, 300.5, 1024, 5000.25, 3e6};
    const double shifts[] = {64, 700, 4096};
    for (size_t a = 0; a < LLC_ARRAY_LEN(ages); a++) {
        for (size_t s = 0; s < LLC_ARRAY_LEN(shifts); s++) {
            double d;
            const double fast =
                sm_contention_random_r_shifted(m, 0, c_log, ages[a], shifts[s], NULL);
            const double loop = sm_contention_random_r_shifted(m, 0, c_log, ages[a], shifts[s], &d);
            if (!(fabs(fast - loop) <= 1e-12 * loop))
                fail_msg("age %g shift %g x 0: R %.17g, loop %.17g", ages[a], shifts[s], fast,
                         loop);
            assert_true(d >= 0);
        }
        /* a young party whose L2 holds its whole reach: R flat in x */
        if (isfinite(ages[a])) {
            const double flat = sm_contention_random_r_shifted(m, 0, c_log, ages[a], ages[a], NULL);
            for (double x = 1e-3; x < 1e5; x *= 7.3) {
                double d = 1;
                const double r = sm_contention_random_r_shifted(m, x, c_log, ages[a], ages[a], &d);
                assert_true(r == flat && d == 0);
                /* the loop, one distance of room below: R rises from there */
                const double near =
                    sm_contention_random_r_shifted(m, x, c_log, ages[a], ages[a] - 1.5, NULL);
                assert_true(near >= flat - 1e-12 && near - flat < 1e-2);
            }
        }
    }
    llc_statmodel_release(m);
}

/* ---- the set-associative LRU grid, directly ------------------------------- */

static double ref_tail(const struct llc_contention_party *p, double d)
{
    if (!p->cold)
        return llc_statmodel_tail(p->model, d);
    const double c = llc_statmodel_model_dangling(p->model) / llc_statmodel_model_total(p->model);
    const double k = (1 - p->steady) / (1 - c), x = p->age > 0 && d > p->age ? p->age : d;
    return fmin(1, p->steady + k * (llc_statmodel_tail(p->model, x) - c));
}

static double ref_fp(const struct llc_contention_party *p, double d)
{
    if (!p->cold)
        return llc_statmodel_footprint(p->model, d);
    const double c = llc_statmodel_model_dangling(p->model) / llc_statmodel_model_total(p->model);
    const double k = (1 - p->steady) / (1 - c), x = p->age > 0 && d > p->age ? p->age : d;
    return p->steady * x + k * (llc_statmodel_footprint(p->model, x) - c * x);
}

static double ref_pois(double x, unsigned w)
{
    double term = exp(-x), sum = term;
    for (unsigned k = 1; k < w; k++) {
        term *= x / k;
        sum += term;
    }
    return x > 0 ? fmin(1, sum) : 1;
}

/* docs/METHODS.md §12.2's grid (ratio 1.15, midpoint rule in G) on the
 * statmodel functions, every party profiled with rate > 0 and weight 1. */
static void ref_assoc(const struct llc_contention_party *p, size_t n, double c, unsigned ways,
                      double *mr, double *occ)
{
    const double sets = c / ways;
    double sum = 0, fprev[4] = {0}, qprev[4], g = 0, gprev = 0;
    for (size_t i = 0; i < n; i++) {
        sum += p[i].gamma * p[i].rate;
        qprev[i] = ref_tail(&p[i], 0);
        mr[i] = occ[i] = 0;
    }
    for (double t = 0.05 * ways * sets / sum;; t *= 1.15) {
        double fnow[4], qnow[4];
        bool grows = false;
        g = 0;
        for (size_t i = 0; i < n; i++) {
            const double d = p[i].gamma * p[i].rate * t, u = ref_fp(&p[i], d);
            fnow[i] = p[i].lines_max > 0 && u > p[i].lines_max ? p[i].lines_max : u;
            qnow[i] = ref_tail(&p[i], d);
            g += fnow[i];
            const double *e, *q, *f;
            size_t ne;
            double slope;
            llc_statmodel_footprint_table(p[i].model, &e, &q, &f, &ne, &slope);
            if (!(p[i].lines_max > 0 && u >= p[i].lines_max) &&
                !(p[i].cold && p[i].age > 0 && d >= p[i].age))
                grows |= (p[i].cold ? p[i].steady > 0 : slope > 0) || d < e[ne - 1];
        }
        const double ph = ref_pois(0.5 * (gprev + g) / sets, ways);
        for (size_t i = 0; i < n; i++) {
            occ[i] += ph * (fnow[i] - fprev[i]);
            mr[i] += (1 - ph) * (qprev[i] - qnow[i]);
            fprev[i] = fnow[i];
            qprev[i] = qnow[i];
        }
        gprev = g;
        if (ref_pois(g / sets, ways) < 1e-12 || !grows)
            break;
    }
    const double pend = ref_pois(gprev / sets, ways);
    for (size_t i = 0; i < n; i++) {
        const double qinf = ref_tail(&p[i], INFINITY);
        mr[i] = fmin(1, mr[i] + (1 - pend) * fmax(0, qprev[i] - qinf) + qinf);
    }
}

static void assoc_grid_matches_direct(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = synth_model_power(0.02), *b = synth_model_power(0.3);
    const double cap = 16384;
    const struct llc_contention_party base[3] = {
        {.model = a, .rate = 2e8, .gamma = 1, .weight = 1},
        {.model = b, .rate = 5e7, .gamma = 1.3, .weight = 1, .lines_max = 9000},
        {.model = a,
         .rate = 1e8,
         .gamma = 1,
         .weight = 1,
         .cold = true,
         .steady = llc_contention_steady_share(a, 0, 4e6),
         .age = 20000},
    };
    /* warm pair, warm + young, all three */
    const size_t sizes[] = {2, 3};
    for (size_t s = 0; s < LLC_ARRAY_LEN(sizes); s++)
        for (unsigned ways = 4; ways <= 16; ways *= 2) {
            const size_t n = sizes[s];
            struct llc_contention_share out[3];
            struct llc_contention_info info;
            double mr[3], occ[3];
            assert_int_equal(
                llc_contention_equilibrium_assoc(base, n, cap, ways, out, &info, err, sizeof err),
                0);
            ref_assoc(base, n, cap, ways, mr, occ);
            for (size_t i = 0; i < n; i++) {
                if (!(fabs(out[i].miss_ratio - mr[i]) <= 1e-12 * mr[i]))
                    fail_msg("%zu parties, %u ways, party %zu: miss ratio %.17g, direct %.17g", n,
                             ways, i, out[i].miss_ratio, mr[i]);
                if (!(fabs(out[i].occupancy - occ[i]) <= 1e-12 * cap))
                    fail_msg("%zu parties, %u ways, party %zu: occupancy %.17g, direct %.17g", n,
                             ways, i, out[i].occupancy, occ[i]);
            }
        }
    llc_statmodel_release(a);
    llc_statmodel_release(b);
}

/* Two cold-start programs of two phases on an 8-way cache. */
struct two_progs {
    struct llc_statmodel_model *a, *b;
    struct llc_contention_phase pa[2], pb[2];
    int wa[4], wb[3];
    double ia[4], ib[3];
    struct llc_contention_prog progs[2];
};

static void two_progs_init(struct two_progs *t)
{
    t->a = synth_model_power(0.05);
    t->b = synth_model_power(0.3);
    for (int k = 0; k < 2; k++) {
        t->pa[k] = (struct llc_contention_phase){.model = k ? t->b : t->a,
                                                 .api = 0.3 + 0.1 * k,
                                                 .cpi0 = 1,
                                                 .penalty = 150,
                                                 .gamma = 1,
                                                 .lines = 3e5,
                                                 .references = 4e7};
        t->pb[k] = t->pa[k];
        t->pb[k].api = 0.2 + 0.2 * k;
        t->pb[k].model = k ? t->a : t->b;
    }
    const int wa[4] = {0, 1, 0, 1}, wb[3] = {1, 0, 1};
    for (int w = 0; w < 4; w++) {
        t->wa[w] = wa[w];
        t->ia[w] = 5e7;
    }
    for (int w = 0; w < 3; w++) {
        t->wb[w] = wb[w];
        t->ib[w] = 6e7;
    }
    for (int i = 0; i < 2; i++)
        t->progs[i] = (struct llc_contention_prog){.freq_hz = 3e9,
                                                   .phases = i ? t->pb : t->pa,
                                                   .n_phases = 2,
                                                   .window_phase = i ? t->wb : t->wa,
                                                   .window_instructions = i ? t->ib : t->ia,
                                                   .n_windows = i ? 3 : 4};
}

static void cfg_assoc(struct llc_contention_config *cfg)
{
    llc_contention_config_default(cfg);
    cfg->capacity = 65536;
    cfg->ways = 8;
    cfg->assoc = true;
    cfg->anchor = false;
    cfg->skew = false;
}

/* A study's solo cache: the same timeline bit for bit, whether the cache is
 * empty, already filled by another timeline of the same phases, or absent;
 * another configuration is refused. */
static void solo_cache_same_timeline(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct two_progs t;
    two_progs_init(&t);
    struct llc_contention_config cfg;
    cfg_assoc(&cfg);
    struct llc_contention_solo_cache *c = NULL;
    assert_int_equal(llc_contention_solo_cache_create(&c, err, sizeof err), 0);
    struct llc_contention_run *plain = NULL, *r = NULL;
    assert_int_equal(llc_contention_timeline(t.progs, 2, &cfg, &plain, err, sizeof err), 0);
    assert_true(plain->n_tuples > 2); /* young tuples: the cache holds age classes too */
    for (int pass = 0; pass < 2; pass++) {
        assert_int_equal(llc_contention_timeline_cached(t.progs, 2, &cfg, c, &r, err, sizeof err),
                         0);
        assert_int_equal(r->n_tuples, plain->n_tuples);
        assert_int_equal(r->n_segments, plain->n_segments);
        for (size_t k = 0; k < r->n_tuples; k++) {
            assert_memory_equal(r->tuples[k].phase, plain->tuples[k].phase, 4 * sizeof(int));
            assert_memory_equal(r->tuples[k].solo, plain->tuples[k].solo,
                                2 * sizeof(*r->tuples[k].solo));
            assert_memory_equal(r->tuples[k].share, plain->tuples[k].share,
                                2 * sizeof(*r->tuples[k].share));
        }
        assert_memory_equal(r->summary, plain->summary, 2 * sizeof(*r->summary));
        llc_contention_run_free(r);
        r = NULL;
    }
    /* one program alone from the filled cache: its solo figures as before */
    assert_int_equal(llc_contention_timeline_cached(&t.progs[1], 1, &cfg, c, &r, err, sizeof err),
                     0);
    llc_contention_run_free(r);
    r = NULL;
    cfg.ways = 16;
    assert_int_equal(llc_contention_timeline_cached(t.progs, 2, &cfg, c, &r, err, sizeof err),
                     -EINVAL);
    assert_null(r);
    llc_contention_run_free(plain);
    llc_contention_solo_cache_free(c);
    llc_statmodel_release(t.a);
    llc_statmodel_release(t.b);
}

/* The coupled co-run (accelerated) stops at the fixed point of docs/METHODS.md
 * §12.5: each rate is API f / CPI(MR) of its own miss ratio to the stopping
 * rule's 1e-6, as the plain iteration's would be, alone and together. */
static void coupling_reaches_fixed_point(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct two_progs t;
    two_progs_init(&t);
    struct llc_contention_config cfg;
    cfg_assoc(&cfg);
    for (int pol = 0; pol < 2; pol++) {
        cfg.policy = pol ? LLC_CONTENTION_RANDOM : LLC_CONTENTION_LRU;
        for (int k = 0; k < 2; k++) {
            const struct llc_contention_phase *ph[2] = {&t.pa[k], &t.pb[1 - k]};
            const double freq[2] = {3e9, 3e9};
            struct llc_contention_share out[2], solo[2];
            struct llc_contention_info info;
            assert_int_equal(
                llc_contention_tuple(ph, freq, 2, &cfg, out, solo, &info, err, sizeof err), 0);
            assert_true(info.converged);
            for (int i = 0; i < 2; i++) {
                const struct llc_contention_share *s[2] = {&out[i], &solo[i]};
                for (int j = 0; j < 2; j++) {
                    const double want = ph[i]->api * freq[i] / s[j]->cpi;
                    if (!(fabs(s[j]->rate - want) <= 2 * LLC_CONTENTION_COUPLING_TOL * want))
                        fail_msg("policy %d, tuple %d, program %d %s: rate %.9g, API f / CPI %.9g",
                                 pol, k, i, j ? "alone" : "co-run", s[j]->rate, want);
                }
                assert_true(out[i].miss_ratio >= solo[i].miss_ratio - 1e-9);
            }
        }
    }
    llc_statmodel_release(t.a);
    llc_statmodel_release(t.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_r_matches_direct),
        cmocka_unit_test(random_r_shifted_shortcuts),
        cmocka_unit_test(assoc_grid_matches_direct),
        cmocka_unit_test(solo_cache_same_timeline),
        cmocka_unit_test(coupling_reaches_fixed_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
