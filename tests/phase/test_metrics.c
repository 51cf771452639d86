/* Quality metrics on hand-computed examples: CoV, Corrected CoV (docs/METHODS.md §10.9),
 * similarity-matrix difference (the ScarPhase paper Fig. 3c), adjusted Rand index. */
#include <errno.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_test.h"

#define U LLC_PHASE_UNCLASSIFIED
#define T LLC_PHASE_TRANSITION
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static double cov(const int *p, const double *x, size_t n)
{
    double v = -1;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_cov(p, x, n, &v, err, sizeof err), 0);
    return v;
}

static double ccov(const int *p, const double *x, size_t n)
{
    double v = -1;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_ccov(p, x, n, &v, err, sizeof err), 0);
    return v;
}

static void test_cov_population_sd(void **state)
{
    (void)state;
    /* Phase 0: {1,3}, mean 2, population sd 1 -> 0.5; phase 1: {2,2} -> 0. */
    const int p[] = {0, 0, 1, 1};
    const double x[] = {1, 3, 2, 2};
    assert_near(cov(p, x, 4), 0.25, 1e-12);
    assert_near(ccov(p, x, 4), 0.25, 1e-12); /* no single-window runs */
}

static void test_single_window_phase_goes_virtual(void **state)
{
    (void)state;
    /* Phase 1 is one window: CoV 0 on its own, whole-program CoV in CCoV.
     * Whole: {1,1,5,1,1}, mean 1.8, sd 1.6 -> 0.8889, weight 1/5. */
    const int p[] = {0, 0, 1, 0, 0};
    const double x[] = {1, 1, 5, 1, 1};
    assert_near(cov(p, x, 5), 0.0, 1e-12);
    assert_near(ccov(p, x, 5), 0.2 * 1.6 / 1.8, 1e-12);
}

static void test_all_singletons_is_whole_cov(void **state)
{
    (void)state;
    const int p[] = {0, 1, 2, 3};
    const double x[] = {1, 2, 3, 4};
    const double whole = 0.447213595499958; /* sqrt(1.25) / 2.5 */
    assert_near(cov(p, x, 4), 0.0, 1e-12);
    assert_near(ccov(p, x, 4), whole, 1e-12);
    /* One phase for all: CoV = CCoV = whole. */
    const int one[] = {7, 7, 7, 7};
    assert_near(cov(one, x, 4), whole, 1e-12);
    assert_near(ccov(one, x, 4), whole, 1e-12);
}

static void test_edges_compare_with_one_neighbour(void **state)
{
    (void)state;
    /* First and last windows are runs of length 1; recurring singletons of
     * phase 3 go virtual too. Only phase 0's run {1,1,1} stays. */
    const int p[] = {1, 0, 0, 0, 2};
    const double x[] = {4, 1, 1, 1, 4};
    /* Whole {4,1,1,1,4}: mean 2.2, sd 1.4697 -> 0.66805; virtual weight 2/5. */
    assert_near(ccov(p, x, 5), 0.4 * 1.4696938456699067 / 2.2, 1e-12);
    const int q[] = {0, 0, 3, 0, 0, 3};
    const double y[] = {1, 1, 2, 1, 1, 2};
    const double whole_y = 0.4714045207910317 / (8.0 / 6); /* sd sqrt(2/9) */
    assert_near(ccov(q, y, 6), 2.0 / 6 * whole_y, 1e-12);
    assert_near(cov(q, y, 6), 0.0, 1e-12);
}

static void test_junk_phase(void **state)
{
    (void)state;
    /* Junk {1,3,2}: CoV sqrt(2/3)/2; t4 (phase 0 between two junk windows)
     * is a single-window run -> virtual with the whole CoV; t5 is junk even
     * though it is a run of length 1. */
    const int p[] = {0, 0, U, U, 0, U};
    const double x[] = {2, 2, 1, 3, 5, 2};
    assert_near(ccov(p, x, 6), 0.2880111945127176, 1e-12);
    /* Plain CoV: phase 0 {2,2,5} and junk {1,3,2}, half each. */
    assert_near(cov(p, x, 6), 0.43982640562744735, 1e-12);
    /* Transition windows are not a phase either: the same junk. */
    const int pt[] = {0, 0, T, U, 0, T};
    assert_near(ccov(pt, x, 6), 0.2880111945127176, 1e-12);
}

static void test_cov_errors(void **state)
{
    (void)state;
    double v;
    char err[LLC_ERRLEN];
    const int p[] = {0, 0};
    const double zero_mean[] = {-1, 1};
    assert_int_equal(llc_phase_cov(p, zero_mean, 2, &v, err, sizeof err), -EDOM);
    assert_int_equal(llc_phase_ccov(p, zero_mean, 2, &v, err, sizeof err), -EDOM);
    const double nan_x[] = {1, NAN};
    assert_int_equal(llc_phase_cov(p, nan_x, 2, &v, err, sizeof err), -EINVAL);
    assert_int_equal(llc_phase_cov(p, nan_x, 0, &v, err, sizeof err), -EINVAL);
}

static double simdiff(const double *a, size_t da, const double *b, size_t db, size_t n)
{
    double v = -1;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_similarity_diff(a, da, b, db, n, &v, err, sizeof err), 0);
    return v;
}

static void test_similarity_difference(void **state)
{
    (void)state;
    const double a[] = {1, 0, 0, 1, 1, 0};
    /* a: d~(0,1) = 1, d~(0,2) = 0, d~(1,2) = 1. */
    assert_near(simdiff(a, 2, a, 2, 3), 0.0, 0.0);
    /* Scale does not matter: rows are normalised. */
    const double a7[] = {7, 0, 0, 3, 2, 0};
    assert_near(simdiff(a, 2, a7, 2, 3), 0.0, 1e-12);
    /* b: d~ = 0.5, 1, 0.5 -> |diffs| 0.5, 1, 0.5 -> mean 2/3. */
    const double b[] = {1, 0, 0.5, 0.5, 0, 1};
    assert_near(simdiff(a, 2, b, 2, 3), 2.0 / 3, 1e-12);
    assert_near(simdiff(b, 2, a, 2, 3), 2.0 / 3, 1e-12);
    /* Different dimensions, same structure (a 32-bucket vector vs a BBV). */
    const double c[] = {1, 0, 0, 0, 0, 5, 3, 0, 0};
    assert_near(simdiff(a, 2, c, 3, 3), 0.0, 1e-12);

    double v;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_similarity_diff(a, 2, b, 2, 1, &v, err, sizeof err), -EINVAL);
    const double neg[] = {1, 0, -1, 1, 1, 0};
    assert_int_equal(llc_phase_similarity_diff(neg, 2, b, 2, 3, &v, err, sizeof err), -EINVAL);
}

static double ari(const int *a, const int *b, size_t n)
{
    double v = -9;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_ari(a, b, n, &v, err, sizeof err), 0);
    return v;
}

static void test_ari_known_values(void **state)
{
    (void)state;
    const int a[] = {0, 0, 1, 1, 2, 2};
    assert_near(ari(a, a, 6), 1.0, 1e-12);
    const int perm[] = {5, 5, -2, -2, 9, 9};
    assert_near(ari(a, perm, 6), 1.0, 1e-12);

    /* Hubert & Arabie's ARI as in scikit-learn's documented examples. */
    const int x[] = {0, 0, 1, 1}, y[] = {0, 0, 1, 2};
    assert_near(ari(x, y, 4), 4.0 / 7, 1e-12);
    assert_near(ari(y, x, 4), 4.0 / 7, 1e-12);
    const int z[] = {0, 1, 0, 1};
    assert_near(ari(x, z, 4), -0.5, 1e-12);
    const int t[] = {0, 0, 0, 1, 1, 1}, p[] = {0, 0, 1, 1, 2, 2};
    assert_near(ari(t, p, 6), 8.0 / 33, 1e-12);
    const int one[] = {0, 0, 0, 0}, single[] = {0, 1, 2, 3};
    assert_near(ari(one, single, 4), 0.0, 1e-12);

    /* Undefined index: identical trivial partitions agree perfectly. */
    assert_near(ari(one, one, 4), 1.0, 0.0);
    assert_near(ari(single, single, 4), 1.0, 0.0);
    assert_near(ari(one, single, 1), 1.0, 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cov_population_sd),
        cmocka_unit_test(test_single_window_phase_goes_virtual),
        cmocka_unit_test(test_all_singletons_is_whole_cov),
        cmocka_unit_test(test_edges_compare_with_one_neighbour),
        cmocka_unit_test(test_junk_phase),
        cmocka_unit_test(test_cov_errors),
        cmocka_unit_test(test_similarity_difference),
        cmocka_unit_test(test_ari_known_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
