/* Seeded synthetic reference streams and small cache simulators for the
 * statmodel tests and benchmark. */
#ifndef STATMODEL_SYNTH_H
#define STATMODEL_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "llcprobe/statmodel.h"

/* Each reference picks a uniformly random line of the hot set with
 * probability p_hot, of the medium set with p_med, of the large set with
 * p_large, else the next never-seen line (streaming). */
struct synth_mix {
    double p_hot, p_med, p_large;
    uint64_t hot_lines, med_lines, large_lines;
};

struct synth_rng {
    uint64_t state;
};

uint64_t synth_next(struct synth_rng *r);
double synth_uniform(struct synth_rng *r); /* [0, 1) */

/* Fills lines[0..n); *stream_next numbers the streaming lines so that
 * several calls (phases) never share them. */
void synth_stream(const struct synth_mix *mix, struct synth_rng *r, uint64_t *stream_next,
                  uint64_t *lines, size_t n);

/* Miss ratio (cold included) of a fully associative random-replacement
 * cache of `cache_lines` lines over the stream. */
double synth_random_cache(const uint64_t *lines, size_t n, size_t cache_lines, uint64_t seed);

/* Per-window miss ratios of the same simulation: miss[k] for references
 * [k * window, (k + 1) * window). Returns the whole-stream ratio. */
double synth_random_cache_windows(const uint64_t *lines, size_t n, size_t cache_lines,
                                  uint64_t seed, size_t window, double *miss);

/* The prepared model of a histogram given as (bucket, count) pairs and
 * n_inf dangling samples; NULL if the library refuses it. */
struct llc_statmodel_model *synth_model_of_pairs(const struct llc_statmodel_bucket_count *pairs,
                                                 size_t n, double n_inf);

/* A power law h(d) ~ d^-1.3 on every bucket up to 2^22 (at the bucket's
 * low edge, times its width) and a share `cold` of dangling samples. */
struct llc_statmodel_model *synth_model_power(double cold);

/* In a cmocka test: fails unless |a - b| <= tol, naming a and both values. */
#define NEAR(a, b, tol)                                                                 \
    do {                                                                                \
        const double a_ = (a), b_ = (b);                                                \
        if (!(fabs(a_ - b_) <= (tol)))                                                  \
            fail_msg("%s = %.12g, expected %.12g (tol %g)", #a, a_, b_, (double)(tol)); \
    } while (0)

#endif
