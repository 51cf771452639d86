/* The reuse profile file (llcprobe/reusefile.h): written and read back
 * exactly, and every kind of damage refused with a message naming the
 * line. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/reusefile.h"

static struct llc_statmodel_hist *sample_hist(void)
{
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, NULL, 0), 0);
    assert_int_equal(llc_statmodel_hist_add(h, 0, 3, NULL, 0), 0);
    assert_int_equal(llc_statmodel_hist_add(h, 5000, 2, NULL, 0), 0);
    assert_int_equal(llc_statmodel_hist_add(h, 123456789, 1, NULL, 0), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(h, 4, NULL, 0), 0);
    return h;
}

/* Windows of sample_hist's 10 samples: 60000 + 40000 references. */
static struct llc_reusefile_window two_windows[2] = {
    {.thread = 0, .pcs = 3, .refs = 60000, .counts = {[0] = 1, [31] = 2}},
    {.thread = 0, .pcs = 12, .refs = 40000, .counts = {[5] = 12}},
};
static struct llc_reusefile_sample ten_samples[10] = {
    {0, 0},
    {0, 0},
    {1, 0},
    {0, 5000},
    {1, 5000},
    {1, 123456789},
    {0, LLC_REUSEFILE_NEVER_REUSED},
    {0, LLC_REUSEFILE_NEVER_REUSED},
    {1, LLC_REUSEFILE_NEVER_REUSED},
    {1, LLC_REUSEFILE_NEVER_REUSED},
};
static const struct llc_reusefile_windows sample_windows = {.length = 60000,
                                                            .pcs_per_window = 400,
                                                            .complete = true,
                                                            .n_windows = 2,
                                                            .n_samples = 10,
                                                            .windows = two_windows,
                                                            .samples = ten_samples};

/* noinline: inlined, gcc -O3 mistakes the open_memstream buffer for the local `buf` and warns of a
 * dangling pointer. */
__attribute__((noinline)) static char *write_with(const struct llc_reusefile_info *info,
                                                  const struct llc_statmodel_hist *h,
                                                  const struct llc_reusefile_windows *w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    char err[LLC_ERRLEN];
    assert_int_equal(llc_reusefile_write(f, info, h, w, err, sizeof err), 0);
    fclose(f);
    return buf;
}

static char *write_to_string(const struct llc_reusefile_info *info,
                             const struct llc_statmodel_hist *h)
{
    return write_with(info, h, &sample_windows);
}

static void test_roundtrip(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist(), *back = NULL;
    struct llc_reusefile_info info = {
        .rate = 1e-4, .seed = 42, .refs = 100000, .samples = 10, .threads = 2};
    snprintf(info.command, sizeof info.command, "./app with\nnewline");
    char *text = write_to_string(&info, h);
    assert_int_equal(llc_statmodel_hist_create(&back, NULL, 0), 0);
    struct llc_reusefile_info got;
    char err[LLC_ERRLEN];
    struct llc_reusefile_windows w;
    assert_int_equal(llc_reusefile_parse(text, "p", &got, back, &w, err, sizeof err), 0);
    assert_int_equal(got.version, 2);
    assert_int_equal(w.length, 60000);
    assert_int_equal(w.pcs_per_window, 400);
    assert_true(w.complete);
    assert_int_equal(w.n_windows, 2);
    assert_int_equal(w.n_samples, 10);
    assert_memory_equal(w.windows, two_windows, sizeof two_windows);
    assert_memory_equal(w.samples, ten_samples, sizeof ten_samples);
    llc_reusefile_windows_free(&w);
    assert_true(got.rate == 1e-4);
    assert_int_equal(got.seed, 42);
    assert_int_equal(got.refs, 100000);
    assert_int_equal(got.samples, 10);
    assert_int_equal(got.threads, 2);
    assert_string_equal(got.command, "./app with newline");
    for (size_t b = 0; b < LLC_STATMODEL_BUCKETS; b++)
        assert_true(llc_statmodel_hist_count(h, b) == llc_statmodel_hist_count(back, b));
    assert_true(llc_statmodel_hist_dangling(back) == 4);
    free(text);
    llc_statmodel_hist_destroy(back);
    llc_statmodel_hist_destroy(h);
}

/* Replaces the first occurrence of `from` in the valid profile by `to` and
 * expects the parser to refuse with a message containing `why`. */
static void expect_refused(const char *from, const char *to, const char *why)
{
    struct llc_statmodel_hist *h = sample_hist();
    const struct llc_reusefile_info info = {
        .rate = 1e-4, .seed = 1, .refs = 100000, .samples = 10, .threads = 1, .command = "./a"};
    char *text = write_to_string(&info, h);
    char *at = strstr(text, from);
    assert_non_null(at);
    char *bad = malloc(strlen(text) + strlen(to) + 1);
    assert_non_null(bad);
    sprintf(bad, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    char err[LLC_ERRLEN] = "";
    struct llc_reusefile_info got;
    struct llc_reusefile_windows w;
    const int rc = llc_reusefile_parse(bad, "p", &got, h, &w, err, sizeof err);
    if (rc >= 0 || !strstr(err, why))
        fail_msg("'%s' -> '%s': rc %d, message '%s' (wanted '%s')", from, to, rc, err, why);
    assert_true(llc_statmodel_hist_total(h) == 0);
    assert_true(w.n_windows == 0 && w.windows == NULL && w.samples == NULL);
    free(bad);
    free(text);
    llc_statmodel_hist_destroy(h);
}

static void test_damage(void **state)
{
    (void)state;
    expect_refused("llcprobe-rt-profile 2", "llcprobe-rt-profile 3", "not an llcprobe-rt profile");
    expect_refused("rate 0.0001", "rate 2", "line 2: bad rate");
    expect_refused("rate 0.0001", "rate x", "line 2: bad rate");
    expect_refused("seed 1", "seed -1", "line 3: bad seed");
    expect_refused("refs 100000", "refs 1e5", "line 4: bad refs");
    expect_refused("samples 10", "samples 11", "header says 11");
    expect_refused("threads 1\n", "", "line 6: expected \"threads");
    expect_refused("rdhist 1 inf=4", "rdhist 1 inf=-4", "line 8:");
    expect_refused(" 0:3", " 0:3 0:1", "line 8:");
    expect_refused("rdhist 1", "rdhist 2", "line 8:");
    /* Windows (version 2). */
    expect_refused("windows 60000", "window 60000", "line 9: expected \"windows");
    expect_refused(" complete", " done", "line 9: bad windows line");
    expect_refused("\nw 0 60000 3 1 ", "\nw 1 60000 3 1 ", "line 10: expected \"w THREAD");
    expect_refused("\nw 0 60000 3 1 ", "\nw 0 60000 4 1 ", "summing to PCS");
    expect_refused("\nw 0 60000 3 1 ", "\nw 0 0 3 1 ", "line 10:");
    expect_refused("\nw 0 40000", "\nw 0 40001", "hold 100001 references");
    expect_refused("\ns 1 123456789", "\ns 2 123456789", "line 17: expected \"s WINDOW");
    expect_refused("\ns 1 123456789", "\ns 1 x", "line 17:");
    expect_refused("s 1 123456789\n", "", "line 21:");
    expect_refused("400 2 10 complete", "400 2 9 complete", "text after the 9 sample lines");
}

/* The optional distinct-lines count: written when known, read back,
 * line numbers after it shifted by one, checked against refs. */
static void test_lines(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist();
    const struct llc_reusefile_info info = {.rate = 1e-4,
                                            .seed = 1,
                                            .refs = 100000,
                                            .samples = 10,
                                            .lines = 777,
                                            .threads = 1,
                                            .command = "./a"};
    char *text = write_to_string(&info, h);
    assert_non_null(strstr(text, "\nsamples 10\nlines 777\nthreads 1\n"));
    struct llc_reusefile_info got;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_reusefile_parse(text, "p", &got, h, NULL, err, sizeof err), 0);
    assert_int_equal(got.lines, 777);
    const char *bad[][2] = {{"lines 777", "lines 100001"},
                            {"lines 777", "lines 0"},
                            {"lines 777", "lines x"},
                            {"rdhist 1 inf=4", "rdhist 1 inf=-4"}};
    const char *why[] = {"line 6: bad lines", "line 6: bad lines", "line 6: bad lines", "line 9:"};
    for (size_t i = 0; i < LLC_ARRAY_LEN(bad); i++) {
        char *at = strstr(text, bad[i][0]);
        assert_non_null(at);
        char *t = malloc(strlen(text) + strlen(bad[i][1]) + 1);
        assert_non_null(t);
        sprintf(t, "%.*s%s%s", (int)(at - text), text, bad[i][1], at + strlen(bad[i][0]));
        err[0] = '\0';
        if (llc_reusefile_parse(t, "p", &got, h, NULL, err, sizeof err) >= 0 ||
            !strstr(err, why[i]))
            fail_msg("'%s': message '%s' (wanted '%s')", bad[i][1], err, why[i]);
        free(t);
    }
    /* Without a count, no lines line and lines 0 read back. */
    free(text);
    struct llc_reusefile_info none = info;
    none.lines = 0;
    text = write_to_string(&none, h = (llc_statmodel_hist_destroy(h), sample_hist()));
    assert_null(strstr(text, "lines"));
    assert_int_equal(llc_reusefile_parse(text, "p", &got, h, NULL, err, sizeof err), 0);
    assert_int_equal(got.lines, 0);
    free(text);
    llc_statmodel_hist_destroy(h);
}

/* A version 1 profile (no windows) still loads, with no windows; a profile
 * written without windows says so, and truncated windows load as such. */
static void test_versions(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist();
    const struct llc_reusefile_info info = {
        .rate = 1e-4, .seed = 1, .refs = 100000, .samples = 10, .threads = 1, .command = "./a"};
    char err[LLC_ERRLEN] = "";
    struct llc_reusefile_info got;
    struct llc_reusefile_windows w;
    char *text = write_with(&info, h, NULL);
    assert_non_null(strstr(text, "\nwindows off\n"));
    assert_int_equal(llc_reusefile_parse(text, "p", &got, h, &w, err, sizeof err), 0);
    assert_int_equal(w.length, 0);
    /* Version 1: the same without its last line. */
    memcpy(text + strlen("llcprobe-rt-profile "), "1", 1);
    *strstr(text, "windows off\n") = '\0';
    assert_int_equal(llc_reusefile_parse(text, "p", &got, h, &w, err, sizeof err), 0);
    assert_int_equal(got.version, 1);
    assert_int_equal(w.length, 0);
    assert_true(llc_statmodel_hist_total(h) == 10);
    free(text);
    struct llc_reusefile_windows cut = sample_windows;
    cut.complete = false;
    cut.n_samples = 7;
    text = write_with(&info, h, &cut);
    assert_int_equal(llc_reusefile_parse(text, "p", &got, h, &w, err, sizeof err), 0);
    assert_false(w.complete);
    assert_int_equal(w.n_samples, 7);
    llc_reusefile_windows_free(&w);
    free(text);
    llc_statmodel_hist_destroy(h);
}

static void test_truncated(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist();
    const struct llc_reusefile_info info = {.rate = 0.5, .samples = 10, .command = "./a"};
    char *text = write_to_string(&info, h);
    *strstr(text, "rdhist") = '\0';
    char err[LLC_ERRLEN] = "";
    struct llc_reusefile_info got;
    assert_true(llc_reusefile_parse(text, "p", &got, h, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, "histogram line is missing"));
    free(text);
    llc_statmodel_hist_destroy(h);
    expect_refused("rdhist 1 inf=4", "rdhist 1 inf=4 x", "line 8:");
}

static void test_read_missing_file(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist();
    struct llc_reusefile_info got;
    char err[LLC_ERRLEN];
    assert_true(llc_reusefile_read("/nonexistent/p", &got, h, NULL, err, sizeof err) < 0);
    assert_non_null(strstr(err, "/nonexistent/p: No such file"));
    llc_statmodel_hist_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip), cmocka_unit_test(test_lines),
        cmocka_unit_test(test_damage),    cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_versions),  cmocka_unit_test(test_read_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
