/* Whole-map builds in the simulator: every found set is checked against the
 * true (slice, index) of its lines, and distinct units must be distinct
 * true sets. Figures (tests, time per set, verified fraction) are printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evset_fixture.h"
#include "llcprobe/common.h"

struct truth_check {
    uint32_t found, congruent, distinct_ok;
};

/* All G lines of each found set (and its victim) share one true set, and no
 * two units claim the same true set. */
static struct truth_check check_truth(const struct fx *fx, const struct llc_evset_result *r)
{
    struct truth_check t = {0, 0, 1};
    const uint32_t units = r->report.units;
    uint8_t *seen = calloc(units, 1);
    assert_non_null(seen);
    for (uint32_t u = 0; u < units; u++) {
        const struct llc_evset_set *s = &r->sets[u];
        if (s->source == LLC_EVSET_NONE)
            continue;
        t.found++;
        assert_int_equal(s->index, u % r->sets_per_slice);
        const uint32_t truth = fx_true_set(fx, r->lines[s->first].paddr);
        bool ok = fx_true_set(fx, s->victim_paddr) == truth;
        for (unsigned k = 0; k < r->group_size; k++)
            ok = ok && fx_true_set(fx, r->lines[s->first + k].paddr) == truth;
        t.congruent += ok;
        if (truth % r->sets_per_slice != s->index)
            ok = false;
        if (seen[truth])
            t.distinct_ok = 0;
        seen[truth] = 1;
    }
    free(seen);
    return t;
}

static struct llc_evset_result *build(struct fx *fx, const char *name)
{
    char err[LLC_ERRLEN];
    struct llc_evset_result *r = NULL;
    if (llc_evset_build(fx->finder, &r, err, sizeof(err)))
        fail_msg("build: %s", err);
    printf("--- %s\n", name);
    llc_evset_report_print(stdout, &r->report);
    if (r->report.found)
        printf("evset_tests_per_set: %.1f tests\nevset_time_per_set: %.3f ms\n",
               (double)r->report.counters.tests / r->report.found,
               1e3 * r->report.build_seconds / r->report.found);
    return r;
}

/* Intel-style: inclusive, hidden random hash over bits 6..29 (page-offset
 * bits included), 8 slices x 256 sets. Index 0 by reduction, its page by
 * reuse, the rest from the solved hash. */
static void test_build_inclusive_hash(void **state)
{
    (void)state;
    struct fx_opts o;
    fx_opts_default(&o);
    o.slices = 8;
    o.sets_per_slice = 256;
    o.l2_sets = 64;
    o.pages = 1400;
    o.seed = 21;
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    struct llc_evset_result *r = build(&fx, "inclusive, 8 slices x 256 sets, hidden hash");
    const struct llc_evset_report *rep = &r->report;
    assert_true(rep->hash_solved);
    assert_int_equal(rep->reduced, 8);
    assert_int_equal(rep->reuse_held, rep->reuse_tried); /* linear hash: reuse always holds */
    assert_int_equal(rep->reuse_tried, 8 * 63);
    assert_true(rep->hashed > 0);
    assert_int_equal(rep->found, rep->units);
    assert_int_equal(rep->verified, rep->units);
    const struct truth_check t = check_truth(&fx, r);
    assert_int_equal(t.congruent, t.found);
    assert_true(t.distinct_ok);
    /* no index bits in the solved masks: they are not observable */
    for (unsigned b = 0; b < rep->hash.bits; b++)
        assert_int_equal(rep->hash.masks[b] & ((1ULL << 14) - 1), 0);
    llc_evset_result_free(r);
    fx_teardown(&fx);
}

/* Reuse across offsets alone (no hash): one page covers every index. */
static void no_hash(struct llc_evset_params *p)
{
    p->solve_hash = false;
}

static void test_build_reuse_offsets(void **state)
{
    (void)state;
    struct fx_opts o;
    fx_opts_default(&o);
    o.seed = 31;
    struct fx fx;
    fx_setup(&fx, &o, no_hash);
    struct llc_evset_result *r = build(&fx, "reuse only, 4 slices x 64 sets");
    const struct llc_evset_report *rep = &r->report;
    assert_false(rep->hash_solved);
    assert_int_equal(rep->reduced, 4);
    assert_int_equal(rep->reuse_tried, 4 * 63);
    assert_int_equal(rep->reuse_held, rep->reuse_tried);
    assert_int_equal(rep->verified, rep->units);
    const struct truth_check t = check_truth(&fx, r);
    assert_int_equal(t.congruent, t.found);
    assert_true(t.distinct_ok);
    for (uint32_t u = 0; u < rep->units; u++)
        assert_int_equal(r->sets[u].source,
                         r->sets[u].index == 0 ? LLC_EVSET_REDUCED : LLC_EVSET_REUSED);
    llc_evset_result_free(r);
    fx_teardown(&fx);
}

/* Background traffic (two accesses per probe access over all memory: about
 * 0.14 foreign lines enter the victim's set per trial of a final-stage test,
 * 1.6 per trial of the first, whole-pool test) and 1% timing outliers: at least 90% of units
 * verified (reduced, reused and hashed sets alike), and every set truly congruent. */
static void test_build_noisy(void **state)
{
    (void)state;
    struct fx_opts o;
    fx_opts_default(&o);
    o.noise_rate = 2.0;
    o.outlier_prob = 0.01;
    o.sets_per_slice = 128;
    o.seed = 41;
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    struct llc_evset_result *r = build(&fx, "noisy, 4 slices x 128 sets");
    const struct llc_evset_report *rep = &r->report;
    assert_true(rep->verified_fraction >= 0.9);
    const struct truth_check t = check_truth(&fx, r);
    printf("truly congruent: %u of %u found sets\n", t.congruent, t.found);
    assert_int_equal(t.congruent, t.found);
    assert_true(t.distinct_ok);
    llc_evset_result_free(r);
    fx_teardown(&fx);
}

/* AMD-style victim LLC: every set has W_L2 + W_LLC = 32 congruent lines. */
static void test_build_exclusive(void **state)
{
    (void)state;
    struct fx_opts o;
    fx_opts_default(&o);
    o.inclusion = LLC_SIM_EXCLUSIVE;
    o.l2_ways = 16;
    o.pages = 900;
    o.seed = 51;
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    struct llc_evset_result *r = build(&fx, "exclusive victim LLC, 4 slices x 64 sets, G = 32");
    assert_int_equal(r->group_size, 32);
    const struct llc_evset_report *rep = &r->report;
    assert_int_equal(rep->verified, rep->units);
    const struct truth_check t = check_truth(&fx, r);
    assert_int_equal(t.congruent, t.found);
    assert_true(t.distinct_ok);
    llc_evset_result_free(r);
    fx_teardown(&fx);
}

/* A slice function that is not linear (modulo 3 slices): the solver refuses,
 * reduction and reuse still find every set. */
static void test_build_modulo3(void **state)
{
    (void)state;
    struct fx_opts o;
    fx_opts_default(&o);
    o.slices = 3;
    o.modulo_hash = true;
    o.seed = 61;
    struct fx fx;
    fx_setup(&fx, &o, NULL);
    struct llc_evset_result *r = build(&fx, "modulo-3 slices");
    const struct llc_evset_report *rep = &r->report;
    assert_false(rep->hash_solved);
    assert_non_null(strstr(rep->hash_note, "no linear hash"));
    assert_int_equal(rep->verified, rep->units);
    const struct truth_check t = check_truth(&fx, r);
    assert_int_equal(t.congruent, t.found);
    assert_true(t.distinct_ok);
    llc_evset_result_free(r);
    fx_teardown(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_inclusive_hash), cmocka_unit_test(test_build_reuse_offsets),
        cmocka_unit_test(test_build_noisy),          cmocka_unit_test(test_build_exclusive),
        cmocka_unit_test(test_build_modulo3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
