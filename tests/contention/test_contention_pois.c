/* statmodel/contention's P(Pois(x) < w) (contention_pois.c): the exact sum
 * against GSL's regularized upper incomplete gamma Q(w, x), which is the
 * same probability; the table against the exact sum between and at its
 * nodes for every w it covers; and set-associative LRU equilibria with the
 * tables against those without.
 *
 * Tolerances (what the tables promise, docs/METHODS.md §12.2): the exact
 * sum within 1e-13 of Q absolute and 1e-10 relative where Q >= 1e-300;
 * the table within 5e-10 of the exact sum for w < 8 (P's fourth
 * derivative near x = 0 is up to 3 there) and 4e-12 from w = 8 on (it
 * falls with w); an equilibrium's miss ratios within 1e-9, occupancies
 * within 1e-9 of the cache. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>

#include "llcprobe/common.h"
#include "llcprobe/contention.h"
#include "llcprobe/statmodel.h"
#include "contention_internal.h"
#include "synth.h"

static void exact_is_the_incomplete_gamma(void **state)
{
    (void)state;
    gsl_set_error_handler_off();
    static const unsigned ws[] = {1, 2, 3, 4, 7, 8, 11, 12, 16, 20, 24, 32, 48, 63, 64, 65, 80};
    double worst_abs = 0, worst_rel = 0;
    for (size_t k = 0; k < LLC_ARRAY_LEN(ws); k++) {
        const unsigned w = ws[k];
        for (double x = 1e-6; x < 400; x *= 1.07) {
            gsl_sf_result q;
            if (gsl_sf_gamma_inc_Q_e(w, x, &q) != GSL_SUCCESS)
                continue;
            const double p = sm_contention_pois_hit(x, w), d = fabs(p - q.val);
            worst_abs = fmax(worst_abs, d);
            if (q.val >= 1e-300)
                worst_rel = fmax(worst_rel, d / q.val);
        }
    }
    printf("exact sum against Q(w, x): max abs %.3g, max rel %.3g\n", worst_abs, worst_rel);
    assert_true(worst_abs <= 1e-13);
    assert_true(worst_rel <= 1e-10);
    assert_true(sm_contention_pois_hit(0, 16) == 1);
    assert_true(sm_contention_pois_hit(NAN, 16) == 1);
    assert_true(sm_contention_pois_hit(800, 16) == 0);
}

static void table_is_the_exact_sum(void **state)
{
    (void)state;
    double worst_small = 0, worst = 0; /* w < 8, w >= 8 */
    unsigned worst_w = 0;
    for (unsigned w = 1; w <= LLC_CONTENTION_POIS_WAYS; w++) {
        struct sm_pois_table *t = sm_pois_table_new(w);
        assert_non_null(t);
        /* it covers at least the bulk (P >= 1e-9 up to its end) */
        assert_true(t->x_end > w);
        assert_true(sm_contention_pois_hit(t->x_end, w) < 1e-9);
        assert_true(sm_contention_pois_hit(t->x_end - 1 / t->inv_h, w) >= 1e-9);
        /* 7 points per node interval, nodes included, and past the end */
        for (double x = 0; x < t->x_end + 2; x += 1 / (7 * t->inv_h)) {
            const double d = fabs(sm_pois_hit_tab(t, x, w) - sm_contention_pois_hit(x, w));
            if (w < 8)
                worst_small = fmax(worst_small, d);
            else if (d > worst) {
                worst = d;
                worst_w = w;
            }
        }
        assert_true(sm_pois_hit_tab(t, t->x_end + 1, w) == sm_contention_pois_hit(t->x_end + 1, w));
        sm_pois_table_free(t);
    }
    printf("table against the exact sum: w < 8 max abs %.3g; w = 8..%d %.3g (w = %u)\n",
           worst_small, LLC_CONTENTION_POIS_WAYS, worst, worst_w);
    assert_true(worst_small <= 5e-10);
    assert_true(worst <= 4e-12);
    /* no table past LLC_CONTENTION_POIS_WAYS: the exact sum answers */
    assert_null(sm_pois_table_new(0));
    assert_null(sm_pois_table_new(LLC_CONTENTION_POIS_WAYS + 1));
    assert_true(sm_pois_hit_tab(NULL, 30, 100) == sm_contention_pois_hit(30, 100));
}

/* Parties of a prediction: two power laws, little and much streaming, and
 * point masses at 3, 400 and 50,000 (bucket lower edges). */
static void parties(struct llc_contention_party *p, struct llc_statmodel_model *const *m,
                    struct llc_contention_tables *t)
{
    static const double rates[] = {2e9, 5e8, 1e9};
    for (size_t i = 0; i < 3; i++)
        p[i] = (struct llc_contention_party){
            .model = m[i], .rate = rates[i], .gamma = 1, .weight = 1, .tables = t};
}

static void equilibria_with_and_without_tables(void **state)
{
    (void)state;
    const struct llc_statmodel_bucket_count pairs[] = {
        {.bucket = 3, .count = 500},
        {.bucket = llc_statmodel_bucket_of(400), .count = 300},
        {.bucket = llc_statmodel_bucket_of(50000), .count = 200}};
    struct llc_statmodel_model *m[3] = {synth_model_power(0.01), synth_model_power(0.2),
                                        synth_model_of_pairs(pairs, 3, 10)};
    for (size_t i = 0; i < 3; i++)
        assert_non_null(m[i]);
    struct llc_contention_tables *t = NULL;
    char err[256];
    assert_int_equal(llc_contention_tables_create(&t, err, sizeof(err)), 0);
    static const unsigned ways[] = {4, 11, 16, 20};
    for (size_t k = 0; k < LLC_ARRAY_LEN(ways); k++) {
        const double c = 32768;
        struct llc_contention_party a[3], b[3];
        parties(a, m, NULL);
        parties(b, m, t);
        struct llc_contention_share sa[3], sb[3];
        struct llc_contention_info ia, ib;
        assert_int_equal(sm_contention_equilibrium(a, 3, c, LLC_CONTENTION_LRU, 0, ways[k], sa, &ia,
                                                   err, sizeof(err)),
                         0);
        assert_int_equal(sm_contention_equilibrium(b, 3, c, LLC_CONTENTION_LRU, 0, ways[k], sb, &ib,
                                                   err, sizeof(err)),
                         0);
        for (size_t i = 0; i < 3; i++) {
            assert_true(fabs(sa[i].miss_ratio - sb[i].miss_ratio) <= 1e-9);
            assert_true(fabs(sa[i].occupancy - sb[i].occupancy) <= 1e-9 * c);
            /* and the figures are not trivial: the cache is contended */
            assert_true(sa[i].miss_ratio > 0 && sa[i].miss_ratio < 1);
        }
    }
    llc_contention_tables_free(t);
    for (size_t i = 0; i < 3; i++)
        llc_statmodel_release(m[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_is_the_incomplete_gamma),
        cmocka_unit_test(table_is_the_exact_sum),
        cmocka_unit_test(equilibria_with_and_without_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
