/* StatStack: tables Q and F, hand-computed values, exact LRU simulation
 * (fully associative and set associative). */
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

static struct llc_statmodel_model *model_of_stream(const uint64_t *lines, size_t n)
{
    char err[LLC_ERRLEN];
    uint64_t *reuse = malloc(n * sizeof *reuse);
    assert_int_equal(llc_statmodel_exact_distances(lines, n, reuse, NULL, err, sizeof err), 0);
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(llc_statmodel_hist_add(h, reuse[i], 1, err, sizeof err), 0);
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
    llc_statmodel_hist_destroy(h);
    free(reuse);
    return m;
}

static void hand_computed_small_case(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    /* h(0) = 1, h(2) = 1, n_inf = 2: Q = 1, .75, .75, .5; F = 0, 1, 1.75, 2.5 */
    const struct llc_statmodel_bucket_count pairs[] = {{0, 1}, {2, 1}};
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, 2, 2);
    const double q[] = {1, 0.75, 0.75, 0.5}, f[] = {0, 1, 1.75, 2.5};
    for (int d = 0; d < 4; d++) {
        assert_true(fabs(llc_statmodel_tail(m, d) - q[d]) < 1e-15);
        assert_true(fabs(llc_statmodel_footprint(m, d) - f[d]) < 1e-15);
    }
    assert_true(fabs(llc_statmodel_footprint(m, 13) - (2.5 + 10 * 0.5)) < 1e-12);
    assert_true(fabs(llc_statmodel_tail(m, 1e9) - 0.5) < 1e-15);
    struct llc_statmodel_point p;
    assert_int_equal(llc_statmodel_statstack(m, 1, &p, err, sizeof err), 0);
    assert_true(fabs(p.r_total - 0.75) < 1e-15);
    assert_int_equal(llc_statmodel_statstack(m, 2, &p, err, sizeof err), 0);
    assert_true(fabs(p.r_total - (0.75 - 0.25 / 3)) < 1e-15);
    assert_true(fabs(p.r_capacity - (p.r_total - 0.5)) < 1e-15);
    assert_int_equal(llc_statmodel_statstack(m, 1000, &p, err, sizeof err), 0);
    assert_true(p.r_total == 0.5 && p.r_capacity == 0);
    assert_int_equal(llc_statmodel_statstack(m, 0, &p, err, sizeof err), -EINVAL);
    const double *edges, *tq, *tf;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(m, &edges, &tq, &tf, &ne, &slope);
    assert_int_equal(ne, 4);
    assert_true(edges[3] == 3 && tf[3] == 2.5 && tq[3] == 0.5 && slope == 0.5);
    llc_statmodel_release(m);

    /* Everything fits and nothing dangles: miss ratio 0. */
    const struct llc_statmodel_bucket_count small[] = {{3, 5}, {10, 5}};
    m = synth_model_of_pairs(small, 2, 0);
    assert_int_equal(llc_statmodel_statstack(m, 12, &p, err, sizeof err), 0);
    assert_true(p.r_total == 0);
    assert_int_equal(llc_statmodel_statstack(m, 2, &p, err, sizeof err), 0);
    assert_true(p.r_total > 0.5 && p.r_total <= 1);
    llc_statmodel_release(m);
}

static void footprint_is_nondecreasing_and_concave(void **state)
{
    (void)state;
    const size_t n = 200000;
    uint64_t *lines = malloc(n * sizeof *lines);
    const struct synth_mix mix = {0.5, 0.3, 0.1, 100, 4000, 200000};
    struct synth_rng r = {8};
    uint64_t next = 0;
    synth_stream(&mix, &r, &next, lines, n);
    struct llc_statmodel_model *m = model_of_stream(lines, n);
    assert_true(llc_statmodel_tail(m, 0) == 1);
    assert_true(llc_statmodel_footprint(m, 0) == 0);
    assert_true(fabs(llc_statmodel_footprint(m, 1) - 1) < 1e-15);
    const double *edges, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(m, &edges, &q, &f, &ne, &slope);
    assert_true(ne > 1024);
    assert_true(fabs(slope - llc_statmodel_model_dangling(m) / llc_statmodel_model_total(m)) <
                1e-15);
    double prev_rate = INFINITY;
    for (size_t i = 1; i < ne; i++) {
        assert_true(edges[i] > edges[i - 1]);
        assert_true(q[i] <= q[i - 1]);
        const double rate = (f[i] - f[i - 1]) / (edges[i] - edges[i - 1]);
        assert_true(rate > 0);
        assert_true(rate <= prev_rate * (1 + 1e-12));
        prev_rate = rate;
    }
    assert_true(slope <= prev_rate);
    llc_statmodel_release(m);
    free(lines);
}

/* docs/METHODS.md §8.4: against an exact LRU stack simulation of the same stream. */
static void matches_exact_lru(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const struct synth_mix mixes[] = {
        {0.6, 0.3, 0.0, 200, 3000, 1},     /* hot + medium + 10% streaming */
        {0.4, 0.3, 0.2, 150, 2500, 60000}, /* with a large set */
        {0.8, 0.0, 0.0, 1000, 1, 1},       /* hot + 20% streaming */
    };
    const size_t n = 300000;
    uint64_t *lines = malloc(n * sizeof *lines), *stack = malloc(n * sizeof *stack);
    double sizes[40];
    size_t ns = 0;
    for (double c = 100; c <= 5000; c *= 1.105)
        sizes[ns++] = nearbyint(c);
    double worst_all = 0;
    for (size_t t = 0; t < LLC_ARRAY_LEN(mixes); t++) {
        struct synth_rng r = {300 + t};
        uint64_t next = 0;
        synth_stream(&mixes[t], &r, &next, lines, n);
        assert_int_equal(llc_statmodel_exact_distances(lines, n, NULL, stack, err, sizeof err), 0);
        double exact[40];
        assert_int_equal(llc_statmodel_exact_lru_curve(stack, n, sizes, ns, exact, err, sizeof err),
                         0);
        struct llc_statmodel_model *m = model_of_stream(lines, n);
        struct llc_statmodel_point pts[40];
        struct llc_statmodel_options o;
        llc_statmodel_options_default(&o);
        o.method = LLC_STATMODEL_STATSTACK;
        assert_int_equal(llc_statmodel_curve(m, &o, sizes, ns, pts, err, sizeof err), 0);
        double worst = 0, mean = 0;
        for (size_t k = 0; k < ns; k++) {
            const double e = fabs(pts[k].r_total - exact[k]);
            if (getenv("SM_VERBOSE"))
                print_message("    C %5.0f exact %.5f statstack %.5f\n", sizes[k], exact[k],
                              pts[k].r_total);
            worst = e > worst ? e : worst;
            mean += e / ns;
        }
        print_message(
            "statstack vs exact LRU, mix %zu: max |err| %.5f, mean %.5f (C = 100..5000)\n", t,
            worst, mean);
        worst_all = worst > worst_all ? worst : worst_all;
        llc_statmodel_release(m);
    }
    assert_true(worst_all < 0.0025);
    free(lines);
    free(stack);
}

/* W-way LRU, sets chosen by a hash of the line. */
static double set_assoc_lru(const uint64_t *lines, size_t n, size_t sets, unsigned ways)
{
    uint64_t *tag = calloc(sets * ways, sizeof *tag), *stamp = calloc(sets * ways, sizeof *stamp);
    size_t misses = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t key = lines[i] + 1;
        const size_t s = (size_t)(((key * 0x9E3779B97F4A7C15ull) >> 20) % sets);
        uint64_t *t = &tag[s * ways], *st = &stamp[s * ways];
        unsigned hit = ways, lru = 0;
        for (unsigned w = 0; w < ways; w++) {
            if (t[w] == key)
                hit = w;
            if (st[w] < st[lru])
                lru = w;
        }
        if (hit == ways) {
            misses++;
            hit = lru;
            t[hit] = key;
        }
        st[hit] = i + 1;
    }
    free(tag);
    free(stamp);
    return (double)misses / n;
}

static void associativity_correction_tracks_set_associative_lru(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t n = 300000;
    uint64_t *lines = malloc(n * sizeof *lines);
    const struct synth_mix mix = {0.4, 0.3, 0.2, 150, 2500, 60000};
    struct synth_rng r = {301};
    uint64_t next = 0;
    synth_stream(&mix, &r, &next, lines, n);
    struct llc_statmodel_model *m = model_of_stream(lines, n);
    /* The spec gives no accuracy figure for the correction. Measured on
     * this stream: it fixes most of the direct-mapped error, is about as
     * good as the fully associative model at 4 ways (slightly
     * over-predicting conflicts), and close at the LLC-like 16 ways. */
    const unsigned ways[] = {1, 4, 16};
    for (size_t wi = 0; wi < 3; wi++) {
        double mae_assoc = 0, mae_fa = 0, worst = 0;
        for (size_t sets = 64; sets <= 2048; sets *= 2) {
            const double c = (double)(sets * ways[wi]);
            const double sim = set_assoc_lru(lines, n, sets, ways[wi]);
            struct llc_statmodel_point fa, as;
            assert_int_equal(llc_statmodel_statstack(m, c, &fa, err, sizeof err), 0);
            assert_int_equal(llc_statmodel_statstack_assoc(m, c, ways[wi], &as, err, sizeof err),
                             0);
            if (getenv("SM_VERBOSE"))
                print_message(
                    "  %2u-way %5zu sets: sim %.4f, assoc model %.4f, fully assoc model %.4f\n",
                    ways[wi], sets, sim, as.r_total, fa.r_total);
            mae_assoc += fabs(as.r_total - sim) / 6;
            mae_fa += fabs(fa.r_total - sim) / 6;
            worst = fabs(as.r_total - sim) > worst ? fabs(as.r_total - sim) : worst;
            /* Conflicts only add misses. */
            assert_true(as.r_total >= fa.r_total - 0.002);
        }
        print_message(
            "statstack %2u-way vs set-associative LRU (64..2048 sets): corrected MAE %.4f "
            "(max %.4f), fully associative MAE %.4f\n",
            ways[wi], mae_assoc, worst, mae_fa);
        assert_true(mae_assoc < 0.016);
        if (ways[wi] == 1)
            assert_true(mae_assoc < 0.6 * mae_fa);
        if (ways[wi] == 16)
            assert_true(worst < 0.01);
    }
    /* One set of C ways is fully associative. */
    struct llc_statmodel_point fa, as;
    assert_int_equal(llc_statmodel_statstack(m, 512, &fa, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_statstack_assoc(m, 512, 512, &as, err, sizeof err), 0);
    assert_true(fabs(fa.r_total - as.r_total) < 0.003);
    assert_int_equal(llc_statmodel_statstack_assoc(m, 512, 0, &as, err, sizeof err), -EINVAL);
    llc_statmodel_release(m);
    free(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_computed_small_case),
        cmocka_unit_test(footprint_is_nondecreasing_and_concave),
        cmocka_unit_test(matches_exact_lru),
        cmocka_unit_test(associativity_correction_tracks_set_associative_lru),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
