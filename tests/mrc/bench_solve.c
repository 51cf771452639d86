/* Benchmark: prepare a model from a 100000-sample histogram and solve a
 * 256-point curve (StatCache and StatStack). Prints milliseconds per solve,
 * the best of several repetitions. Usage: mrc_bench_solve [samples] [points] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) * 0x1p-53;
}

int main(int argc, char **argv)
{
    const long samples = argc > 1 ? atol(argv[1]) : 100000;
    const long points = argc > 2 ? atol(argv[2]) : 256;
    char err[LLC_ERRLEN];
    struct llc_statmodel_hist *h = NULL;
    if (llc_statmodel_hist_create(&h, err, sizeof err) < 0)
        return 1;
    /* A program-like mix: short reuses, a log-uniform spread up to 2^26
     * references, 2% never reused. Fills ~1500 buckets. */
    for (long i = 0; i < samples; i++) {
        const double u = uniform();
        if (u < 0.02)
            llc_statmodel_hist_add_dangling(h, 1, NULL, 0);
        else if (u < 0.4)
            llc_statmodel_hist_add(h, (uint64_t)(uniform() * 64), 1, NULL, 0);
        else
            llc_statmodel_hist_add(h, (uint64_t)exp2(uniform() * 26), 1, NULL, 0);
    }
    double *lines = malloc((size_t)points * sizeof *lines);
    struct llc_statmodel_point *out = malloc((size_t)points * sizeof *out);
    if (!lines || !out)
        return 1;
    /* 256 sizes log-spaced from 16 lines (1 KiB) to 2^22 lines (256 MiB). */
    for (long k = 0; k < points; k++)
        lines[k] = round(16 * exp2(18.0 * (double)k / (double)(points - 1)));
    const enum llc_statmodel_method methods[] = {LLC_STATMODEL_STATCACHE, LLC_STATMODEL_STATSTACK};
    const char *names[] = {"statcache", "statstack"};
    double worst = 0;
    for (int m = 0; m < 2; m++) {
        double best = 1e9;
        for (int rep = 0; rep < 20; rep++) {
            const double t0 = now();
            struct llc_statmodel_model *model = NULL;
            struct llc_statmodel_options o;
            llc_statmodel_options_default(&o);
            o.method = methods[m];
            if (llc_statmodel_prepare(h, &model, err, sizeof err) < 0 ||
                llc_statmodel_curve(model, &o, lines, (size_t)points, out, err, sizeof err) < 0) {
                fprintf(stderr, "mrc_bench_solve: %s\n", err);
                return 1;
            }
            llc_statmodel_release(model);
            const double dt = (now() - t0) * 1e3;
            best = dt < best ? dt : best;
        }
        printf("%s: %ld points from %ld samples: %.3f ms (prepare + solve, best of 20)\n", names[m],
               points, samples, best);
        worst = best > worst ? best : worst;
    }
    printf("slowest: %.3f ms\n", worst);
    free(lines);
    free(out);
    llc_statmodel_hist_destroy(h);
    return 0;
}
