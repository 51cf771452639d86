/* A reuse's distance in its phase's own references (docs/METHODS.md
 * §12.7): the own clock on hand-counted windows, and the sampler's log of
 * its finite samples. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"

/* Windows of 10, 5, 10 and 5 references: phase 0, phase 1, phase 0,
 * unclassified; references 0-9, 10-14, 15-24, 25-29. */
static void own_clock_hand_counted(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const double refs[] = {10, 5, 10, 5};
    const int labels[] = {0, 1, 0, -1};
    struct llc_statmodel_own_clock *c = NULL;
    assert_int_equal(llc_statmodel_own_clock_create(refs, labels, 4, &c, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_own_clock_label(c, 0), 0);
    assert_int_equal(llc_statmodel_own_clock_label(c, 12), 1);
    assert_int_equal(llc_statmodel_own_clock_label(c, 15), 0);
    assert_int_equal(llc_statmodel_own_clock_label(c, 26), -1);
    assert_int_equal(llc_statmodel_own_clock_label(c, 30), -1);
    /* 3..5, all in window 0 */
    assert_int_equal(llc_statmodel_own_distance(c, 2, 3), 3);
    /* 9..18: 9 in window 0, 10-14 phase 1's, 15-18 in window 2 */
    assert_int_equal(llc_statmodel_own_distance(c, 8, 10), 5);
    /* 13..32: 13-14 its own, 15-29 others', 30-32 past the windows (all count) */
    assert_int_equal(llc_statmodel_own_distance(c, 12, 20), 5);
    /* from phase 0's second window into the unclassified one: 16..26 -> 16-24 */
    assert_int_equal(llc_statmodel_own_distance(c, 15, 11), 9);
    /* an unclassified start keeps its distance */
    assert_int_equal(llc_statmodel_own_distance(c, 26, 4), 4);
    assert_int_equal(llc_statmodel_own_distance(c, 0, 0), 0);
    /* the span's make-up: labels 0 and 1 in the order first seen; 13..32
     * holds 2 of phase 1 and 3 past the windows (the start's), 10 of
     * phase 0, and 5 unclassified (25-29) */
    size_t nl = 0;
    const int *ids = llc_statmodel_own_clock_labels(c, &nl);
    assert_int_equal(nl, 2);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 1);
    double by[2];
    assert_true(llc_statmodel_own_clock_span(c, 12, 20, by) == 5);
    assert_true(by[0] == 10 && by[1] == 5);
    assert_true(llc_statmodel_own_clock_span(c, 2, 3, by) == 0);
    assert_true(by[0] == 3 && by[1] == 0);
    llc_statmodel_own_clock_destroy(c);

    const double bad[] = {10, -1};
    assert_int_equal(llc_statmodel_own_clock_create(bad, labels, 2, &c, err, sizeof err), -EINVAL);
    assert_null(c);
    /* no windows: every reference is past them */
    assert_int_equal(llc_statmodel_own_clock_create(refs, labels, 0, &c, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_own_distance(c, 3, 7), 7);
    llc_statmodel_own_clock_destroy(c);
}

/* Rate 1, lines A B A C B A in groups 0 0 1 1 1 1: the log holds every
 * finite sample with its start, distance and group, in the order the
 * reuses came; without log_reuses it stays empty. */
static void sampler_logs_reuses(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const uint64_t lines[] = {1, 2, 1, 3, 2, 1};
    for (int logged = 0; logged < 2; logged++) {
        struct llc_statmodel_groups *g = NULL;
        struct llc_statmodel_sampler *smp = NULL;
        struct llc_statmodel_sampler_config cfg;
        llc_statmodel_sampler_config_default(&cfg);
        cfg.rate = 1;
        cfg.log_reuses = logged;
        assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
        for (size_t k = 0; k < 6; k++) {
            if (k == 2)
                assert_int_equal(llc_statmodel_sampler_set_group(smp, 1, err, sizeof err), 0);
            llc_statmodel_sampler_access(smp, lines[k]);
        }
        assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
        size_t n = 9;
        const struct llc_statmodel_reuse *r = llc_statmodel_sampler_reuses(smp, &n);
        if (!logged) {
            assert_int_equal(n, 0);
        } else {
            assert_int_equal(n, 3);
            /* A at 0 -> 2 (1 between), B at 1 -> 4 (2), A at 2 -> 5 (2) */
            const struct llc_statmodel_reuse want[] = {{0, 1, 0}, {1, 2, 0}, {2, 2, 1}};
            for (size_t k = 0; k < 3; k++) {
                assert_int_equal(r[k].pos, want[k].pos);
                assert_int_equal(r[k].distance, want[k].distance);
                assert_int_equal(r[k].group, want[k].group);
            }
        }
        llc_statmodel_sampler_destroy(smp);
        llc_statmodel_groups_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(own_clock_hand_counted),
        cmocka_unit_test(sampler_logs_reuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
