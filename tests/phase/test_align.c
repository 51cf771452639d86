/* Aligning two cuttings of one run by instruction count, and the ARI of
 * labellings with unequal window counts through that alignment. */
#include <errno.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"
#include "phase_test.h"

#define NO LLC_PHASE_NO_WINDOW
#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static struct llc_phase_alignment align(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
                                        size_t *map)
{
    struct llc_phase_alignment info;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_align(a, na, b, nb, map, &info, err, sizeof err), 0);
    return info;
}

static void test_equal_cuts_map_one_to_one(void **state)
{
    (void)state;
    const uint64_t a[] = {100, 100, 100}, b[] = {100, 100, 100};
    size_t map[3];
    const struct llc_phase_alignment i = align(a, 3, b, 3, map);
    assert_int_equal(map[0], 0);
    assert_int_equal(map[1], 1);
    assert_int_equal(map[2], 2);
    assert_int_equal(i.matched, 3);
    assert_int_equal(i.total_a, 300);
    assert_near(i.total_diff, 0.0, 0.0);
}

static void test_longer_reference_intervals(void **state)
{
    (void)state;
    /* exp-bbv ends an interval past its size: b's intervals are 110 long,
     * so the pairs drift from index to index: a's window 5 (500-600) is
     * half in b's 4 and half in b's 5 (the earlier wins), a's window 9
     * (900-1000) has no b window 9 at all and lies in b's 8 (880-1000). */
    uint64_t a[10], b[9];
    for (size_t i = 0; i < 10; i++)
        a[i] = 100;
    for (size_t i = 0; i < 9; i++)
        b[i] = 110;
    b[8] = 120; /* totals 1000 vs 1000 */
    size_t map[10];
    const struct llc_phase_alignment i = align(a, 10, b, 9, map);
    const size_t want[10] = {0, 1, 2, 3, 4, 4, 5, 6, 7, 8};
    for (size_t k = 0; k < 10; k++)
        assert_int_equal(map[k], want[k]);
    assert_int_equal(i.matched, 10);
    assert_near(i.total_diff, 0.0, 0.0);
}

static void test_many_small_windows_share_an_interval(void **state)
{
    (void)state;
    /* Reference-count windows of a few hundred instructions against
     * 1000-instruction intervals; 250 splits evenly: the earlier wins. */
    const uint64_t a[] = {300, 300, 300, 300, 300, 500}, b[] = {1000, 1000};
    size_t map[6];
    const struct llc_phase_alignment i = align(a, LEN(a), b, LEN(b), map);
    /* ranges: 0-300, 300-600, 600-900, 900-1200 (100 vs 200), 1200-1500, 1500-2000 */
    const size_t want[] = {0, 0, 0, 1, 1, 1};
    for (size_t k = 0; k < LEN(a); k++)
        assert_int_equal(map[k], want[k]);
    assert_int_equal(i.matched, 6);
    const uint64_t tie[] = {500, 1000}, halves[] = {1000, 1000};
    size_t m2[2];
    align(tie, 2, halves, 2, m2); /* 500-1500: 500 in each: the earlier */
    assert_int_equal(m2[1], 0);
}

static void test_unmatched_tail_and_totals(void **state)
{
    (void)state;
    const uint64_t a[] = {100, 100, 100, 100, 0}, b[] = {150, 50};
    size_t map[5];
    const struct llc_phase_alignment i = align(a, 5, b, 2, map);
    assert_int_equal(map[0], 0);
    assert_int_equal(map[1], 0);  /* 100-200: 50 in b0, 50 in b1: the earlier */
    assert_int_equal(map[2], NO); /* past b's end */
    assert_int_equal(map[3], NO);
    assert_int_equal(map[4], NO); /* empty */
    assert_int_equal(i.matched, 2);
    /* Mostly past b's end: a window of 100 with 10 in b is left out. */
    const uint64_t tail_a[] = {150, 100}, tail_b[] = {160};
    size_t tmap[2];
    assert_int_equal(align(tail_a, 2, tail_b, 1, tmap).matched, 1);
    assert_int_equal(tmap[1], NO);
    const uint64_t half_a[] = {150, 100}, half_b[] = {200};
    assert_int_equal(align(half_a, 2, half_b, 1, tmap).matched, 2); /* half of it: kept */
    assert_int_equal(tmap[1], 0);
    assert_int_equal(i.total_a, 400);
    assert_int_equal(i.total_b, 200);
    assert_near(i.total_diff, 0.5, 1e-15);
    /* Nothing on one side: nothing matched, no division by zero. */
    const struct llc_phase_alignment e = align(a, 5, b, 0, map);
    assert_int_equal(e.matched, 0);
    assert_near(e.total_diff, 1.0, 0.0);
    size_t m0[1];
    const struct llc_phase_alignment z = align(NULL, 0, NULL, 0, m0);
    assert_near(z.total_diff, 0.0, 0.0);
}

static void test_overflow_refused(void **state)
{
    (void)state;
    const uint64_t a[] = {UINT64_MAX, 1}, b[] = {1};
    size_t map[2];
    struct llc_phase_alignment i;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_align(a, 2, b, 1, map, &i, err, sizeof err), -EOVERFLOW);
    assert_int_equal(llc_phase_align(b, 1, a, 2, map, &i, err, sizeof err), -EOVERFLOW);
}

static double ari_aligned(const int *la, size_t na, const int *lb, size_t nb, const size_t *map,
                          size_t *compared)
{
    double v = -9;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_ari_aligned(la, na, lb, nb, map, &v, compared, err, sizeof err), 0);
    return v;
}

static void test_ari_unequal_window_counts(void **state)
{
    (void)state;
    /* Phases A (0-400) B (400-800) A (800-1200), cut in 100s by us and in
     * 200s by the reference: aligned, the labellings agree exactly; by
     * index over the first min(n) = 6 windows they do not. */
    const uint64_t a[12] = {100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100};
    const uint64_t b[6] = {200, 200, 200, 200, 200, 200};
    const int la[12] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0};
    const int lb[6] = {7, 7, 3, 3, 7, 7};
    size_t map[12], compared = 0;
    align(a, 12, b, 6, map);
    assert_near(ari_aligned(la, 12, lb, 6, map, &compared), 1.0, 1e-12);
    assert_int_equal(compared, 12);
    double by_index;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_phase_ari(la, lb, 6, &by_index, err, sizeof err), 0);
    assert_true(by_index < 0.5);

    /* The reference ends early: the unmatched tail is left out, not
     * paired with the last interval. */
    const uint64_t short_b[2] = {200, 200};
    const int ls[2] = {4, 4};
    align(a, 12, short_b, 2, map);
    const double v = ari_aligned(la, 12, ls, 2, map, &compared);
    assert_int_equal(compared, 4);
    assert_near(v, 1.0, 0.0); /* both trivial on the 4 compared windows */

    /* A map pointing past b is refused. */
    size_t bad[2] = {0, 5};
    assert_int_equal(
        llc_phase_ari_aligned(la, 2, lb, 2, bad, &by_index, &compared, err, sizeof err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_cuts_map_one_to_one),
        cmocka_unit_test(test_longer_reference_intervals),
        cmocka_unit_test(test_many_small_windows_share_an_interval),
        cmocka_unit_test(test_unmatched_tail_and_totals),
        cmocka_unit_test(test_overflow_refused),
        cmocka_unit_test(test_ari_unequal_window_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
