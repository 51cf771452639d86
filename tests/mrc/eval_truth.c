/* Evaluation driver for scripts/eval-mrc.sh: reads a trace's data
 * references (the simulator's replay: one reference per line touched), and
 * for each size prints the exact fully associative LRU miss ratio (stack
 * distances), the miss ratio of a simulated fully associative random-
 * replacement cache (seeded), and StatCache / StatStack from references
 * sampled at the given rate; then both again in the time-slot mode of docs/METHODS.md
 * §7.5 (one histogram per slot of SLOT_REFS references, the slots' reference-
 * weighted mean), from the same samples; then both per phase (docs/METHODS.md §9,
 * `mrc --phases`: windows of PHASE_WINDOW classified by ScarPhase, one
 * histogram per phase, the phases' reference-weighted mixture; StatStack
 * on the phase timeline, without mrc's exact cold misses).
 * Usage: mrc_eval_truth TRACE RATE SEEDS SLOT_REFS PHASE_WINDOW SIZE_LINES...
 *   SEEDS comma-separated (the references are computed once); PHASE_WINDOW
 *   0 = mrc --phases' default; a suffix i or r picks the unit (instructions,
 *   references), else mrc's auto
 * Output: one line per seed and size:
 *   seed lines lru random statcache statstack statcache_slots statstack_slots
 *   statcache_phases statstack_phases */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* One seed: the models from samples, pooled, per slot and per phase. */
static int model_curves(const char *trace, double rate, uint64_t seed, uint64_t slot_refs,
                        const struct llc_mrc_phase_config *phase_cfg, const double *sizes,
                        size_t n_sizes, struct llc_statmodel_point *out[6], char *err,
                        size_t errlen)
{
    struct llc_statmodel_hist *h = NULL;
    struct llc_statmodel_model *m = NULL;
    struct llc_statmodel_groups *slots = NULL;
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = rate;
    cfg.seed = seed;
    struct llc_mrc_trace_stats st;
    struct llc_statmodel_options o;
    llc_statmodel_options_default(&o);
    size_t skipped = 0;
    int rc = llc_statmodel_hist_create(&h, err, errlen);
    if (rc == 0)
        rc = llc_mrc_sample_trace(trace, &cfg, h, &st, err, errlen);
    if (rc == 0)
        rc = llc_statmodel_prepare(h, &m, err, errlen);
    /* Same seed, same stream: the same samples, grouped by slot. */
    cfg.slot_refs = slot_refs;
    if (rc == 0)
        rc = llc_statmodel_groups_create(&slots, err, errlen);
    if (rc == 0)
        rc = llc_mrc_sample_trace_groups(trace, &cfg, slots, &st, err, errlen);
    struct llc_mrc_phase_config pc = *phase_cfg;
    pc.sampler.rate = rate;
    pc.sampler.seed = pc.ip_seed = seed;
    struct llc_mrc_phase_run run = {0};
    if (rc == 0)
        rc = llc_mrc_sample_trace_phases(trace, &pc, &run, err, errlen);
    /* StatStack per phase on the phase timeline, as mrc --phases. */
    struct llc_statmodel_timeline *tl = NULL;
    if (rc == 0)
        rc = llc_mrc_phase_timeline(&run, &tl, err, errlen);
    if (rc == 0 && !tl)
        rc = llc_errf(err, errlen, -ENODATA, "no per-window histograms for the phase timeline");
    for (int k = 0; k < 6 && rc == 0; k++) {
        o.method = k % 2 ? LLC_STATMODEL_STATSTACK : LLC_STATMODEL_STATCACHE;
        rc = k < 2 ? llc_statmodel_curve(m, &o, sizes, n_sizes, out[k], err, errlen)
             : k < 5
                 ? llc_statmodel_groups_curve(k < 4 ? slots : run.phases, LLC_STATMODEL_WEIGHT_REFS,
                                              &o, sizes, n_sizes, out[k], &skipped, err, errlen)
                 : llc_statmodel_timeline_curve(tl, &o, sizes, n_sizes, out[k], NULL, err, errlen);
    }
    llc_statmodel_timeline_destroy(tl);
    if (rc == 0) {
        printf("# seed %llu: %.0f samples; %zu slots of %llu references; %zu windows of %llu "
               "%s, %zu phases, %llu unclassified:",
               (unsigned long long)seed, llc_statmodel_hist_total(h),
               llc_statmodel_groups_count(slots), (unsigned long long)slot_refs, run.n_windows,
               (unsigned long long)pc.window,
               run.unit == LLC_MRC_WINDOW_INSTRUCTIONS ? "instructions" : "references",
               run.summary.phases, (unsigned long long)run.summary.unclassified);
        for (size_t i = 0; i < llc_statmodel_groups_count(run.phases); i++) {
            const int id = llc_statmodel_groups_id_at(run.phases, i);
            printf(" %d:%zuw/%.0fs", id, llc_mrc_phase_windows_of(&run, id),
                   llc_statmodel_hist_total(llc_statmodel_groups_hist(run.phases, id)));
        }
        putchar('\n');
    }
    llc_mrc_phase_run_free(&run);
    llc_statmodel_groups_destroy(slots);
    llc_statmodel_release(m);
    llc_statmodel_hist_destroy(h);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: mrc_eval_truth TRACE RATE SEEDS SLOT_REFS PHASE_WINDOW "
                        "SIZE_LINES...\n");
        return 2;
    }
    const double rate = atof(argv[2]);
    const uint64_t slot_refs = strtoull(argv[4], NULL, 10);
    struct llc_mrc_phase_config phase_cfg;
    llc_mrc_phase_config_default(&phase_cfg);
    char *unit = NULL;
    const uint64_t phase_window = strtoull(argv[5], &unit, 10);
    if (phase_window)
        phase_cfg.window = phase_window;
    if (*unit == 'i')
        phase_cfg.unit = LLC_MRC_WINDOW_INSTRUCTIONS;
    else if (*unit == 'r')
        phase_cfg.unit = LLC_MRC_WINDOW_REFERENCES;
    const size_t n_sizes = (size_t)(argc - 6);
    uint64_t *lines = NULL;
    size_t n = 0;
    if (slot_refs == 0) {
        fprintf(stderr, "mrc_eval_truth: SLOT_REFS must be positive\n");
        return 2;
    }
    if (read_lines(argv[1], &lines, &n) < 0)
        return 1;
    char err[LLC_ERRLEN];
    uint64_t *stack = malloc(n * sizeof *stack);
    double *sizes = malloc(n_sizes * sizeof *sizes);
    double *lru = malloc(n_sizes * sizeof *lru);
    double *rnd_mr = malloc(n_sizes * sizeof *rnd_mr);
    struct llc_statmodel_point *pts[6];
    bool pts_ok = true;
    for (int k = 0; k < 6; k++)
        pts_ok &= (pts[k] = malloc(n_sizes * sizeof *pts[k])) != NULL;
    if (!stack || !sizes || !lru || !rnd_mr || !pts_ok) {
        fprintf(stderr, "mrc_eval_truth: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n_sizes; i++)
        sizes[i] = atof(argv[6 + i]);
    if (llc_statmodel_exact_distances(lines, n, NULL, stack, err, sizeof err) < 0 ||
        llc_statmodel_exact_lru_curve(stack, n, sizes, n_sizes, lru, err, sizeof err) < 0) {
        fprintf(stderr, "mrc_eval_truth: %s\n", err);
        return 1;
    }
    for (size_t i = 0; i < n_sizes; i++)
        rnd_mr[i] = random_cache(lines, n, (size_t)sizes[i]);
    printf("# %zu references\n", n);
    /* SEEDS: comma-separated; the references are computed once. */
    char *save = NULL;
    for (char *tok = strtok_r(argv[3], ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (model_curves(argv[1], rate, strtoull(tok, NULL, 10), slot_refs, &phase_cfg, sizes,
                         n_sizes, pts, err, sizeof err) < 0) {
            fprintf(stderr, "mrc_eval_truth: %s\n", err);
            return 1;
        }
        for (size_t i = 0; i < n_sizes; i++)
            printf("%s %.0f %.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f\n", tok, sizes[i], lru[i],
                   rnd_mr[i], pts[0][i].r_total, pts[1][i].r_total, pts[2][i].r_total,
                   pts[3][i].r_total, pts[4][i].r_total, pts[5][i].r_total);
    }
    free(lines);
    free(stack);
    free(sizes);
    free(lru);
    free(rnd_mr);
    for (int k = 0; k < 6; k++)
        free(pts[k]);
    return 0;
}
