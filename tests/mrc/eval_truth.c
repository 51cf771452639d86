/* Evaluation driver for scripts/eval-mrc.sh: reads a trace's data
 * references (the simulator's replay: one reference per line touched), and
 * for each size prints the exact fully associative LRU miss ratio (stack
 * distances), the miss ratio of a simulated fully associative random-
 * replacement cache (seeded), and StatCache / StatStack from references
 * sampled at the given rate.
 * Usage: mrc_eval_truth TRACE RATE SEED SIZE_LINES...
 * Output: one line per size: lines lru random statcache statstack */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"

static int read_lines(const char *path, uint64_t **out, size_t *n)
{
    char err[LLC_ERRLEN];
    struct llc_trace_reader *r = NULL;
    if (llc_trace_reader_open(path, &r, err, sizeof err) < 0) {
        fprintf(stderr, "mrc_eval_truth: %s\n", err);
        return -1;
    }
    size_t cap = 1 << 20, len = 0;
    uint64_t *v = malloc(cap * sizeof *v);
    struct llc_trace_rec rec;
    int rc;
    while (v && (rc = llc_trace_reader_next(r, &rec, err, sizeof err)) > 0) {
        if (rec.kind == LLC_TRACE_INSTR)
            continue;
        const uint64_t size = rec.size ? rec.size : 1;
        const uint64_t nl = ((rec.addr & 63) + size - 1) / 64 + 1;
        for (uint64_t k = 0; k < nl; k++) {
            if (len == cap) {
                uint64_t *g = realloc(v, 2 * cap * sizeof *v);
                if (!g) {
                    free(v);
                    v = NULL;
                    break;
                }
                v = g;
                cap *= 2;
            }
            if (v)
                v[len++] = (rec.addr >> 6) + k;
        }
    }
    llc_trace_reader_close(r);
    if (!v || rc < 0) {
        fprintf(stderr, "mrc_eval_truth: %s\n", v ? err : "out of memory");
        free(v);
        return -1;
    }
    *out = v;
    *n = len;
    return 0;
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Fully associative random replacement with L lines: a slot array and an
 * open-addressing map line -> slot. */
static double random_cache(const uint64_t *lines, size_t n, size_t cap)
{
    size_t tbits = 4;
    while (((size_t)1 << tbits) < 4 * cap)
        tbits++;
    const size_t tmask = ((size_t)1 << tbits) - 1;
    uint64_t *slot_line = malloc(cap * sizeof *slot_line);
    uint64_t *key = calloc(tmask + 1, sizeof *key); /* line + 1 */
    uint32_t *val = malloc((tmask + 1) * sizeof *val);
    size_t used = 0, misses = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t k = lines[i] + 1;
        size_t j = (k * 0x9E3779B97F4A7C15ull) >> (64 - tbits);
        while (key[j] && key[j] != k)
            j = (j + 1) & tmask;
        if (key[j])
            continue;
        misses++;
        size_t s;
        if (used < cap) {
            s = used++;
        } else {
            s = rnd() % cap;
            /* Remove the victim (backward-shift deletion). */
            const uint64_t vk = slot_line[s] + 1;
            size_t a = (vk * 0x9E3779B97F4A7C15ull) >> (64 - tbits);
            while (key[a] != vk)
                a = (a + 1) & tmask;
            for (size_t b = a;;) {
                b = (b + 1) & tmask;
                if (!key[b])
                    break;
                const size_t home = (key[b] * 0x9E3779B97F4A7C15ull) >> (64 - tbits);
                const int stays = a <= b ? (home > a && home <= b) : (home > a || home <= b);
                if (!stays) {
                    key[a] = key[b];
                    val[a] = val[b];
                    a = b;
                }
            }
            key[a] = 0;
            j = (k * 0x9E3779B97F4A7C15ull) >> (64 - tbits);
            while (key[j])
                j = (j + 1) & tmask;
        }
        slot_line[s] = lines[i];
        key[j] = k;
        val[j] = (uint32_t)s;
    }
    free(slot_line);
    free(key);
    free(val);
    return (double)misses / (double)n;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: mrc_eval_truth TRACE RATE SEED SIZE_LINES...\n");
        return 2;
    }
    const double rate = atof(argv[2]);
    const uint64_t seed = strtoull(argv[3], NULL, 10);
    const int n_sizes = argc - 4;
    uint64_t *lines = NULL;
    size_t n = 0;
    if (read_lines(argv[1], &lines, &n) < 0)
        return 1;
    char err[LLC_ERRLEN];
    uint64_t *stack = malloc(n * sizeof *stack);
    double *sizes = malloc((size_t)n_sizes * sizeof *sizes);
    double *lru = malloc((size_t)n_sizes * sizeof *lru);
    struct llc_statmodel_point *sc = malloc((size_t)n_sizes * sizeof *sc);
    struct llc_statmodel_point *ss = malloc((size_t)n_sizes * sizeof *ss);
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = rate;
    cfg.seed = seed;
    struct llc_mrc_trace_stats st;
    for (int i = 0; i < n_sizes; i++)
        sizes[i] = atof(argv[4 + i]);
    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    if (!stack || !sizes || !lru || !sc || !ss ||
        llc_statmodel_exact_distances(lines, n, NULL, stack, err, sizeof err) < 0 ||
        llc_statmodel_exact_lru_curve(stack, n, sizes, (size_t)n_sizes, lru, err, sizeof err) < 0 ||
        llc_statmodel_hist_create(&h, err, sizeof err) < 0 ||
        llc_mrc_sample_trace(argv[1], &cfg, h, &st, err, sizeof err) < 0 ||
        llc_statmodel_prepare(h, &m, err, sizeof err) < 0 ||
        llc_statmodel_curve(m, &o, sizes, (size_t)n_sizes, sc, err, sizeof err) < 0) {
        fprintf(stderr, "mrc_eval_truth: %s\n", err);
        return 1;
    }
    o.method = LLC_STATMODEL_STATSTACK;
    if (llc_statmodel_curve(m, &o, sizes, (size_t)n_sizes, ss, err, sizeof err) < 0) {
        fprintf(stderr, "mrc_eval_truth: %s\n", err);
        return 1;
    }
    printf("# %zu references, %.0f samples\n", n, llc_statmodel_hist_total(h));
    for (int i = 0; i < n_sizes; i++)
        printf("%.0f %.6f %.6f %.6f %.6f\n", sizes[i], lru[i],
               random_cache(lines, n, (size_t)sizes[i]), sc[i].r_total, ss[i].r_total);
    return 0;
}
