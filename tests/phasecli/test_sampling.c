/* Unit tests of probe/ipsampling: the ring-buffer reader on hand-built rings,
 * period adaptation, trace windows, the exp-bbv reader, and one live run on
 * a real process with cpu-clock and one with the tick source. */
#include <errno.h>
#include <inttypes.h>
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
#include "ipsampling/sampling_internal.h"

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

static void put_sample_at(struct fake_ring *r, uint64_t ip, uint32_t pid, uint32_t tid,
                          uint64_t time)
{
    struct {
        struct perf_event_header h;
        uint64_t ip;
        uint32_t pid, tid;
        uint64_t time, period;
    } s = {{PERF_RECORD_SAMPLE, 0, sizeof(s)}, ip, pid, tid, time, 1000};
    put(r, &s, sizeof(s));
}

static void put_sample(struct fake_ring *r, uint64_t ip, uint32_t pid, uint32_t tid)
{
    put_sample_at(r, ip, pid, tid, 0);
}

/* PERF_RECORD_MMAP2 as the kernel lays it out with sample_id_all (pid, tid,
 * time trailer), the name padded to 8 bytes. */
static void put_mmap2(struct fake_ring *r, uint32_t pid, uint64_t addr, uint64_t len,
                      uint64_t pgoff, const char *name, uint64_t time)
{
    unsigned char rec[256] = {0};
    const size_t nlen = (strlen(name) + 1 + 7) / 8 * 8;
    const uint16_t size = (uint16_t)(72 + nlen + 16);
    const struct perf_event_header h = {PERF_RECORD_MMAP2, 0, size};
    memcpy(rec, &h, sizeof(h));
    memcpy(rec + 8, &pid, 4);
    memcpy(rec + 12, &pid, 4);
    memcpy(rec + 16, &addr, 8);
    memcpy(rec + 24, &len, 8);
    memcpy(rec + 32, &pgoff, 8);
    memcpy(rec + 72, name, strlen(name));
    memcpy(rec + 72 + nlen, &pid, 4);
    memcpy(rec + 76 + nlen, &pid, 4);
    memcpy(rec + 80 + nlen, &time, 8);
    put(r, rec, size);
}

/* FORK / EXIT of a process (pid == tid), or an exec (COMM with the exec
 * flag), each with the sample_id trailer. */
static void put_task(struct fake_ring *r, uint32_t type, uint32_t pid, uint32_t ppid, uint64_t time)
{
    struct {
        struct perf_event_header h;
        uint32_t pid, ppid, tid, ptid;
        uint64_t time;
        uint32_t id_pid, id_tid;
        uint64_t id_time;
    } t = {{type, 0, sizeof(t)}, pid, ppid, pid, ppid, time, pid, pid, time};
    put(r, &t, sizeof(t));
}

static void put_exec(struct fake_ring *r, uint32_t pid, uint64_t time)
{
    struct {
        struct perf_event_header h;
        uint32_t pid, tid;
        char comm[8];
        uint32_t id_pid, id_tid;
        uint64_t id_time;
    } c = {{PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, sizeof(c)},
           pid,
           pid,
           "prog",
           pid,
           pid,
           time};
    put(r, &c, sizeof(c));
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
        uint32_t pid, tid;
        uint64_t time;
    } lost = {{PERF_RECORD_LOST, 0, sizeof(lost)}, 1, 7, 0, 0, 0};
    put(r, &lost, sizeof(lost));
    struct {
        struct perf_event_header h;
        uint64_t time, id, stream;
        uint32_t pid, tid;
        uint64_t id_time;
    } thr = {{PERF_RECORD_THROTTLE, 0, sizeof(thr)}, 0, 0, 0, 0, 0, 0};
    put(r, &thr, sizeof(thr));
    for (int i = 0; i < 1200; i++) /* more than the sink's first allocation */
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
    for (int i = 0; i < 80; i++)
        put_sample(r, 0x500000 + (uint64_t)i, 11, (uint32_t)(20 + i % 3));
    assert_int_equal(llc_sampling_ring_drain(&r->meta, r->data, RING, &k), 0);
    assert_int_equal(k.nsamples, 81);
    assert_true(k.samples[0].ip == 0x401000);
    assert_true(k.samples[80].ip == 0x500000 + 79);
    assert_true(k.samples[80].period == 1000);
    assert_int_equal(k.lost, 7);
    assert_int_equal(k.npids, 2);
    assert_int_equal(k.ntids, 4);
    assert_true(r->meta.data_tail == r->meta.data_head);
    /* Nothing new: nothing read. */
    llc_sampling_sink_reset(&k);
    assert_int_equal(llc_sampling_ring_drain(&r->meta, r->data, RING, &k), 0);
    assert_int_equal(k.nsamples, 0);
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
    assert_int_equal(k.nsamples, 1);
    /* The rest is skipped so the next window starts clean. */
    assert_true(r->meta.data_tail == r->meta.data_head);
    llc_sampling_sink_free(&k);
    free(r);
}

/* Tick samples: no period field, and the IP is the user register after
 * the fixed fields (PERF_SAMPLE_IP holds the kernel's, in the interrupt); a
 * sample without user registers (ABI 0) or cut short is not a sample. */
static void test_ring_user_regs(void **state)
{
    (void)state;
    struct fake_ring *r = calloc(1, sizeof(*r));
    struct llc_sampling_sink k = {.ip_from_user_regs = true, .no_period = true};
    struct {
        struct perf_event_header h;
        uint64_t ip;
        uint32_t pid, tid;
        uint64_t time, abi, user_ip;
    } s = {{PERF_RECORD_SAMPLE, 0, sizeof(s)},
           0xffffffff81000000ULL,
           5,
           6,
           1,
           PERF_SAMPLE_REGS_ABI_64,
           0x401234};
    put(r, &s, sizeof(s));
    struct {
        struct perf_event_header h;
        uint64_t ip;
        uint32_t pid, tid;
        uint64_t time, abi;
    } none = {{PERF_RECORD_SAMPLE, 0, sizeof(none)},
              0xffffffff81000000ULL,
              7,
              7,
              2,
              PERF_SAMPLE_REGS_ABI_NONE};
    put(r, &none, sizeof(none));
    s.h.size = sizeof(s) - 8; /* ABI 64 but no register */
    put(r, &s, sizeof(s) - 8);
    assert_int_equal(llc_sampling_ring_drain(&r->meta, r->data, RING, &k), 0);
    assert_int_equal(k.nsamples, 1);
    assert_true(k.samples[0].ip == 0x401234);
    assert_true(k.samples[0].period == 0); /* no period in the record */
    assert_true(k.samples[0].time == 1);
    assert_int_equal(k.samples[0].pid, 5);
    llc_sampling_sink_free(&k);
    free(r);
}

/* A measured tick rate becomes the kernel HZ it is nearest, if near one. */
static void test_tick_snap(void **state)
{
    (void)state;
    assert_int_equal(llc_sampling_tick_snap(267), 250);
    assert_int_equal(llc_sampling_tick_snap(95), 100);
    assert_int_equal(llc_sampling_tick_snap(290), 300); /* nearer 300 than 250 */
    assert_int_equal(llc_sampling_tick_snap(1150), 1000);
    assert_int_equal(llc_sampling_tick_snap(500), 500); /* no HZ near: as measured */
    assert_int_equal(llc_sampling_tick_snap(40.4), 40);
}

/* The same code loaded at two addresses (two processes, ASLR) gets the same
 * key; mappings follow fork, exec and exit in time order across rings. */
static void test_keys_follow_mappings(void **state)
{
    (void)state;
    enum { CHILD = 4194305 };
    struct fake_ring *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    struct llc_sampling_sink k = {0};
    struct llc_sampling_maps m = {0};
    /* pid 10 maps /bin/app at 0x5550000 (file offset 0x1000), pid 20 the
     * same file at 0x7770000; the records and samples are spread over two
     * rings (CPUs), so only their timestamps order them. */
    put_mmap2(a, 10, 0x5550000, 0x10000, 0x1000, "/bin/app", 1);
    put_sample_at(b, 0x5550123, 10, 10, 5);
    put_mmap2(b, 20, 0x7770000, 0x10000, 0x1000, "/bin/app", 2);
    put_sample_at(a, 0x7770123, 20, 20, 6);
    /* pid 10 forks a child at t=7: it shares the parent's code. The child's
     * pid is above PID_MAX_LIMIT, so /proc cannot know it. */
    put_task(a, PERF_RECORD_FORK, CHILD, 10, 7);
    put_sample_at(b, 0x5550123, CHILD, CHILD, 8);
    /* pid 20 execs another program at t=9 that maps /bin/other where
     * /bin/app was: a sample at t=11 is in the new program. */
    put_exec(a, 20, 9);
    put_mmap2(a, 20, 0x7770000, 0x10000, 0x1000, "/bin/other", 10);
    put_sample_at(b, 0x7770123, 20, 20, 11);
    /* An IP in no mapping of a process that no longer exists stays raw. */
    put_task(a, PERF_RECORD_EXIT, CHILD, 10, 12);
    put_sample_at(b, 0x5550123, CHILD, CHILD, 13);
    assert_int_equal(llc_sampling_ring_drain(&a->meta, a->data, RING, &k), 0);
    assert_int_equal(llc_sampling_ring_drain(&b->meta, b->data, RING, &k), 0);
    assert_int_equal(k.nsamples, 5);
    assert_int_equal(k.nside, 6);
    assert_int_equal(llc_sampling_resolve(&k, &m), 0);
    assert_int_equal(k.n, 5);
    const uint64_t app = (llc_sampling_file_key("/bin/app") << 40) ^ 0x1123;
    const uint64_t other = (llc_sampling_file_key("/bin/other") << 40) ^ 0x1123;
    assert_true(k.ips[0] == app);
    assert_true(k.ips[1] == app);
    assert_true(k.ips[2] == app);
    assert_true(k.ips[3] == other);
    assert_true(k.ips[4] == 0x5550123);
    assert_false(llc_sampling_maps_has(&m, CHILD));
    /* Mappings persist across windows: a later window resolves pid 10. */
    llc_sampling_sink_reset(&k);
    put_sample_at(a, 0x5550200, 10, 10, 20);
    assert_int_equal(llc_sampling_ring_drain(&a->meta, a->data, RING, &k), 0);
    assert_int_equal(llc_sampling_resolve(&k, &m), 0);
    assert_true(k.ips[0] == ((llc_sampling_file_key("/bin/app") << 40) ^ 0x1200));
    llc_sampling_maps_free(&m);
    llc_sampling_sink_free(&k);
    free(a);
    free(b);
}

/* A process sampled without any mapping record is looked up in /proc. */
static void test_keys_from_proc(void **state)
{
    (void)state;
    struct llc_sampling_maps m = {0};
    const uint64_t ip = (uint64_t)(uintptr_t)&test_keys_from_proc;
    assert_int_equal(llc_sampling_maps_read_proc(&m, (uint32_t)getpid()), 0);
    uint64_t key;
    assert_true(llc_sampling_maps_key(&m, (uint32_t)getpid(), ip, &key));
    /* Top bits name the file, so the key differs from the raw address. */
    assert_true(key >> 40 != 0 && key != ip);
    assert_false(llc_sampling_maps_key(&m, (uint32_t)getpid() + 1, ip, &key));
    assert_true(key == ip);
    llc_sampling_maps_free(&m);
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
    struct llc_trace_info info = {
        .recorder = "synthetic", .command = "unit test", .page_size = 4096};
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
    const struct llc_sampling_trace_config cfg = {
        .window_instr = 10000, .samples_per_window = 200, .seed = 7};
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

/* A trace of data records only (the runtime's): windows of references,
 * samples from the records' code addresses, instruction counts unknown; a
 * trace with both kinds windowed by references counts each window's
 * instructions and samples a data record's pc, else its instruction's. */
static void test_trace_reference_windows(void **state)
{
    (void)state;
    const char *path = tmp_path(".rt.trace");
    struct llc_trace_info info = {
        .recorder = "llcprobe-rt", .command = "rt test", .page_size = 4096};
    struct llc_trace_writer *tw;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_trace_writer_open(path, &info, &tw, err, sizeof(err)), 0);
    for (uint64_t i = 0; i < 25000; i++) {
        struct llc_trace_rec d = {.kind = i % 3 ? LLC_TRACE_LOAD : LLC_TRACE_STORE,
                                  .addr = 0x9000 + 8 * i,
                                  .size = 8,
                                  .pc = 0x500000 + i % 64};
        assert_int_equal(llc_trace_writer_put(tw, &d), 0);
    }
    assert_int_equal(llc_trace_writer_close(tw, 0, err, sizeof(err)), 0);
    const struct llc_sampling_trace_config cfg = {
        .window_instr = 10000, .samples_per_window = 200, .seed = 3};
    struct llc_sampling_trace *t;
    assert_int_equal(llc_sampling_trace_open(path, &cfg, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_sampling_trace_unit(t), LLC_SAMPLING_TRACE_REFERENCES);
    assert_string_equal(llc_sampling_trace_recorder(t), "llcprobe-rt");
    struct llc_sampling_window w;
    int rc, full = 0;
    while ((rc = llc_sampling_trace_next(t, 1, &w, err, sizeof(err))) == 1) {
        assert_int_equal(w.progress, 10000);
        assert_false(w.instructions_known);
        assert_true(w.n_ips > 140 && w.n_ips < 260);
        size_t n;
        const uint64_t *ips = llc_sampling_trace_ips(t, &n);
        for (size_t i = 0; i < n; i++)
            assert_true(ips[i] >= 0x500000 && ips[i] < 0x500000 + 64);
        full++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(full, 2);
    assert_int_equal(w.progress, 5000);
    llc_sampling_trace_close(t);
    /* Instruction windows of it: none (the command refuses such a run). */
    const struct llc_sampling_trace_config ci = {.window_instr = 10000,
                                                 .samples_per_window = 200,
                                                 .seed = 3,
                                                 .unit = LLC_SAMPLING_TRACE_INSTRUCTIONS};
    assert_int_equal(llc_sampling_trace_open(path, &ci, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_sampling_trace_next(t, 1, &w, err, sizeof(err)), 0);
    assert_int_equal(w.progress, 0);
    llc_sampling_trace_close(t);

    /* Both kinds, by references: each load follows its instruction and has
     * no pc of its own, so the samples are instruction addresses. */
    write_trace(path, 30000);
    const struct llc_sampling_trace_config cr = {.window_instr = 10000,
                                                 .samples_per_window = 200,
                                                 .seed = 3,
                                                 .unit = LLC_SAMPLING_TRACE_REFERENCES};
    assert_int_equal(llc_sampling_trace_open(path, &cr, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_sampling_trace_unit(t), LLC_SAMPLING_TRACE_REFERENCES);
    assert_int_equal(llc_sampling_trace_next(t, 1, &w, err, sizeof(err)), 1);
    assert_true(w.instructions_known);
    assert_int_equal(w.instructions, 10000);
    assert_int_equal(w.progress, 10000);
    size_t n;
    const uint64_t *ips = llc_sampling_trace_ips(t, &n);
    assert_true(n > 140);
    for (size_t i = 0; i < n; i++)
        assert_true(ips[i] >= 0x400000 && ips[i] < 0x400000 + 100);
    llc_sampling_trace_close(t);
    /* AUTO on it: instructions. */
    assert_int_equal(llc_sampling_trace_open(path, &cfg, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_sampling_trace_unit(t), LLC_SAMPLING_TRACE_INSTRUCTIONS);
    llc_sampling_trace_close(t);
    unlink(path);
}

/* exp-bbv counts a rep-prefixed instruction once, lackey records each
 * iteration: trace windows count runs of records at one address once too. */
static void test_trace_rep_runs(void **state)
{
    (void)state;
    const char *path = tmp_path(".rep.trace");
    struct llc_trace_info info = {.recorder = "lackey", .command = "rep", .page_size = 4096};
    struct llc_trace_writer *tw;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_trace_writer_open(path, &info, &tw, err, sizeof(err)), 0);
    /* A x3 (rep movsb), B, C x2, B: 7 records, 4 as exp-bbv counts */
    const uint64_t addrs[] = {0x401000, 0x401000, 0x401000, 0x401002, 0x401005, 0x401005, 0x401002};
    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        struct llc_trace_rec r = {.kind = LLC_TRACE_INSTR, .addr = addrs[i], .size = 2};
        assert_int_equal(llc_trace_writer_put(tw, &r), 0);
    }
    assert_int_equal(llc_trace_writer_close(tw, 0, err, sizeof(err)), 0);
    const struct llc_sampling_trace_config cfg = {
        .window_instr = 4, .samples_per_window = 2, .seed = 1};
    struct llc_sampling_trace *t;
    struct llc_sampling_window w;
    assert_int_equal(llc_sampling_trace_open(path, &cfg, &t, err, sizeof(err)), 0);
    assert_int_equal(llc_sampling_trace_next(t, 1, &w, err, sizeof(err)), 1);
    assert_int_equal(w.instructions, 4);
    assert_int_equal(w.instructions_bbv, 2); /* A A A B */
    assert_int_equal(llc_sampling_trace_next(t, 1, &w, err, sizeof(err)), 0);
    assert_int_equal(w.instructions, 3);
    assert_int_equal(w.instructions_bbv, 2); /* C C B */
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
    /* Bounded: a block id of 1.4e12 (found by fuzzing) asked for 11 TB. */
    f = fopen(path, "w");
    fprintf(f, "T:1444444444444:4\n");
    fclose(f);
    assert_int_equal(llc_sampling_bbv_read(path, &b, err, sizeof(err)), -E2BIG);
    assert_non_null(strstr(err, "line 1: block id 1444444444444 is over the limit"));
    f = fopen(path, "w");
    for (int w = 0; w < 8; w++)
        fprintf(f, "T:1:1\n");
    fprintf(f, "T:%u:1\n", LLC_SAMPLING_BBV_MAX_ID);
    fclose(f);
    assert_int_equal(llc_sampling_bbv_read(path, &b, err, sizeof(err)), -E2BIG);
    assert_non_null(strstr(err, "9 windows x 16777216 blocks is over the limit"));
    unlink(path);
    assert_true(llc_sampling_bbv_read(path, &b, err, sizeof(err)) == -ENOENT);
}

/* A shell counting to n, launched and held before exec. */
static struct llc_target *launch_busy_shell(const char *n)
{
    char script[96];
    snprintf(script, sizeof(script), "i=0; while [ $i -lt %s ]; do i=$((i+1)); done", n);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    struct llc_target_options to;
    llc_target_options_init(&to);
    to.cpu = LLC_TARGET_CPU_NONE;
    struct llc_target *t;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_target_launch(argv, &to, &t, err, sizeof(err)), 0);
    return t;
}

/* A real process: a shell busy for a few hundred ms, sampled in 20 ms
 * windows. Skips only if no source opens at all (perf forbidden). */
static void test_live_shell(void **state)
{
    (void)state;
    struct llc_target *t = launch_busy_shell("150000");
    char err[LLC_ERRLEN];
    struct llc_sampling_config cfg;
    llc_sampling_config_default(&cfg);
    cfg.window_ns = 20000000;
    cfg.window_instr = 20000000;
    cfg.max_rate_hz = 20000; /* the window loop is tested here, not the overhead */
    /* Some windows of 20 ms would hold 5 ticks: sample by cpu-clock. */
    cfg.best_source = LLC_SAMPLING_CPU_CLOCK;
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

/* The tick source on a busy process: chosen by auto where it opens (only
 * the hardware sources rank above it), windows 400 ticks long by default,
 * samples at least at the tick's rate (other timers expiring while the
 * target runs add interrupts, never remove them), halved at multiplier 2.
 * Skips, saying why, where the tracepoint is not permitted or the tick does
 * not run. */
static void test_tick_source(void **state)
{
    (void)state;
    struct llc_target *t = launch_busy_shell("700000");
    char err[LLC_ERRLEN];
    struct llc_sampling_config cfg;
    llc_sampling_config_default(&cfg);
    struct llc_sampling *s;
    int rc = llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err));
    assert_int_equal(rc, 0);
    const struct llc_sampling_choice *c = llc_sampling_choice(s);
    if (c->source != LLC_SAMPLING_TICK) {
        if (c->source > LLC_SAMPLING_TICK)
            assert_true(strlen(c->refused[LLC_SAMPLING_TICK]) > 0);
        printf("tick source not used (%s): %s\n", llc_sampling_source_name(c->source),
               c->source > LLC_SAMPLING_TICK ? c->refused[LLC_SAMPLING_TICK] : "better source");
        llc_sampling_close(s);
        llc_target_destroy(t);
        skip();
    }
    assert_true(c->tick_hz >= 20 && c->tick_hz_measured > 0);
    assert_true(c->window == 400ULL * (1000000000ULL / c->tick_hz));
    llc_sampling_close(s);
    cfg.best_source = LLC_SAMPLING_TICK;
    cfg.window_ns = 100000000;
    assert_int_equal(llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err)), 0);
    c = llc_sampling_choice(s);
    assert_int_equal(c->source, LLC_SAMPLING_TICK);
    const unsigned hz = c->tick_hz;
    assert_int_equal(llc_target_start(t, err, sizeof(err)), 0);
    llc_sampling_start(s);
    struct llc_sampling_window w;
    double cpu_s[2] = {0, 0};
    uint64_t samples[2] = {0, 0}, windows = 0;
    do {
        const unsigned level = windows % 2;
        assert_int_equal(llc_sampling_set_multiplier(s, 1u << level, err, sizeof(err)), 0);
        rc = llc_sampling_next_window(s, t, &w, err, sizeof(err));
        assert_true(rc >= 0);
        assert_true(w.period == 1u << level);
        if (rc == 1) { /* the last window is cut short */
            cpu_s[level] += (double)w.cpu_ns * 1e-9;
            samples[level] += w.kernel_samples;
        }
        windows++;
    } while (rc == 1);
    const double rate1 = samples[0] / cpu_s[0], rate2 = samples[1] / cpu_s[1];
    printf("tick: %u Hz measured at open; %.0f samples per CPU second at rate 1, %.0f at 1/2 "
           "(%" PRIu64 " windows)\n",
           hz, rate1, rate2, windows);
    assert_true(windows >= 4);
    assert_true(rate1 >= 0.6 * hz);
    assert_true(rate1 / rate2 > 1.3 && rate1 / rate2 < 3.5);
    llc_sampling_close(s);
    llc_target_destroy(t);
}

/* Defaults with cpu-clock: the window is as long as 400 samples take at
 * the 1 kHz cap, so the rate, not the window, bounds the overhead. */
static void test_cpu_clock_default_window(void **state)
{
    (void)state;
    char *argv[] = {"/bin/true", NULL};
    struct llc_target_options to;
    llc_target_options_init(&to);
    to.cpu = LLC_TARGET_CPU_NONE;
    struct llc_target *t;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_target_launch(argv, &to, &t, err, sizeof(err)), 0);
    struct llc_sampling_config cfg;
    llc_sampling_config_default(&cfg);
    cfg.best_source = LLC_SAMPLING_CPU_CLOCK;
    cfg.force_cpu_time = true;
    struct llc_sampling *s;
    const int rc = llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err));
    if (rc == -ENODEV) {
        llc_target_destroy(t);
        skip();
    }
    assert_int_equal(rc, 0);
    const struct llc_sampling_choice *c = llc_sampling_choice(s);
    assert_int_equal(c->source, LLC_SAMPLING_CPU_CLOCK);
    assert_int_equal(c->samples_per_window, 400);
    /* 400 samples at the 200 Hz cap: 2 s of CPU time. */
    assert_true(c->window == 2000000000ULL);
    llc_sampling_close(s);
    /* A window given explicitly is kept (it then gets fewer samples). */
    cfg.window_ns = 50000000;
    assert_int_equal(llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err)), 0);
    assert_true(llc_sampling_choice(s)->window == 50000000ULL);
    llc_sampling_close(s);
    cfg.max_rate_hz = 0;
    assert_int_equal(llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err)),
                     -EINVAL);
    /* One event per rate: the largest multiplier is a power of two <= 64. */
    llc_sampling_config_default(&cfg);
    cfg.best_source = LLC_SAMPLING_CPU_CLOCK;
    cfg.max_multiplier = 3;
    assert_int_equal(llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err)),
                     -EINVAL);
    cfg.max_multiplier = 128;
    assert_int_equal(llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err)),
                     -EINVAL);
    /* Without the dynamic rate a single rate, and no other multiplier. */
    cfg.max_multiplier = 1;
    assert_int_equal(llc_sampling_open(llc_target_info(t)->pid, &cfg, &s, err, sizeof(err)), 0);
    assert_int_equal(llc_sampling_set_multiplier(s, 1, err, sizeof(err)), 0);
    assert_int_equal(llc_sampling_set_multiplier(s, 2, err, sizeof(err)), -EINVAL);
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
        cmocka_unit_test(test_ring_user_regs),
        cmocka_unit_test(test_tick_snap),
        cmocka_unit_test(test_keys_follow_mappings),
        cmocka_unit_test(test_keys_from_proc),
        cmocka_unit_test(test_adapt_period),
        cmocka_unit_test(test_trace_windows),
        cmocka_unit_test(test_trace_reference_windows),
        cmocka_unit_test(test_trace_rep_runs),
        cmocka_unit_test(test_bbv_reader),
        cmocka_unit_test(test_live_shell),
        cmocka_unit_test(test_tick_source),
        cmocka_unit_test(test_cpu_clock_default_window),
        cmocka_unit_test(test_open_rejects_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
