/* Seeded random record streams of every kind and size survive a write and a
 * read exactly, through a file and through a pipe. */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "trace_test.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* xorshift64*: deterministic given the seed. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static const uint32_t data_sizes[] = {1, 2, 4, 8, 16, 32, 64, 0, 3, 10, 28, 512, 4096, UINT32_MAX};
static const uint32_t instr_sizes[] = {1, 2, 3, 4, 5, 7, 11, 15, 0, 16, 19, 100000, UINT32_MAX};

/* A program-like stream: loops re-execute blocks (long predicted runs),
 * with strided, repeated and random data addresses, jumps anywhere in the
 * 64-bit space, odd sizes, and pcs that are implicit, zero or arbitrary. */
static struct llc_trace_rec *make_stream(uint64_t seed, size_t n)
{
    struct llc_trace_rec *v = calloc(n, sizeof(*v));
    assert_non_null(v);
    rng_state = seed * 2654435761u + 1;
    uint64_t ip = 0x401000, stack = 0x1fff000700ull;
    size_t i = 0;
    while (i < n) {
        const uint64_t what = rnd() % 100;
        if (what < 60) {
            /* A loop: a block of instructions with data accesses, repeated. */
            const size_t body = 1 + rnd() % 12, iters = 1 + rnd() % 200;
            const uint64_t base = rnd() % 3 == 0 ? rnd() : stack - rnd() % 4096;
            const int64_t stride = (int64_t)(rnd() % 5) * 8 - 16;
            struct llc_trace_rec block[24];
            size_t len = 0;
            uint64_t a = ip;
            for (size_t k = 0; k < body; k++) {
                const uint32_t sz = 1 + rnd() % 15;
                block[len++] =
                    (struct llc_trace_rec){.kind = LLC_TRACE_INSTR, .addr = a, .size = sz};
                if (rnd() % 2)
                    block[len++] = (struct llc_trace_rec){.kind = (uint8_t)(1 + rnd() % 3),
                                                          .addr = base + k * 64,
                                                          .pc = a,
                                                          .size = data_sizes[rnd() % 7]};
                a += sz;
            }
            for (size_t it = 0; it < iters && i < n; it++)
                for (size_t k = 0; k < len && i < n; k++) {
                    v[i] = block[k];
                    if (v[i].kind != LLC_TRACE_INSTR)
                        v[i].addr += (uint64_t)(stride * (int64_t)it);
                    i++;
                }
            ip = a;
        } else if (what < 75) {
            v[i++] =
                (struct llc_trace_rec){.kind = LLC_TRACE_INSTR,
                                       .addr = ip,
                                       .size = instr_sizes[rnd() % LLC_ARRAY_LEN(instr_sizes)]};
            ip = rnd() % 2 ? rnd() : ip + (uint64_t)((int64_t)(rnd() % 2000) - 1000);
        } else {
            const uint64_t pcs[] = {ip, 0, rnd(), ip - 1};
            v[i++] = (struct llc_trace_rec){.kind = (uint8_t)(1 + rnd() % 3),
                                            .addr = rnd() % 2 ? rnd() : stack + rnd() % 256,
                                            .pc = pcs[rnd() % 4],
                                            .size = data_sizes[rnd() % LLC_ARRAY_LEN(data_sizes)]};
        }
    }
    return v;
}

static void count(const struct llc_trace_rec *v, size_t n, uint64_t c[4])
{
    memset(c, 0, 4 * sizeof(*c));
    for (size_t i = 0; i < n; i++)
        c[v[i].kind]++;
}

static void check_roundtrip(const struct llc_trace_rec *v, size_t n, int exit_status)
{
    char dir[64], path[128], err[LLC_ERRLEN];
    trace_test_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/t.trace", dir);
    trace_test_write(path, v, n, exit_status);

    struct llc_trace_reader *r = NULL;
    assert_int_equal(llc_trace_reader_open(path, &r, err, sizeof(err)), 0);
    const struct llc_trace_info *info = llc_trace_reader_info(r);
    uint64_t c[4];
    count(v, n, c);
    assert_string_equal(info->recorder, "synthetic");
    assert_string_equal(info->command, "test --seed 1");
    assert_int_equal(info->page_size, 4096);
    assert_int_equal(info->n_instr, c[0]);
    assert_int_equal(info->n_load, c[1]);
    assert_int_equal(info->n_store, c[2]);
    assert_int_equal(info->n_modify, c[3]);
    assert_int_equal(info->exit_status, exit_status);
    llc_trace_reader_close(r);

    size_t got = 0;
    const int rc = trace_test_read(path, v, n, &got, err, sizeof(err));
    if (rc != 0)
        fail_msg("%s", err);
    assert_int_equal(got, n);
    trace_test_rmdir(dir);
}

static void test_random_streams(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        const size_t n = 100000 + (size_t)seed * 7919;
        struct llc_trace_rec *v = make_stream(seed, n);
        check_roundtrip(v, n, (int)seed - 2);
        free(v);
    }
}

/* Data records only, each with its own pc (the instrumented runtime's
 * shape), and records whose kinds never change. */
static void test_data_only_and_uniform(void **state)
{
    (void)state;
    const size_t n = 50000;
    struct llc_trace_rec *v = calloc(n, sizeof(*v));
    assert_non_null(v);
    rng_state = 99;
    for (size_t i = 0; i < n; i++)
        v[i] = (struct llc_trace_rec){.kind = (uint8_t)(1 + i % 3),
                                      .pc = 0x500000 + (i % 37) * 4,
                                      .addr = 0x10000000 + (i % 37) * 4096 + (i / 37) * 8,
                                      .size = 8};
    check_roundtrip(v, n, 0);
    for (size_t i = 0; i < n; i++)
        v[i] = (struct llc_trace_rec){.kind = LLC_TRACE_STORE, .addr = rnd(), .size = 4};
    check_roundtrip(v, n, 1);
    free(v);
}

static void test_empty_trace(void **state)
{
    (void)state;
    check_roundtrip(NULL, 0, -1);
}

/* Loops compress to far less than a byte per record: the predictor works. */
static void test_compact(void **state)
{
    (void)state;
    const size_t n = 200000;
    struct llc_trace_rec *v = calloc(n, sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < n; i += 4) {
        const uint64_t it = i / 4;
        v[i] = (struct llc_trace_rec){.kind = LLC_TRACE_INSTR, .addr = 0x401000, .size = 4};
        v[i + 1] = (struct llc_trace_rec){
            .kind = LLC_TRACE_LOAD, .addr = 0x7000000 + it * 8, .pc = 0x401000, .size = 8};
        v[i + 2] = (struct llc_trace_rec){.kind = LLC_TRACE_INSTR, .addr = 0x401004, .size = 3};
        v[i + 3] = (struct llc_trace_rec){.kind = LLC_TRACE_INSTR, .addr = 0x401007, .size = 2};
    }
    char dir[64], path[128];
    trace_test_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/loop.trace", dir);
    trace_test_write(path, v, n, 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size < 1000);
    free(v);
    trace_test_rmdir(dir);
}

/* A pipe cannot be checked at open; the reader must find the trailer (or
 * its absence) at the end of the stream. */
static int read_through_fifo(const char *file, size_t cut, const struct llc_trace_rec *v, size_t n,
                             size_t *got, char *err)
{
    char fifo[256];
    snprintf(fifo, sizeof(fifo), "%s.fifo", file);
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const int in = open(file, O_RDONLY), out = open(fifo, O_WRONLY);
        char buf[65536];
        ssize_t k;
        size_t left = cut;
        while (left && (k = read(in, buf, left < sizeof(buf) ? left : sizeof(buf))) > 0) {
            if (write(out, buf, (size_t)k) != k)
                _exit(1);
            left -= (size_t)k;
        }
        _exit(0);
    }
    const int rc = trace_test_read(fifo, v, n, got, err, LLC_ERRLEN);
    int status;
    waitpid(pid, &status, 0);
    unlink(fifo);
    return rc;
}

static void test_pipe(void **state)
{
    (void)state;
    const size_t n = 30000;
    struct llc_trace_rec *v = make_stream(7, n);
    char dir[64], path[128], err[LLC_ERRLEN];
    trace_test_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/p.trace", dir);
    trace_test_write(path, v, n, 5);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    size_t got;
    assert_int_equal(read_through_fifo(path, (size_t)st.st_size, v, n, &got, err), 0);
    assert_int_equal(got, n);
    const size_t cuts[] = {0, 5, 40, (size_t)st.st_size / 2, (size_t)st.st_size - 1};
    for (size_t i = 0; i < LLC_ARRAY_LEN(cuts); i++) {
        assert_true(read_through_fifo(path, cuts[i], v, n, &got, err) < 0);
        assert_true(strstr(err, "truncated at byte") || strstr(err, "empty file"));
    }
    free(v);
    trace_test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_streams), cmocka_unit_test(test_data_only_and_uniform),
        cmocka_unit_test(test_empty_trace),    cmocka_unit_test(test_compact),
        cmocka_unit_test(test_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
