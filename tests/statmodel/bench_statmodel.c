/* Benchmark: a ~100 000-sample histogram from a seeded stream, then the
 * 256-point StatCache and StatStack curves, best of several runs. The last
 * line is the headline: both curves together. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "synth.h"

enum { POINTS = 256, RUNS = 9, CHUNK = 4096 };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail(const char *what, const char *err)
{
    fprintf(stderr, "bench_statmodel: %s: %s\n", what, err);
    return 1;
}

int main(void)
{
    char err[LLC_ERRLEN];
    int rc = 1;
    struct llc_statmodel_groups *g = NULL;
    struct llc_statmodel_sampler *smp = NULL;
    struct llc_statmodel_model *m = NULL;
    uint64_t *chunk = malloc(CHUNK * sizeof *chunk);
    struct llc_statmodel_sampler_config cfg;
    llc_statmodel_sampler_config_default(&cfg);
    cfg.rate = 0.01;
    cfg.seed = 2024;
    if (llc_statmodel_groups_create(&g, err, sizeof err) ||
        llc_statmodel_sampler_create(&cfg, g, &smp, err, sizeof err))
        return fail("setup", err);
    /* Hot, medium and large sets plus streaming: reuse distances over
     * seven orders of magnitude. */
    const struct synth_mix mix = {0.45, 0.30, 0.20, 512, 16384, 1 << 20};
    struct synth_rng r = {7};
    uint64_t next = 0;
    struct llc_statmodel_sampler_stats st = {0};
    double t_sample = 0;
    while (st.taken < 100000) {
        synth_stream(&mix, &r, &next, chunk, CHUNK);
        const double t0 = now_ms();
        if (llc_statmodel_sampler_access_batch(smp, chunk, CHUNK, err, sizeof err))
            return fail("sampling", err);
        t_sample += now_ms() - t0;
        llc_statmodel_sampler_stats(smp, &st);
    }
    if (llc_statmodel_sampler_finish(smp, err, sizeof err))
        return fail("sampling", err);
    llc_statmodel_sampler_stats(smp, &st);
    const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, 0);
    size_t nonempty = 0;
    for (size_t b = llc_statmodel_hist_next(h, 0); b < LLC_STATMODEL_BUCKETS;
         b = llc_statmodel_hist_next(h, b + 1))
        nonempty++;
    if (llc_statmodel_prepare(h, &m, err, sizeof err))
        return fail("prepare", err);

    double lines[POINTS];
    for (int k = 0; k < POINTS; k++)
        lines[k] = 16 * pow(2, 18.0 * k / (POINTS - 1)); /* 1 KiB .. 256 MiB */
    struct llc_statmodel_point pts[POINTS];
    double best[2] = {INFINITY, INFINITY};
    for (int method = 0; method < 2; method++) {
        struct llc_statmodel_options o;
        llc_statmodel_options_default(&o);
        o.method = method;
        for (int run = 0; run < RUNS; run++) {
            const double t = now_ms();
            if (llc_statmodel_curve(m, &o, lines, POINTS, pts, err, sizeof err))
                return fail("curve", err);
            const double dt = now_ms() - t;
            best[method] = dt < best[method] ? dt : best[method];
        }
    }
    /* The docs/METHODS.md §7.3 reference (Brent from scratch per size), once, for scale. */
    const double tb = now_ms();
    for (int k = 0; k < POINTS; k++)
        if (llc_statmodel_statcache(m, lines[k], LLC_STATMODEL_COLD_COUNT, &pts[k], err,
                                    sizeof err))
            return fail("reference", err);
    const double t_brent = now_ms() - tb;

    printf("references: %llu\n", (unsigned long long)st.refs);
    printf("samples: %llu (%llu dangling), non-empty buckets: %zu\n", (unsigned long long)st.taken,
           (unsigned long long)st.dangling, nonempty);
    printf("sampler_ns_per_ref: %.2f ns (rate %g)\n", t_sample * 1e6 / (double)st.refs, cfg.rate);
    printf("statcache_brent_reference_ms: %.3f ms\n", t_brent);
    printf("statcache_curve_ms: %.3f ms\n", best[0]);
    printf("statstack_curve_ms: %.3f ms\n", best[1]);
    printf("mrc_solve_ms: %.3f ms\n", best[0] + best[1]);
    rc = 0;
    llc_statmodel_release(m);
    llc_statmodel_sampler_destroy(smp);
    llc_statmodel_groups_destroy(g);
    free(chunk);
    return rc;
}
