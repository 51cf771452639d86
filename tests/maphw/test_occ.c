/* The hardware backends' side of the occupancy search and the calibration
 * co-runner, through seams: the arithmetic (walk lengths, batch sizes,
 * warm-up, pace checks) on numbers; per-unit walks, relinking and the
 * flush list on hand-made "eviction sets" of heap lines with a recording
 * flush; the paced timing measure and the slow idle-walk check on this
 * machine's probe thread; the co-runner's line choice with a fake
 * congruence test, its touch order (on a victim LLC against a model of
 * its L2 and the LLC), and its paced thread. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "maphw/maphw_internal.h"
#include "threads.h"
#include "util/tsc.h"

enum { SETS = 8, WAYS = 8, MAX_FLUSH = 256 };

static const void *flushed[MAX_FLUSH];
static pthread_t flushed_by[MAX_FLUSH];
static size_t n_flushed;

static void record_flush(const void *line)
{
    assert_true(n_flushed < MAX_FLUSH);
    flushed_by[n_flushed] = pthread_self();
    flushed[n_flushed++] = line;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void test_arithmetic(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    uint8_t walk[4] = {5, 16, 1, 9};
    /* inclusive: the walk is the LLC's share alone */
    assert_int_equal(llc_maphw_unit_walk(16, 16, NULL, 0), 16);
    assert_int_equal(llc_maphw_unit_walk(16, 16, walk, 0), 5);
    assert_int_equal(llc_maphw_unit_walk(16, 16, walk, 2), 1);
    /* victim LLC walked alone: W_L2 (8) stays on top of the LLC's share */
    assert_int_equal(llc_maphw_unit_walk(24, 16, walk, 0), 13);
    assert_int_equal(llc_maphw_unit_walk(24, 16, walk, 1), 24);
    /* two units per L2 set: floor(8 / 2) = 4 of the L2 */
    assert_int_equal(llc_maphw_unit_walk(20, 16, walk, 3), 13);

    /* the search's pace (16 ways every 0.1 s = 160 per set), 25 sets: a
     * batch is 2 ms = 8 accesses, not 1024 (6.4 s) */
    assert_int_equal(llc_maphw_batch_for(160, 25, LLC_MAPHW_BATCH_SECONDS, 1024), 8);
    assert_int_equal(llc_maphw_batch_for(160, 1, LLC_MAPHW_BATCH_SECONDS, 1024), 1);
    assert_int_equal(llc_maphw_batch_for(0, 25, LLC_MAPHW_BATCH_SECONDS, 1024), 1024);
    assert_int_equal(llc_maphw_batch_for(1e9, 16, LLC_MAPHW_BATCH_SECONDS, 1024), 1024);
    assert_int_equal(llc_maphw_batch_for(160, 0, LLC_MAPHW_BATCH_SECONDS, 1024), 1024);

    double warm, count;
    llc_maphw_warm_split(0.4, 160, 16, &warm, &count); /* 2 warm + 2 counted cycles */
    assert_float_equal(warm, 0.2, 1e-12);
    assert_float_equal(count, 0.2, 1e-12);
    llc_maphw_warm_split(0.1, 160, 16, &warm, &count); /* at most half the dwell */
    assert_float_equal(warm, 0.05, 1e-12);
    assert_float_equal(count, 0.05, 1e-12);
    llc_maphw_warm_split(0.02, 0, 16, &warm, &count); /* unpaced map: all counts */
    assert_float_equal(warm, 0, 0);
    assert_float_equal(count, 0.02, 0);

    assert_int_equal(llc_maphw_pace_checked("timing", 160, 0, false, "", err, sizeof(err)),
                     -ENOTSUP);
    assert_non_null(strstr(err, "timing: a pace of 160 accesses per set per second was asked, "
                                "but no slow idle walk was checked"));
    assert_int_equal(llc_maphw_pace_checked("pmu", 160, 160, false,
                                            "pmu: slow idle walk check "
                                            "failed: 9.0% from memory",
                                            err, sizeof(err)),
                     -EIO);
    assert_string_equal(err, "pmu: slow idle walk check failed: 9.0% from memory");
    assert_int_equal(llc_maphw_pace_checked("timing", 320, 160, true, "", err, sizeof(err)),
                     -EINVAL);
    assert_non_null(strstr(err, "checked at 160 only"));
    assert_int_equal(
        llc_maphw_pace_checked("timing", 160 * (1 + 1e-12), 160, true, "", err, sizeof(err)), 0);
}

/* A backend state over heap lines: unit u's set is lines u*group ..,
 * all verified; chains linked as llc_maphw_build would. */
static struct maphw *fake_backend(const struct llc_map_geometry *g, uint8_t **mem)
{
    char err[LLC_ERRLEN];
    struct llc_map_hw_options o;
    memset(&o, 0, sizeof(o));
    o.geo = *g;
    o.probe_cpu = -1;
    o.seed = 5;
    struct maphw *m = NULL;
    assert_int_equal(llc_maphw_new("timing", &o, &m, err, sizeof(err)), 0);
    const uint32_t units = llc_map_units(g);
    *mem = aligned_alloc(64, (size_t)units * m->group * 64);
    assert_non_null(*mem);
    struct llc_evset_result *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    r->sets = calloc(units, sizeof(*r->sets));
    r->lines = calloc((size_t)units * m->group, sizeof(*r->lines));
    assert_non_null(r->sets);
    assert_non_null(r->lines);
    r->group_size = m->group;
    for (uint32_t u = 0; u < units; u++) {
        r->sets[u] = (struct llc_evset_set){.index = u,
                                            .source = LLC_EVSET_REDUCED,
                                            .verified = true,
                                            .first = (size_t)u * m->group};
        for (unsigned k = 0; k < m->group; k++)
            r->lines[u * m->group + k].addr =
                (uint64_t)(uintptr_t)(*mem + ((size_t)u * m->group + k) * 64);
    }
    m->sets = r;
    assert_int_equal(llc_maphw_chains(m, err, sizeof(err)), 0);
    m->flush = record_flush;
    return m;
}

static bool in_chain(const void *head, const void *line, size_t max)
{
    const void *p = head;
    for (size_t k = 0; k < max; k++, p = *(void *const *)p)
        if (p == line)
            return true;
    return false;
}

static void test_walks_relink_flush(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const struct llc_map_geometry g = {
        .line_size = 64, .sets_per_slice = SETS, .slices = 1, .llc_ways = WAYS};
    uint8_t *mem;
    struct maphw *m = fake_backend(&g, &mem);
    const uint32_t all[SETS] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (uint32_t u = 0; u < SETS; u++)
        assert_int_equal(llc_maphw_chain_cycle(m->head[u], 100), WAYS);

    /* a pace needs a checked slow walk; walks must be 1..ways */
    uint8_t walk[SETS];
    memset(walk, WAYS, sizeof(walk));
    assert_int_equal(llc_maphw_probe_set_op(m, 160, 2, walk, err, sizeof(err)), -ENOTSUP);
    m->slow_rate = 160;
    m->slow_passed = true;
    walk[1] = 0;
    assert_int_equal(llc_maphw_probe_set_op(m, 160, 2, walk, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "timing: set 1: a walk of 0 LLC lines is not in 1..8"));
    walk[1] = WAYS + 1;
    assert_int_equal(llc_maphw_probe_set_op(m, 160, 2, walk, err, sizeof(err)), -EINVAL);
    assert_null(m->llc_walk);
    assert_float_equal(m->occ_rate, 0, 0);

    walk[0] = 3;
    walk[1] = WAYS;
    walk[2] = 1;
    n_flushed = 0;
    assert_int_equal(llc_maphw_probe_set_op(m, 160, 2, walk, err, sizeof(err)), 0);
    assert_int_equal(n_flushed, 0); /* nothing happens until the probe thread relinks */
    assert_float_equal(m->occ_rate, 160, 0);
    struct llc_maphw_walk_cfg c;
    llc_maphw_walk_cfg(m, 25, &c);
    assert_float_equal(c.rate, 160, 0);
    assert_int_equal(c.batch, 8);
    assert_int_equal(c.delay_nops, 0);

    /* the flush list is exactly what the shorter walks stop using */
    void *expect[2 * WAYS];
    size_t n_expect = llc_maphw_dropped(m, 0, WAYS, 3, expect);
    assert_int_equal(n_expect, WAYS - 3);
    n_expect += llc_maphw_dropped(m, 2, WAYS, 1, expect + n_expect);
    assert_int_equal(n_expect, WAYS - 3 + WAYS - 1);
    llc_maphw_relink(m, all, SETS, llc_maphw_walk_for(m, all, SETS));
    assert_int_equal(llc_maphw_chain_cycle(m->head[0], 100), 3);
    assert_int_equal(llc_maphw_chain_cycle(m->head[1], 100), WAYS);
    assert_int_equal(llc_maphw_chain_cycle(m->head[2], 100), 1);
    assert_int_equal(n_flushed, n_expect);
    for (size_t k = 0; k < n_flushed; k++) {
        assert_ptr_equal(flushed[k], expect[k]);
        const uint32_t u = k < WAYS - 3 ? 0 : 2;
        const uint8_t *line = flushed[k];
        /* the unit's own line, and no longer walked */
        assert_true(line >= mem + (size_t)u * WAYS * 64);
        assert_true(line < mem + (size_t)(u + 1) * WAYS * 64);
        assert_false(in_chain(m->head[u], line, WAYS));
    }
    /* relinking again changes nothing and flushes nothing */
    llc_maphw_relink(m, all, SETS, WAYS);
    assert_int_equal(n_flushed, n_expect);

    /* a longer walk flushes nothing; NULL is the full walk again */
    walk[0] = 6;
    assert_int_equal(llc_maphw_probe_set_op(m, 160, 2, walk, err, sizeof(err)), 0);
    llc_maphw_relink(m, all, SETS, WAYS);
    assert_int_equal(llc_maphw_chain_cycle(m->head[0], 100), 6);
    assert_int_equal(n_flushed, n_expect);
    assert_int_equal(llc_maphw_probe_set_op(m, 0, 2, NULL, err, sizeof(err)), 0);
    assert_null(m->llc_walk);
    llc_maphw_relink(m, all, SETS, WAYS);
    for (uint32_t u = 0; u < SETS; u++)
        assert_int_equal(llc_maphw_chain_cycle(m->head[u], 100), WAYS);
    assert_int_equal(n_flushed, n_expect);
    llc_maphw_walk_cfg(m, 25, &c);
    assert_int_equal(c.batch, m->batch); /* the map's batches again */
    llc_maphw_free(m);
    free(mem);
}

static void test_victim_walks(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    /* victim LLC: 8 LLC ways + 4 L2 ways per unit walked alone */
    const struct llc_map_geometry g = {.line_size = 64,
                                       .sets_per_slice = SETS,
                                       .slices = 1,
                                       .llc_ways = WAYS,
                                       .l2_ways = 4,
                                       .l2_sets = 2,
                                       .victim_llc = true};
    uint8_t *mem;
    struct maphw *m = fake_backend(&g, &mem);
    assert_int_equal(m->group, 12);
    uint8_t walk[SETS];
    memset(walk, WAYS, sizeof(walk));
    walk[4] = 2;
    m->slow_rate = 80;
    m->slow_passed = true;
    assert_int_equal(llc_maphw_probe_set_op(m, 80, 1, walk, err, sizeof(err)), 0);
    const uint32_t one = 4;
    n_flushed = 0;
    llc_maphw_relink(m, &one, 1, llc_maphw_walk_for(m, &one, 1));
    assert_int_equal(llc_maphw_chain_cycle(m->head[4], 100), 4 + 2); /* the L2's share stays */
    assert_int_equal(n_flushed, WAYS - 2);
    /* units 0 and 2 share an L2 set: 2 of the L2's 4 ways each */
    const uint32_t pair[2] = {0, 2};
    assert_int_equal(llc_maphw_walk_for(m, pair, 2), WAYS + 2);
    llc_maphw_relink(m, pair, 2, llc_maphw_walk_for(m, pair, 2));
    assert_int_equal(llc_maphw_chain_cycle(m->head[0], 100), WAYS + 2);
    assert_int_equal(n_flushed, WAYS - 2 + 2 + 2);
    llc_maphw_free(m);
    free(mem);
}

/* The backend state on this machine's probe thread, or NULL where the
 * clock or a second CPU is missing (the test then skips). */
struct live {
    struct maphw *m;
    uint8_t *mem;
};

static int live_setup(void **state)
{
    char err[LLC_ERRLEN];
    const struct llc_map_geometry g = {
        .line_size = 64, .sets_per_slice = SETS, .slices = 1, .llc_ways = WAYS};
    struct live *l = calloc(1, sizeof(*l));
    assert_non_null(l);
    l->m = fake_backend(&g, &l->mem);
    const int rc = llc_maphw_start(l->m, err, sizeof(err));
    if (rc == -ENOTSUP) {
        printf("skipped: %s\n", err);
        llc_maphw_free(l->m);
        l->m = NULL;
    } else {
        assert_int_equal(rc, 0);
        l->m->threshold = 250;
        l->m->discard_ticks = (uint32_t)llc_maphw_ticks(l->m->tsc_hz, 20e-6);
        l->m->measure = llc_maphw_timing_measure;
#if LLC_HAVE_TSC
        l->m->last_recheck = llc_tsc_end(); /* no threshold re-check in the next 2 s */
#endif
    }
    *state = l;
    return 0;
}

static int live_teardown(void **state)
{
    struct live *l = *state;
    llc_maphw_free(l->m);
    free(l->mem);
    free(l);
    return 0;
}

static struct maphw *live_backend(void **state)
{
    const struct live *l = *state;
    if (!l->m)
        skip();
    return l->m;
}

static void test_paced_measure(void **state)
{
    struct maphw *m = live_backend(state);
    char err[LLC_ERRLEN];
    uint8_t walk[SETS];
    memset(walk, WAYS, sizeof(walk));
    walk[0] = 3;
    m->slow_rate = 1000;
    m->slow_passed = true;
    assert_int_equal(llc_maphw_probe_set_op(m, 1000, 2, walk, err, sizeof(err)), 0);
    const uint32_t units[2] = {0, 1};
    uint64_t misses[SETS] = {0}, acc[SETS] = {0};
    n_flushed = 0;
    const double t0 = now_s();
    const int rc = llc_maphw_measure_op(m, units, 2, 0.1, misses, acc, err, sizeof(err));
    const double took = now_s() - t0;
    assert_int_equal(rc, 0);
    /* relinked and flushed on the probe thread, not here */
    assert_int_equal(n_flushed, WAYS - 3);
    for (size_t k = 0; k < n_flushed; k++)
        assert_false(pthread_equal(flushed_by[k], pthread_self()));
    assert_int_equal(llc_maphw_chain_cycle(m->head[0], 100), 3);
    /* 1000 accesses per set per second: 2 warm rounds (16 ms) uncounted,
     * the other 84 ms at most 84 accesses per set (+ the last round);
     * counted warm-up would make 100 */
    printf("paced measure: %llu and %llu accesses in %.3f s\n", (unsigned long long)acc[0],
           (unsigned long long)acc[1], took);
    assert_true(took >= 0.099);
    for (int i = 0; i < 2; i++) {
        assert_true(acc[i] >= 1);
        assert_true(acc[i] <= 86);
        assert_true(misses[i] <= acc[i]);
    }
    assert_int_equal(acc[2], 0);
}

/* The pmu measure at the search's pace, its counter a stand-in file of
 * reads (each 1 more miss, enabled = running): one unit at a time, the
 * unit's shorter walk relinked and flushed on the probe thread, warm-up
 * uncounted, 2-access batches (1000/s for 2 ms). */
static void test_pmu_paced_measure(void **state)
{
    struct maphw *m = live_backend(state);
    char err[LLC_ERRLEN];
    char path[] = "/tmp/llcprobe-pmu-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    for (uint64_t i = 1; i <= 100000; i++) {
        const uint64_t rec[3] = {i, 10 * i, 10 * i};
        assert_int_equal(write(fd, rec, sizeof(rec)), (ssize_t)sizeof(rec));
    }
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    m->fd = fd; /* closed by llc_maphw_free */
    m->measure = llc_maphw_pmu_measure;
    uint8_t walk[SETS];
    memset(walk, WAYS, sizeof(walk));
    walk[6] = 2;
    m->slow_rate = 1000;
    m->slow_passed = true;
    assert_int_equal(llc_maphw_probe_set_op(m, 1000, 1, walk, err, sizeof(err)), 0);
    const uint32_t unit = 6;
    uint64_t misses[SETS] = {0}, acc[SETS] = {0};
    n_flushed = 0;
    const double t0 = now_s();
    assert_int_equal(llc_maphw_measure_op(m, &unit, 1, 0.1, misses, acc, err, sizeof(err)), 0);
    const double took = now_s() - t0;
    printf("pmu paced measure: %llu misses, %llu accesses in %.3f s\n",
           (unsigned long long)misses[6], (unsigned long long)acc[6], took);
    assert_true(took >= 0.099);
    assert_int_equal(n_flushed, WAYS - 2);
    assert_false(pthread_equal(flushed_by[0], pthread_self()));
    assert_int_equal(llc_maphw_chain_cycle(m->head[6], 100), 2);
    /* 84 ms counted at 1000/s: at most 42 batches of 2 (+ the last one) */
    assert_true(acc[6] >= 2 && acc[6] <= 88);
    assert_int_equal(acc[6] % 2, 0);
    assert_int_equal(misses[6] * 2, acc[6]); /* one more count per kept batch */
}

static void test_slow_check(void **state)
{
    struct maphw *m = live_backend(state);
    char err[LLC_ERRLEN];
    /* no search: nothing to check, and no pace accepted */
    assert_int_equal(llc_maphw_slow_check(m, err, sizeof(err)), 0);
    assert_float_equal(m->slow_rate, 0, 0);
    assert_int_equal(llc_maphw_probe_set_op(m, 800, 4, NULL, err, sizeof(err)), -ENOTSUP);
    m->opt.search_cycle_s = 0.01; /* 8 ways every 10 ms: 800 per set per second */
    const int rc = llc_maphw_slow_check(m, err, sizeof(err));
    printf("slow check (%d): %s\n", rc, m->be.slow_walk_check);
    assert_true(rc == 0 || rc == -EIO);
    assert_float_equal(m->slow_rate, 800, 1e-9);
    assert_true(m->slow_passed == (rc == 0));
    assert_non_null(strstr(m->be.slow_walk_check,
                           "timing: slow idle walk check (800 accesses per set per second) "));
    assert_non_null(strstr(m->be.slow_walk_check, "8-line walks over 8 sets"));
    assert_float_equal(m->occ_rate, 0, 0); /* the check leaves the map's pace */
    const int ps = llc_maphw_probe_set_op(m, 800, 4, NULL, err, sizeof(err));
    if (rc == 0) {
        assert_int_equal(ps, 0);
    } else {
        assert_int_equal(ps, -EIO);
        assert_string_equal(err, m->be.slow_walk_check);
    }
}

struct fake_test {
    unsigned calls;
    uint32_t fail_on; /* id whose test errs */
};

/* "Congruent": ids whose line number / 8 is even (slice 0 of 2). */
static int fake_congruent(void *ctx, uint32_t cand, char *err, size_t errlen)
{
    struct fake_test *f = ctx;
    f->calls++;
    if (cand == f->fail_on)
        return llc_errf(err, errlen, -EIO, "timer broke");
    return (cand / 8) % 2 == 0;
}

static void test_corunner_lines(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_evset_line lines[48];
    uint8_t used[48] = {0};
    for (uint32_t i = 0; i < 48; i++)
        lines[i] = (struct llc_evset_line){.addr = 0x1000 + i * 64,
                                           .paddr = i == 19 ? LLC_EVSET_NO_PADDR : i * 64ull};
    used[3] = 1; /* the probe's own set */
    struct fake_test f = {0, UINT32_MAX};
    uint32_t out[4];
    unsigned tested;
    /* index 3: 3 (used), 11 (no), 19 (no paddr), 27 (no), 35 (yes), 43 (no) */
    int n = llc_maphw_pick_congruent(lines, 48, used, 64, 8, 3, 4, 100, fake_congruent, &f, out,
                                     &tested, err, sizeof(err));
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 35);
    assert_int_equal(tested, 4);
    assert_int_equal(f.calls, 4);
    assert_int_equal(used[35], 1);
    /* index 2 wants 2: 2 (yes), 10 (no), 18 (yes); stops there */
    n = llc_maphw_pick_congruent(lines, 48, used, 64, 8, 2, 2, 100, fake_congruent, &f, out,
                                 &tested, err, sizeof(err));
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 18);
    assert_int_equal(tested, 3);
    /* picked lines are not picked again; the test budget holds */
    n = llc_maphw_pick_congruent(lines, 48, used, 64, 8, 2, 2, 1, fake_congruent, &f, out, &tested,
                                 err, sizeof(err));
    assert_int_equal(n, 0);
    assert_int_equal(tested, 1); /* 10, not 2 or 18 */
    f.fail_on = 10;
    n = llc_maphw_pick_congruent(lines, 48, used, 64, 8, 2, 2, 100, fake_congruent, &f, out,
                                 &tested, err, sizeof(err));
    assert_int_equal(n, -EIO);
    assert_string_equal(err, "timer broke");

    /* touch order: every set in turn, line by line */
    int h[12];
    void *held[12], *order[12];
    for (int i = 0; i < 12; i++)
        held[i] = &h[i];
    assert_int_equal(llc_maphw_corunner_order(held, 3, 4, 2, NULL, order), 6);
    void *const want[6] = {&h[0], &h[4], &h[8], &h[1], &h[5], &h[9]};
    for (int i = 0; i < 6; i++)
        assert_ptr_equal(order[i], want[i]);
    /* with L2 shares 1, 0, 2 on top of 1 line: the longer chains run on */
    const unsigned share[3] = {1, 0, 2};
    assert_int_equal(llc_maphw_corunner_order(held, 3, 4, 1, share, order), 6);
    void *const longer[6] = {&h[0], &h[4], &h[8], &h[1], &h[9], &h[10]};
    for (int i = 0; i < 6; i++)
        assert_ptr_equal(order[i], longer[i]);
}

/* A victim hierarchy on the co-runner's core: private LRU L2 sets, and an
 * LRU LLC set per unit that a line enters only when the L2 evicts it and
 * leaves when it moves back up (exclusive). */
enum {
    V_SETS = 16,
    V_WAYS = 8,
    V_L2_WAYS = 4,
    V_L2_SETS = 4,
    V_UNITS = 6,
    V_PER_UNIT = V_WAYS + V_L2_WAYS
};
struct victim_sim {
    int l2[V_L2_SETS][V_L2_WAYS]; /* line ids, most recent first, -1 empty */
    int llc[V_UNITS][V_WAYS];
};

/* Moves id to the front of set[0..ways), inserting it if absent; returns
 * the line pushed out (-1 if none) and whether it was there. */
static int lru_touch(int *set, unsigned ways, int id, bool *was_there)
{
    unsigned at = ways - 1;
    *was_there = false;
    for (unsigned w = 0; w < ways; w++)
        if (set[w] == id) {
            at = w;
            *was_there = true;
            break;
        }
    const int out = *was_there ? -1 : set[ways - 1];
    memmove(set + 1, set, at * sizeof(*set));
    set[0] = id;
    return out;
}

static void lru_remove(int *set, unsigned ways, int id)
{
    for (unsigned w = 0; w < ways; w++)
        if (set[w] == id) {
            memmove(set + w, set + w + 1, (ways - 1 - w) * sizeof(*set));
            set[ways - 1] = -1;
            return;
        }
}

static void victim_access(struct victim_sim *v, const uint32_t *units, int id)
{
    const int unit = id / V_PER_UNIT;
    const uint32_t l2set = (units[unit] % V_SETS) % V_L2_SETS;
    bool hit;
    const int out = lru_touch(v->l2[l2set], V_L2_WAYS, id, &hit);
    if (hit)
        return;
    lru_remove(v->llc[unit], V_WAYS, id); /* from the LLC (a hit there) or memory */
    if (out >= 0)
        lru_touch(v->llc[out / V_PER_UNIT], V_WAYS, out, &hit);
}

static void test_corunner_victim_share(void **state)
{
    (void)state;
    const struct llc_map_geometry g = {.line_size = 64,
                                       .sets_per_slice = V_SETS,
                                       .slices = 1,
                                       .llc_ways = V_WAYS,
                                       .l2_ways = V_L2_WAYS,
                                       .l2_sets = V_L2_SETS,
                                       .victim_llc = true};
    /* L2 set 0 holds units 0, 4, 8 (4 ways: 2 + 1 + 1), set 1 units 1 and
     * 5 (2 + 2), set 2 unit 2 alone (all 4): a share from the most sharers
     * (4 / 3 = 1 each) would leave the L2 of set 2 room for 3 of the lines
     * meant for the LLC. */
    const uint32_t units[V_UNITS] = {0, 4, 8, 1, 5, 2};
    uint32_t counts[V_L2_SETS] = {0};
    unsigned share[V_UNITS];
    llc_map_corunner_l2_share(&g, units, V_UNITS, counts, share);
    const unsigned want_share[V_UNITS] = {2, 1, 1, 2, 2, 4};
    for (size_t i = 0; i < V_UNITS; i++)
        assert_int_equal(share[i], want_share[i]);
    for (size_t s = 0; s < V_L2_SETS; s++)
        assert_int_equal(counts[s], 0); /* the scratch is left zero */

    int ids[V_UNITS * V_PER_UNIT];
    void *held[V_UNITS * V_PER_UNIT], *order[V_UNITS * V_PER_UNIT];
    for (int i = 0; i < V_UNITS * V_PER_UNIT; i++) {
        ids[i] = i;
        held[i] = &ids[i];
    }
    for (unsigned k = 0; k <= V_WAYS; k++) {
        const size_t chain = llc_maphw_corunner_order(held, V_UNITS, V_PER_UNIT, k, share, order);
        assert_int_equal(chain, V_UNITS * k + 2 * V_L2_WAYS + V_L2_WAYS);
        struct victim_sim v;
        memset(&v, -1, sizeof(v));
        for (int round = 0; round < 4; round++)
            for (size_t j = 0; j < chain; j++)
                victim_access(&v, units, *(const int *)order[j]);
        /* after every touch: about k lines in each LLC set, all of them
         * the co-runner's lines of that unit */
        for (size_t j = 0; j < chain; j++) {
            victim_access(&v, units, *(const int *)order[j]);
            for (int u = 0; u < V_UNITS; u++) {
                unsigned held_llc = 0;
                for (unsigned w = 0; w < V_WAYS; w++)
                    if (v.llc[u][w] >= 0) {
                        assert_int_equal(v.llc[u][w] / V_PER_UNIT, u);
                        held_llc++;
                    }
                /* between cycle ends one line is off by one: the line just
                 * moved up left its set, and the L2 set's victim may have
                 * gone to another unit sharing it */
                assert_true(held_llc + 1 >= k && held_llc <= k + 1);
            }
        }
        /* and at the end of each cycle exactly k */
        for (int u = 0; u < V_UNITS; u++) {
            unsigned held_llc = 0;
            for (unsigned w = 0; w < V_WAYS; w++)
                held_llc += v.llc[u][w] >= 0;
            assert_int_equal(held_llc, k);
        }
    }

    /* inclusive LLC: no share, the chain is the k lines */
    const struct llc_map_geometry inc = {.line_size = 64,
                                         .sets_per_slice = V_SETS,
                                         .slices = 1,
                                         .llc_ways = V_WAYS,
                                         .l2_ways = V_L2_WAYS,
                                         .l2_sets = V_L2_SETS};
    llc_map_corunner_l2_share(&inc, units, V_UNITS, counts, share);
    for (size_t i = 0; i < V_UNITS; i++)
        assert_int_equal(share[i], 0);
    assert_int_equal(llc_maphw_corunner_order(held, V_UNITS, V_PER_UNIT, 3, share, order),
                     V_UNITS * 3);
}

static void test_corunner_pace(void **state)
{
    struct maphw *m = live_backend(state);
    char err[LLC_ERRLEN];
    const int threads = threads_now();
    /* refusals before any line is looked for */
    const uint32_t units[2] = {1, 5};
    assert_int_equal(llc_maphw_corunner_op(m, units, 2, WAYS + 1, 100, err, sizeof(err)), -EINVAL);
    assert_int_equal(llc_maphw_corunner_op(m, units, 2, 2, 0, err, sizeof(err)), -EINVAL);
    m->sets->sets[5].verified = false;
    assert_int_equal(llc_maphw_corunner_op(m, units, 2, 2, 100, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "timing: set 5 has no verified eviction set"));
    assert_int_equal(llc_maphw_corunner_op(m, units, 2, 0, 100, err, sizeof(err)), 0);
    assert_int_equal(threads_settled(threads), threads);

    /* the paced chase: 16 lines at 2000 accesses per second in all */
    void *lines[16];
    uint32_t perm[16];
    for (int i = 0; i < 16; i++) {
        lines[i] = ((const struct live *)*state)->mem + (size_t)i * 64;
        perm[i] = (uint32_t)i;
    }
    void *head = llc_maphw_chain_link(lines, perm, 16);
    struct llc_maphw_pace pace;
    assert_int_equal(llc_maphw_pace_init(&pace, m->tsc_hz, 125, 16, 0, err, sizeof(err)), 0);
    assert_float_equal(pace.period, (double)m->tsc_hz / 2000, 1e-6);
    struct llc_maphw_aggressor *a = NULL;
    const double t0 = now_s();
    assert_int_equal(
        llc_maphw_aggressor_start(m->other_cpu, head, pace.period, &a, err, sizeof(err)), 0);
    assert_int_equal(threads_settled(threads + 1), threads + 1);
    const struct timespec nap = {0, 100000000};
    nanosleep(&nap, NULL);
    const uint64_t n = llc_maphw_aggressor_stop(a);
    const double took = now_s() - t0;
    printf("paced chase: %llu accesses in %.3f s (at most %.0f)\n", (unsigned long long)n, took,
           2000 * took + 1);
    assert_true(n >= 1);
    assert_true((double)n <= 2000 * took + 1);
    assert_int_equal(threads_settled(threads), threads);
    assert_int_equal(llc_maphw_aggressor_start(m->other_cpu, head, -1, &a, err, sizeof(err)),
                     -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_walks_relink_flush),
        cmocka_unit_test(test_victim_walks),
        cmocka_unit_test_setup_teardown(test_paced_measure, live_setup, live_teardown),
        cmocka_unit_test_setup_teardown(test_pmu_paced_measure, live_setup, live_teardown),
        cmocka_unit_test_setup_teardown(test_slow_check, live_setup, live_teardown),
        cmocka_unit_test(test_corunner_lines),
        cmocka_unit_test(test_corunner_victim_share),
        cmocka_unit_test_setup_teardown(test_corunner_pace, live_setup, live_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
