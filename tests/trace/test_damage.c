/* Damaged, foreign and future files are refused with a clear message; no
 * damage makes the reader crash, return a record that was not written, or
 * report a clean end. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "trace_test.h"

struct fixture {
    char dir[64];
    char path[128];
    char copy[128];
    struct llc_trace_rec *recs;
    size_t n;
    uint8_t *bytes;
    size_t size;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    trace_test_tmpdir(f->dir, sizeof(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/good.trace", f->dir);
    snprintf(f->copy, sizeof(f->copy), "%s/bad.trace", f->dir);
    /* Small enough to try every byte, varied enough to hit every coding. */
    f->n = 400;
    f->recs = calloc(f->n, sizeof(*f->recs));
    assert_non_null(f->recs);
    uint64_t x = 12345;
    for (size_t i = 0; i < f->n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t r = x >> 33;
        struct llc_trace_rec *rec = &f->recs[i];
        rec->kind = (uint8_t)(r % 4);
        rec->size = r % 5 == 0 ? (uint32_t)(r % 300) : 1u << (r % 6);
        rec->addr = r % 3 == 0 ? x : 0x401000 + (i % 50) * 4;
        rec->pc = rec->kind && r % 7 == 0 ? x >> 7 : 0;
    }
    trace_test_write(f->path, f->recs, f->n, 3);
    FILE *in = fopen(f->path, "rb");
    assert_non_null(in);
    f->bytes = malloc(1 << 20);
    assert_non_null(f->bytes);
    f->size = fread(f->bytes, 1, 1 << 20, in);
    fclose(in);
    assert_true(f->size > 200 && f->size < (1 << 20));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    trace_test_rmdir(f->dir);
    free(f->recs);
    free(f->bytes);
    free(f);
    return 0;
}

static void write_copy(const struct fixture *f, const uint8_t *bytes, size_t len)
{
    FILE *out = fopen(f->copy, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, len, out), len);
    assert_int_equal(fclose(out), 0);
}

static void test_truncated_everywhere(void **state)
{
    struct fixture *f = *state;
    char err[LLC_ERRLEN], want[64];
    for (size_t cut = 1; cut < f->size; cut++) {
        write_copy(f, f->bytes, cut);
        size_t got;
        err[0] = '\0';
        const int rc = trace_test_read(f->copy, f->recs, f->n, &got, err, sizeof(err));
        if (rc >= 0)
            fail_msg("cut at %zu: read as a complete trace", cut);
        snprintf(want, sizeof(want), "truncated at byte %zu", cut);
        if (!strstr(err, want))
            fail_msg("cut at %zu: message '%s'", cut, err);
    }
}

static void test_every_byte_damaged(void **state)
{
    struct fixture *f = *state;
    uint8_t *bad = malloc(f->size);
    assert_non_null(bad);
    char err[LLC_ERRLEN];
    for (size_t at = 0; at < f->size; at++) {
        for (unsigned flip = 0x01; flip <= 0x80; flip <<= 7) {
            memcpy(bad, f->bytes, f->size);
            bad[at] ^= (uint8_t)flip;
            write_copy(f, bad, f->size);
            struct llc_trace_reader *r = NULL;
            int rc = llc_trace_reader_open(f->copy, &r, err, sizeof(err));
            if (rc == 0) {
                /* Records may differ before the damage is found; they must
                 * still be well-formed. */
                struct llc_trace_rec rec;
                size_t k = 0;
                while ((rc = llc_trace_reader_next(r, &rec, err, sizeof(err))) > 0) {
                    assert_true(rec.kind <= LLC_TRACE_MODIFY);
                    assert_true(++k <= 10 * f->n);
                }
                llc_trace_reader_close(r);
            }
            if (rc >= 0)
                fail_msg("byte %zu ^ 0x%x: damage not detected", at, flip);
            assert_true(strlen(err) > 0);
        }
    }
    free(bad);
}

static void expect_open_error(const char *path, const char *want);

/* A trailer count damaged to claim far more records than the file's bytes
 * could hold in plain records: the checksum is checked at open, so the
 * reader refuses the file before decoding anything (it used to decode the
 * runs the count allowed, for minutes on a small file). */
static void test_count_claims_too_much(void **state)
{
    struct fixture *f = *state;
    uint8_t *bad = malloc(f->size);
    assert_non_null(bad);
    memcpy(bad, f->bytes, f->size);
    /* the store count: trailer = END tag, 4 counts, exit, CRC, end magic */
    const size_t store_at = f->size - 8 - 4 - 4 - 4 * 8 + 2 * 8;
    bad[store_at + 7] = 0x40; /* 2^62 and more */
    write_copy(f, bad, f->size);
    expect_open_error(f->copy, "checksum mismatch: the file is corrupt");
    free(bad);
}

static void expect_open_error(const char *path, const char *want)
{
    struct llc_trace_reader *r = NULL;
    char err[LLC_ERRLEN] = "";
    const int rc = llc_trace_reader_open(path, &r, err, sizeof(err));
    assert_true(rc < 0);
    assert_null(r);
    if (!strstr(err, want))
        fail_msg("%s: message '%s', expected '%s'", path, err, want);
    assert_null(strchr(err, '\n'));
}

static void test_foreign_empty_newer(void **state)
{
    struct fixture *f = *state;
    write_copy(f, (const uint8_t *)"", 0);
    expect_open_error(f->copy, "empty file, not an llcprobe trace");
    const char text[] = "I  0401ab70,3\n L 1fff000708,8\n";
    write_copy(f, (const uint8_t *)text, sizeof(text) - 1);
    expect_open_error(f->copy, "not an llcprobe trace");
    expect_open_error("/bin/sh", "not an llcprobe trace");
    expect_open_error(f->dir, "is a directory");
    expect_open_error("/nonexistent/x.trace", "No such file");

    uint8_t *newer = malloc(f->size);
    assert_non_null(newer);
    memcpy(newer, f->bytes, f->size);
    newer[8] = 2;
    write_copy(f, newer, f->size);
    expect_open_error(f->copy, "trace format version 2 is newer than this llcprobe reads (1)");
    newer[8] = 0;
    write_copy(f, newer, f->size);
    expect_open_error(f->copy, "not an llcprobe trace");
    free(newer);
}

static void test_writer_errors(void **state)
{
    struct fixture *f = *state;
    struct llc_trace_info info = {.recorder = "synthetic"};
    struct llc_trace_writer *w = NULL;
    char err[LLC_ERRLEN] = "";
    assert_true(llc_trace_writer_open("/nonexistent/dir/x.trace", &info, &w, err, sizeof(err)) < 0);
    assert_null(w);
    assert_non_null(strstr(err, "/nonexistent/dir/x.trace"));
    assert_true(llc_trace_writer_open("/dev/null", &info, &w, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "not a regular file"));

    /* An aborted trace leaves nothing behind, not even its temporary. */
    char path[160];
    snprintf(path, sizeof(path), "%s/aborted.trace", f->dir);
    assert_int_equal(llc_trace_writer_open(path, &info, &w, err, sizeof(err)), 0);
    const struct llc_trace_rec bad = {.kind = 7};
    assert_int_equal(llc_trace_writer_put(w, &bad), -EINVAL);
    for (size_t i = 0; i < f->n; i++)
        assert_int_equal(llc_trace_writer_put(w, &f->recs[i]), 0);
    llc_trace_writer_abort(w);
    llc_trace_writer_abort(NULL);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls '%s' | grep aborted)\"", f->dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_everywhere), cmocka_unit_test(test_count_claims_too_much),
        cmocka_unit_test(test_every_byte_damaged),   cmocka_unit_test(test_foreign_empty_newer),
        cmocka_unit_test(test_writer_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
