/* The hardware backends' constructors on this machine: argument checks,
 * the refusals (no PMU, no hugepages, geometry, eviction sets or
 * self-test), and that a refusal leaves no hugepage reserved and no thread
 * running. Where the machine lets a backend through, it is measured and
 * released the same way. */
#include <errno.h>
#include <sched.h>
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

#include "llcprobe/arena.h"
#include "llcprobe/common.h"
#include "llcprobe/map.h"
#include "llcprobe/sysinfo.h"
#include "threads.h"

static const char pool_path[] = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
static const char free_path[] = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";

static long read_long(const char *path)
{
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* This CPU's L2 as the brief gives it, and a plausible 1 MiB LLC slice. */
static struct llc_map_hw_options plausible(void)
{
    struct llc_map_hw_options o;
    memset(&o, 0, sizeof(o));
    o.geo = (struct llc_map_geometry){.line_size = 64,
                                      .sets_per_slice = 1024,
                                      .slices = 1,
                                      .llc_ways = 16,
                                      .l2_ways = 8,
                                      .l2_sets = 2048,
                                      .llc_bytes = 1 << 20};
    o.probe_cpu = -1;
    o.seed = 1;
    return o;
}

/* Calls a constructor and checks what every refusal must leave behind. */
static int construct(bool pmu, const struct llc_map_hw_options *o, struct llc_map_selftest *st,
                     char *err, size_t errlen)
{
    const long pool = read_long(pool_path);
    const int threads = threads_now();
    struct llc_map_backend *b = (struct llc_map_backend *)1;
    const int rc = pmu ? llc_map_backend_pmu(o, &b, st, err, errlen)
                       : llc_map_backend_timing(o, &b, st, err, errlen);
    if (rc < 0) {
        assert_null(b);
        assert_int_equal(read_long(pool_path), pool);
        assert_int_equal(threads_settled(threads), threads);
        printf("%s refused (%d): %s\n", pmu ? "pmu" : "timing", rc, err);
    } else {
        llc_map_backend_release(b);
        assert_int_equal(read_long(pool_path), pool);
        assert_int_equal(threads_settled(threads), threads);
    }
    return rc;
}

static void test_geometry_unknown(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_map_selftest st;
    struct llc_map_hw_options o = plausible();
    o.geo.llc_ways = 0;
    o.geo.sets_per_slice = 0;
    assert_int_equal(construct(false, &o, &st, err, sizeof(err)), -EINVAL);
    assert_string_equal(err, "timing: LLC geometry unknown (0 ways, 0 sets per slice): eviction "
                             "sets and the walk length need both");
    assert_false(st.ran);
    assert_int_equal(construct(true, &o, &st, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "pmu: LLC geometry unknown"));
    o = plausible();
    o.rate = -5;
    assert_int_equal(construct(false, &o, NULL, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "timing: rate -5"));
}

static void test_cpu_not_allowed(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_map_hw_options o = plausible();
    o.probe_cpu = CPU_SETSIZE - 1;
    assert_int_equal(construct(false, &o, NULL, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "timing: probe CPU 1023 is not among the CPUs"));
}

static void test_one_cpu(void **state)
{
    (void)state;
    cpu_set_t saved, one;
    assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &saved))
            first = c;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    char err[LLC_ERRLEN];
    const struct llc_map_hw_options o = plausible();
    const int rc = construct(false, &o, NULL, err, sizeof(err));
    assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
    if (rc == -ENOTSUP && strstr(err, "clock")) {
        printf("skipped: %s\n", err);
        skip();
    }
    assert_int_equal(rc, -ENOTSUP);
    assert_non_null(strstr(err, "timing: the self-test needs a second CPU"));
}

static void test_pmu_unknown_event(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_map_hw_options o = plausible();
    o.event = "NO_SUCH_EVENT_XYZ";
    assert_int_equal(construct(true, &o, NULL, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "pmu: event 'NO_SUCH_EVENT_XYZ' does not encode"));
}

static void test_pmu_refuses_without_pmu(void **state)
{
    (void)state;
    struct llc_pmu_check pc;
    llc_pmu_check(NULL, true, &pc);
    if (pc.opened) {
        printf("skipped: this machine counts %s, so the no-PMU refusal cannot happen\n", pc.event);
        skip();
    }
    char err[LLC_ERRLEN];
    struct llc_map_selftest st;
    const struct llc_map_hw_options o = plausible();
    const int rc = construct(true, &o, &st, err, sizeof(err));
    assert_int_equal(rc, -ENOTSUP);
    assert_false(st.ran);
    if (pc.encoded) { /* it got as far as opening, on the probe thread */
        assert_non_null(strstr(err, "pmu: perf_event_open("));
        assert_non_null(strstr(err, "on the probe thread failed: "));
        assert_non_null(strstr(err, strerror(pc.open_errno)));
    } else {
        assert_non_null(strstr(err, "pmu: no LLC-miss event"));
    }
}

static void test_timing_without_hugepages(void **state)
{
    (void)state;
    if (read_long(free_path) != 0) {
        printf("skipped: %ld free 2 MiB hugepages, so the arena would not be refused\n",
               read_long(free_path));
        skip();
    }
    char err[LLC_ERRLEN];
    struct llc_map_hw_options o = plausible();
    o.reserve = 0;
    o.small_pages_ok = false;
    const int rc = construct(false, &o, NULL, err, sizeof(err));
    if (rc == -ENOTSUP && strstr(err, "clock")) {
        printf("skipped: %s\n", err);
        skip();
    }
    assert_int_equal(rc, -ENOMEM);
    assert_non_null(strstr(err, "timing: arena of "));
    assert_non_null(strstr(err, "hugepages are free"));
    assert_non_null(strstr(err, "--reserve"));
}

struct seen {
    long max_pool;
    char stages[256];
};

static void on_progress(void *ctx, const char *stage, double fraction)
{
    struct seen *s = ctx;
    const long pool = read_long(pool_path);
    if (pool > s->max_pool)
        s->max_pool = pool;
    if (fraction == 0 && strlen(s->stages) + strlen(stage) + 2 < sizeof(s->stages)) {
        strcat(s->stages, stage);
        strcat(s->stages, ";");
    }
}

/* The whole timing path with a geometry given explicitly. On a machine
 * where timing cannot see contention it must refuse with the measured
 * numbers; where it passes, it must measure. Either way the pool goes back. */
static void test_timing_full_path(void **state)
{
    (void)state;
    if (access(pool_path, W_OK) != 0) {
        printf("skipped: cannot write %s (not root), so hugepages cannot be reserved\n", pool_path);
        skip();
    }
    char err[LLC_ERRLEN];
    struct llc_map_selftest st;
    struct seen seen = {.max_pool = -1};
    struct llc_map_hw_options o = plausible();
    o.reserve = LLC_ARENA_RESERVE_NEEDED;
    o.progress = on_progress;
    o.progress_ctx = &seen;
    const long pool = read_long(pool_path), free_pages = read_long(free_path);
    const int threads = threads_now();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct llc_map_backend *b = NULL;
    const int rc = llc_map_backend_timing(&o, &b, &st, err, sizeof(err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("timing constructor: %d after %.1f s, stages %s, pool %ld -> %ld while building\n", rc,
           secs, seen.stages, pool, seen.max_pool);
    if (rc == -ENOTSUP && strstr(err, "clock")) {
        printf("skipped: %s\n", err);
        skip();
    }
    /* the arena stage ran with the pool raised by what was missing */
    assert_non_null(strstr(seen.stages, "arena;eviction sets;"));
    if (free_pages == 0)
        assert_true(seen.max_pool > pool);
    if (rc == 0) {
        printf("timing accepted: %s\n%s\n%s\n", st.text, b->walk_check, b->calibration);
        assert_true(st.ran && st.passed);
        assert_true(b->all_at_once);
        assert_string_equal(b->name, "timing");
        const uint32_t units = llc_map_units(&b->geo);
        uint64_t *m = calloc(units, sizeof(*m)), *a = calloc(units, sizeof(*a));
        assert_non_null(m);
        assert_non_null(a);
        const uint32_t some[] = {0, 1, units / 2, units - 1};
        assert_int_equal(b->ops->measure(b->ctx, some, 4, 0.01, m, a, err, sizeof(err)), 0);
        for (int i = 0; i < 4; i++)
            assert_true(m[some[i]] <= a[some[i]]);
        free(m);
        free(a);
        llc_map_backend_release(b);
    } else {
        assert_null(b);
        /* a refusal that carries what was measured */
        assert_int_equal(rc, -EIO);
        assert_true(strncmp(err, "timing: ", 8) == 0);
        assert_non_null(strpbrk(err, "0123456789"));
        if (st.ran) {
            assert_false(st.passed);
            assert_string_equal(err, st.text);
        }
        printf("timing refused: %s\n", err);
    }
    assert_int_equal(read_long(pool_path), pool);
    assert_int_equal(threads_settled(threads), threads);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_unknown),
        cmocka_unit_test(test_cpu_not_allowed),
        cmocka_unit_test(test_one_cpu),
        cmocka_unit_test(test_pmu_unknown_event),
        cmocka_unit_test(test_pmu_refuses_without_pmu),
        cmocka_unit_test(test_timing_without_hugepages),
        cmocka_unit_test(test_timing_full_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
