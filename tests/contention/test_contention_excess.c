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
                                       WINDOWS, g, NULL, e, err, LLC_ERRLEN);
}

/* The same with the phases' miss ratios: the misses too. */
static int excess_misses_of(struct llc_statmodel_model *const *m, const int *phase,
                            const double *refs, size_t g, const double *mr,
                            struct llc_contention_excess *e, char *err)
{
    return llc_contention_excess_build((const struct llc_statmodel_model *const *)m, 2, phase, refs,
                                       WINDOWS, g, mr, e, err, LLC_ERRLEN);
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
    assert_false(e.has_misses);
    assert_true(llc_contention_excess_misses_at(&e, 5000) == 0);
    llc_statmodel_release(m[0]);
    llc_statmodel_release(m[1]);
}

/* With miss ratios m_A = 0.01, m_B = 0.5: where every span of A's reuse
 * holds one whole B run of 1,000 references, sum_h m_h r_h - m_A d =
 * m_A (d - 1000) + m_B 1000 - m_A d = (m_B - m_A) 1000 = 490 misses.
 * Spans from the last A window run o = pos + d - 11000 past the program's
 * end, which goes to the phases by their shares (B: 1/11): o (m_B - m_A)
 * / 11 more, averaged over the 20 windows' 4 starts each. The lines are
 * those without miss ratios. B's reuses across A's runs meet fewer misses
 * than its own rate would give: negative. */
static void hand_solved_misses(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m[2] = {constant_reuse(100), constant_reuse(800)};
    int phase[WINDOWS];
    double refs[WINDOWS];
    alternating(phase, refs);
    const double mr[2] = {0.01, 0.5};
    struct llc_contention_excess e, plain;
    assert_int_equal(excess_misses_of(m, phase, refs, 0, mr, &e, err), 0);
    assert_int_equal(excess_of(m, phase, refs, 0, &plain, err), 0);
    assert_true(e.has_misses);
    assert_int_equal(e.n, plain.n);
    size_t flat = 0;
    for (size_t k = 0; k < e.n; k++) {
        assert_true(e.lines[k] == plain.lines[k]);
        if (e.x[k] >= 9750 && e.x[k] <= 12250) {
            double past = 0;
            for (unsigned p = 0; p < 4; p++)
                past += fmax(0, 10000 * (p + 0.5) / 4 + e.x[k] - 11000);
            const double want = 490 + past / 80 * (0.5 - 0.01) / 11;
            printf("  A at distance %.0f: %.6f misses (%.6f expected)\n", e.x[k], e.misses[k],
                   want);
            assert_true(fabs(e.misses[k] - want) < 1e-6);
            flat++;
        }
        if (e.x[k] <= 1250)
            assert_true(fabs(e.misses[k]) < 1e-9);
    }
    assert_true(flat >= 1);
    for (size_t k = 0; k < e.n; k++) /* at the points, their values */
        assert_true(fabs(llc_contention_excess_misses_at(&e, e.x[k]) - e.misses[k]) <=
                    1e-9 * fmax(1, fabs(e.misses[k])));
    assert_true(llc_contention_excess_misses_at(&e, 0) == 0);
    assert_true(llc_contention_excess_misses_at(NULL, 5000) == 0);
    assert_int_equal(excess_misses_of(m, phase, refs, 1, mr, &e, err), 0);
    assert_true(llc_contention_excess_misses_at(&e, 5000) < 0);
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

/* Measured spans (llc_contention_excess_spans): at own distance 500 a
 * quarter of A's reuses met 1,000 references of B and 300 of the whole
 * program (the last column), at 5,000 all met 2,000 of B: lines share x
 * (F_B(1000) + F_W(300)) and F_B(2000), misses share x sum m_h r_h. A
 * point at own distance 0 is left out; a column without a model is
 * refused. */
static void measured_spans(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_model *m[3] = {constant_reuse(100), constant_reuse(800),
                                        constant_reuse(50)};
    const double d[3] = {0, 500, 5000}, share[3] = {0, 0.25, 1};
    const double refs[9] = {0, 0, 0, 0, 1000, 300, 0, 2000, 0};
    const double mr[3] = {0.01, 0.5, 0.2};
    struct llc_contention_excess e;
    const struct llc_statmodel_model *const *cm = (const struct llc_statmodel_model *const *)m;
    assert_int_equal(
        llc_contention_excess_spans(cm, 3, 0, d, share, refs, 3, 3, mr, &e, err, sizeof err), 0);
    assert_int_equal(e.n, 2);
    assert_true(e.has_cross && e.has_misses);
    assert_true(e.x[0] == 500 && e.x[1] == 5000);
    const double l0 =
        0.25 * (llc_statmodel_footprint(m[1], 1000) + llc_statmodel_footprint(m[2], 300));
    assert_true(fabs(e.lines[0] - l0) < 1e-9);
    assert_true(fabs(e.lines[1] - llc_statmodel_footprint(m[1], 2000)) < 1e-9);
    assert_true(fabs(e.misses[0] - 0.25 * (0.5 * 1000 + 0.2 * 300)) < 1e-9);
    assert_true(e.cross[0] == 0.25 && e.cross[1] == 1);
    size_t at = 0;
    assert_true(fabs(llc_contention_excess_cross_next(&e, &at, 2750) - 0.625) < 1e-12);
    struct llc_statmodel_model *none[3] = {m[0], NULL, m[2]};
    assert_int_equal(llc_contention_excess_spans((const struct llc_statmodel_model *const *)none, 3,
                                                 0, d, share, refs, 3, 3, mr, &e, err, sizeof err),
                     -EINVAL);
    for (size_t k = 0; k < 3; k++)
        llc_statmodel_release(m[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_solved_excess),   cmocka_unit_test(measured_spans),
        cmocka_unit_test(hand_solved_misses),   cmocka_unit_test(one_phase_adds_nothing),
        cmocka_unit_test(bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
