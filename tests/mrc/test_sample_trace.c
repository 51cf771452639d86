/* Trace sampling against streams with known reuse distances, and the
 * curve solved from them against the exact answer. */
#include <math.h>
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
#include "llcprobe/trace.h"
#include "mrc/mrc.h"

static char path[64];

/* Cyclic stream over k lines, `rounds` times, plus one 8-byte load that
 * straddles two lines at the very end. */
static void write_cyclic(uint64_t k, unsigned rounds)
{
    snprintf(path, sizeof path, "/tmp/llc-mrc-test-%d.trace", (int)getpid());
    struct llc_trace_info info = {.page_size = 4096, .exit_status = 0};
    snprintf(info.recorder, sizeof info.recorder, "synthetic");
    struct llc_trace_writer *w = NULL;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_trace_writer_open(path, &info, &w, err, sizeof err), 0);
    for (unsigned r = 0; r < rounds; r++)
        for (uint64_t i = 0; i < k; i++) {
            const struct llc_trace_rec ins = {.addr = 0x401000, .size = 4, .kind = LLC_TRACE_INSTR};
            const struct llc_trace_rec rec = {.addr = 0x10000000 + i * 64 + 8,
                                              .size = 8,
                                              .kind = i % 3 ? LLC_TRACE_LOAD : LLC_TRACE_MODIFY};
            assert_int_equal(llc_trace_writer_put(w, &ins), 0);
            assert_int_equal(llc_trace_writer_put(w, &rec), 0);
        }
    /* Lines k-1 and k: distance 0 from the previous reference to k-1, then a cold one. */
    const struct llc_trace_rec straddle = {
        .addr = 0x10000000 + k * 64 - 4, .size = 8, .kind = LLC_TRACE_LOAD};
    assert_int_equal(llc_trace_writer_put(w, &straddle), 0);
    assert_int_equal(llc_trace_writer_close(w, 0, err, sizeof err), 0);
}

static void test_every_reference(void **state)
{
    (void)state;
    const uint64_t k = 100;
    write_cyclic(k, 5);
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 1;
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, NULL, 0), 0);
    struct llc_mrc_trace_stats st;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_mrc_sample_trace(path, &cfg, h, &st, err, sizeof err), 0);
    unlink(path);
    /* 500 cyclic references + 2 from the straddling load. */
    assert_int_equal(st.refs, 5 * k + 2);
    assert_int_equal(st.records, 2 * 5 * k + 1);
    /* Rounds 2..5 reuse at distance k-1; the straddle reuses line k-1 at 0. */
    assert_true(llc_statmodel_hist_count(h, llc_statmodel_bucket_of(k - 1)) == 4 * k);
    assert_true(llc_statmodel_hist_count(h, 0) == 1);
    /* k first touches, and line k: never reused. */
    assert_true(llc_statmodel_hist_dangling(h) == k + 1);

    /* LRU on a cyclic stream: everything misses below k lines, only cold
     * misses from k on. StatStack gets this exactly. */
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
    struct llc_statmodel_point p;
    assert_int_equal(llc_statmodel_statstack(m, (double)k - 10, &p, err, sizeof err), 0);
    assert_true(fabs(p.r_total - (double)(5 * k + 1) / (double)(5 * k + 2)) < 1e-9);
    assert_int_equal(llc_statmodel_statstack(m, (double)k + 10, &p, err, sizeof err), 0);
    assert_true(fabs(p.r_total - (double)(k + 1) / (double)(5 * k + 2)) < 1e-9);
    llc_statmodel_release(m);
    llc_statmodel_hist_destroy(h);
}

static void test_sampled_rate(void **state)
{
    (void)state;
    write_cyclic(1000, 100);
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 0.01;
    cfg.seed = 7;
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, NULL, 0), 0);
    struct llc_mrc_trace_stats st;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_mrc_sample_trace(path, &cfg, h, &st, err, sizeof err), 0);
    unlink(path);
    /* 100002 references at 1%: about 1000 samples (sd ~32). */
    const double n = llc_statmodel_hist_total(h);
    assert_true(n > 880 && n < 1120);
    /* Nearly all finite samples have distance 999. */
    const double at = llc_statmodel_hist_count(h, llc_statmodel_bucket_of(999));
    assert_true(at >= llc_statmodel_hist_finite(h) - 1);
    llc_statmodel_hist_destroy(h);
}

static void test_bad_trace(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/llc-mrc-test-%d.trace", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a trace at all", f);
    fclose(f);
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, NULL, 0), 0);
    struct llc_mrc_trace_stats st;
    char err[LLC_ERRLEN] = "";
    assert_true(llc_mrc_sample_trace(path, &cfg, h, &st, err, sizeof err) < 0);
    assert_non_null(strstr(err, "not an llcprobe trace"));
    unlink(path);
    llc_statmodel_hist_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_reference),
        cmocka_unit_test(test_sampled_rate),
        cmocka_unit_test(test_bad_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
