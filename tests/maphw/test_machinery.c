/* The start-up checks (idle-walk check, aggressor self-test) run end to end
 * on this machine over hand-made "eviction sets": same-index lines of a
 * small-page arena. Real congruence is not needed to exercise the
 * machinery: the walk check must report measured figures, the self-test
 * must look for aggressor lines with real eviction tests and decide with
 * numbers, and everything must be released with no thread left. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/arena.h"
#include "llcprobe/common.h"
#include "maphw/maphw_internal.h"
#include "threads.h"

enum { SETS = 64, WAYS = 8 };

/* The timing backend's measure, over the hand-made chains. */
static int measure(struct maphw *m, const uint32_t *units, size_t n, double dwell_s,
                   uint64_t *misses, uint64_t *accesses, char *err, size_t errlen)
{
    struct llc_maphw_walk_cfg c = {.tsc_hz = m->tsc_hz,
                                   .threshold = m->threshold,
                                   .discard_ticks = m->discard_ticks,
                                   .batch = m->batch,
                                   .journal = m->journal};
    struct llc_maphw_walk_stats st;
    void *cur[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++)
        cur[i] = m->cursor[units[i]];
    const int rc =
        llc_maphw_walk_timed(&c, cur, units, n, dwell_s, misses, accesses, &st, err, errlen);
    for (size_t i = 0; i < n; i++)
        m->cursor[units[i]] = cur[i];
    return rc;
}

/* Unit u's set: the first WAYS arena lines whose physical index is u. */
static void make_sets(struct maphw *m)
{
    struct llc_evset_result *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->sets = calloc(SETS, sizeof(*r->sets));
    r->lines = calloc(SETS * WAYS, sizeof(*r->lines));
    assert_non_null(r->sets);
    assert_non_null(r->lines);
    r->group_size = WAYS;
    r->sets_per_slice = SETS;
    r->slices = 1;
    unsigned filled[SETS] = {0};
    for (size_t i = 0; i < m->n_lines; i++) {
        const uint32_t u = (uint32_t)((m->lines[i].paddr / 64) % SETS);
        if (m->lines[i].paddr == LLC_EVSET_NO_PADDR || filled[u] == WAYS)
            continue;
        r->lines[u * WAYS + filled[u]++] = m->lines[i];
    }
    for (uint32_t u = 0; u < SETS; u++) {
        assert_int_equal(filled[u], WAYS);
        r->sets[u] = (struct llc_evset_set){.index = u,
                                            .source = LLC_EVSET_REDUCED,
                                            .verified = true,
                                            .verify_rate = 1,
                                            .first = (size_t)u * WAYS};
    }
    m->sets = r;
}

static void test_checks_run_and_release(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const int threads = threads_now();
    struct llc_map_hw_options o;
    memset(&o, 0, sizeof(o));
    o.geo = (struct llc_map_geometry){
        .line_size = 64, .sets_per_slice = SETS, .slices = 1, .llc_ways = WAYS};
    o.probe_cpu = -1;
    o.seed = 3;
    struct maphw *m = NULL;
    assert_int_equal(llc_maphw_new("timing", &o, &m, err, sizeof(err)), 0);
    int rc = llc_maphw_start(m, err, sizeof(err));
    if (rc == -ENOTSUP) {
        llc_maphw_free(m);
        printf("skipped: %s\n", err);
        skip();
    }
    assert_int_equal(rc, 0);
    assert_int_equal(threads_settled(threads + 1), threads + 1); /* the probe thread */
    const struct llc_arena_options ao = {.page = LLC_ARENA_PAGE_SMALL};
    assert_int_equal(llc_arena_create((size_t)SETS * 64 * 64, &ao, &m->arena, err, sizeof(err)), 0);
    if (!llc_arena_frames_known(m->arena)) {
        printf("skipped: %s\n", llc_arena_info(m->arena)->frames_reason);
        llc_maphw_free(m);
        skip();
    }
    assert_true(llc_evset_arena_lines(llc_arena_base(m->arena), llc_arena_size(m->arena), 64,
                                      &m->lines, &m->n_lines, err, sizeof(err)) > 0);
    /* a fixed threshold: no calibration, the machine need not separate */
    struct llc_evset_hw_config hc;
    llc_evset_hw_config_default(&hc);
    hc.threshold = 250;
    assert_int_equal(llc_evset_oracle_hw(&hc, &m->oracle, NULL, err, sizeof(err)), 0);
    struct llc_evset_params p;
    llc_evset_params_default(&p);
    p.sets_per_slice = SETS;
    p.llc_ways = WAYS;
    assert_int_equal(
        llc_evset_finder_create(m->oracle, &p, m->lines, m->n_lines, &m->finder, err, sizeof(err)),
        0);
    make_sets(m);
    m->cal = (struct llc_evset_calibration){
        .threshold = 250, .hit_median = 100, .miss_median = 400, .separable = true};
    m->threshold = 250;
    m->discard_ticks = (uint32_t)llc_maphw_ticks(m->tsc_hz, 20e-6);
    m->measure = measure;
    assert_int_equal(llc_maphw_chains(m, err, sizeof(err)), 0);
    for (uint32_t u = 0; u < SETS; u++)
        assert_int_equal(llc_maphw_chain_cycle(m->head[u], 100), WAYS);

    rc = llc_maphw_walk_check(m, err, sizeof(err));
    printf("walk check (%d): %s\n", rc, m->be.walk_check);
    assert_true(rc == 0 || rc == -EIO);
    assert_non_null(strstr(m->be.walk_check, "timing: idle walk check "));
    assert_non_null(strstr(m->be.walk_check, "8-line walks over 16 sets"));
    if (rc == -EIO)
        assert_string_equal(err, m->be.walk_check);

    struct llc_map_selftest st;
    rc = llc_maphw_selftest(m, &st, err, sizeof(err));
    printf("self-test (%d): %s\n", rc, rc == 0 ? st.text : err);
    if (rc == 0) {
        assert_true(st.ran && st.passed);
    } else {
        assert_int_equal(rc, -EIO);
        assert_non_null(strstr(err, "timing: self-test failed: "));
        assert_true(!st.ran || !st.passed);
    }
    assert_int_equal(threads_settled(threads + 1), threads + 1); /* the aggressor is gone */

    /* An oracle that calls every candidate congruent hands the aggressor
     * its lines, so the trials and the verdict run: whatever this machine
     * shows, the answer carries the measured fractions. */
    m->oracle->threshold = 0;
    memset(&st, 0, sizeof(st));
    rc = llc_maphw_selftest(m, &st, err, sizeof(err));
    printf("self-test with an aggressor (%d): %s\n", rc, st.text);
    assert_true(st.ran);
    assert_true(st.aggressor_rate >= 0 && st.aggressor_rate <= 1);
    assert_true(st.idle_rate >= 0 && st.idle_rate <= 1);
    assert_true(rc == 0 ? st.passed : rc == -EIO && !st.passed);
    assert_non_null(strstr(st.text, "timing: self-test "));
    assert_non_null(strstr(st.text, "% slow vs idle "));
    if (rc < 0)
        assert_string_equal(err, st.text);
    assert_int_equal(threads_settled(threads + 1), threads + 1);

    /* The calibration co-runner finds its lines with the same eviction
     * test: an oracle that calls nothing congruent leaves it none, one
     * that calls everything congruent gives every set its lines, and the
     * thread comes and goes with k. */
    const uint32_t probed[2] = {3, 40};
    m->oracle->threshold = UINT32_MAX;
    rc = llc_maphw_corunner_op(m, probed, 2, 3, 1000, err, sizeof(err));
    assert_int_equal(rc, -EIO);
    assert_non_null(strstr(err, "timing: calibration co-runner: only 0 of the 8 lines it needs "
                                "tested congruent with set 3"));
    assert_int_equal(threads_settled(threads + 1), threads + 1);
    m->oracle->threshold = 0;
    assert_int_equal(llc_maphw_corunner_op(m, probed, 2, 3, 1000, err, sizeof(err)), 0);
    assert_int_equal(threads_settled(threads + 2), threads + 2);
    m->oracle->threshold = UINT32_MAX; /* the lines found stay: no new search */
    assert_int_equal(llc_maphw_corunner_op(m, probed, 2, WAYS, 1000, err, sizeof(err)), 0);
    assert_int_equal(threads_settled(threads + 2), threads + 2);
    assert_int_equal(llc_maphw_corunner_op(m, probed, 2, 0, 1000, err, sizeof(err)), 0);
    assert_int_equal(threads_settled(threads + 1), threads + 1);
    assert_int_equal(llc_maphw_corunner_op(m, probed, 2, 1, 1000, err, sizeof(err)), 0);
    assert_int_equal(threads_settled(threads + 2), threads + 2); /* release joins it */
    llc_maphw_free(m);
    assert_int_equal(threads_settled(threads), threads);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checks_run_and_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
