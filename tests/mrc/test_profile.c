/* The runtime's profile file: written and read back exactly, and every kind
 * of damage refused with a message naming the line. */
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
#include "mrc/mrc.h"

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

static char *write_to_string(const struct llc_mrc_profile_info *info,
                             const struct llc_statmodel_hist *h)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    char err[LLC_ERRLEN];
    assert_int_equal(llc_mrc_profile_write(f, info, h, err, sizeof err), 0);
    fclose(f);
    return buf;
}

static void test_roundtrip(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist(), *back = NULL;
    struct llc_mrc_profile_info info = {.rate = 1e-4, .seed = 42, .refs = 100000,
                                        .samples = 10, .threads = 2};
    snprintf(info.command, sizeof info.command, "./app with\nnewline");
    char *text = write_to_string(&info, h);
    assert_int_equal(llc_statmodel_hist_create(&back, NULL, 0), 0);
    struct llc_mrc_profile_info got;
    char err[LLC_ERRLEN];
    assert_int_equal(llc_mrc_profile_parse(text, "p", &got, back, err, sizeof err), 0);
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
    const struct llc_mrc_profile_info info = {.rate = 1e-4, .seed = 1, .refs = 100000,
                                              .samples = 10, .threads = 1, .command = "./a"};
    char *text = write_to_string(&info, h);
    char *at = strstr(text, from);
    assert_non_null(at);
    char *bad = malloc(strlen(text) + strlen(to) + 1);
    assert_non_null(bad);
    sprintf(bad, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    char err[LLC_ERRLEN] = "";
    struct llc_mrc_profile_info got;
    const int rc = llc_mrc_profile_parse(bad, "p", &got, h, err, sizeof err);
    if (rc >= 0 || !strstr(err, why))
        fail_msg("'%s' -> '%s': rc %d, message '%s' (wanted '%s')", from, to, rc, err, why);
    assert_true(llc_statmodel_hist_total(h) == 0);
    free(bad);
    free(text);
    llc_statmodel_hist_destroy(h);
}

static void test_damage(void **state)
{
    (void)state;
    expect_refused("llcprobe-rt-profile 1", "llcprobe-rt-profile 2", "not an llcprobe-rt profile");
    expect_refused("rate 0.0001", "rate 2", "line 2: bad rate");
    expect_refused("rate 0.0001", "rate x", "line 2: bad rate");
    expect_refused("seed 1", "seed -1", "line 3: bad seed");
    expect_refused("refs 100000", "refs 1e5", "line 4: bad refs");
    expect_refused("samples 10", "samples 11", "header says 11");
    expect_refused("threads 1\n", "", "line 6: expected \"threads");
    expect_refused("rdhist 1 inf=4", "rdhist 1 inf=-4", "line 8:");
    expect_refused(" 0:3", " 0:3 0:1", "line 8:");
    expect_refused("rdhist 1", "rdhist 2", "line 8:");
}

static void test_truncated(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist();
    const struct llc_mrc_profile_info info = {.rate = 0.5, .samples = 10, .command = "./a"};
    char *text = write_to_string(&info, h);
    *strstr(text, "rdhist") = '\0';
    char err[LLC_ERRLEN] = "";
    struct llc_mrc_profile_info got;
    assert_true(llc_mrc_profile_parse(text, "p", &got, h, err, sizeof err) < 0);
    assert_non_null(strstr(err, "histogram line is missing"));
    free(text);
    llc_statmodel_hist_destroy(h);
    expect_refused("rdhist 1 inf=4", "rdhist 1 inf=4 x", "line 8:");
}

static void test_read_missing_file(void **state)
{
    (void)state;
    struct llc_statmodel_hist *h = sample_hist();
    struct llc_mrc_profile_info got;
    char err[LLC_ERRLEN];
    assert_true(llc_mrc_profile_read("/nonexistent/p", &got, h, err, sizeof err) < 0);
    assert_non_null(strstr(err, "/nonexistent/p: No such file"));
    llc_statmodel_hist_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_read_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
