/* statmodel/contention_strata: per-stratum reuse (docs/METHODS.md §12.6).
 * Cases solved by hand, and the reductions the equations imply (one
 * stratum, or strata that all look alike, is the plain model). */
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
#include "llcprobe/contention.h"
#include "llcprobe/statmodel.h"
#include "synth.h"

/* Every reference reuses its line 800 references later (no dangling):
 * F(inf) = 801 lines. 90% of the references go to half of the sets.
 * C = 1000, fully associative LRU, alone:
 *   hot half: 0.9 x 801 = 721 lines in 500: weight 1.8, 1.8 F(aT) = C at
 *     aT = 555.6 < 800, Q = 1: every reference misses; holds all 500 lines;
 *   cold half: 0.1 x 801 = 80.1 lines in 500: fits, Q(inf) = 0; 80.1 lines.
 *   MR = 0.9 x 1 + 0.1 x 0 = 0.9, occupancy 580.1 lines.
 * The whole-cache model (801 lines in 1000) says MR = 0. */
static void hand_solved_hot_half(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const struct llc_statmodel_bucket_count pairs[] = {{800, 1000}};
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, 1, 0);
    const struct llc_contention_stratum s[2] = {{.model = m, .sets = 0.5, .refs = 0.9},
                                                {.model = m, .sets = 0.5, .refs = 0.1}};
    const struct llc_contention_strata st = {.n = 2, .s = s};
    const struct llc_contention_strata *sp[1] = {&st};
    const struct llc_contention_party p = {.model = m, .rate = 1e9, .gamma = 1, .weight = 1};
    struct llc_contention_share out, plain;
    struct llc_contention_info info;
    assert_int_equal(llc_contention_strata_equilibrium(&p, sp, NULL, 1, 1000, LLC_CONTENTION_LRU, 0,
                                                       &out, &info, err, sizeof err),
                     0);
    NEAR(out.miss_ratio, 0.9, 1e-9);
    NEAR(out.miss_rate, 0.9e9, 1);
    NEAR(out.occupancy, 500 + 0.5 * 0.2 * 801, 1e-6);
    assert_int_equal(
        llc_contention_equilibrium(&p, 1, 1000, LLC_CONTENTION_LRU, &plain, &info, err, sizeof err),
        0);
    NEAR(plain.miss_ratio, 0, 1e-12);
    llc_statmodel_release(m);
}

/* Two programs, the first stratified as above, the second streaming
 * (every reference a first touch) at the same rate. In a hot-half set
 * the first already misses alone; in a cold one the streamer's lines
 * (weight 1, F = a T) and the first's (weight 0.2, at most 160.2) share
 * C: 0.2 F1(aT) + aT = 1000 with F1 = aT + 1 below 800 gives
 * 1.2 aT + 0.2 = 1000, aT = 833.2 > 800, so F1 = 801:
 * aT = 1000 - 160.2 = 839.8 >= 800 and the first keeps every reuse:
 * MR1 = 0.9 again; the streamer misses always (MR2 = 1). */
static void hand_solved_with_streamer(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const struct llc_statmodel_bucket_count pairs[] = {{800, 1000}};
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, 1, 0);
    struct llc_statmodel_model *str = synth_model_of_pairs(NULL, 0, 1000);
    const struct llc_contention_stratum s[2] = {{.model = m, .sets = 0.5, .refs = 0.9},
                                                {.model = m, .sets = 0.5, .refs = 0.1}};
    const struct llc_contention_strata st = {.n = 2, .s = s};
    const struct llc_contention_strata *sp[2] = {&st, NULL};
    const struct llc_contention_party p[2] = {{.model = m, .rate = 1e9, .gamma = 1, .weight = 1},
                                              {.model = str, .rate = 1e9, .gamma = 1, .weight = 1}};
    struct llc_contention_share out[2];
    struct llc_contention_info info;
    assert_int_equal(llc_contention_strata_equilibrium(p, sp, NULL, 2, 1000, LLC_CONTENTION_LRU, 0,
                                                       out, &info, err, sizeof err),
                     0);
    NEAR(out[0].miss_ratio, 0.9, 1e-9);
    NEAR(out[1].miss_ratio, 1, 1e-12);
    /* hot cell: first 1.8 aT, streamer aT, 2.8 aT = 1000: the first holds
     * 1.8 / 2.8 of it; cold cell: the first 160.2, the streamer the rest */
    NEAR(out[0].occupancy, 0.5 * 1000 * 1.8 / 2.8 + 0.5 * 160.2, 1e-6);
    NEAR(out[1].occupancy, 0.5 * 1000 / 2.8 + 0.5 * (1000 - 160.2), 1e-6);
    llc_statmodel_release(m);
    llc_statmodel_release(str);
}

/* Geometric-ish reuse with dangling samples, for the reductions. */
static struct llc_statmodel_model *model_mixed(double scale)
{
    struct llc_statmodel_bucket_count pairs[40];
    size_t n = 0;
    for (size_t b = 0; b < 40; b++) {
        const uint64_t d = (uint64_t)(scale * (double)(b * b * 7 + 1));
        pairs[n++] = (struct llc_statmodel_bucket_count){llc_statmodel_bucket_of(d),
                                                         100.0 * exp(-0.1 * (double)b)};
    }
    return synth_model_of_pairs(pairs, n, 50);
}

/* One stratum, or strata with the same reuse and refs = sets, is the plain
 * equilibrium: LRU fully associative, set-associative, random. */
static void reduces_to_plain(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_mixed(3), *b = model_mixed(11);
    const struct llc_contention_stratum one[1] = {{.model = a, .sets = 1, .refs = 1}};
    const struct llc_contention_stratum three[3] = {{.model = a, .sets = 0.2, .refs = 0.2},
                                                    {.model = a, .sets = 0.5, .refs = 0.5},
                                                    {.model = a, .sets = 0.3, .refs = 0.3}};
    const struct llc_contention_stratum two_b[2] = {{.model = b, .sets = 0.25, .refs = 0.25},
                                                    {.model = b, .sets = 0.75, .refs = 0.75}};
    const struct llc_contention_strata s1 = {.n = 1, .s = one}, s3 = {.n = 3, .s = three},
                                       sb = {.n = 2, .s = two_b};
    const struct llc_contention_party p[2] = {
        {.model = a, .rate = 2e9, .gamma = 1, .weight = 1, .lines_max = 5e4},
        {.model = b, .rate = 1e9, .gamma = 1, .weight = 1}};
    const enum llc_contention_policy pol[3] = {LLC_CONTENTION_LRU, LLC_CONTENTION_LRU,
                                               LLC_CONTENTION_RANDOM};
    const unsigned ways[3] = {0, 8, 0};
    for (int k = 0; k < 3; k++) {
        for (double c = 500; c <= 8000; c *= 2) {
            struct llc_contention_share plain[2], out[2];
            struct llc_contention_info info;
            if (ways[k])
                assert_int_equal(llc_contention_equilibrium_assoc(p, 2, c, ways[k], plain, &info,
                                                                  err, sizeof err),
                                 0);
            else
                assert_int_equal(
                    llc_contention_equilibrium(p, 2, c, pol[k], plain, &info, err, sizeof err), 0);
            const struct llc_contention_strata *cases[3][2] = {
                {&s1, NULL}, {&s3, NULL}, {&s3, &sb}};
            for (int q = 0; q < 3; q++) {
                assert_int_equal(llc_contention_strata_equilibrium(p, cases[q], NULL, 2, c, pol[k],
                                                                   ways[k], out, &info, err,
                                                                   sizeof err),
                                 0);
                for (int i = 0; i < 2; i++) {
                    NEAR(out[i].miss_ratio, plain[i].miss_ratio, 1e-9);
                    NEAR(out[i].occupancy, plain[i].occupancy, 1e-6 * c);
                }
            }
        }
    }
    llc_statmodel_release(a);
    llc_statmodel_release(b);
}

/* A stratified co-runner split into identical halves changes nothing for
 * the other: the cells of its halves are the same equilibria. */
static void corunner_halves(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_mixed(3), *b = model_mixed(11);
    const struct llc_contention_stratum sa[2] = {{.model = a, .sets = 0.3, .refs = 0.7},
                                                 {.model = b, .sets = 0.7, .refs = 0.3}};
    const struct llc_contention_stratum sb[2] = {{.model = b, .sets = 0.5, .refs = 0.5},
                                                 {.model = b, .sets = 0.5, .refs = 0.5}};
    const struct llc_contention_strata ta = {.n = 2, .s = sa}, tb = {.n = 2, .s = sb};
    const struct llc_contention_strata *one[2] = {&ta, NULL}, *both[2] = {&ta, &tb};
    const struct llc_contention_party p[2] = {{.model = a, .rate = 2e9, .gamma = 1, .weight = 1},
                                              {.model = b, .rate = 1e9, .gamma = 1, .weight = 1}};
    struct llc_contention_share x[2], y[2];
    struct llc_contention_info info;
    assert_int_equal(llc_contention_strata_equilibrium(p, one, NULL, 2, 3000, LLC_CONTENTION_LRU,
                                                       16, x, &info, err, sizeof err),
                     0);
    assert_int_equal(llc_contention_strata_equilibrium(p, both, NULL, 2, 3000, LLC_CONTENTION_LRU,
                                                       16, y, &info, err, sizeof err),
                     0);
    for (int i = 0; i < 2; i++) {
        NEAR(y[i].miss_ratio, x[i].miss_ratio, 1e-12);
        NEAR(y[i].occupancy, x[i].occupancy, 1e-9);
    }
    llc_statmodel_release(a);
    llc_statmodel_release(b);
}

/* Shares not adding up to 1, or references without samples, are refused. */
static void bad_strata(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_mixed(3);
    const struct llc_contention_stratum off[2] = {{.model = a, .sets = 0.5, .refs = 0.5},
                                                  {.model = a, .sets = 0.4, .refs = 0.5}};
    const struct llc_contention_stratum nosamples[2] = {{.model = a, .sets = 0.5, .refs = 0.5},
                                                        {.model = NULL, .sets = 0.5, .refs = 0.5}};
    const struct llc_contention_strata s1 = {.n = 2, .s = off}, s2 = {.n = 2, .s = nosamples};
    assert_int_equal(llc_contention_strata_check(&s1, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "add up"));
    assert_int_equal(llc_contention_strata_check(&s2, err, sizeof err), -ENODATA);
    const struct llc_contention_strata *sp[1] = {&s1};
    const struct llc_contention_party p = {.model = a, .rate = 1e9, .gamma = 1, .weight = 1};
    struct llc_contention_share out;
    assert_int_equal(llc_contention_strata_equilibrium(&p, sp, NULL, 1, 1000, LLC_CONTENTION_LRU, 0,
                                                       &out, NULL, err, sizeof err),
                     -EINVAL);
    llc_statmodel_release(a);
}

/* The tuple solver takes a phase's strata in place of its CV skew: a
 * phase with strata and a CV gives the strata's figures. */
static void tuple_uses_strata(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const struct llc_statmodel_bucket_count pairs[] = {{800, 1000}};
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, 1, 0);
    const struct llc_contention_stratum s[2] = {{.model = m, .sets = 0.5, .refs = 0.9},
                                                {.model = m, .sets = 0.5, .refs = 0.1}};
    const struct llc_contention_strata st = {.n = 2, .s = s};
    struct llc_contention_phase ph = {
        .model = m, .api = 0.5, .cpi0 = 1, .penalty = 0, .gamma = 1, .cv = 0.3, .strata = &st};
    struct llc_contention_config cfg;
    llc_contention_config_default(&cfg);
    cfg.capacity = 1000;
    cfg.ways = 16;
    cfg.assoc = false;
    struct llc_contention_share out;
    assert_int_equal(llc_contention_solo(&ph, 1e9, &cfg, &out, err, sizeof err), 0);
    NEAR(out.miss_ratio, 0.9, 1e-9);
    ph.strata = NULL;
    ph.cv = 0;
    assert_int_equal(llc_contention_solo(&ph, 1e9, &cfg, &out, err, sizeof err), 0);
    NEAR(out.miss_ratio, 0, 1e-12);
    llc_statmodel_release(m);
}

/* A phase with a CV and no strata keeps its skew beside a stratified
 * co-runner: with the co-runner's strata all alike, its figures are those
 * beside the co-runner taken whole (the 5 skewed equilibria of the plain
 * path), not the uniform ones; alone and together it is the same program. */
static void skew_beside_strata(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_mixed(3), *b = model_mixed(11);
    const struct llc_contention_stratum halves[2] = {{.model = b, .sets = 0.5, .refs = 0.5},
                                                     {.model = b, .sets = 0.5, .refs = 0.5}};
    const struct llc_contention_strata sb = {.n = 2, .s = halves};
    struct llc_contention_phase pa = {
        .model = a, .api = 0.3, .cpi0 = 1, .penalty = 100, .gamma = 1, .cv = 0.4};
    struct llc_contention_phase pb = {
        .model = b, .api = 0.3, .cpi0 = 1, .penalty = 100, .gamma = 1, .strata = &sb};
    const double freq[2] = {1e9, 1e9};
    const enum llc_contention_policy pol[2] = {LLC_CONTENTION_LRU, LLC_CONTENTION_RANDOM};
    for (int k = 0; k < 2; k++) {
        struct llc_contention_config cfg;
        llc_contention_config_default(&cfg);
        cfg.capacity = 4000;
        cfg.ways = 8;
        cfg.assoc = false;
        cfg.policy = pol[k];
        const struct llc_contention_phase *ph[2] = {&pa, &pb};
        struct llc_contention_share with[2], whole[2], uniform[2], solo[2];
        struct llc_contention_info info;
        assert_int_equal(
            llc_contention_tuple(ph, freq, 2, &cfg, with, solo, &info, err, sizeof err), 0);
        pb.strata = NULL;
        assert_int_equal(
            llc_contention_tuple(ph, freq, 2, &cfg, whole, solo, &info, err, sizeof err), 0);
        pa.cv = 0;
        assert_int_equal(
            llc_contention_tuple(ph, freq, 2, &cfg, uniform, solo, &info, err, sizeof err), 0);
        pa.cv = 0.4;
        pb.strata = &sb;
        NEAR(with[0].miss_ratio, whole[0].miss_ratio, 1e-7);
        NEAR(with[0].occupancy, whole[0].occupancy, 1e-4 * cfg.capacity);
        NEAR(with[1].miss_ratio, whole[1].miss_ratio, 1e-7);
        /* the skew matters here: the uniform program's figures differ */
        assert_true(fabs(uniform[0].miss_ratio - whole[0].miss_ratio) > 1e-3);
    }
    llc_statmodel_release(a);
    llc_statmodel_release(b);
}

/* Three programs of 5 strata each (125 cells) are solved on the heaviest
 * cells only; the figures stay within 0.004 in miss ratio and 0.8% of the
 * cache in occupancy of every cell solved (here by hand: one equilibrium
 * per cell, each program weighted by refs / sets of its stratum). The
 * reduced solve is off by up to 0.0025 and 0.6% here; solving 4 cells
 * (the rest up to 25% of the references) is off by more. */
static void reduced_near_full(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m[3] = {model_mixed(3), model_mixed(11), model_mixed(30)};
    struct llc_contention_stratum s[3][5];
    const double sets[5] = {0.07, 0.24, 0.38, 0.24, 0.07};
    const double refs[3][5] = {
        {0.01, 0.09, 0.3, 0.35, 0.25}, {0.05, 0.2, 0.4, 0.25, 0.1}, {0.02, 0.1, 0.28, 0.3, 0.3}};
    struct llc_contention_strata st[3];
    const struct llc_contention_strata *sp[3];
    struct llc_contention_party p[3];
    for (int i = 0; i < 3; i++) {
        for (int g = 0; g < 5; g++)
            s[i][g] =
                (struct llc_contention_stratum){.model = m[i], .sets = sets[g], .refs = refs[i][g]};
        st[i] = (struct llc_contention_strata){.n = 5, .s = s[i]};
        sp[i] = &st[i];
        p[i] = (struct llc_contention_party){
            .model = m[i], .rate = 1e9 * (i + 1), .gamma = 1, .weight = 1};
    }
    const enum llc_contention_policy pol[2] = {LLC_CONTENTION_LRU, LLC_CONTENTION_RANDOM};
    for (int k = 0; k < 2; k++) {
        for (double c = 500; c <= 16000; c *= 4) {
            struct llc_contention_share out[3], tmp[3], full[3] = {{0}};
            struct llc_contention_info info;
            assert_int_equal(llc_contention_strata_equilibrium(p, sp, NULL, 3, c, pol[k], 0, out,
                                                               &info, err, sizeof err),
                             0);
            for (int cell = 0; cell < 125; cell++) {
                struct llc_contention_party q[3];
                double share = 1;
                int g[3] = {cell % 5, cell / 5 % 5, cell / 25};
                for (int i = 0; i < 3; i++) {
                    q[i] = p[i];
                    q[i].weight = refs[i][g[i]] / sets[g[i]];
                    share *= sets[g[i]];
                }
                assert_int_equal(
                    llc_contention_equilibrium(q, 3, c, pol[k], tmp, &info, err, sizeof err), 0);
                for (int i = 0; i < 3; i++) {
                    full[i].miss_ratio += share * q[i].weight * tmp[i].miss_ratio;
                    full[i].occupancy += share * tmp[i].occupancy;
                }
            }
            for (int i = 0; i < 3; i++) {
                NEAR(out[i].miss_ratio, full[i].miss_ratio, 0.004);
                NEAR(out[i].occupancy, full[i].occupancy, 0.008 * c);
            }
        }
    }
    for (int i = 0; i < 3; i++)
        llc_statmodel_release(m[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_solved_hot_half), cmocka_unit_test(hand_solved_with_streamer),
        cmocka_unit_test(reduces_to_plain),     cmocka_unit_test(corunner_halves),
        cmocka_unit_test(bad_strata),           cmocka_unit_test(tuple_uses_strata),
        cmocka_unit_test(reduced_near_full),    cmocka_unit_test(skew_beside_strata),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
