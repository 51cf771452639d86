/* statmodel/contention: cases solved by hand, and properties the equations
 * imply (fixed points hold, the skew and anchor reduce to the plain model,
 * an unprofiled streamer equals a profiled one). */
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
#include "contention_internal.h"
#include "synth.h"

/* Geometric reuse of a uniformly used set of `lines` lines with access
 * probability p (the rest streams): h(d) ~ p r (1-r)^d, r = p / lines. */
static struct llc_statmodel_model *model_uniform(double p, double lines, double samples)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    const double l1r = log1p(-p / lines);
    for (size_t b = 0; b < LLC_STATMODEL_BUCKETS; b++) {
        const double lo = (double)llc_statmodel_bucket_lo(b);
        const double hi = lo + (double)llc_statmodel_bucket_width(b);
        const double mass = p * (exp(lo * l1r) - exp(hi * l1r)) * samples;
        if (mass > 0)
            assert_int_equal(
                llc_statmodel_hist_add(h, llc_statmodel_bucket_lo(b), mass, err, sizeof err), 0);
        if (p * exp(hi * l1r) * samples < 1e-9)
            break;
    }
    if (p < 1)
        assert_int_equal(llc_statmodel_hist_add_dangling(h, (1 - p) * samples, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
    llc_statmodel_hist_destroy(h);
    return m;
}

static void lru_hand_solved(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    /* h(0) = 1, h(2) = 1, n_inf = 2: F = 0, 1, 1.75, 2.5, then +0.5 per
     * reference; Q = 1, .75, .75, .5. Rates 1 and 2, C = 5: on T in [2, 3]
     * F(T) + F(2T) = 1.75 + .75 (T - 2) + 2.5 + .5 (2T - 3) = 1.25 + 1.75 T,
     * so T* = 15/7, MR1 = Q(15/7) = .75 - .25/7, MR2 = .5,
     * O1 = 1.75 + .75/7, O2 = 1 + 15/7. */
    const struct llc_statmodel_bucket_count pairs[] = {{0, 1}, {2, 1}};
    struct llc_statmodel_model *m = synth_model_of_pairs(pairs, 2, 2);
    struct llc_contention_party p[2] = {{.model = m, .rate = 1, .gamma = 1, .weight = 1},
                                        {.model = m, .rate = 2, .gamma = 1, .weight = 1}};
    struct llc_contention_share s[2];
    struct llc_contention_info info;
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 5, LLC_CONTENTION_LRU, s, &info, err, sizeof err), 0);
    NEAR(info.t_star, 15.0 / 7, 1e-8);
    NEAR(s[0].miss_ratio, 0.75 - 0.25 / 7, 1e-8);
    NEAR(s[1].miss_ratio, 0.5, 1e-12);
    NEAR(s[0].occupancy, 1.75 + 0.75 / 7, 1e-8);
    NEAR(s[1].occupancy, 1 + 15.0 / 7, 1e-8);
    NEAR(s[1].miss_rate, 1.0, 1e-12);
    assert_true(info.occ_error < 1e-8);
    /* gamma = 2 on the first program is the same as doubling its rate in
     * the footprint: then both are at rate 2, 2 F(2T) = 5, 2T = 3. */
    p[0].gamma = 2;
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 5, LLC_CONTENTION_LRU, s, &info, err, sizeof err), 0);
    NEAR(info.t_star, 1.5, 1e-8);
    NEAR(s[0].occupancy, 2.5, 1e-8);
    NEAR(s[0].miss_rate, 0.5, 1e-8); /* miss rate counts the real rate 1 */
    llc_statmodel_release(m);

    /* Everything fits, nothing dangles: T* = inf, MR = 0, O = F(inf). */
    const struct llc_statmodel_bucket_count small[] = {{3, 5}, {10, 5}};
    m = synth_model_of_pairs(small, 2, 0);
    p[0] = (struct llc_contention_party){.model = m, .rate = 1, .gamma = 1, .weight = 1};
    p[1] = (struct llc_contention_party){.model = m, .rate = 7, .gamma = 1, .weight = 1};
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 100, LLC_CONTENTION_LRU, s, &info, err, sizeof err), 0);
    assert_true(isinf(info.t_star));
    assert_true(s[0].miss_ratio == 0 && s[1].miss_ratio == 0);
    NEAR(s[0].occupancy, llc_statmodel_footprint(m, 11), 1e-12);
    /* Same in the random model (mu = 0 is the only root). */
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 100, LLC_CONTENTION_RANDOM, s, &info, err, sizeof err), 0);
    assert_true(info.mu == 0 && s[0].miss_ratio == 0);
    llc_statmodel_release(m);
}

static void lru_single_is_statstack(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m = model_uniform(0.8, 3000, 1e5);
    const double sizes[] = {100, 500, 1000, 2500, 4000};
    for (size_t k = 0; k < LLC_ARRAY_LEN(sizes); k++) {
        struct llc_statmodel_point pt, half;
        assert_int_equal(llc_statmodel_statstack(m, sizes[k], &pt, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_statstack(m, sizes[k] / 2, &half, err, sizeof err), 0);
        struct llc_contention_party p[2] = {{.model = m, .rate = 3, .gamma = 1, .weight = 1},
                                            {.model = m, .rate = 3, .gamma = 1, .weight = 1}};
        struct llc_contention_share s[2];
        assert_int_equal(llc_contention_equilibrium(p, 1, sizes[k], LLC_CONTENTION_LRU, s, NULL,
                                                    err, sizeof err),
                         0);
        NEAR(s[0].miss_ratio, pt.r_total, 1e-7);
        NEAR(s[0].occupancy, sizes[k], 1e-6 * sizes[k]);
        /* Two identical programs at equal rates split the cache. */
        assert_int_equal(llc_contention_equilibrium(p, 2, sizes[k], LLC_CONTENTION_LRU, s, NULL,
                                                    err, sizeof err),
                         0);
        NEAR(s[0].miss_ratio, half.r_total, 1e-7);
        NEAR(s[1].occupancy, sizes[k] / 2, 1e-6 * sizes[k]);
    }
    llc_statmodel_release(m);
}

/* Finite programs whose distinct lines fit together keep them all: T* is
 * infinite, each holds its cap and misses only its cold fraction. Without
 * the cap the dangling samples' unbounded footprint fills the cache. */
static void lru_capped_footprints_fit(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m = model_uniform(0.9, 1000, 1e5);
    struct llc_contention_party p[2] = {
        {.model = m, .rate = 1, .gamma = 1, .weight = 1, .lines_max = 1500},
        {.model = m, .rate = 2, .gamma = 1, .weight = 1, .lines_max = 2000}};
    struct llc_contention_share s[2];
    struct llc_contention_info info;
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 8000, LLC_CONTENTION_LRU, s, &info, err, sizeof err), 0);
    assert_true(isinf(info.t_star));
    NEAR(s[0].occupancy, 1500, 1e-9);
    NEAR(s[1].occupancy, 2000, 1e-9);
    NEAR(s[0].miss_ratio, 0.1, 1e-9);
    NEAR(s[1].miss_ratio, 0.1, 1e-9);
    /* Caps that do not fit: a finite T*, occupancies add up to C, and no
     * program holds more than its cap. */
    p[0].lines_max = p[1].lines_max = 5000;
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 8000, LLC_CONTENTION_LRU, s, &info, err, sizeof err), 0);
    assert_true(isfinite(info.t_star));
    NEAR(s[0].occupancy + s[1].occupancy, 8000, 1e-5 * 8000);
    assert_true(s[0].occupancy <= 5000 + 1e-9 && s[1].occupancy <= 5000 + 1e-9);
    /* No cap: the streaming part grows without bound and fills the cache. */
    p[0].lines_max = p[1].lines_max = 0;
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 8000, LLC_CONTENTION_LRU, s, &info, err, sizeof err), 0);
    assert_true(isfinite(info.t_star));
    NEAR(s[0].occupancy + s[1].occupancy, 8000, 1e-5 * 8000);
    llc_statmodel_release(m);
}

static void random_hand_solved(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    /* Two streamers (every reference a first touch): R = 1, mu = a1 + a2,
     * occupancy in proportion to the rates. */
    struct llc_statmodel_model *s1 = synth_model_of_pairs(NULL, 0, 10);
    struct llc_contention_party p[3] = {{.model = s1, .rate = 1, .gamma = 1, .weight = 1},
                                        {.model = s1, .rate = 3, .gamma = 1, .weight = 1}};
    struct llc_contention_share s[3];
    struct llc_contention_info info;
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 1000, LLC_CONTENTION_RANDOM, s, &info, err, sizeof err),
        0);
    NEAR(info.mu, 4, 1e-9);
    NEAR(s[0].occupancy, 250, 1e-6);
    NEAR(s[1].occupancy, 750, 1e-6);
    assert_true(s[0].miss_ratio == 1);
    /* The streamer in the LRU model: F(d) = d, so T* = C / (a1 + a2) too. */
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 1000, LLC_CONTENTION_LRU, s, &info, err, sizeof err), 0);
    NEAR(info.t_star, 250, 1e-6);
    NEAR(s[1].occupancy, 750, 1e-4);

    /* One program whose reuse is always at distance 10, beside a streamer of
     * rate b: R = 1 - (1 - 1/C)^(10 mu / a), mu = b + a R. With a = 1,
     * b = 1, C = 20 solve by fixed-point iteration here. */
    const struct llc_statmodel_bucket_count ten[] = {{10, 1}};
    struct llc_statmodel_model *m = synth_model_of_pairs(ten, 1, 0);
    p[0] = (struct llc_contention_party){.model = m, .rate = 1, .gamma = 1, .weight = 1};
    p[1] = (struct llc_contention_party){.model = s1, .rate = 1, .gamma = 1, .weight = 1};
    double mu = 1;
    for (int it = 0; it < 10000; it++)
        mu = 1 + (1 - pow(1 - 1.0 / 20, 10 * mu));
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 20, LLC_CONTENTION_RANDOM, s, &info, err, sizeof err), 0);
    NEAR(info.mu, mu, 1e-9);
    NEAR(s[0].miss_ratio, mu - 1, 1e-9);
    NEAR(s[0].occupancy + s[1].occupancy, 20, 1e-9);
    NEAR(s[1].occupancy, 20 / mu, 1e-8);
    llc_statmodel_release(m);
    llc_statmodel_release(s1);
}

static void unprofiled_equals_streamer(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_uniform(0.7, 5000, 1e5);
    struct llc_statmodel_model *st = synth_model_of_pairs(NULL, 0, 10);
    const double lambda = 2.5e7;
    for (int pol = 0; pol < 2; pol++) {
        const enum llc_contention_policy base = pol ? LLC_CONTENTION_RANDOM : LLC_CONTENTION_LRU;
        struct llc_contention_party p1[2] = {
            {.model = a, .rate = 1e8, .gamma = 1, .weight = 1},
            {.model = st, .rate = lambda, .gamma = 1, .weight = 1}};
        struct llc_contention_party p2[2] = {p1[0], {.model = NULL, .lambda = lambda, .weight = 1}};
        struct llc_contention_share s1[2], s2[2];
        assert_int_equal(llc_contention_equilibrium(p1, 2, 4096, base, s1, NULL, err, sizeof err),
                         0);
        assert_int_equal(llc_contention_equilibrium(p2, 2, 4096, base, s2, NULL, err, sizeof err),
                         0);
        NEAR(s2[0].miss_ratio, s1[0].miss_ratio, 1e-7);
        NEAR(s2[1].occupancy, s1[1].occupancy, 1e-3);
        NEAR(s2[1].miss_rate, lambda, 1e-6);
        assert_true(isnan(s2[1].miss_ratio));
    }
    /* The bound from probe readings: the steepest phi / tau. */
    const double tau[] = {1e-5, 3e-5, 1e-4}, phi[] = {50, 120, 300};
    NEAR(llc_contention_unprofiled_lambda(tau, phi, 3), 5e6, 1e-6);
    llc_statmodel_release(a);
    llc_statmodel_release(st);
}

static void anchor_recovers_gamma(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m = model_uniform(0.9, 20000, 1e5);
    const double a = 1e9, gammas[] = {0.3, 0.9, 1.1, 1.6, 7};
    for (size_t k = 0; k < LLC_ARRAY_LEN(gammas); k++) {
        double tau[3] = {1e-6, 3.16e-6, 1e-5}, phi[3], g, rms;
        for (int j = 0; j < 3; j++)
            phi[j] = llc_statmodel_footprint(m, gammas[k] * a * tau[j]);
        assert_int_equal(llc_contention_anchor(m, a, tau, phi, 3, &g, &rms, err, sizeof err), 0);
        NEAR(log(g), log(gammas[k]), 1e-6);
        assert_true(rms < 1e-6);
        assert_int_equal(llc_contention_anchor_ok(g), gammas[k] > 0.8 && gammas[k] < 1.25);
    }
    double tau[1] = {1e-6}, phi[1] = {0}, g;
    assert_int_equal(llc_contention_anchor(m, a, tau, phi, 1, &g, NULL, err, sizeof err), -ENODATA);
    assert_true(g == 1);
    llc_statmodel_release(m);
}

static struct llc_contention_config cfg_of(double c, enum llc_contention_policy pol, bool coupling,
                                           bool skew)
{
    struct llc_contention_config cfg;
    llc_contention_config_default(&cfg);
    cfg.capacity = c;
    cfg.policy = pol;
    cfg.coupling = coupling;
    cfg.skew = skew;
    return cfg;
}

static void coupling_fixed_point(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_uniform(0.8, 60000, 1e5),
                               *b = model_uniform(0.95, 200000, 1e5);
    struct llc_contention_phase pa = {
        .model = a, .api = 0.4, .cpi0 = 0.8, .penalty = 100, .gamma = 1};
    struct llc_contention_phase pb = {
        .model = b, .api = 0.3, .cpi0 = 1.2, .penalty = 60, .gamma = 1};
    const struct llc_contention_phase *ph[2] = {&pa, &pb};
    const double freq[2] = {3e9, 2e9};
    for (int pol = 0; pol < 2; pol++) {
        struct llc_contention_config cfg =
            cfg_of(131072, pol ? LLC_CONTENTION_RANDOM : LLC_CONTENTION_LRU, true, false);
        struct llc_contention_share s[2], solo[2], fixed[2];
        struct llc_contention_info info;
        assert_int_equal(llc_contention_tuple(ph, freq, 2, &cfg, s, solo, &info, err, sizeof err),
                         0);
        assert_true(info.converged && info.iterations > 1);
        for (int i = 0; i < 2; i++) {
            /* CPI from the miss ratio, rate from the CPI: the fixed point holds. */
            NEAR(s[i].cpi, ph[i]->cpi0 + ph[i]->api * s[i].miss_ratio * ph[i]->penalty, 1e-12);
            NEAR(s[i].rate / (ph[i]->api * freq[i] / s[i].cpi), 1, 3 * LLC_CONTENTION_COUPLING_TOL);
            assert_true(s[i].miss_ratio >= solo[i].miss_ratio - 1e-12);
            assert_true(s[i].cpi >= solo[i].cpi - 1e-12);
            NEAR(solo[i].rate / (ph[i]->api * freq[i] / solo[i].cpi), 1,
                 3 * LLC_CONTENTION_COUPLING_TOL);
        }
        /* The equilibrium at the fixed point's rates gives back the same shares. */
        struct llc_contention_party p[2] = {
            {.model = a, .rate = s[0].rate, .gamma = 1, .weight = 1},
            {.model = b, .rate = s[1].rate, .gamma = 1, .weight = 1}};
        assert_int_equal(llc_contention_equilibrium(p, 2, cfg.capacity,
                                                    llc_contention_base_policy(cfg.policy), fixed,
                                                    NULL, err, sizeof err),
                         0);
        NEAR(fixed[0].miss_ratio, s[0].miss_ratio, 1e-9);
        NEAR(fixed[1].occupancy, s[1].occupancy, 1e-6 * cfg.capacity);
        /* No penalty: coupling changes nothing against fixed solo rates. */
        pa.penalty = pb.penalty = 0;
        struct llc_contention_share c0[2], n0[2];
        assert_int_equal(llc_contention_tuple(ph, freq, 2, &cfg, c0, NULL, NULL, err, sizeof err),
                         0);
        cfg.coupling = false;
        assert_int_equal(llc_contention_tuple(ph, freq, 2, &cfg, n0, NULL, NULL, err, sizeof err),
                         0);
        NEAR(c0[0].miss_ratio, n0[0].miss_ratio, 1e-9);
        NEAR(c0[1].rate, 2e9 * 0.3 / 1.2, 1e-3);
        pa.penalty = 100;
        pb.penalty = 60;
    }
    llc_statmodel_release(a);
    llc_statmodel_release(b);
}

/* CV above 0.5 puts the z = -2 stratum at w = 0 (sets without the
 * program's lines): figures stay finite under both models and equal the
 * 4 other strata's by hand. Beside a co-runner that fits, such a stratum
 * has no misses at all (mu = 0): solving it gave the random model a NaN
 * occupancy. */
static void skew_empty_stratum(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_uniform(0.9, 100000, 1e5),
                               *b = model_uniform(1, 2000, 1e5);
    struct llc_contention_phase pa = {
        .model = a, .api = 0.4, .cpi0 = 1, .penalty = 80, .gamma = 1, .cv = 0.9, .lines = 90000};
    struct llc_contention_phase pb = {
        .model = b, .api = 0.4, .cpi0 = 1, .penalty = 80, .gamma = 1, .lines = 2000};
    const struct llc_contention_phase *ph[2] = {&pa, &pb};
    const double freq[2] = {3e9, 3e9};
    for (int pol = 0; pol < 2; pol++) {
        const enum llc_contention_policy base = pol ? LLC_CONTENTION_RANDOM : LLC_CONTENTION_LRU;
        struct llc_contention_config cfg = cfg_of(131072, base, false, true);
        struct llc_contention_share sk[2];
        assert_int_equal(llc_contention_tuple(ph, freq, 2, &cfg, sk, NULL, NULL, err, sizeof err),
                         0);
        assert_true(isfinite(sk[0].miss_ratio) && isfinite(sk[0].occupancy));
        double num = 0, den = 0, occ = 0;
        for (int g = 1; g < 5; g++) {
            const double w = 1 + llc_contention_stratum_z[g] * 0.9,
                         pi = llc_contention_stratum_pi[g];
            struct llc_contention_party p[2] = {
                {.model = a, .rate = sk[0].rate, .gamma = 1, .weight = w, .lines_max = 90000},
                {.model = b, .rate = sk[1].rate, .gamma = 1, .weight = 1, .lines_max = 2000}};
            struct llc_contention_share s[2];
            assert_int_equal(
                llc_contention_equilibrium(p, 2, 131072, base, s, NULL, err, sizeof err), 0);
            num += pi * w * s[0].miss_ratio;
            den += pi * w;
            occ += pi * s[0].occupancy;
        }
        NEAR(sk[0].miss_ratio, num / den, 1e-12);
        double pis = 0;
        for (int g = 0; g < 5; g++)
            pis += llc_contention_stratum_pi[g];
        NEAR(sk[0].occupancy, occ / pis, 1e-6); /* the empty stratum holds no lines */
    }
    llc_statmodel_release(a);
    llc_statmodel_release(b);
}

static void skew_reduces_and_costs(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *a = model_uniform(0.9, 100000, 1e5),
                               *b = model_uniform(0.9, 150000, 1e5);
    struct llc_contention_phase pa = {
        .model = a, .api = 0.4, .cpi0 = 1, .penalty = 80, .gamma = 1, .cv = 0};
    struct llc_contention_phase pb = {.model = b, .api = 0.4, .cpi0 = 1, .penalty = 80, .gamma = 1};
    const struct llc_contention_phase *ph[2] = {&pa, &pb};
    const double freq[2] = {3e9, 3e9};
    struct llc_contention_config cfg = cfg_of(131072, LLC_CONTENTION_LRU, false, true);
    struct llc_contention_share on[2], off[2], sk[2];
    assert_int_equal(llc_contention_tuple(ph, freq, 2, &cfg, on, NULL, NULL, err, sizeof err), 0);
    cfg.skew = false;
    assert_int_equal(llc_contention_tuple(ph, freq, 2, &cfg, off, NULL, NULL, err, sizeof err), 0);
    NEAR(on[0].miss_ratio, off[0].miss_ratio, 1e-15); /* CV 0: the plain model */
    pa.cv = 0.4;
    cfg.skew = true;
    assert_int_equal(llc_contention_tuple(ph, freq, 2, &cfg, sk, NULL, NULL, err, sizeof err), 0);
    /* By hand: 5 equilibria at the rates used (each program's solo rate,
     * its own skew included), the target's footprint
     * weighted by w_g = 1 + z_g CV. */
    double num = 0, den = 0, occ = 0, pis = 0;
    for (int g = 0; g < 5; g++) {
        const double w = 1 + llc_contention_stratum_z[g] * 0.4, pi = llc_contention_stratum_pi[g];
        struct llc_contention_party p[2] = {
            {.model = a, .rate = sk[0].rate, .gamma = 1, .weight = w},
            {.model = b, .rate = sk[1].rate, .gamma = 1, .weight = 1}};
        struct llc_contention_share s[2];
        assert_int_equal(
            llc_contention_equilibrium(p, 2, 131072, LLC_CONTENTION_LRU, s, NULL, err, sizeof err),
            0);
        num += pi * w * s[0].miss_ratio;
        den += pi * w;
        occ += pi * s[0].occupancy;
        pis += pi;
    }
    NEAR(sk[0].miss_ratio, num / den, 1e-12);
    NEAR(sk[0].occupancy, occ / pis, 1e-6);
    /* Uneven sets cost this program misses (its curve is convex here). */
    assert_true(sk[0].miss_ratio > off[0].miss_ratio + 1e-3);
    llc_statmodel_release(a);
    llc_statmodel_release(b);
}

static void baselines_by_hand(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    /* One set of 16 ways. Program 1: every reuse at distance 3, F(3) = 3:
     * LRU position 4. Program 2: half at distance 0 (position 1), half at
     * distance 9 (F(9) = 1 + 8 / 2 = 5: position 6). */
    const struct llc_statmodel_bucket_count p1[] = {{3, 1}}, p2[] = {{0, 1}, {9, 1}};
    struct llc_statmodel_model *m1 = synth_model_of_pairs(p1, 1, 0),
                               *m2 = synth_model_of_pairs(p2, 2, 0);
    struct llc_contention_phase a = {
        .model = m1, .api = 0.2, .cpi0 = 1, .penalty = 100, .gamma = 1};
    struct llc_contention_phase b = {
        .model = m2, .api = 0.2, .cpi0 = 1, .penalty = 100, .gamma = 1};
    const struct llc_contention_phase *ph[2] = {&a, &b};
    const double freq[2] = {1e9, 1e9};
    struct llc_contention_config cfg = cfg_of(16, LLC_CONTENTION_LRU, false, false);
    struct llc_contention_share s[2];
    /* FOA, equal access rates: 8 ways each, both fit. */
    assert_int_equal(
        llc_contention_baseline(ph, freq, 2, &cfg, LLC_CONTENTION_FOA, s, err, sizeof err), 0);
    assert_true(s[0].miss_ratio == 0 && s[1].miss_ratio == 0);
    NEAR(s[0].occupancy, 8, 1e-12);
    /* SDC: program 2 wins way 1 (its position-1 hits), every tie after goes
     * to program 1: program 2 keeps 1 way, misses its position-6 half. */
    assert_int_equal(
        llc_contention_baseline(ph, freq, 2, &cfg, LLC_CONTENTION_SDC, s, err, sizeof err), 0);
    NEAR(s[0].miss_ratio, 0, 1e-15);
    NEAR(s[1].miss_ratio, 0.5, 1e-15);
    NEAR(s[1].occupancy, 1, 1e-15);
    NEAR(s[1].cpi, 1 + 0.2 * 0.5 * 100, 1e-12);
    /* FOA with rates 1 : 4: program 1 gets 3.2 ways, position 4 counts 0.2. */
    b.api = 0.8;
    assert_int_equal(
        llc_contention_baseline(ph, freq, 2, &cfg, LLC_CONTENTION_FOA, s, err, sizeof err), 0);
    NEAR(s[0].miss_ratio, 0.8, 1e-12);
    NEAR(s[0].occupancy, 3.2, 1e-12);
    NEAR(s[1].miss_ratio, 0, 1e-15);
    llc_statmodel_release(m1);
    llc_statmodel_release(m2);
}

static void timeline_two_phases(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *small = model_uniform(0.9, 2000, 1e5),
                               *big = model_uniform(0.9, 300000, 1e5);
    struct llc_contention_phase pa[2] = {
        {.model = small, .api = 0.4, .cpi0 = 1, .penalty = 100, .gamma = 1},
        {.model = big, .api = 0.4, .cpi0 = 1, .penalty = 100, .gamma = 1}};
    struct llc_contention_phase pb[1] = {
        {.model = big, .api = 0.3, .cpi0 = 1, .penalty = 100, .gamma = 1}};
    const int wa[4] = {0, 1, 0, 1}, wb[3] = {0, 0, 0};
    const double ia[4] = {1e8, 1e8, 1e8, 1e8}, ib[3] = {1e8, 1e8, 1e8};
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
    struct llc_contention_config cfg = cfg_of(131072, LLC_CONTENTION_LRU, true, false);
    struct llc_contention_run *r = NULL;
    assert_int_equal(llc_contention_timeline(progs, 2, &cfg, &r, err, sizeof err), 0);
    assert_int_equal(r->n_tuples, 2); /* (0,0) and (1,0), each solved once */
    for (int i = 0; i < 2; i++) {
        const struct llc_contention_prog_summary *u = &r->summary[i];
        NEAR(u->instructions, i ? 3e8 : 4e8, 1);
        assert_true(u->slowdown >= 1 - 1e-12);
        NEAR(u->cpi, u->seconds * 3e9 / u->instructions, 1e-9);
    }
    /* Program 1's time in phase tuple k adds up; tuples' instructions are
     * consistent with their CPI. */
    double t = 0, ins_a = 0;
    for (size_t k = 0; k < r->n_segments; k++) {
        const struct llc_contention_segment *s = &r->segments[k];
        NEAR(s->t0, t, 1e-12 * (1 + t));
        t += s->dt;
        if (t <= r->summary[0].seconds * (1 + 1e-12))
            ins_a += s->dt * 3e9 / r->tuples[s->tuple].share[0].cpi;
    }
    NEAR(t, r->total_s, 1e-12 * t);
    NEAR(ins_a, 4e8, 1);
    /* The expected time by hand: program 1 alternates phases; the
     * small-phase windows run at the (0,0) CPI, the big ones at (1,0). */
    const struct llc_contention_tuple_result *t00 = &r->tuples[0], *t10 = &r->tuples[1];
    assert_int_equal(t00->phase[0], 0);
    const double expect_a = 2e8 * (t00->share[0].cpi + t10->share[0].cpi) / 3e9;
    NEAR(r->summary[0].seconds, expect_a, 1e-9 * expect_a);
    const double solo_a = 2e8 * (t00->solo[0].cpi + t10->solo[0].cpi) / 3e9;
    NEAR(r->summary[0].slowdown, expect_a / solo_a, 1e-9);
    assert_true(r->tuples[1].share[1].miss_ratio > r->tuples[0].share[1].miss_ratio);
    /* Windows of 1e8 instructions last far longer than T*: no warning. */
    assert_int_equal(r->warn_segments, 0);
    assert_true(r->worst_tstar_ratio > 0 && r->worst_tstar_ratio < 0.1);
    const double worst = r->worst_tstar_ratio;
    llc_contention_run_free(r);
    /* Windows 1e4 times shorter: T* is the same, the ratio 1e4 times larger. */
    const double ia_short[4] = {1e4, 1e4, 1e4, 1e4}, ib_short[3] = {1e4, 1e4, 1e4};
    struct llc_contention_prog shortp[2] = {progs[0], progs[1]};
    shortp[0].window_instructions = ia_short;
    shortp[1].window_instructions = ib_short;
    assert_int_equal(llc_contention_timeline(shortp, 2, &cfg, &r, err, sizeof err), 0);
    NEAR(r->worst_tstar_ratio, worst * 1e4, 1e-6 * worst * 1e4);
    assert_true(r->warn_segments == r->n_segments &&
                fabs(r->warn_seconds - r->total_s) < 1e-12 * r->total_s);
    const double worst_short = r->worst_tstar_ratio;
    llc_contention_run_free(r);
    /* The same short windows all in one phase: the cache settles once per
     * phase run (4 and 3 windows), so the worst ratio drops by 3 or more. */
    const int wa_one[4] = {1, 1, 1, 1};
    shortp[0].window_phase = wa_one;
    assert_int_equal(llc_contention_timeline(shortp, 2, &cfg, &r, err, sizeof err), 0);
    assert_true(r->worst_tstar_ratio > 0 && r->worst_tstar_ratio <= worst_short / 3);
    llc_contention_run_free(r);
    llc_statmodel_release(small);
    llc_statmodel_release(big);
}

/* First touches of a cold-start phase of r references from age a, as
 * docs/METHODS.md §12.2 writes them: c_s r + k (F(a + r) - F(a) - c r). */
static double firsts_of(const struct llc_statmodel_model *m, double f, double r, double a)
{
    const double c = llc_statmodel_model_dangling(m) / llc_statmodel_model_total(m);
    const double cs = llc_contention_steady_share(m, f, r), k = (1 - cs) / (1 - c);
    return cs * r + k * (llc_statmodel_footprint(m, a + r) - llc_statmodel_footprint(m, a) - c * r);
}

static double firsts_from(const struct llc_statmodel_model *m, double r, double a)
{
    return firsts_of(m, 0, r, a);
}

/* The run's first touches given apart from the model (an uncensored
 * histogram's few dangling samples describe an endless run): a phase from
 * an empty cache makes f R of them, the warm-up's and the rest spread;
 * 0 is the model's own share, and a count below what the warm-up explains
 * leaves no new data. */
static void steady_share_from_recorded_firsts(void **state)
{
    (void)state;
    struct llc_statmodel_model *m = model_uniform(0.9, 3000, 1e5);
    const double r = 2e4, c = llc_statmodel_model_dangling(m) / llc_statmodel_model_total(m);
    /* the warm-up's own first touches: more than the model's c r */
    const double warm = firsts_of(m, 1e-9, r, 0);
    assert_true(llc_contention_steady_share(m, 1e-9, r) == 0 && warm > c * r + 100);
    assert_true(llc_contention_steady_share(m, 0, r) == 0);
    NEAR(firsts_of(m, 0, r, 0), warm, 1e-9 * r);
    for (int i = 1; i <= 3; i++) {
        const double f = warm / r + 0.05 * i;
        NEAR(firsts_of(m, f, r, 0), f * r, 1e-9 * r);
        assert_true(llc_contention_steady_share(m, f, r) > 0.05 * (i - 1));
    }
    /* a long run: the model's own share leaves new data, and it is c */
    const double rl = 1e6;
    assert_true(llc_contention_steady_share(m, 0, rl) > 0);
    assert_true(llc_contention_steady_share(m, 0, rl) == llc_contention_steady_share(m, c, rl));
    NEAR(firsts_of(m, 0, rl, 0), c * rl, 1e-9 * rl);
    llc_statmodel_release(m);
}

/* The starting age that reproduces a phase's measured first touches: 0
 * for all of its last touches (its data its own), none (warm) for no more
 * than its steady share, and in between the age whose first touches are
 * the ones asked, falling as they rise. In a timeline the phase then
 * starts warm, or young at that age. */
/* The ages [*a, *b) of the timeline's young class `key`. */
static void class_ages(int key, double *a, double *b)
{
    const int level = key / SM_CONTENTION_CLASS_STRIDE;
    const double k = key % SM_CONTENTION_CLASS_STRIDE, per = 2.0 * (1 << level);
    *a = exp2(k / per) - 1;
    *b = exp2((k + 1) / per) - 1;
}

static void cold_age_from_first_touches(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m = model_uniform(0.9, 3000, 1e5);
    const double r = 2e4, cs = llc_contention_steady_share(m, 0, r);
    const double full = firsts_from(m, r, 0), floor_ = cs * r;
    assert_true(full > floor_ + 1000); /* a warm-up that explains first touches */
    assert_true(llc_contention_cold_age(m, 0, r, r, full) == 0);
    assert_true(llc_contention_cold_age(m, 0, r, r, 2 * full) == 0);
    assert_true(isinf(llc_contention_cold_age(m, 0, r, r, floor_)));
    double prev = 0;
    for (int i = 3; i >= 1; i--) {
        const double want = floor_ + (full - floor_) * i / 4;
        const double a0 = llc_contention_cold_age(m, 0, r, r, want);
        assert_true(a0 > prev && isfinite(a0));
        NEAR(firsts_from(m, r, a0), want, 1e-6 * want);
        prev = a0;
    }
    /* One phase, 4 windows of 10,000 references: young from an empty cache,
     * warm from the start when its data is not its own. */
    struct llc_contention_phase ph = {
        .model = m, .api = 0.5, .cpi0 = 1, .penalty = 100, .gamma = 1, .references = 4e4};
    const int wp[4] = {0, 0, 0, 0};
    const double wi[4] = {2e4, 2e4, 2e4, 2e4};
    const struct llc_contention_prog prog = {.freq_hz = 3e9,
                                             .phases = &ph,
                                             .n_phases = 1,
                                             .window_phase = wp,
                                             .window_instructions = wi,
                                             .n_windows = 4};
    struct llc_contention_config cfg = cfg_of(131072, LLC_CONTENTION_LRU, true, false);
    double mr[2];
    for (int warm = 0; warm < 2; warm++) {
        ph.age0 = warm ? INFINITY : 0;
        struct llc_contention_run *run = NULL;
        assert_int_equal(llc_contention_timeline(&prog, 1, &cfg, &run, err, sizeof err), 0);
        bool young = false;
        for (size_t t = 0; t < run->n_tuples; t++)
            young |= run->tuples[t].phase[1] >= 0;
        assert_true(young == !warm);
        mr[warm] = run->summary[0].miss_ratio;
        llc_contention_run_free(run);
    }
    assert_true(mr[1] < mr[0] - 0.01);
    /* A phase of windows from anywhere in the run (program_age) is as old
     * as its program: its first window (after 3 windows of phase 0) runs
     * through the age classes of 3 to 4 windows of references, not of 0
     * to 1 window; a segment never spans two classes, so every class on
     * the way (but those narrower than a reference) is met. */
    struct llc_contention_phase two[2] = {ph, ph};
    two[0].age0 = two[1].age0 = 0;
    const int wp2[4] = {0, 0, 0, 1};
    struct llc_contention_prog prog2 = prog;
    prog2.phases = two;
    prog2.n_phases = 2;
    prog2.window_phase = wp2;
    double lo[2], hi[2], lo_end[2];
    size_t met[2];
    bool warm_met[2], finest[2];
    cfg.first_touch_tol = 0; /* cut every young window at its finest classes */
    for (int pa = 0; pa < 2; pa++) {
        two[1].program_age = pa;
        struct llc_contention_run *run = NULL;
        assert_int_equal(llc_contention_timeline(&prog2, 1, &cfg, &run, err, sizeof err), 0);
        lo[pa] = INFINITY;
        hi[pa] = -1;
        lo_end[pa] = 0;
        met[pa] = 0;
        warm_met[pa] = false;
        finest[pa] = true;
        for (size_t t = 0; t < run->n_tuples; t++)
            if (run->tuples[t].phase[0] == 1) {
                const int c = run->tuples[t].phase[1];
                met[pa]++;
                if (c < 0) {
                    warm_met[pa] = true;
                    continue;
                }
                finest[pa] &= c / SM_CONTENTION_CLASS_STRIDE == SM_CONTENTION_CLASS_LEVELS - 1;
                double a, b;
                class_ages(c, &a, &b);
                if (a < lo[pa]) {
                    lo[pa] = a;
                    lo_end[pa] = b;
                }
                hi[pa] = fmax(hi[pa], a);
            }
        llc_contention_run_free(run);
    }
    const double own = 2e4 * 0.5, all = 4 * 2e4 * 0.5; /* references at its end */
    assert_true(finest[0] && finest[1]);
    assert_false(warm_met[0]);
    assert_true(lo[0] == 0);
    assert_true(hi[0] < own);
    /* every finest class on the way is met, but those under a reference wide */
    size_t wide = 0;
    const double per = 2.0 * (1 << (SM_CONTENTION_CLASS_LEVELS - 1));
    for (int k = 0; exp2(k / per) - 1 < own; k++)
        wide += exp2((k + 1) / per) - exp2(k / per) >= 1;
    assert_true(met[0] + 2 >= wide);
    assert_true(warm_met[1] || (lo[1] <= 0.75 * all && 0.75 * all < lo_end[1]));
    assert_true(hi[1] < all);
    /* With the default tolerance a window is cut only where its first
     * touches fall steeply: the phase's own first window from an empty
     * cache is, the old phase's (3 windows of its data before) is one
     * segment priced halfway through it. */
    cfg.first_touch_tol = 1e-3;
    for (int pa = 0; pa < 2; pa++) {
        two[1].program_age = pa;
        struct llc_contention_run *run = NULL;
        assert_int_equal(llc_contention_timeline(&prog2, 1, &cfg, &run, err, sizeof err), 0);
        size_t n1 = 0;
        int c1 = -2;
        for (size_t t = 0; t < run->n_tuples; t++)
            if (run->tuples[t].phase[0] == 1) {
                n1++;
                c1 = run->tuples[t].phase[1];
            }
        if (pa)
            assert_true(n1 == 1 && (c1 == (int)floor(2 * log2(1 + 0.875 * all)) || c1 == -1));
        else
            assert_true(n1 > 1);
        llc_contention_run_free(run);
    }
    llc_statmodel_release(m);
}

/* The layout's strata (docs/METHODS.md §12.3): sets holding k ~ Poisson(lam)
 * lines. Their probabilities add up to 1, their mean w is 1 and their
 * variance 1 / lam less what the runs of k leave out (in 2 runs, the
 * co-runners' strata, at least half of it: a normal's halves keep 2 / pi);
 * the conflict share of
 * a uniform program alone, E[(k - W)+] / lam, comes out within 4% of the
 * exact sum at lam = 12, W = 16 (the 5 key values of a CV of 1 / sqrt(12):
 * 20% below). */
static void layout_strata_are_poisson(void **state)
{
    (void)state;
    const double lams[] = {0.001, 0.3, 2, 12, 100, 5000, 1e6, 1e12};
    for (size_t i = 0; i < 2 * LLC_ARRAY_LEN(lams); i++) {
        const double lam = lams[i % LLC_ARRAY_LEN(lams)];
        const size_t runs = i < LLC_ARRAY_LEN(lams) ? LLC_CONTENTION_LAYOUT_STRATA : 2;
        struct llc_contention_layout st;
        llc_contention_layout_strata_runs(lam, runs, &st);
        const size_t n = st.n;
        const double *w = st.w, *pi = st.pi;
        assert_true(n >= 1 && n <= runs);
        double p = 0, m = 0, v = 0;
        for (size_t g = 0; g < n; g++) {
            assert_true(pi[g] > 0 && w[g] >= 0);
            if (g > 0)
                assert_true(w[g] > w[g - 1]);
            p += pi[g];
            m += pi[g] * w[g];
            v += pi[g] * (w[g] - 1) * (w[g] - 1);
        }
        assert_true(fabs(p - 1) < 1e-9);
        assert_true(fabs(m - 1) < 1e-9);
        assert_true(v <= 1 / lam * (1 + 1e-9) && v > (runs > 2 ? 0.9 : 0.5) / lam);
    }
    const double lam = 12;
    const unsigned ways = 16;
    double exact = 0;
    for (unsigned k = ways + 1; k < 200; k++)
        exact += (k - ways) * exp(k * log(lam) - lam - lgamma(k + 1.0));
    struct llc_contention_layout st;
    llc_contention_layout_strata(lam, &st);
    double strata = 0, keys = 0;
    for (size_t g = 0; g < st.n; g++)
        strata += st.pi[g] * fmax(0, st.w[g] * lam - ways);
    for (size_t g = 0; g < LLC_CONTENTION_STRATA; g++)
        keys += llc_contention_stratum_pi[g] *
                fmax(0, fmax(0, 1 + llc_contention_stratum_z[g] / sqrt(lam)) * lam - ways);
    print_message("  E[(k - W)+] / lam: exact %.4f, layout strata %.4f, 5 key values %.4f\n",
                  exact / lam, strata / lam, keys / lam);
    assert_true(fabs(strata - exact) < 0.04 * exact);
    assert_true(keys < 0.85 * exact);
}

/* A party whose new data is below the root's tolerance (a weight of
 * 1e-17: a rounding of 1 + beta (w - 1)) while it has no bound on its
 * lines: mu = 0, nothing evicted, and its every-line-stays occupancy is
 * at most the cache (it used to be infinite, and the shares' scaling to
 * the cache then made it NaN). */
static void negligible_party_holds_finite_lines(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *fits = model_uniform(1, 100, 1e5),
                               *fresh = model_uniform(0.5, 100, 1e5);
    const struct llc_contention_party p[2] = {
        {.model = fits, .rate = 1, .gamma = 1, .weight = 1, .lines_max = 100},
        {.model = fresh, .rate = 2, .gamma = 1, .weight = 1e-17, .cold = true, .steady = 0.5}};
    struct llc_contention_share out[2];
    struct llc_contention_info info;
    assert_int_equal(
        llc_contention_equilibrium(p, 2, 1000, LLC_CONTENTION_RANDOM, out, &info, err, sizeof err),
        0);
    for (int i = 0; i < 2; i++)
        assert_true(isfinite(out[i].occupancy) && out[i].occupancy >= 0 &&
                    out[i].occupancy <= 1000 * (1 + 1e-9));
    llc_statmodel_release(fits);
    llc_statmodel_release(fresh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_strata_are_poisson),
        cmocka_unit_test(lru_hand_solved),
        cmocka_unit_test(lru_single_is_statstack),
        cmocka_unit_test(lru_capped_footprints_fit),
        cmocka_unit_test(random_hand_solved),
        cmocka_unit_test(unprofiled_equals_streamer),
        cmocka_unit_test(anchor_recovers_gamma),
        cmocka_unit_test(coupling_fixed_point),
        cmocka_unit_test(skew_reduces_and_costs),
        cmocka_unit_test(skew_empty_stratum),
        cmocka_unit_test(baselines_by_hand),
        cmocka_unit_test(timeline_two_phases),
        cmocka_unit_test(cold_age_from_first_touches),
        cmocka_unit_test(steady_share_from_recorded_firsts),
        cmocka_unit_test(negligible_party_holds_finite_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
