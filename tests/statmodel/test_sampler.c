/* The docs/METHODS.md §6.1 example, the exact reference, and the sampler: equal chance for
 * every reference, agreement with the exact histogram at rate 1, tags. */
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
#include <gsl/gsl_cdf.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "synth.h"

static void example_abcca(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const uint64_t s[] = {'A', 'B', 'C', 'C', 'A'};
    uint64_t reuse[5], stack[5];
    assert_int_equal(llc_statmodel_exact_distances(s, 5, reuse, stack, err, sizeof err), 0);
    const uint64_t C = LLC_STATMODEL_COLD;
    const uint64_t want_reuse[] = {C, C, C, 0, 3}, want_stack[] = {C, C, C, 0, 2};
    assert_memory_equal(reuse, want_reuse, sizeof reuse);
    assert_memory_equal(stack, want_stack, sizeof stack);

    /* The sampler at rate 1 sees forward distances: A->3, C->0, and the
     * last touches of A, B, C dangle. */
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 1;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_access_batch(smp, s, 5, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), -EINVAL);
    const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, 0);
    assert_true(llc_statmodel_hist_count(h, 3) == 1);
    assert_true(llc_statmodel_hist_count(h, 0) == 1);
    assert_true(llc_statmodel_hist_finite(h) == 2);
    assert_true(llc_statmodel_hist_dangling(h) == 3);
    assert_true(llc_statmodel_groups_refs(g, 0) == 5);
    struct llc_statmodel_sampler_stats st;
    llc_statmodel_sampler_stats(smp, &st);
    assert_int_equal(st.refs, 5);
    assert_int_equal(st.taken, 5);
    assert_int_equal(st.reused, 2);
    assert_int_equal(st.dangling, 3);
    assert_int_equal(st.pending, 0);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
}

static void rate_one_matches_exact_histogram(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t n = 200000;
    uint64_t *lines = malloc(n * sizeof *lines), *reuse = malloc(n * sizeof *reuse);
    const struct synth_mix mix = {0.5, 0.3, 0.15, 200, 5000, 100000};
    struct synth_rng r = {11};
    uint64_t next = 0;
    synth_stream(&mix, &r, &next, lines, n);
    assert_int_equal(llc_statmodel_exact_distances(lines, n, reuse, NULL, err, sizeof err), 0);
    struct llc_statmodel_hist *exact = NULL;
    assert_int_equal(llc_statmodel_hist_create(&exact, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(llc_statmodel_hist_add(exact, reuse[i], 1, err, sizeof err), 0);

    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 1;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++)
        llc_statmodel_sampler_access(smp, lines[i]);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, 0);
    for (size_t b = 0; b < LLC_STATMODEL_BUCKETS; b++)
        assert_true(llc_statmodel_hist_count(h, b) == llc_statmodel_hist_count(exact, b));
    /* Dangling (last touches) and cold (first touches) are equinumerous. */
    assert_true(llc_statmodel_hist_dangling(h) == llc_statmodel_hist_dangling(exact));
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
    llc_statmodel_hist_destroy(exact);
    free(lines);
    free(reuse);
}

/* Blocks of 2B references on fresh lines: 0..B-1 then B-1..0. Position i
 * of the first half is reused with distance 2B-2-2i, so the histogram says
 * which positions were picked; the second half dangles. */
static void every_reference_has_the_same_chance(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    enum { B = 256, BLOCKS = 8192 };
    const double rate = 0.01;
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = rate;
    cfg.seed = 20240601;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    for (uint64_t k = 0; k < BLOCKS; k++) {
        for (uint64_t i = 0; i < B; i++)
            llc_statmodel_sampler_access(smp, k * B + i);
        for (uint64_t i = B; i-- > 0;)
            llc_statmodel_sampler_access(smp, k * B + i);
    }
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    struct llc_statmodel_sampler_stats st;
    llc_statmodel_sampler_stats(smp, &st);
    const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, 0);

    /* Total picks ~ Binomial(N, rate): within 4 standard deviations. */
    const double nref = 2.0 * B * BLOCKS;
    const double sd = sqrt(nref * rate * (1 - rate));
    assert_true(fabs((double)st.taken - nref * rate) < 4 * sd);
    /* First half (reused) vs second half (dangling): Binomial(taken, 1/2). */
    assert_true(fabs(llc_statmodel_hist_finite(h) - st.taken / 2.0) < 4 * sqrt(st.taken / 4.0));
    assert_true(llc_statmodel_hist_dangling(h) == (double)st.dangling);
    assert_true(st.lines == (uint64_t)B * BLOCKS);

    /* Pearson chi-square over the B first-half positions, p = 0.001. */
    const double expect = llc_statmodel_hist_finite(h) / B;
    double chi2 = 0;
    for (size_t i = 0; i < B; i++) {
        const double o = llc_statmodel_hist_count(h, 2 * B - 2 - 2 * i);
        chi2 += (o - expect) * (o - expect) / expect;
    }
    const double crit = gsl_cdf_chisq_Qinv(0.001, B - 1);
    print_message("sampler: %.0f picks, chi2 = %.1f (dof %d, 0.1%% critical %.1f)\n",
                  (double)st.taken, chi2, B - 1, crit);
    assert_true(chi2 < crit);
    /* Only distances of first-half positions occur. */
    assert_true(llc_statmodel_hist_finite(h) == expect * B);
    for (size_t d = 1; d < 2 * B; d += 2)
        assert_true(llc_statmodel_hist_count(h, d) == 0);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
}

static void same_seed_same_samples_other_seed_other_samples(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    const size_t n = 100000;
    uint64_t *lines = malloc(n * sizeof *lines);
    const struct synth_mix mix = {0.6, 0.3, 0.0, 100, 3000, 1};
    struct synth_rng r = {5};
    uint64_t next = 0;
    synth_stream(&mix, &r, &next, lines, n);
    char *text[3];
    const uint64_t seeds[3] = {7, 7, 8};
    for (int k = 0; k < 3; k++) {
        struct llc_statmodel_groups *g = NULL;
        struct llc_statmodel_sampler *smp = NULL;
        struct llc_statmodel_sampler_config cfg;
        llc_statmodel_sampler_config_default(&cfg);
        cfg.rate = 0.05;
        cfg.seed = seeds[k];
        assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_sampler_access_batch(smp, lines, n, err, sizeof err), 0);
        assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
        const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, 0);
        const int len = llc_statmodel_hist_format(h, NULL, 0, err, sizeof err);
        text[k] = malloc((size_t)len + 1);
        assert_int_equal(llc_statmodel_hist_format(h, text[k], (size_t)len + 1, err, sizeof err),
                         len);
        llc_statmodel_sampler_destroy(smp);
        llc_statmodel_groups_destroy(g);
    }
    assert_string_equal(text[0], text[1]);
    assert_string_not_equal(text[0], text[2]);
    for (int k = 0; k < 3; k++)
        free(text[k]);
    free(lines);
}

/* A sample belongs to the group current when it was taken, even if the
 * reuse happens in a later group; many pending watches grow the table. */
static void samples_keep_the_group_they_were_taken_in(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 1;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_set_group(smp, 3, err, sizeof err), 0);
    for (uint64_t i = 0; i < 10000; i++) /* 10000 pending watches */
        llc_statmodel_sampler_access(smp, i);
    assert_int_equal(llc_statmodel_sampler_set_group(smp, -1, err, sizeof err), 0);
    for (uint64_t i = 0; i < 10000; i++) /* reuses at distance 9999 */
        llc_statmodel_sampler_access(smp, i);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    const struct llc_statmodel_hist *g3 = llc_statmodel_groups_hist(g, 3);
    const struct llc_statmodel_hist *gm = llc_statmodel_groups_hist(g, -1);
    assert_non_null(g3);
    assert_non_null(gm);
    assert_true(llc_statmodel_hist_count(g3, llc_statmodel_bucket_of(9999)) == 10000);
    assert_true(llc_statmodel_hist_dangling(g3) == 0);
    assert_true(llc_statmodel_hist_finite(gm) == 0);
    assert_true(llc_statmodel_hist_dangling(gm) == 10000);
    assert_true(llc_statmodel_groups_refs(g, 3) == 10000);
    assert_true(llc_statmodel_groups_refs(g, -1) == 10000);
    assert_true(llc_statmodel_groups_refs(g, 0) == 0);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
}

static void slot_mode_groups_by_reference_index(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 1;
    cfg.slot_refs = 1000;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_set_group(smp, 1, err, sizeof err), -EINVAL);
    for (uint64_t i = 0; i < 2500; i++)
        llc_statmodel_sampler_access(smp, i % 10);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_groups_count(g), 3);
    const double refs[3] = {1000, 1000, 500};
    const double reused[3] = {1000, 1000, 490};
    for (int k = 0; k < 3; k++) {
        const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, k);
        assert_true(llc_statmodel_groups_refs(g, k) == refs[k]);
        assert_true(llc_statmodel_hist_count(h, 9) == reused[k]);
        assert_true(llc_statmodel_hist_dangling(h) == refs[k] - reused[k]);
    }
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
}

static void bad_configuration_is_refused(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    const double bad[] = {0, -0.5, 1.5, NAN};
    for (size_t i = 0; i < LLC_ARRAY_LEN(bad); i++) {
        cfg.rate = bad[i];
        assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), -EINVAL);
    }
    cfg.rate = 0.1;
    assert_int_equal(llc_statmodel_sampler_create(&cfg, NULL, &smp, err, sizeof err), -EINVAL);
    llc_statmodel_groups_destroy(g);
}

/* The sampler's distinct-line count is exact: it equals the first
 * touches of the exact reference, over pages far apart (the table grows)
 * and lines sharing pages; the dangling fraction set from it is the
 * curve's large-cache end for StatCache and StatStack. */
static void distinct_lines_are_exact(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    enum { N = 200000 };
    uint64_t *lines = malloc(N * sizeof *lines), *reuse = malloc(N * sizeof *reuse);
    assert_non_null(lines);
    assert_non_null(reuse);
    struct synth_rng r = {.state = 77};
    for (size_t i = 0; i < N; i++) {
        const double u = synth_uniform(&r);
        /* Hot set, a wide sparse set (one line per page) and high addresses. */
        lines[i] = u < 0.6   ? synth_next(&r) % 3000
                   : u < 0.9 ? (synth_next(&r) % 40000) * 64 + 1000000
                             : (UINT64_C(1) << 57) + synth_next(&r) % 100000;
    }
    assert_int_equal(llc_statmodel_exact_distances(lines, N, reuse, NULL, err, sizeof err), 0);
    uint64_t cold = 0;
    for (size_t i = 0; i < N; i++)
        cold += reuse[i] == LLC_STATMODEL_COLD;
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 0.002;
    assert_int_equal(llc_statmodel_groups_create(&g, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_access_batch(smp, lines, N, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_sampler_finish(smp, err, sizeof err), 0);
    struct llc_statmodel_sampler_stats st;
    llc_statmodel_sampler_stats(smp, &st);
    assert_true(st.lines == cold);
    assert_true(cold > 50000 && cold < N);

    struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, 0);
    const double finite = llc_statmodel_hist_finite(h);
    assert_int_equal(llc_statmodel_hist_set_cold(h, st.lines, st.refs, err, sizeof err), 0);
    assert_true(llc_statmodel_hist_finite(h) == finite);
    const double frac = (double)cold / N;
    assert_true(fabs(llc_statmodel_hist_dangling(h) / llc_statmodel_hist_total(h) - frac) < 1e-12);
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
    struct llc_statmodel_point pc, ps;
    assert_int_equal(
        llc_statmodel_statcache(m, 1e12, LLC_STATMODEL_COLD_COUNT, &pc, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_statstack(m, 1e12, &ps, err, sizeof err), 0);
    /* StatCache's root finder stops at about 1e-8 relative. */
    assert_true(fabs(pc.r_total - frac) < 1e-6 * frac);
    assert_true(fabs(ps.r_total - frac) < 1e-9);
    llc_statmodel_release(m);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
    free(lines);
    free(reuse);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(example_abcca),
        cmocka_unit_test(rate_one_matches_exact_histogram),
        cmocka_unit_test(every_reference_has_the_same_chance),
        cmocka_unit_test(same_seed_same_samples_other_seed_other_samples),
        cmocka_unit_test(samples_keep_the_group_they_were_taken_in),
        cmocka_unit_test(slot_mode_groups_by_reference_index),
        cmocka_unit_test(bad_configuration_is_refused),
        cmocka_unit_test(distinct_lines_are_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
