/* Helpers shared by the trace module's cmocka tests. */
#ifndef TRACE_TEST_H
#define TRACE_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/trace.h"

/* A scratch directory per test program, removed by the caller. */
static inline void trace_test_tmpdir(char *dir, size_t len)
{
    snprintf(dir, len, "/tmp/llc-trace-test-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static inline void trace_test_rmdir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Writes `n` records and closes with `exit_status`. */
static inline void trace_test_write(const char *path, const struct llc_trace_rec *recs, size_t n,
                                    int exit_status)
{
    struct llc_trace_info info = {
        .recorder = "synthetic", .command = "test --seed 1", .page_size = 4096};
    struct llc_trace_writer *w = NULL;
    char err[LLC_ERRLEN] = "";
    assert_int_equal(llc_trace_writer_open(path, &info, &w, err, sizeof(err)), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(llc_trace_writer_put(w, &recs[i]), 0);
    if (llc_trace_writer_close(w, exit_status, err, sizeof(err)) != 0)
        fail_msg("close: %s", err);
}

static inline int trace_test_rec_equal(const struct llc_trace_rec *a, const struct llc_trace_rec *b)
{
    return a->kind == b->kind && a->addr == b->addr && a->size == b->size &&
           (a->kind == LLC_TRACE_INSTR || a->pc == b->pc);
}

/* Reads `path` to the end, checking each record against `want` (n of
 * them). Returns the reader's final code (0 clean end, negative error) and
 * the records read in *got; err holds the message. */
static inline int trace_test_read(const char *path, const struct llc_trace_rec *want, size_t n,
                                  size_t *got, char *err, size_t errlen)
{
    struct llc_trace_reader *r = NULL;
    *got = 0;
    int rc = llc_trace_reader_open(path, &r, err, errlen);
    if (rc < 0)
        return rc;
    struct llc_trace_rec rec;
    while ((rc = llc_trace_reader_next(r, &rec, err, errlen)) > 0) {
        if (*got >= n || !trace_test_rec_equal(&rec, &want[*got])) {
            llc_trace_reader_close(r);
            fail_msg("%s: record %zu differs from what was written", path, *got);
        }
        (*got)++;
    }
    /* The error (or end) is sticky. */
    char again[LLC_ERRLEN];
    assert_int_equal(llc_trace_reader_next(r, &rec, again, sizeof(again)), rc);
    llc_trace_reader_close(r);
    return rc;
}

#endif
