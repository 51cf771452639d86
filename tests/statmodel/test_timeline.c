/* StatStack on the phase timeline (docs/METHODS.md §9): equal phases give
 * plain StatStack; two phases in sequence match a brute-force sum of the
 * tails of the references each reuse spans. */
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

struct pair {
    uint64_t d;
    double count;
};

/* Window i of refs references, its samples, the phase of labels[i]. */
static void add_window(struct llc_statmodel_groups *w, int i, double refs, const struct pair *p,
                       size_t n, double dangling)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_groups_ensure(w, i, &h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_add_refs(w, i, refs, err, sizeof err), 0);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(llc_statmodel_hist_add(h, p[k].d, p[k].count, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(h, dangling, err, sizeof err), 0);
}

static struct llc_statmodel_groups *phases_of(const struct llc_statmodel_groups *w,
                                              const int *labels, size_t n)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *g = NULL;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_true(llc_statmodel_groups_regroup(w, labels, n, g, err, sizeof err) >= 0);
    return g;
}

static const double sizes[] = {1,   2,   3,    5,    8,     13,    20,    40,  80,
                               150, 300, 1000, 3000, 10000, 30000, 60000, 1e5, 3e5};
#define NS (sizeof sizes / sizeof *sizes)

/* Every window holds the same distribution, whatever its phase label:
 * each phase's footprint is the pooled one, so the timeline's stack
 * distances telescope to F(d) and every curve is plain StatStack's,
 * with reuses that cross runs, leave the run's end, and (max_runs 1)
 * fall back on the mixture. */
static void equal_phases_give_plain_statstack(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *w = NULL;
    assert_int_equal(llc_statmodel_groups_create(&w, err, sizeof err), 0);
    const int labels[] = {0, 0, 1, 0, 1, 1, 1, -1, 0, 2};
    const size_t nw = sizeof labels / sizeof *labels;
    const struct pair p[] = {{3, 2}, {40, 1}, {700, 1}, {5000, 0.5}, {90000, 0.5}, {400000, 0.25}};
    for (size_t i = 0; i < nw; i++)
        add_window(w, (int)i, 10000, p, sizeof p / sizeof *p, 0.25);
    struct llc_statmodel_groups *ph = phases_of(w, labels, nw);
    struct llc_statmodel_hist *pool = NULL;
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_hist_create(&pool, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_pool(w, pool, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(pool, &m, err, sizeof err), 0);
    const size_t ng = llc_statmodel_groups_count(ph);
    assert_int_equal(ng, 4);
    for (unsigned ways = 0; ways <= 16; ways += 16) {
        for (size_t max_runs = 1; max_runs <= 64; max_runs *= 64) {
            struct llc_statmodel_timeline_config cfg;
            llc_statmodel_timeline_config_default(&cfg);
            cfg.max_runs = max_runs;
            struct llc_statmodel_timeline *t = NULL;
            assert_int_equal(
                llc_statmodel_timeline_create(ph, w, labels, &cfg, &t, err, sizeof err), 0);
            struct llc_statmodel_options o;
            llc_statmodel_options_default(&o);
            o.method = LLC_STATMODEL_STATSTACK;
            o.assoc_ways = ways;
            struct llc_statmodel_point want[NS], mean[NS], per[4][NS];
            struct llc_statmodel_point *const groups[4] = {per[0], per[1], per[2], per[3]};
            assert_int_equal(llc_statmodel_curve(m, &o, sizes, NS, want, err, sizeof err), 0);
            assert_int_equal(
                llc_statmodel_timeline_curve(t, &o, sizes, NS, mean, groups, err, sizeof err), 0);
            for (size_t k = 0; k < NS; k++) {
                assert_true(fabs(mean[k].r_total - want[k].r_total) < 1e-9);
                assert_true(fabs(mean[k].r_capacity - want[k].r_capacity) < 1e-9);
                for (size_t g = 0; g < ng; g++)
                    assert_true(fabs(per[g][k].r_total - want[k].r_total) < 1e-9);
            }
            llc_statmodel_timeline_destroy(t);
        }
    }
    /* StatCache has no stack distance. */
    struct llc_statmodel_timeline *t = NULL;
    struct llc_statmodel_timeline_config cfg;
    llc_statmodel_timeline_config_default(&cfg);
    assert_int_equal(llc_statmodel_timeline_create(ph, w, labels, &cfg, &t, err, sizeof err), 0);
    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    struct llc_statmodel_point one;
    assert_int_equal(llc_statmodel_timeline_curve(t, &o, sizes, 1, &one, NULL, err, sizeof err),
                     -EINVAL);
    llc_statmodel_timeline_destroy(t);
    llc_statmodel_release(m);
    llc_statmodel_hist_destroy(pool);
    llc_statmodel_groups_destroy(ph);
    llc_statmodel_groups_destroy(w);
}

/* Brute force for a timeline of unit-width buckets (distances < 1024,
 * where F(x) = sum_{m<x} Q(m) exactly): a reuse from t1 to t2 = t1 + d
 * sees, at distance m back from t2, the references in [t2-m-1, t2-m),
 * each with the tail Q(m) of its window's phase (the reference-weighted
 * mean past the end of the run). */
struct bf {
    const int *labels;
    size_t nw;
    double refs;
    struct llc_statmodel_model *const *models; /* by label */
    const double *w;                           /* mixture weights by label */
    size_t nl;
};

static double bf_tail_at(const struct bf *b, double pos, double m)
{
    const size_t i = (size_t)(pos / b->refs);
    if (i < b->nw)
        return llc_statmodel_tail(b->models[b->labels[i]], m);
    double q = 0;
    for (size_t l = 0; l < b->nl; l++)
        q += b->w[l] * llc_statmodel_tail(b->models[l], m);
    return q;
}

static double bf_stack_distance(const struct bf *b, double t1, uint64_t d)
{
    const double t2 = t1 + (double)d;
    double sd = 0;
    for (uint64_t m = 0; m < d; m++) {
        const double x = t2 - (double)m - 1, y = t2 - (double)m; /* [x, y) */
        /* At most one window boundary inside a unit interval. */
        const double edge = ceil(x / b->refs) * b->refs;
        if (edge > x && edge < y)
            sd += (edge - x) * bf_tail_at(b, x, (double)m) +
                  (y - edge) * bf_tail_at(b, edge, (double)m);
        else
            sd += bf_tail_at(b, x, (double)m);
    }
    return sd;
}

static void two_phases_match_brute_force(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *w = NULL;
    assert_int_equal(llc_statmodel_groups_create(&w, err, sizeof err), 0);
    /* A run of phase 0 (short reuses and some long ones), then a run of
     * phase 1 (a scan: many mid-range reuses). */
    const int labels[] = {0, 0, 0, 1, 1, 1};
    const size_t nw = 6;
    const double refs = 100;
    const struct pair pa[] = {{1, 3}, {5, 3}, {150, 2}, {400, 1}};
    const struct pair pb[] = {{2, 4}, {60, 2}, {300, 2}, {90, 1}};
    for (size_t i = 0; i < nw; i++) {
        if (labels[i] == 0)
            add_window(w, (int)i, refs, pa, 4, 1);
        else
            add_window(w, (int)i, refs, pb, 4, 0.5);
    }
    struct llc_statmodel_groups *ph = phases_of(w, labels, nw);
    struct llc_statmodel_model *models[2] = {NULL, NULL};
    for (int l = 0; l < 2; l++)
        assert_int_equal(
            llc_statmodel_prepare(llc_statmodel_groups_hist(ph, l), &models[l], err, sizeof err),
            0);
    const double wmix[2] = {0.5, 0.5};
    const struct bf b = {
        .labels = labels, .nw = nw, .refs = refs, .models = models, .w = wmix, .nl = 2};
    struct llc_statmodel_timeline_config cfg;
    llc_statmodel_timeline_config_default(&cfg);
    struct llc_statmodel_timeline *t = NULL;
    assert_int_equal(llc_statmodel_timeline_create(ph, w, labels, &cfg, &t, err, sizeof err), 0);
    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    o.method = LLC_STATMODEL_STATSTACK;
    const double c[] = {1, 2, 3, 4, 6, 9, 14, 20, 30, 45, 70, 100, 150, 250};
    const size_t nc = sizeof c / sizeof *c;
    struct llc_statmodel_point mean[14], per[2][14];
    struct llc_statmodel_point *const groups[2] = {per[0], per[1]};
    assert_int_equal(llc_statmodel_timeline_curve(t, &o, c, nc, mean, groups, err, sizeof err), 0);
    /* Expected: each sample bucket [d, d+1) at each of the 4 start
     * positions misses the part of its stack-distance segment at or
     * above C (linear between SD(d) and SD(d+1)). */
    double miss[2][14] = {{0}};
    for (size_t i = 0; i < nw; i++) {
        const struct pair *p = labels[i] == 0 ? pa : pb;
        for (size_t j = 0; j < 4; j++) {
            const double t1 = (double)i * refs + refs * ((double)j + 0.5) / 4;
            for (size_t s = 0; s < 4; s++) {
                const double lo = bf_stack_distance(&b, t1, p[s].d),
                             hi = bf_stack_distance(&b, t1, p[s].d + 1);
                for (size_t k = 0; k < nc; k++) {
                    const double f = lo >= c[k] ? 1 : hi > c[k] ? (hi - c[k]) / (hi - lo) : 0;
                    miss[labels[i]][k] += p[s].count / 4 * f;
                }
            }
        }
    }
    bool differs = false;
    for (size_t k = 0; k < nc; k++) {
        double mix = 0;
        for (int l = 0; l < 2; l++) {
            const double n_inf = llc_statmodel_model_dangling(models[l]),
                         total = llc_statmodel_model_total(models[l]);
            const double want = (n_inf + miss[l][k]) / total;
            assert_true(fabs(per[l][k].r_total - want) < 1e-9);
            mix += 0.5 * want;
            /* The timeline moves each phase's curve off its own StatStack. */
            struct llc_statmodel_point own;
            assert_int_equal(llc_statmodel_statstack(models[l], c[k], &own, err, sizeof err), 0);
            differs |= fabs(own.r_total - want) > 1e-3;
        }
        assert_true(fabs(mean[k].r_total - mix) < 1e-9);
    }
    assert_true(differs);
    llc_statmodel_timeline_destroy(t);
    for (int l = 0; l < 2; l++)
        llc_statmodel_release(models[l]);
    llc_statmodel_groups_destroy(ph);
    llc_statmodel_groups_destroy(w);
}

/* A window labelled with a phase the groups do not hold is refused. */
static void unknown_phase_refused(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *w = NULL;
    assert_int_equal(llc_statmodel_groups_create(&w, err, sizeof err), 0);
    const struct pair p[] = {{3, 1}};
    add_window(w, 0, 100, p, 1, 0);
    add_window(w, 1, 100, p, 1, 0);
    const int labels[] = {0, 0};
    struct llc_statmodel_groups *ph = phases_of(w, labels, 2);
    const int wrong[] = {0, 7};
    struct llc_statmodel_timeline_config cfg;
    llc_statmodel_timeline_config_default(&cfg);
    struct llc_statmodel_timeline *t = NULL;
    assert_int_equal(llc_statmodel_timeline_create(ph, w, wrong, &cfg, &t, err, sizeof err),
                     -EINVAL);
    assert_null(t);
    cfg.positions = 0;
    assert_int_equal(llc_statmodel_timeline_create(ph, w, labels, &cfg, &t, err, sizeof err),
                     -EINVAL);
    llc_statmodel_groups_destroy(ph);
    llc_statmodel_groups_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_phases_give_plain_statstack),
        cmocka_unit_test(two_phases_match_brute_force),
        cmocka_unit_test(unknown_phase_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
