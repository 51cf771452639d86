/* The sampling core shared by libllcprobe-rt and the QEMU plugin
 * (probe/rt/core.c, watch.c): the per-access filter test as both callers
 * run it, the watch table behind it, the countdown's reference count, and
 * the samples and profile of a known reference stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/rng.h"
#include "rt/rt.h"

/* One access of h's thread to line, as rt.c and plugin.c make it. */
static void access_line(struct rt_core *c, struct rt_hot *h, uint64_t line, uint64_t pc)
{
    const bool hit = rt_filter_hit(h, line);
    const bool due = --h->countdown == 0;
    if (hit)
        rt_core_hit(c, h, line);
    if (due && h->countdown == 0)
        rt_core_due(c, h, line, pc);
}

static struct rt_hot fresh_hot(void)
{
    return (struct rt_hot){.countdown = 1, .armed = 1, .filter = rt_no_filter, .shift = 63};
}

static void free_core(struct rt_core *c)
{
    for (struct rt_thread *t = c->threads, *next; t; t = next) {
        next = t->next;
        rt_watch_free(t);
        rt_windows_free(t);
        llc_statmodel_hist_destroy(t->hist);
        free(t);
    }
    c->threads = NULL;
}

/* Lines at one position at some size share it at every smaller size (the
 * table and the filter rely on it); the filter test is the position's bit. */
static void test_positions(void **state)
{
    (void)state;
    uint64_t rng = 7;
    for (int i = 0; i < 100000; i++) {
        const uint64_t a = llc_splitmix_next(&rng) >> 16;
        const uint64_t b = (i & 1) ? a ^ (llc_splitmix_next(&rng) >> 40) : a ^ 1;
        for (unsigned m = 8; m <= 40; m++) {
            assert_true(rt_pos(a, m) < (UINT64_C(1) << m));
            if (rt_pos(a, m) == rt_pos(b, m))
                for (unsigned n = 1; n < m; n++)
                    assert_true(rt_pos(a, n) == rt_pos(b, n));
        }
    }
    static uint64_t filter[1 << 10];
    const uint64_t line = 12345;
    const uint64_t p = rt_pos(line, 16);
    filter[p >> 6] |= UINT64_C(1) << (p & 63);
    const struct rt_hot h = {.filter = filter, .shift = 64 - 16};
    assert_true(rt_filter_hit(&h, line));
    assert_false(rt_filter_hit(&h, line + 1) && rt_pos(line + 1, 16) != p);
}

/* Every watched line passes the filter; few others do; a resolved watch's
 * bit is cleared; the distance recorded is the references in between. */
static void test_filter_and_table(void **state)
{
    (void)state;
    struct rt_core c;
    rt_core_init(&c, "test");
    c.rate = 1e-9; /* no samples of its own: the watches are added below */
    c.window = 0;
    rt_core_ready(&c);
    struct rt_hot h = fresh_hot();
    access_line(&c, &h, 1, 0); /* starts the thread */
    struct rt_thread *t = h.thread;
    assert_non_null(t);
    assert_int_equal(rt_refs(&h), 1);
    uint64_t rng = 3;
    enum { N = 5000 };
    static uint64_t watched[N];
    for (int i = 0; i < N; i++) {
        watched[i] = (llc_splitmix_next(&rng) >> 20) | 1; /* never line 0 */
        assert_int_equal(rt_watch_add(t, watched[i], (uint64_t)i), 0);
    }
    for (int i = 0; i < N; i++)
        assert_true(rt_filter_hit(&h, watched[i]));
    int false_pos = 0;
    for (uint64_t line = 0; line < 64 * 10000; line += 64) /* even lines: never watched */
        false_pos += rt_filter_hit(&h, line);
    /* 32 bits per watch at least: about 3% pass. */
    assert_true(false_pos < 10000 / 10);
    /* Resolve the first watch at position N + 100. */
    assert_int_equal(rt_watch_hit(t, watched[0], N + 100), 0);
    assert_int_equal(t->n_watch, N - 1);
    assert_true(llc_statmodel_hist_count(t->hist, llc_statmodel_bucket_of(N + 100 - 0 - 1)) == 1);
    bool shared = false;
    for (int i = 1; i < N; i++)
        shared |=
            rt_pos(watched[i], t->filter_bits_log2) == rt_pos(watched[0], t->filter_bits_log2);
    assert_true(rt_filter_hit(&h, watched[0]) == shared);
    for (int i = 1; i < N; i++)
        assert_true(rt_filter_hit(&h, watched[i]));
    free_core(&c);
}

/* Rate 1, two passes over K lines: every reference sampled, the first
 * pass's samples reused at distance K - 1, the second pass's dangling; the
 * countdown's count of references exact; the profile says so. */
static void test_stream_profile(void **state)
{
    (void)state;
    struct rt_core c;
    rt_core_init(&c, "test");
    c.rate = 1;
    c.window = 100; /* windows: every reference is a window's or a signature sample */
    c.window_pcs = 10;
    rt_core_ready(&c);
    struct rt_hot h = fresh_hot();
    enum { K = 3000 };
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < K; i++)
            access_line(&c, &h, 1000 + 3 * i, 0x400000 + 64 * (i % 50));
    struct rt_thread *t = h.thread;
    assert_int_equal(rt_refs(&h), 2 * K);
    assert_int_equal(t->taken, 2 * K);
    assert_int_equal(t->n_watch, K);
    assert_true(llc_statmodel_hist_finite(t->hist) == K);
    assert_true(llc_statmodel_hist_count(t->hist, llc_statmodel_bucket_of(K - 1)) == K);
    assert_int_equal(t->n_win, 2 * K / 100);
    rt_core_thread_end(&h);
    assert_null(t->hot);
    assert_int_equal(t->refs_final, 2 * K);

    char path[] = "/tmp/llcprobe-rt-core-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    pthread_mutex_lock(&c.lock);
    rt_core_write_profile(&c, path, false);
    pthread_mutex_unlock(&c.lock);
    struct llc_statmodel_hist *sum = NULL;
    assert_int_equal(llc_statmodel_hist_create(&sum, NULL, 0), 0);
    struct llc_reusefile_info info;
    struct llc_reusefile_windows w = {0};
    char err[LLC_ERRLEN];
    assert_int_equal(llc_reusefile_read(path, &info, sum, &w, err, sizeof err), 0);
    unlink(path);
    assert_int_equal(info.refs, 2 * K);
    assert_int_equal(info.samples, 2 * K);
    assert_int_equal(info.threads, 1);
    assert_true(llc_statmodel_hist_dangling(sum) == K);
    assert_int_equal(w.n_windows, 2 * K / 100);
    assert_int_equal(w.n_samples, 2 * K);
    llc_reusefile_windows_free(&w);
    llc_statmodel_hist_destroy(sum);
    free_core(&c);
}

/* An idle thread never reaches the slow path again, and keeps its count. */
static void test_idle(void **state)
{
    (void)state;
    struct rt_hot h = fresh_hot();
    --h.countdown;
    rt_hot_idle(&h);
    for (int i = 0; i < 1000; i++) {
        assert_false(rt_filter_hit(&h, (uint64_t)i * 977));
        assert_true(--h.countdown != 0);
    }
    assert_int_equal(rt_refs(&h), 1001);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_filter_and_table),
        cmocka_unit_test(test_stream_profile),
        cmocka_unit_test(test_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
