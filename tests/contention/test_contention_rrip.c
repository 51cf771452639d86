/* statmodel/contention: RRIP's scan resistance as two LRU clocks
 * (docs/METHODS.md §12.4): a protection factor of 1 is LRU, the solution
 * is the fixed point the method states, and a scan beside reused data
 * loses space to it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/contention.h"
#include "llcprobe/statmodel.h"
#include "synth.h"

#define CAP 4096.0
#define WAYS 16u

/* A power-law reuse (1% first touches) at rate 1 and a scan (nearly every
 * reference a first touch) at rate `scan_rate`. */
struct pair {
    struct llc_statmodel_model *reused, *scan;
    struct llc_contention_party p[2];
};

static void pair_make(struct pair *z, double scan_rate, double protect)
{
    const struct llc_statmodel_bucket_count once[] = {{0, 1}};
    z->reused = synth_model_power(0.01);
    z->scan = synth_model_of_pairs(once, 1, 1e6);
    assert_non_null(z->reused);
    assert_non_null(z->scan);
    z->p[0] = (struct llc_contention_party){
        .model = z->reused, .rate = 1, .gamma = 1, .weight = 1, .protect = protect};
    z->p[1] = (struct llc_contention_party){
        .model = z->scan, .rate = scan_rate, .gamma = 1, .weight = 1, .protect = protect};
}

static void pair_release(struct pair *z)
{
    llc_statmodel_release(z->reused);
    llc_statmodel_release(z->scan);
}

static void solve(const struct llc_contention_party *p, size_t n, unsigned ways,
                  struct llc_contention_share *s, struct llc_contention_info *info)
{
    char err[LLC_ERRLEN];
    const int rc =
        ways ? llc_contention_equilibrium_assoc(p, n, CAP, ways, s, info, err, sizeof err)
             : llc_contention_equilibrium(p, n, CAP, LLC_CONTENTION_LRU, s, info, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
}

/* protect = 1: both clocks are one, and the figures are LRU's. */
static void protect_one_is_lru(void **state)
{
    (void)state;
    for (unsigned ways = 0; ways <= WAYS; ways += WAYS) {
        struct pair lru, one;
        pair_make(&lru, 2, 0);
        pair_make(&one, 2, 1);
        struct llc_contention_share a[2], b[2];
        struct llc_contention_info ia, ib;
        solve(lru.p, 2, ways, a, &ia);
        solve(one.p, 2, ways, b, &ib);
        for (size_t i = 0; i < 2; i++) {
            NEAR(b[i].miss_ratio, a[i].miss_ratio, 1e-6);
            NEAR(b[i].occupancy, a[i].occupancy, 1e-3 * CAP / 4096);
        }
        pair_release(&lru);
        pair_release(&one);
    }
}

/* The solution with protect k is the stationary state of the two clocks:
 * the LRU equilibrium of each program split into its protected lines
 * (footprint at k times the distance, weight h) and the rest (weight 1 -
 * h) has g_p, g_f with h = g_f / (1 - g_p + g_f), and its occupancies are
 * the programs' and add up to C. */
static void fixed_point_holds(void **state)
{
    (void)state;
    const double k = LLC_CONTENTION_RRIP_PROTECT;
    struct pair z;
    pair_make(&z, 2, k);
    struct llc_contention_share s[2], t[4];
    struct llc_contention_info info;
    solve(z.p, 2, 0, s, &info);
    struct llc_contention_party q[4];
    for (size_t i = 0; i < 2; i++) {
        const double h = fmin(fmax(1 - s[i].miss_ratio, 1e-9), 1 - 1e-9);
        q[2 * i] = z.p[i];
        q[2 * i].protect = 0;
        q[2 * i].gamma *= k;
        q[2 * i].weight = h;
        q[2 * i + 1] = z.p[i];
        q[2 * i + 1].protect = 0;
        q[2 * i + 1].weight = 1 - h;
    }
    solve(q, 4, 0, t, &info);
    double occ = 0;
    for (size_t i = 0; i < 2; i++) {
        const double gp = 1 - t[2 * i].miss_ratio, gf = 1 - t[2 * i + 1].miss_ratio;
        NEAR(1 - s[i].miss_ratio, gf / (1 - gp + gf), 1e-5);
        NEAR(s[i].occupancy, t[2 * i].occupancy + t[2 * i + 1].occupancy, 1e-2);
        occ += s[i].occupancy;
    }
    NEAR(occ, CAP, 1e-6 * CAP);
    /* the scan is never reused: every reference misses, nothing protected */
    NEAR(s[1].miss_ratio, 1, 1e-6);
    pair_release(&z);
}

/* Beside a scan, the reused program keeps more of its lines than under
 * LRU and misses less; the scan holds less. Fully associative and in
 * 16-way sets (where the occupancies add up to at most C). */
static void scan_loses_space(void **state)
{
    (void)state;
    for (unsigned ways = 0; ways <= WAYS; ways += WAYS) {
        struct pair lru, rrip;
        pair_make(&lru, 2, 0);
        pair_make(&rrip, 2, LLC_CONTENTION_RRIP_PROTECT);
        struct llc_contention_share a[2], b[2];
        struct llc_contention_info ia, ib;
        solve(lru.p, 2, ways, a, &ia);
        solve(rrip.p, 2, ways, b, &ib);
        assert_true(b[0].miss_ratio < a[0].miss_ratio - 1e-3);
        assert_true(b[0].occupancy > a[0].occupancy + 1);
        assert_true(b[1].occupancy < a[1].occupancy - 1);
        NEAR(b[1].miss_ratio, 1, 1e-6);
        assert_true(b[0].occupancy + b[1].occupancy <= 1.02 * CAP);
        pair_release(&lru);
        pair_release(&rrip);
    }
}

/* When everything fits there is nothing to protect from: LRU's figures. */
static void fitting_is_lru(void **state)
{
    (void)state;
    struct pair lru, rrip;
    pair_make(&lru, 2, 0);
    pair_make(&rrip, 2, LLC_CONTENTION_RRIP_PROTECT);
    for (size_t i = 0; i < 2; i++) {
        lru.p[i].lines_max = rrip.p[i].lines_max = 1000; /* 2000 of 4096 lines in all */
    }
    struct llc_contention_share a[2], b[2];
    struct llc_contention_info ia, ib;
    solve(lru.p, 2, 0, a, &ia);
    solve(rrip.p, 2, 0, b, &ib);
    assert_true(isinf(ia.t_star));
    for (size_t i = 0; i < 2; i++) {
        NEAR(b[i].miss_ratio, a[i].miss_ratio, 1e-9);
        NEAR(b[i].occupancy, a[i].occupancy, 1e-6);
    }
    pair_release(&lru);
    pair_release(&rrip);
}

static void policies_protected(void **state)
{
    (void)state;
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_SRRIP, false) > 1);
    /* a victim LLC hands a line that hits to the private cache */
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_SRRIP, true) == 0);
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_LRU, false) == 0);
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_RANDOM, false) == 0);
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_PLRU, false) == 0);
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_BRRIP, false) == 0);
    /* DRRIP follows SRRIP until its duel picks BRRIP */
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_DRRIP, false) > 1);
    assert_true(llc_contention_rrip_protect(LLC_CONTENTION_DRRIP, true) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(protect_one_is_lru), cmocka_unit_test(fixed_point_holds),
        cmocka_unit_test(scan_loses_space),   cmocka_unit_test(fitting_is_lru),
        cmocka_unit_test(policies_protected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
