/* The lines a program's other phases add to a phase's reuses
 * (docs/METHODS.md §12.7, llc_contention_excess_build), hand-solved: phase
 * A reuses every line at distance 100 (footprint min(d, 100)), phase B at
 * 800 (min(d, 800)); runs of A are 10,000 references, of B 1,000,
 * alternating. A reuse of A starts at 1,250, 3,750, 6,250 or 8,750 into
 * its run; from distance 9,750 (the latest start spans the whole B run)
 * to 12,250 (the earliest reaches the next B run) every span holds one
 * whole B run and at least 100 references of A: A's full footprint plus
 * B's over 1,000 references, against A's own full footprint, an excess of
 * exactly F_B(1000) (801: StatStack counts the reused line itself). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/contention.h"
#include "llcprobe/statmodel.h"

#define WINDOWS 40

static struct llc_statmodel_model *constant_reuse(uint64_t d)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(h, d, 1000, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
    llc_statmodel_hist_destroy(h);
    return m;
}

static int excess_of(struct llc_statmodel_model *const *m, const int *phase, const double *refs,
                     size_t g, struct llc_contention_excess *e, char *err)
{
    return llc_contention_excess_build((const struct llc_statmodel_model *const *)m, 2, phase, refs,
                                       WINDOWS, g, e, err, LLC_ERRLEN);
}

static void alternating(int *phase, double *refs)
{
    for (size_t w = 0; w < WINDOWS; w++) {
        phase[w] = (int)(w % 2);
        refs[w] = w % 2 ? 1000 : 10000;
    }
}

static void hand_solved_excess(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m[2] = {constant_reuse(100), constant_reuse(800)};
    int phase[WINDOWS];
    double refs[WINDOWS];
    alternating(phase, refs);
    struct llc_contention_excess e;
    assert_int_equal(excess_of(m, phase, refs, 0, &e, err), 0);
    assert_int_equal(e.n, LLC_CONTENTION_EXCESS_POINTS);
    const double fb = llc_statmodel_footprint(m[1], 1000);
    assert_true(fb >= 800 && fb <= 801);
    size_t flat = 0;
    for (size_t k = 0; k < e.n; k++) {
        if (k > 0)
            assert_true(e.x[k] > e.x[k - 1]);
        if (e.x[k] >= 9750 && e.x[k] <= 12250) {
            printf("  A at distance %.0f: excess %.6f lines (%.6f expected)\n", e.x[k], e.lines[k],
                   fb);
            assert_true(fabs(e.lines[k] - fb) < 1e-6);
            flat++;
        }
        /* within a run nothing is added: reuses shorter than the
         * nearest start's distance to the run's end */
        if (e.x[k] <= 1250)
            assert_true(fabs(e.lines[k]) < 1e-9);
    }
    assert_true(flat >= 1);
    assert_true(fabs(llc_contention_excess_at(&e, 11000) - fb) < 1e-6);
    assert_true(llc_contention_excess_at(&e, 0) == 0);
    assert_true(llc_contention_excess_at(NULL, 5000) == 0);
    /* B's reuses across A's long runs meet A's 100 lines where B's own
     * footprint would have grown to 800: less than its own */
    assert_int_equal(excess_of(m, phase, refs, 1, &e, err), 0);
    assert_true(llc_contention_excess_at(&e, 5000) < 0);
    llc_statmodel_release(m[0]);
    llc_statmodel_release(m[1]);
}

static void one_phase_adds_nothing(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m[2] = {constant_reuse(100), constant_reuse(800)};
    int phase[WINDOWS] = {0};
    double refs[WINDOWS];
    for (size_t w = 0; w < WINDOWS; w++)
        refs[w] = 1000;
    struct llc_contention_excess e;
    assert_int_equal(excess_of(m, phase, refs, 0, &e, err), 0);
    assert_int_equal(e.n, 0);
    /* a phase with no windows */
    assert_int_equal(excess_of(m, phase, refs, 1, &e, err), 0);
    assert_int_equal(e.n, 0);
    llc_statmodel_release(m[0]);
    llc_statmodel_release(m[1]);
}

static void bad_input_is_refused(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m[2] = {constant_reuse(100), constant_reuse(800)};
    int phase[WINDOWS];
    double refs[WINDOWS];
    alternating(phase, refs);
    phase[3] = 2;
    struct llc_contention_excess e;
    assert_int_equal(excess_of(m, phase, refs, 0, &e, err), -EINVAL);
    assert_non_null(strstr(err, "window 3"));
    assert_int_equal(excess_of(m, phase, refs, 2, &e, err), -EINVAL);
    llc_statmodel_release(m[0]);
    llc_statmodel_release(m[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_solved_excess),
        cmocka_unit_test(one_phase_adds_nothing),
        cmocka_unit_test(bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
