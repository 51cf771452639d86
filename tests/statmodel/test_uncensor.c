/* Reuse of a run that ended: the Horvitz-Thompson weights by hand, the
 * dangling floor, a borrowed ratio, bad stretches, and a uniform stream
 * whose sampled reuse the end of the run cuts short. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "synth.h"

static struct llc_statmodel_hist *hist_of(const uint64_t *d, const double *c, size_t n,
                                          double dangling)
{
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(llc_statmodel_hist_add(h, d[i], c[i], err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_add_dangling(h, dangling, err, sizeof err), 0);
    return h;
}

/* One stretch of 1000 references: a reuse of 5 is seen from 995 of them,
 * one of 500 from half. */
static void weights_by_hand(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const uint64_t d[] = {5, 500};
    const double c[] = {10, 10}, start = 0, len = 1000;
    struct llc_statmodel_hist *h = hist_of(d, c, 2, 20), *u = NULL;
    assert_int_equal(llc_statmodel_hist_create(&u, err, sizeof err), 0);
    NEAR(llc_statmodel_seen_share(&start, &len, 1, 1000, 500), 0.5, 1e-15);
    assert_int_equal(llc_statmodel_hist_uncensor(h, &start, &len, 1, 1000, -1, u, err, sizeof err),
                     0);
    NEAR(llc_statmodel_hist_count(u, 5), 10 * 1000.0 / 995, 1e-12);
    NEAR(llc_statmodel_hist_count(u, 500), 20, 1e-12);
    NEAR(llc_statmodel_hist_dangling(u), 40 - 10 * 1000.0 / 995 - 20, 1e-12);
    NEAR(llc_statmodel_hist_total(u), 40, 1e-12);

    /* Two stretches of one phase, [0, 100) and [900, 1000): a reuse of 50
     * fits after 50 + 50 of its 200 references. */
    const double st2[] = {0, 900}, ln2[] = {100, 100};
    NEAR(llc_statmodel_seen_share(st2, ln2, 2, 1000, 50), 0.75, 1e-15);
    NEAR(llc_statmodel_seen_share(st2, ln2, 2, 1000, 950), 0.25, 1e-15);
    NEAR(llc_statmodel_seen_share(st2, ln2, 2, 1000, 1000), 0, 1e-15);
    const uint64_t d2[] = {50, 950};
    const double c2[] = {3, 1};
    struct llc_statmodel_hist *h2 = hist_of(d2, c2, 2, 6);
    assert_int_equal(llc_statmodel_hist_uncensor(h2, st2, ln2, 2, 1000, -1, u, err, sizeof err), 0);
    NEAR(llc_statmodel_hist_count(u, 50), 4, 1e-12);
    NEAR(llc_statmodel_hist_count(u, 950), 4, 1e-12);
    NEAR(llc_statmodel_hist_dangling(u), 2, 1e-12);
    llc_statmodel_hist_destroy(h2);
    llc_statmodel_hist_destroy(h);
    llc_statmodel_hist_destroy(u);
}

/* More weight than dangling samples: none dangle, the finite counts keep
 * N_s. A borrowed ratio sets the dangling count instead. */
static void floor_and_borrowed_ratio(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const uint64_t d[] = {10, 600};
    const double c[] = {6, 4}, start = 0, len = 1000;
    struct llc_statmodel_hist *h = hist_of(d, c, 2, 1), *u = NULL;
    assert_int_equal(llc_statmodel_hist_create(&u, err, sizeof err), 0);
    /* weights 1000/990 and 1000/400 = 2.5: 16.06 > 11 */
    assert_int_equal(llc_statmodel_hist_uncensor(h, &start, &len, 1, 1000, -1, u, err, sizeof err),
                     0);
    const double w = 6 * 1000.0 / 990 + 10;
    assert_true(llc_statmodel_hist_dangling(u) == 0);
    NEAR(llc_statmodel_hist_count(u, 10), 6 * 1000.0 / 990 * 11 / w, 1e-12);
    NEAR(llc_statmodel_hist_count(u, 600), 10 * 11 / w, 1e-12);
    NEAR(llc_statmodel_hist_total(u), 11, 1e-12);

    assert_int_equal(llc_statmodel_hist_uncensor(h, &start, &len, 1, 1000, 0.5, u, err, sizeof err),
                     0);
    NEAR(llc_statmodel_hist_dangling(u), 0.5, 1e-12);
    NEAR(llc_statmodel_hist_count(u, 600), 10 * 10.5 / w, 1e-12);
    NEAR(llc_statmodel_hist_total(u), 11, 1e-12);
    llc_statmodel_hist_destroy(h);
    llc_statmodel_hist_destroy(u);
}

static void bad_stretches(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const uint64_t d[] = {10};
    const double c[] = {1};
    struct llc_statmodel_hist *h = hist_of(d, c, 1, 1), *u = NULL;
    assert_int_equal(llc_statmodel_hist_create(&u, err, sizeof err), 0);
    const double st[] = {0, 50}, ln[] = {100, 10}, zero = 0, one = 1;
    assert_int_equal(llc_statmodel_hist_uncensor(h, st, ln, 0, 1000, -1, u, err, sizeof err),
                     -EINVAL);
    assert_int_equal(llc_statmodel_hist_uncensor(h, st, ln, 1, 50, -1, u, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "outside the run"));
    assert_int_equal(llc_statmodel_hist_uncensor(h, st, ln, 2, 1000, -1, u, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "stretch 1 starts at 50"));
    assert_int_equal(llc_statmodel_hist_uncensor(h, &zero, &zero, 1, 1000, -1, u, err, sizeof err),
                     -EINVAL);
    assert_int_equal(llc_statmodel_hist_uncensor(h, &zero, &one, 1, NAN, -1, u, err, sizeof err),
                     -EINVAL);
    llc_statmodel_hist_destroy(h);
    llc_statmodel_hist_destroy(u);
}

/* Uniform reuse over N lines in a run of 20 N references: the reuse is
 * geometric with mean N and almost never beyond the run (e^-20), but the
 * samples near the end dangle (about N / L = 5%) and the finite ones are
 * short by about N^2 / L = 5%. Undone, the mean is within 2.5% of N (the
 * sampling error of ~5,000 samples is ~1.4%) and almost nothing dangles. */
static void uniform_stream_recovered(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    enum { N = 2000, L = 20 * N };
    uint64_t *lines = malloc(L * sizeof(uint64_t));
    assert_non_null(lines);
    struct synth_rng rng = {.state = 42};
    const struct synth_mix mix = {.p_large = 1, .large_lines = N};
    uint64_t next = 1u << 30;
    synth_stream(&mix, &rng, &next, lines, L);
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 1.0 / 8;
    cfg.seed = 7;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_access_batch(smp, lines, L, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, 0);
    struct llc_statmodel_hist *u = NULL;
    assert_int_equal(llc_statmodel_hist_create(&u, err, sizeof err), 0);
    const double start = 0, len = L;
    assert_int_equal(llc_statmodel_hist_uncensor(h, &start, &len, 1, L, -1, u, err, sizeof err), 0);
    double mean[2];
    for (int k = 0; k < 2; k++) {
        const struct llc_statmodel_hist *x = k ? u : h;
        double s = 0;
        for (size_t b = llc_statmodel_hist_next(x, 0); b < LLC_STATMODEL_BUCKETS;
             b = llc_statmodel_hist_next(x, b + 1))
            s += llc_statmodel_hist_count(x, b) * llc_statmodel_bucket_mid(b);
        mean[k] = s / llc_statmodel_hist_finite(x);
    }
    const double raw_dangling = llc_statmodel_hist_dangling(h) / llc_statmodel_hist_total(h);
    const double dangling = llc_statmodel_hist_dangling(u) / llc_statmodel_hist_total(u);
    print_message("samples %.0f: mean reuse %.0f raw, %.0f undone (N %d); dangling %.4f -> %.4f\n",
                  llc_statmodel_hist_total(h), mean[0], mean[1], N, raw_dangling, dangling);
    assert_true(raw_dangling > 0.03);
    assert_true(mean[0] < 0.97 * N);
    NEAR(mean[1], N, 0.025 * N);
    assert_true(dangling < 0.01);
    llc_statmodel_hist_destroy(u);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
    free(lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(weights_by_hand),
        cmocka_unit_test(floor_and_borrowed_ratio),
        cmocka_unit_test(bad_stretches),
        cmocka_unit_test(uniform_stream_recovered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
