/* Unit tests of probe/sampling: the ring-buffer reader on hand-built rings,
 * period adaptation, trace windows, the exp-bbv reader, and one live run on
 * a real process (the only source this machine may have is cpu-clock). */
#include <errno.h>
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
#include "llcprobe/sampling.h"
#include "llcprobe/target.h"
#include "llcprobe/trace.h"
#include "sampling/sampling_internal.h"

#define RING 4096

struct fake_ring {
    struct perf_event_mmap_page meta;
    unsigned char data[RING];
};

static void put(struct fake_ring *r, const void *rec, size_t len)
{
    const unsigned char *p = rec;
    for (size_t i = 0; i < len; i++)
        r->data[(r->meta.data_head + i) % RING] = p[i];
    r->meta.data_head += len;
}

static void put_sample(struct fake_ring *r, uint64_t ip, uint32_t pid, uint32_t tid)
{
    struct {
        struct perf_event_header h;
        uint64_t ip;
        uint32_t pid, tid;
    } s = {{PERF_RECORD_SAMPLE, 0, sizeof(s)}, ip, pid, tid};
    put(r, &s, sizeof(s));
}

static void test_ring_wraps_and_counts(void **state)
{
    (void)state;
    struct fake_ring *r = calloc(1, sizeof(*r));
    struct llc_sampling_sink k = {0};
    /* Start 8 bytes before the end so the first sample wraps. */
    r->meta.data_head = r->meta.data_tail = 3 * RING - 8;
    put_sample(r, 0x401000, 10, 10);
    struct {
        struct perf_event_header h;
        uint64_t id, lost;
    } lost = {{PERF_RECORD_LOST, 0, sizeof(lost)}, 1, 7};
    put(r, &lost, sizeof(lost));
    struct {
        struct perf_event_header h;
        uint64_t time, id, stream;
    } thr = {{PERF_RECORD_THROTTLE, 0, sizeof(thr)}, 0, 0, 0};
    put(r, &thr, sizeof(thr));
    for (int i = 0; i < 2000; i++) /* more than the sink's first allocation */
        put_sample(r, 0x500000 + (uint64_t)i, 11, (uint32_t)(20 + i % 3));
    assert_int_equal(llc_sampling_ring_drain(&r->meta, r->data, RING, &k), -EPROTO);
    /* 2000 samples overflow a 4 KiB ring: the writer above wrapped over
     * unread data, which the reader must notice rather than trust. Redo
     * within capacity. */
    llc_sampling_sink_reset(&k);
    r->meta.data_head = r->meta.data_tail = 5 * RING - 8;
    put_sample(r, 0x401000, 10, 10);
    put(r, &lost, sizeof(lost));
    put(r, &thr, sizeof(thr));
    for (int i = 0; i < 100; i++)
        put_sample(r, 0x500000 + (uint64_t)i, 11, (uint32_t)(20 + i % 3));
    assert_int_equal(llc_sampling_ring_drain(&r->meta, r->data, RING, &k), 0);
    assert_int_equal(k.n, 101);
    assert_true(k.ips[0] == 0x401000);
    assert_true(k.ips[100] == 0x500000 + 99);
    assert_int_equal(k.lost, 7);
    assert_int_equal(k.npids, 2);
    assert_int_equal(k.ntids, 4);
    assert_true(r->meta.data_tail == r->meta.data_head);
    /* Nothing new: nothing read. */
    llc_sampling_sink_reset(&k);
    assert_int_equal(llc_sampling_ring_drain(&r->meta, r->data, RING, &k), 0);
    assert_int_equal(k.n, 0);
    llc_sampling_sink_free(&k);
    free(r);
}

static void test_ring_rejects_zero_size(void **state)
{
    (void)state;
    struct fake_ring *r = calloc(1, sizeof(*r));
    struct llc_sampling_sink k = {0};
    put_sample(r, 0x1234, 1, 1);
    struct perf_event_header bad = {PERF_RECORD_SAMPLE, 0, 0};
    put(r, &bad, sizeof(bad));
    put_sample(r, 0x5678, 1, 1);
    assert_int_equal(llc_sampling_ring_drain(&r->meta, r->data, RING, &k), -EPROTO);
    assert_int_equal(k.n, 1);
    /* The rest is skipped so the next window starts clean. */
    assert_true(r->meta.data_tail == r->meta.data_head);
    llc_sampling_sink_free(&k);
    free(r);
}

static void test_adapt_period(void **state)
{
    (void)state;
    assert_int_equal(llc_sampling_adapt_period(1000, 400000, 400, 100), 1000);
    assert_int_equal(llc_sampling_adapt_period(1000, 1200000, 400, 100), 2000); /* 3000 capped */
    assert_int_equal(llc_sampling_adapt_period(1000, 40000, 400, 100), 500);    /* 100 capped */
    assert_int_equal(llc_sampling_adapt_period(150, 4000, 400, 100), 100);      /* floor */
    assert_int_equal(llc_sampling_adapt_period(0, 4000000, 400, 100), 10000);   /* no history */
}

static char *tmp_path(const char *suffix)
{
    static char buf[4][128];
    static int i;
    char *p = buf[i++ % 4];
    snprintf(p, 128, "/tmp/llc-sampling-test-%d%s", (int)getpid(), suffix);
    return p;
}

static void write_trace(const char *path, uint64_t instr)
{
    struct llc_trace_info info = {.recorder = "synthetic", .command = "unit test",
                                  .page_size = 4096};
    struct llc_trace_writer *w;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_trace_writer_open(path, &info, &w, err, sizeof(err)), 0);
    for (uint64_t i = 0; i < instr; i++) {
        struct llc_trace_rec r = {.kind = LLC_TRACE_INSTR, .addr = 0x400000 + i % 100, .size = 1};
        struct llc_trace_rec d = {.kind = LLC_TRACE_LOAD, .addr = 0x9000 + i, .size = 4};
        assert_int_equal(llc_trace_writer_put(w, &r), 0);
        assert_int_equal(llc_trace_writer_put(w, &d), 0);
    }
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof(err)), 0);
}

static void test_trace_windows(void **state)
{
    (void)state;
    const char *path = tmp_path(".trace");
    write_trace(path, 100500);
    const struct llc_sampling_trace_config cfg = {.window_instr = 10000,
                                                  .samples_per_window = 200, .seed = 7};
    struct llc_sampling_trace *t;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sampling_trace_open(path, &cfg, &t, err, sizeof(err)), 0);
    assert_string_equal(llc_sampling_trace_command(t), "unit test");
    struct llc_sampling_window w;
    unsigned full = 0;
    int rc;
    while ((rc = llc_sampling_trace_next(t, full < 5 ? 1 : 4, &w, err, sizeof(err))) == 1) {
        assert_int_equal(w.progress, 10000);
        const double want = full < 5 ? 200 : 50;
        assert_true(w.n_ips > want * 0.7 && w.n_ips < want * 1.3);
        size_t n;
        const uint64_t *ips = llc_sampling_trace_ips(t, &n);
        assert_int_equal(n, w.n_ips);
        for (size_t i = 0; i < n; i++)
            assert_true(ips[i] >= 0x400000 && ips[i] < 0x400000 + 100);
        full++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(full, 10);
    assert_int_equal(w.progress, 500);
    assert_true(w.last);
    assert_true(llc_sampling_trace_next(t, 1, &w, err, sizeof(err)) < 0);
    llc_sampling_trace_close(t);
    unlink(path);
}

static void test_bbv_reader(void **state)
{
    (void)state;
    const char *path = tmp_path(".bb");
    FILE *f = fopen(path, "w");
    fprintf(f, "T:1:100 :3:50\n\nT:2:7   :3:1\n");
    fclose(f);
    struct llc_sampling_bbv b;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sampling_bbv_read(path, &b, err, sizeof(err)), 0);
    assert_int_equal(b.windows, 2);
    assert_int_equal(b.dim, 3);
    const double want[6] = {100, 0, 50, 0, 7, 1};
    for (int i = 0; i < 6; i++)
        assert_true(b.rows[i] == want[i]);
    llc_sampling_bbv_free(&b);
    f = fopen(path, "w");
    fprintf(f, "T:1:100 junk\n");
    fclose(f);
    assert_int_equal(llc_sampling_bbv_read(path, &b, err, sizeof(err)), -EPROTO);
    assert_non_null(strstr(err, "line 1"));
    f = fopen(path, "w");
    fclose(f);
    assert_int_equal(llc_sampling_bbv_read(path, &b, err, sizeof(err)), -EPROTO);
    unlink(path);
    assert_true(llc_sampling_bbv_read(path, &b, err, sizeof(err)) == -ENOENT);
}

/* A real process: a shell busy for a few hundred ms, sampled in 20 ms
 * windows. Skips only if no source opens at all (perf forbidden). */
static void test_live_shell(void **state)
{
    (void)state;
    char *argv[] = {"/bin/sh", "-c", "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done",
                    NULL};
    struct llc_target_options to;
    llc_target_options_init(&to);
    to.cpu = LLC_TARGET_CPU_NONE;
    struct llc_target *t;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_target_launch(argv, &to, &t, err, sizeof(err)), 0);
    struct llc_sampling_config cfg;
    llc_sampling_config_default(&cfg);
    cfg.window_ns = 20000000;
    cfg.window_instr = 20000000;
    struct llc_sampling *s;
    const int rc = llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err));
    if (rc == -ENODEV) {
        llc_target_destroy(t);
        skip();
    }
    assert_int_equal(rc, 0);
    const struct llc_sampling_choice *c = llc_sampling_choice(s);
    for (int i = 0; i < (int)c->source; i++)
        assert_true(strlen(c->refused[i]) > 0); /* every better source says why */
    assert_true(c->unit == LLC_SAMPLING_INSTRUCTIONS || strlen(c->unit_refused) > 0);
    assert_int_equal(c->samples_per_window, c->source == LLC_SAMPLING_PEBS_BRANCHES ? 200 : 400);
    assert_int_equal(llc_target_start(t, err, sizeof(err)), 0);
    llc_sampling_start(s);
    struct llc_sampling_window w;
    uint64_t samples = 0, windows = 0, progress = 0;
    int wr;
    do {
        assert_int_equal(llc_sampling_set_multiplier(s, windows % 2 ? 2 : 1, err, sizeof(err)), 0);
        wr = llc_sampling_next_window(s, t, &w, err, sizeof(err));
        assert_true(wr >= 0);
        assert_int_equal(w.index, windows);
        if (wr == 1)
            assert_true(w.progress >= c->window);
        samples += w.n_ips;
        progress += w.progress;
        windows++;
    } while (wr == 1);
    assert_true(w.last);
    assert_true(windows >= 2);
    assert_true(samples >= 100);
    assert_true(progress > 0);
    assert_true(w.t_end >= w.t_start);
    assert_true(llc_sampling_set_multiplier(s, 3, err, sizeof(err)) == -EINVAL);
    assert_true(llc_sampling_next_window(s, t, &w, err, sizeof(err)) == -EINVAL);
    llc_sampling_close(s);
    llc_target_destroy(t);
}

static void test_open_rejects_bad_config(void **state)
{
    (void)state;
    struct llc_sampling_config cfg;
    llc_sampling_config_default(&cfg);
    cfg.ring_pages = 3;
    struct llc_sampling *s = (void *)1;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_sampling_open(getpid(), &cfg, &s, err, sizeof(err)), -EINVAL);
    assert_null(s);
    assert_non_null(strstr(err, "power of two"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_wraps_and_counts),
        cmocka_unit_test(test_ring_rejects_zero_size),
        cmocka_unit_test(test_adapt_period),
        cmocka_unit_test(test_trace_windows),
        cmocka_unit_test(test_bbv_reader),
        cmocka_unit_test(test_live_shell),
        cmocka_unit_test(test_open_rejects_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
