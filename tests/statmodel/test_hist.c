/* Histogram buckets, arithmetic, and the text form with its strict parser. */
#include <errno.h>
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
#include "llcprobe/statmodel.h"

static void bucket_edges_follow_the_format(void **state)
{
    (void)state;
    for (uint64_t d = 0; d < 1024; d++) {
        assert_int_equal(llc_statmodel_bucket_of(d), d);
        assert_int_equal(llc_statmodel_bucket_width(d), 1);
    }
    assert_int_equal(llc_statmodel_bucket_of(1024), 1024);
    assert_int_equal(llc_statmodel_bucket_of(1055), 1024);
    assert_int_equal(llc_statmodel_bucket_of(1056), 1025);
    assert_int_equal(llc_statmodel_bucket_of(2047), 1024 + 31);
    assert_int_equal(llc_statmodel_bucket_of(2048), 1056);
    assert_int_equal(llc_statmodel_bucket_width(1056), 64);
    assert_int_equal(llc_statmodel_bucket_of(UINT64_MAX - 1), LLC_STATMODEL_BUCKETS - 1);
    assert_true(llc_statmodel_bucket_mid(1024) == (1024.0 + 1055.0) / 2);
    assert_true(llc_statmodel_bucket_mid(7) == 7.0);
    /* Buckets tile the distances without gaps, widths at most 1/32 of lo. */
    for (size_t b = 0; b + 1 < LLC_STATMODEL_BUCKETS; b++) {
        const uint64_t lo = llc_statmodel_bucket_lo(b), w = llc_statmodel_bucket_width(b);
        assert_int_equal(llc_statmodel_bucket_of(lo), b);
        assert_int_equal(llc_statmodel_bucket_of(lo + w - 1), b);
        assert_true(llc_statmodel_bucket_lo(b + 1) == lo + w);
        if (b >= 1024)
            assert_true(w * 32 <= lo);
    }
    const size_t last = LLC_STATMODEL_BUCKETS - 1;
    assert_true(llc_statmodel_bucket_lo(last) + (llc_statmodel_bucket_width(last) - 1) ==
                UINT64_MAX);
}

static void add_merge_scale_and_iterate(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *a = NULL, *b = NULL;
    assert_int_equal(llc_statmodel_hist_create(&a, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_create(&b, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_next(a, 0), LLC_STATMODEL_BUCKETS);
    assert_int_equal(llc_statmodel_hist_add(a, 5, 1, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(a, 5, 2, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(a, 1030, 1, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(a, 1050, 1, err, sizeof err), 0); /* same bucket */
    assert_int_equal(llc_statmodel_hist_add(a, LLC_STATMODEL_COLD, 4, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(a, 9, -1, err, sizeof err), -EINVAL);
    assert_int_equal(llc_statmodel_hist_add(a, 9, NAN, err, sizeof err), -EINVAL);
    assert_true(llc_statmodel_hist_count(a, 5) == 3);
    assert_true(llc_statmodel_hist_count(a, 1024) == 2);
    assert_true(llc_statmodel_hist_finite(a) == 5);
    assert_true(llc_statmodel_hist_dangling(a) == 4);
    assert_true(llc_statmodel_hist_total(a) == 9);
    assert_int_equal(llc_statmodel_hist_next(a, 0), 5);
    assert_int_equal(llc_statmodel_hist_next(a, 6), 1024);
    assert_int_equal(llc_statmodel_hist_next(a, 1025), LLC_STATMODEL_BUCKETS);

    assert_int_equal(llc_statmodel_hist_add(b, 5, 1, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(b, UINT64_C(1) << 40, 2, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(b, 1, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_merge(a, b, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_merge(a, a, err, sizeof err), -EINVAL);
    assert_true(llc_statmodel_hist_count(a, 5) == 4);
    assert_true(llc_statmodel_hist_count(a, llc_statmodel_bucket_of(UINT64_C(1) << 40)) == 2);
    assert_true(llc_statmodel_hist_total(a) == 13);
    assert_int_equal(llc_statmodel_hist_scale(a, 0.5, err, sizeof err), 0);
    assert_true(llc_statmodel_hist_count(a, 5) == 2);
    assert_true(llc_statmodel_hist_dangling(a) == 2.5);
    assert_true(llc_statmodel_hist_total(a) == 6.5);
    assert_int_equal(llc_statmodel_hist_scale(a, 0, err, sizeof err), -EINVAL);

    const struct llc_statmodel_bucket_count pairs[] = {{3, 2}, {1024, 1}, {3, 1}};
    assert_int_equal(llc_statmodel_hist_set_pairs(b, pairs, 3, 7, err, sizeof err), 0);
    assert_true(llc_statmodel_hist_count(b, 3) == 3);
    assert_true(llc_statmodel_hist_count(b, 5) == 0);
    assert_true(llc_statmodel_hist_total(b) == 11);
    const struct llc_statmodel_bucket_count bad[] = {{LLC_STATMODEL_BUCKETS, 1}};
    assert_int_equal(llc_statmodel_hist_set_pairs(b, bad, 1, 0, err, sizeof err), -EINVAL);
    assert_true(llc_statmodel_hist_total(b) == 0);
    llc_statmodel_hist_destroy(a);
    llc_statmodel_hist_destroy(b);
}

static void text_round_trip_is_exact(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *a = NULL, *b = NULL;
    assert_int_equal(llc_statmodel_hist_create(&a, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_create(&b, err, sizeof err), 0);
    const uint64_t ds[] = {
        0, 1, 17, 1023, 1024, 5000, 123456789, UINT64_C(1) << 50, UINT64_MAX - 1};
    for (size_t i = 0; i < LLC_ARRAY_LEN(ds); i++)
        assert_int_equal(llc_statmodel_hist_add(a, ds[i], (double)(i + 1), err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(a, 3, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_scale(a, 1.0 / 3.0, err, sizeof err), 0);

    const int len = llc_statmodel_hist_format(a, NULL, 0, err, sizeof err);
    assert_true(len > 0);
    char *buf = malloc((size_t)len + 1);
    assert_int_equal(llc_statmodel_hist_format(a, buf, (size_t)len, err, sizeof err), -ENOSPC);
    assert_int_equal(llc_statmodel_hist_format(a, buf, (size_t)len + 1, err, sizeof err), len);
    assert_int_equal(strlen(buf), len);
    const char *prefix = "rdhist 1 inf=1 0:0.33333333333333331 1:0.66666666666666663 17:1 ";
    assert_int_equal(strncmp(buf, prefix, strlen(prefix)), 0);
    assert_int_equal(llc_statmodel_hist_parse(buf, b, err, sizeof err), 0);
    for (size_t k = 0; k < LLC_STATMODEL_BUCKETS; k++)
        assert_true(llc_statmodel_hist_count(a, k) == llc_statmodel_hist_count(b, k));
    assert_true(llc_statmodel_hist_dangling(a) == llc_statmodel_hist_dangling(b));
    free(buf);

    /* Empty histogram */
    llc_statmodel_hist_clear(a);
    char small[64];
    assert_int_equal(llc_statmodel_hist_format(a, small, sizeof small, err, sizeof err), 14);
    assert_string_equal(small, "rdhist 1 inf=0");
    assert_int_equal(llc_statmodel_hist_parse(small, b, err, sizeof err), 0);
    assert_true(llc_statmodel_hist_total(b) == 0);
    llc_statmodel_hist_destroy(a);
    llc_statmodel_hist_destroy(b);
}

static void parser_rejects_malformed_text(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_parse("rdhist 1 inf=2 3:1 1024:2.5", h, err, sizeof err),
                     0);
    assert_true(llc_statmodel_hist_total(h) == 5.5);
    static const char *const bad[] = {
        "",
        "rdhist 2 inf=0",
        "rdhist 1 inf=",
        "rdhist 1 inf=-1",
        "rdhist 1 inf=nan",
        "rdhist 1 inf=inf",
        "rdhist 1 inf=0x10",
        "rdhist 1 inf=1e999",
        "rdhist 1 inf=0 ",
        "rdhist 1 inf=0  3:1",
        "rdhist 1 inf=0 3:1 ",
        "rdhist 1 inf=0 3:1\n",
        "rdhist 1 inf=0 3:0",
        "rdhist 1 inf=0 3:-1",
        "rdhist 1 inf=0 3:+1",
        "rdhist 1 inf=0 3:",
        "rdhist 1 inf=0 3",
        "rdhist 1 inf=0 3;1",
        "rdhist 1 inf=0 -3:1",
        "rdhist 1 inf=0 1025:1",
        "rdhist 1 inf=0 5:1 3:1",
        "rdhist 1 inf=0 5:1 5:1",
        "rdhist 1 inf=0 5:1x",
        "rdhist 1 inf=0 99999999999999999999:1",
        " rdhist 1 inf=0",
        "RDHIST 1 inf=0",
    };
    for (size_t i = 0; i < LLC_ARRAY_LEN(bad); i++) {
        err[0] = 0;
        const int rc = llc_statmodel_hist_parse(bad[i], h, err, sizeof err);
        if (rc != -EINVAL)
            fail_msg("accepted \"%s\" (rc %d)", bad[i], rc);
        assert_true(strlen(err) > 0);
        assert_true(llc_statmodel_hist_total(h) == 0); /* left empty */
    }
    llc_statmodel_hist_destroy(h);
}

/* set_cold keeps the finite samples and sets n_inf / N_s = lines / refs;
 * all-cold streams and impossible counts. */
static void exact_cold_fraction(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(h, 5, 20, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add(h, 5000, 10, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(h, 3, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_set_cold(h, 250, 1000, err, sizeof err), 0);
    assert_true(llc_statmodel_hist_finite(h) == 30);
    assert_true(fabs(llc_statmodel_hist_dangling(h) - 10) < 1e-12);
    assert_true(llc_statmodel_hist_count(h, 5) == 20);
    /* Refused, unchanged. */
    assert_int_equal(llc_statmodel_hist_set_cold(h, 0, 1000, err, sizeof err), -EINVAL);
    assert_int_equal(llc_statmodel_hist_set_cold(h, 1001, 1000, err, sizeof err), -EINVAL);
    assert_true(fabs(llc_statmodel_hist_dangling(h) - 10) < 1e-12);
    /* Every line touched once: all samples dangle. */
    assert_int_equal(llc_statmodel_hist_set_cold(h, 1000, 1000, err, sizeof err), 0);
    assert_true(llc_statmodel_hist_finite(h) == 0);
    assert_true(fabs(llc_statmodel_hist_dangling(h) - 40) < 1e-12);
    /* No finite sample to set a fraction beside. */
    assert_int_equal(llc_statmodel_hist_set_cold(h, 10, 1000, err, sizeof err), -EINVAL);
    llc_statmodel_hist_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bucket_edges_follow_the_format),
        cmocka_unit_test(add_merge_scale_and_iterate),
        cmocka_unit_test(text_round_trip_is_exact),
        cmocka_unit_test(parser_rejects_malformed_text),
        cmocka_unit_test(exact_cold_fraction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
