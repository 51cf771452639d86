/* Generator statistics: each kind produces the distribution it promises. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "llcprobe/workload.h"

static struct llc_workload *make(const char *spec, const struct llc_workload_target *t,
                                 uint64_t seed)
{
    char err[LLC_ERRLEN] = "";
    struct llc_workload *w = NULL;
    if (llc_workload_create(spec, t, seed, &w, err, sizeof(err)) != 0)
        fail_msg("%s: %s", spec, err);
    return w;
}

static uint64_t *draw(struct llc_workload *w, size_t n, uint8_t *is_write)
{
    uint64_t *a = malloc(n * sizeof(*a));
    assert_non_null(a);
    /* Odd chunk sizes: results must not depend on how the caller asks. */
    for (size_t done = 0; done < n;) {
        const size_t m = n - done < 777 ? n - done : 777;
        assert_int_equal(llc_workload_fill(w, a + done, is_write ? is_write + done : NULL, m), m);
        done += m;
    }
    return a;
}

static void uniform_coverage(void **state)
{
    (void)state;
    struct llc_workload *w = make("uniform:size=64K", NULL, 7);
    const size_t lines = 1024, n = 1024 * 1024;
    uint64_t *a = draw(w, n, NULL);
    uint32_t *count = calloc(lines, sizeof(*count));
    for (size_t i = 0; i < n; i++) {
        assert_true(a[i] >= LLC_WORKLOAD_VBASE && a[i] < LLC_WORKLOAD_VBASE + 65536);
        assert_int_equal(a[i] % 64, 0);
        count[(a[i] - LLC_WORKLOAD_VBASE) / 64]++;
    }
    /* Binomial counts: mean 1024, sd 32; 6 sd bounds over 1024 lines. */
    double chi2 = 0;
    for (size_t l = 0; l < lines; l++) {
        assert_in_range(count[l], 1024 - 192, 1024 + 192);
        chi2 += (count[l] - 1024.0) * (count[l] - 1024.0) / 1024.0;
    }
    /* chi-square with 1023 dof: mean 1023, sd 45. */
    assert_in_range((uint64_t)chi2, 1023 - 6 * 45, 1023 + 6 * 45);
    assert_false(llc_workload_is_physical(w));
    assert_int_equal(llc_workload_emitted(w), n);
    free(count);
    free(a);
    llc_workload_destroy(w);
}

static void stream_order(void **state)
{
    (void)state;
    struct llc_workload *w = make("stream:size=4K", NULL, 1);
    uint64_t *a = draw(w, 200, NULL);
    for (size_t i = 0; i < 200; i++)
        assert_int_equal(a[i], LLC_WORKLOAD_VBASE + (i % 64) * 64);
    free(a);
    llc_workload_destroy(w);

    /* A stride that does not divide the size wraps modulo the size. */
    w = make("stream:size=1K,stride=384", NULL, 1);
    a = draw(w, 8, NULL);
    static const uint64_t want[] = {0, 384, 768, 128, 512, 896, 256, 640};
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(a[i] - LLC_WORKLOAD_VBASE, want[i]);
    free(a);
    llc_workload_destroy(w);
}

static int cmp_desc(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a < b) - (a > b);
}

static void check_zipf(double alpha)
{
    char spec[64];
    snprintf(spec, sizeof(spec), "zipf:size=1M,alpha=%g", alpha);
    struct llc_workload *w = make(spec, NULL, 11);
    const size_t lines = 16384, n = 2000000;
    uint64_t *a = draw(w, n, NULL);
    uint32_t *count = calloc(lines, sizeof(*count));
    for (size_t i = 0; i < n; i++) {
        assert_true(a[i] >= LLC_WORKLOAD_VBASE && a[i] < LLC_WORKLOAD_VBASE + (1u << 20));
        count[(a[i] - LLC_WORKLOAD_VBASE) / 64]++;
    }
    qsort(count, lines, sizeof(*count), cmp_desc);
    double h = 0;
    for (size_t k = 1; k <= lines; k++)
        h += pow((double)k, -alpha);
    /* Top ranks: frequency k^-alpha / H within 5 sd of the sampling noise
     * plus 1%. */
    for (size_t k = 1; k <= 10; k++) {
        const double expect = n * pow((double)k, -alpha) / h;
        if (fabs(count[k - 1] - expect) > 5 * sqrt(expect) + 0.01 * expect)
            fail_msg("alpha %g rank %zu: %u, expected %.0f", alpha, k, count[k - 1], expect);
    }
    /* log-log slope over ranks 1..100 is -alpha. */
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const int m = 100;
    for (int k = 1; k <= m; k++) {
        const double x = log(k), y = log(count[k - 1]);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    const double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    if (fabs(slope + alpha) > 0.03)
        fail_msg("alpha %g: log-log slope %.4f", alpha, slope);
    free(count);
    free(a);
    llc_workload_destroy(w);
}

/* A footprint beyond the generator's alias-table head (2^16 ranks): the
 * tail's share and shape show in how many lines are drawn 0, 1 and 2 times,
 * whose expectations follow from the exact probabilities. */
static void zipf_tail(void **state)
{
    (void)state;
    const double alpha = 0.99;
    struct llc_workload *w = make("zipf:size=16M,alpha=0.99", NULL, 21);
    const size_t lines = 262144, n = 4000000;
    uint64_t *a = draw(w, n, NULL);
    uint32_t *count = calloc(lines, sizeof(*count));
    for (size_t i = 0; i < n; i++)
        count[(a[i] - LLC_WORKLOAD_VBASE) / 64]++;
    double h = 0;
    for (size_t k = 1; k <= lines; k++)
        h += pow((double)k, -alpha);
    for (unsigned c = 0; c <= 2; c++) {
        double expect = 0, var = 0;
        for (size_t k = 1; k <= lines; k++) {
            const double lambda = n * pow((double)k, -alpha) / h;
            const double p = exp(-lambda) * pow(lambda, c) / (c == 2 ? 2 : 1);
            expect += p;
            var += p * (1 - p);
        }
        size_t seen = 0;
        for (size_t l = 0; l < lines; l++)
            seen += count[l] == c;
        print_message("zipf tail: lines drawn %u times: %zu, expected %.0f (sd %.0f)\n", c, seen,
                      expect, sqrt(var));
        if (fabs(seen - expect) > 6 * sqrt(var) + 0.002 * expect)
            fail_msg("lines drawn %u times: %zu, expected %.0f", c, seen, expect);
    }
    free(count);
    free(a);
    llc_workload_destroy(w);
}

static void zipf_rank_frequencies(void **state)
{
    (void)state;
    check_zipf(0.99);
    check_zipf(1.0);
    check_zipf(0.6);
}

static void intel8(struct llc_sim_config *c)
{
    char err[LLC_ERRLEN];
    if (llc_sim_preset("intel8", c, err, sizeof(err)) != 0)
        fail_msg("%s", err);
}

/* Per-set access counts of n draws, located through the geometry. */
static uint32_t *per_set(struct llc_workload *w, const struct llc_sim_geometry *g, uint64_t base,
                         size_t n)
{
    uint64_t *a = draw(w, n, NULL);
    uint32_t *count = calloc(llc_sim_geometry_sets(g), sizeof(*count));
    for (size_t i = 0; i < n; i++) {
        assert_true(a[i] >= base && a[i] < base + llc_workload_extent(w));
        struct llc_sim_loc loc;
        llc_sim_geometry_locate(g, a[i], &loc);
        count[loc.set]++;
    }
    free(a);
    return count;
}

static void hotsets_weight(void **state)
{
    (void)state;
    struct llc_sim_config c;
    intel8(&c);
    const uint64_t base = (uint64_t)1 << 40;
    const struct llc_workload_target t = {.geometry = &c.llc, .phys_base = base};
    struct llc_workload *w = make("hotsets:size=8M,frac=0.1,weight=0.9", &t, 3);
    assert_true(llc_workload_is_physical(w));
    assert_int_equal(llc_workload_footprint(w), 8u << 20);
    const uint32_t sets = llc_sim_geometry_sets(&c.llc);
    const size_t n = 2000000;
    uint32_t *count = per_set(w, &c.llc, base, n);
    qsort(count, sets, sizeof(*count), cmp_desc);
    const uint32_t hot = (uint32_t)(0.1 * sets + 0.5);
    uint64_t in_hot = 0;
    for (uint32_t s = 0; s < hot; s++)
        in_hot += count[s];
    const double share = (double)in_hot / n;
    if (fabs(share - 0.9) > 0.005)
        fail_msg("hot share %.4f, expected 0.9", share);
    /* The hot and cold groups are separated: the coldest hot set is far
     * above the hottest cold one (means ~2200 and ~27). */
    assert_true(count[hot - 1] > 4 * count[hot]);
    free(count);
    llc_workload_destroy(w);
}

static double measured_cv(const uint32_t *count, uint32_t sets)
{
    double sum = 0, sq = 0;
    for (uint32_t s = 0; s < sets; s++) {
        sum += count[s];
        sq += (double)count[s] * count[s];
    }
    const double mean = sum / sets;
    const double var = sq / sets - mean * mean;
    /* Remove the multinomial sampling noise (variance ~ mean). */
    const double v = var - mean;
    return sqrt(v > 0 ? v : 0) / mean;
}

static void gaussian_cv(void **state)
{
    (void)state;
    struct llc_sim_config c;
    intel8(&c);
    const uint64_t base = (uint64_t)1 << 40;
    const struct llc_workload_target t = {.geometry = &c.llc, .phys_base = base};
    const uint32_t sets = llc_sim_geometry_sets(&c.llc);
    static const double cvs[] = {0.1, 0.3, 0.5, 0.7};
    for (size_t i = 0; i < LLC_ARRAY_LEN(cvs); i++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "gaussian:size=16M,cv=%g", cvs[i]);
        struct llc_workload *w = make(spec, &t, 100 + i);
        uint32_t *count = per_set(w, &c.llc, base, (size_t)sets * 400);
        const double cv = measured_cv(count, sets);
        /* Sampling error of a CV over 8192 sets is ~cv/128. */
        print_message("gaussian cv %g: measured %.4f\n", cvs[i], cv);
        if (fabs(cv - cvs[i]) > 0.02)
            fail_msg("requested cv %g, measured %.4f", cvs[i], cv);
        free(count);
        llc_workload_destroy(w);
    }
}

/* cv=0: every set equally likely, and every one of a set's lines used. */
static void gaussian_flat_uses_every_line(void **state)
{
    (void)state;
    struct llc_sim_config c;
    intel8(&c);
    const uint64_t base = (uint64_t)3 << 40;
    const struct llc_workload_target t = {.geometry = &c.llc, .phys_base = base};
    struct llc_workload *w = make("gaussian:size=1M,cv=0", &t, 5);
    const size_t n = 400000;
    uint64_t *a = draw(w, n, NULL);
    const uint64_t extent = llc_workload_extent(w);
    uint8_t *seen = calloc(extent / 64, 1);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t l = (a[i] - base) / 64;
        distinct += !seen[l];
        seen[l] = 1;
    }
    /* 2 lines per set x 8192 sets, 24 draws per line on average. */
    assert_int_equal(distinct, 16384);
    free(seen);
    free(a);
    llc_workload_destroy(w);
}

static void phased_switching(void **state)
{
    (void)state;
    struct llc_workload *w = make("phased:uniform:size=64K@1000;stream:size=8K@500;"
                                  "zipf:size=16K,alpha=1@3",
                                  NULL, 9);
    const size_t n = 10000;
    uint64_t *a = draw(w, n, NULL);
    uint64_t stream_pos = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t in_cycle = i % 1503;
        const unsigned want = in_cycle < 1000 ? 0 : in_cycle < 1500 ? 1 : 2;
        const uint64_t off = a[i] - LLC_WORKLOAD_VBASE;
        const unsigned phase = (unsigned)(off / LLC_WORKLOAD_PHASE_GAP);
        if (phase != want)
            fail_msg("access %zu in phase %u, expected %u", i, phase, want);
        /* The stream phase resumes where it left off. */
        if (phase == 1) {
            assert_int_equal(off % LLC_WORKLOAD_PHASE_GAP, stream_pos);
            stream_pos = (stream_pos + 64) % 8192;
        }
    }
    assert_int_equal(llc_workload_phase(w), (n % 1503) < 1000 ? 0 : (n % 1503) < 1500 ? 1 : 2);
    free(a);
    llc_workload_destroy(w);
}

static void writes_and_determinism(void **state)
{
    (void)state;
    const size_t n = 1000000;
    struct llc_workload *w1 = make("uniform:size=1M,write=0.3", NULL, 42);
    struct llc_workload *w2 = make("uniform:size=1M", NULL, 42);
    struct llc_workload *w3 = make("uniform:size=1M,write=0.3", NULL, 43);
    uint8_t *wr = malloc(n);
    uint64_t *a1 = draw(w1, n, wr);
    uint64_t *a2 = draw(w2, n, NULL);
    uint64_t *a3 = draw(w3, n, NULL);
    /* Same seed, same addresses, whether or not writes are asked for. */
    assert_memory_equal(a1, a2, n * sizeof(*a1));
    assert_memory_not_equal(a1, a3, n * sizeof(*a1));
    size_t writes = 0;
    for (size_t i = 0; i < n; i++)
        writes += wr[i];
    /* sd of the fraction: sqrt(0.21 / 1e6) = 0.00046 */
    assert_true(fabs((double)writes / n - 0.3) < 0.003);
    free(wr);
    free(a1);
    free(a2);
    free(a3);
    llc_workload_destroy(w1);
    llc_workload_destroy(w2);
    llc_workload_destroy(w3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uniform_coverage),
        cmocka_unit_test(stream_order),
        cmocka_unit_test(zipf_rank_frequencies),
        cmocka_unit_test(zipf_tail),
        cmocka_unit_test(hotsets_weight),
        cmocka_unit_test(gaussian_cv),
        cmocka_unit_test(gaussian_flat_uses_every_line),
        cmocka_unit_test(phased_switching),
        cmocka_unit_test(writes_and_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
