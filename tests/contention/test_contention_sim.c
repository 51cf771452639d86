/* The model against simulation of two synthetic programs interleaved at
 * rates 1 : 2 (hot / medium / streaming mixes), fully associative caches of
 * 500..6000 lines:
 *  - LRU (docs/METHODS.md §12.2): an exact LRU stack simulation of the merged stream; the
 *    characteristic-time model from each program's own reuse histogram
 *    (every reference) must give both programs' miss ratios within 0.0005;
 *  - random replacement (docs/METHODS.md §12.3): a random-replacement simulation of the same
 *    stream; miss ratios within 0.004, occupancies within 0.5% of the
 *    cache (mean over the second half of the stream).
 * The tolerances are the method's stated ones; a table of every point is
 * printed. */
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
#include "llcprobe/contention.h"
#include "llcprobe/statmodel.h"

#define N_A 300000u              /* references of program A; B makes 2 N_A */
#define ID_B 200000u             /* B's lines are numbered from here */
#define N_IDS (2 * ID_B)

struct mix {
    double p_hot, p_med;
    uint32_t hot, med;
};

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
    return (double)(next_u64(s) >> 11) * 0x1.0p-53;
}

/* Dense line ids from base: hot lines, then medium, then streaming. */
static void gen(const struct mix *m, uint64_t seed, uint64_t base, uint64_t *out, size_t n)
{
    uint64_t s = seed, stream = m->hot + m->med;
    for (size_t i = 0; i < n; i++) {
        const double u = unit(&s);
        if (u < m->p_hot)
            out[i] = base + next_u64(&s) % m->hot;
        else if (u < m->p_hot + m->p_med)
            out[i] = base + m->hot + next_u64(&s) % m->med;
        else
            out[i] = base + stream++;
    }
    assert_true(stream < ID_B);
}

static struct llc_statmodel_model *model_of(const uint64_t *lines, size_t n)
{
    char err[LLC_ERRLEN];
    uint64_t *reuse = malloc(n * sizeof *reuse);
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m = NULL;
    assert_int_equal(llc_statmodel_exact_distances(lines, n, reuse, NULL, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_hist_create(&h, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(llc_statmodel_hist_add(h, reuse[i], 1, err, sizeof err), 0);
    assert_int_equal(llc_statmodel_prepare(h, &m, err, sizeof err), 0);
    llc_statmodel_hist_destroy(h);
    free(reuse);
    return m;
}

struct streams {
    uint64_t *a, *b, *merged;
    size_t n;
    struct llc_statmodel_model *ma, *mb;
};

/* A B B A B B ...: rates 1 : 2. */
static void make_streams(struct streams *s)
{
    const struct mix ma = {0.5, 0.3, 200, 3000}, mb = {0.4, 0.4, 100, 6000};
    s->n = 3 * (size_t)N_A;
    s->a = malloc(N_A * sizeof(uint64_t));
    s->b = malloc(2 * N_A * sizeof(uint64_t));
    s->merged = malloc(s->n * sizeof(uint64_t));
    gen(&ma, 11, 0, s->a, N_A);
    gen(&mb, 22, ID_B, s->b, 2 * N_A);
    for (size_t i = 0; i < N_A; i++) {
        s->merged[3 * i] = s->a[i];
        s->merged[3 * i + 1] = s->b[2 * i];
        s->merged[3 * i + 2] = s->b[2 * i + 1];
    }
    s->ma = model_of(s->a, N_A);
    s->mb = model_of(s->b, 2 * N_A);
}

static void free_streams(struct streams *s)
{
    free(s->a);
    free(s->b);
    free(s->merged);
    llc_statmodel_release(s->ma);
    llc_statmodel_release(s->mb);
}

static const double sizes[] = {500, 1000, 2000, 3000, 4000, 6000};

static void model_at(const struct streams *s, double c, enum llc_contention_policy pol,
                     struct llc_contention_share *out)
{
    char err[LLC_ERRLEN];
    const struct llc_contention_party p[2] = {{.model = s->ma, .rate = 1, .gamma = 1, .weight = 1},
                                              {.model = s->mb, .rate = 2, .gamma = 1, .weight = 1}};
    if (llc_contention_equilibrium(p, 2, c, pol, out, NULL, err, sizeof err))
        fail_msg("equilibrium: %s", err);
}

static void lru_matches_exact_stack_simulation(void **state)
{
    (void)state;
    char err[LLC_ERRLEN];
    struct streams s;
    make_streams(&s);
    uint64_t *stack = malloc(s.n * sizeof(uint64_t));
    assert_int_equal(llc_statmodel_exact_distances(s.merged, s.n, NULL, stack, err, sizeof err), 0);
    double worst = 0;
    printf("  LRU   C    sim_A    model_A  sim_B    model_B\n");
    for (size_t k = 0; k < LLC_ARRAY_LEN(sizes); k++) {
        const double c = sizes[k];
        double miss[2] = {0, 0}, refs[2] = {0, 0};
        for (size_t i = 0; i < s.n; i++) {
            const int prog = s.merged[i] >= ID_B;
            refs[prog]++;
            miss[prog] += stack[i] == LLC_STATMODEL_COLD || (double)stack[i] >= c;
        }
        struct llc_contention_share m[2];
        model_at(&s, c, LLC_CONTENTION_LRU, m);
        printf("  %6.0f %.5f %.5f %.5f %.5f\n", c, miss[0] / refs[0], m[0].miss_ratio,
               miss[1] / refs[1], m[1].miss_ratio);
        for (int p = 0; p < 2; p++)
            worst = fmax(worst, fabs(miss[p] / refs[p] - m[p].miss_ratio));
    }
    printf("  LRU worst |model - exact| = %.5f (tolerance 0.0005)\n", worst);
    assert_true(worst <= 0.0005);
    free(stack);
    free_streams(&s);
}

/* Fully associative random replacement: misses per program, and its lines
 * in the cache averaged per reference over the second half. */
static void random_sim(const struct streams *s, size_t c, uint64_t seed, double *mr, double *occ)
{
    uint32_t *slot = malloc(c * sizeof(uint32_t));
    int32_t *where = malloc(N_IDS * sizeof(int32_t));
    for (size_t i = 0; i < N_IDS; i++)
        where[i] = -1;
    size_t filled = 0;
    double miss[2] = {0, 0}, refs[2] = {0, 0}, own[2] = {0, 0}, osum[2] = {0, 0}, on = 0;
    uint64_t r = seed;
    for (size_t i = 0; i < s->n; i++) {
        const uint32_t line = (uint32_t)s->merged[i];
        const int prog = line >= ID_B;
        refs[prog]++;
        if (where[line] < 0) {
            miss[prog]++;
            size_t k;
            if (filled < c) {
                k = filled++;
            } else {
                k = next_u64(&r) % c;
                where[slot[k]] = -1;
                own[slot[k] >= ID_B]--;
            }
            slot[k] = line;
            where[line] = (int32_t)k;
            own[prog]++;
        }
        if (i >= s->n / 2) {
            osum[0] += own[0];
            osum[1] += own[1];
            on++;
        }
    }
    for (int p = 0; p < 2; p++) {
        mr[p] = miss[p] / refs[p];
        occ[p] = osum[p] / on;
    }
    free(slot);
    free(where);
}

static void random_matches_simulation(void **state)
{
    (void)state;
    struct streams s;
    make_streams(&s);
    double worst_mr = 0, worst_occ = 0;
    printf("  RAND  C    sim_A    model_A  sim_B    model_B  occA_sim occA_model\n");
    for (size_t k = 0; k < LLC_ARRAY_LEN(sizes); k++) {
        const double c = sizes[k];
        double mr[2], occ[2];
        random_sim(&s, (size_t)c, 1000 + k, mr, occ);
        struct llc_contention_share m[2];
        model_at(&s, c, LLC_CONTENTION_RANDOM, m);
        printf("  %6.0f %.5f %.5f %.5f %.5f %8.1f %8.1f\n", c, mr[0], m[0].miss_ratio, mr[1],
               m[1].miss_ratio, occ[0], m[0].occupancy);
        for (int p = 0; p < 2; p++) {
            worst_mr = fmax(worst_mr, fabs(mr[p] - m[p].miss_ratio));
            worst_occ = fmax(worst_occ, fabs(occ[p] - m[p].occupancy) / c);
        }
    }
    printf("  random worst |model - sim|: miss ratio %.5f (tolerance 0.004), occupancy %.4f of C "
           "(tolerance 0.005)\n", worst_mr, worst_occ);
    assert_true(worst_mr <= 0.004);
    assert_true(worst_occ <= 0.005);
    free_streams(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lru_matches_exact_stack_simulation),
        cmocka_unit_test(random_matches_simulation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
