/* The project's seeded pseudo-random generators, in one place so that every
 * module draws from the same fully specified streams and a result can be
 * reproduced outside this code:
 *  - SplitMix64 (Steele, Lea and Flood; Stafford's variant-13 mixer): one
 *    add and two multiplies per output. Used where speed matters (the
 *    simulator's access path) and as a hash, llc_splitmix64(x) being the
 *    first output of SplitMix64 seeded with x.
 *  - xoshiro256** (Blackman and Vigna), its state filled by successive
 *    SplitMix64 outputs (the authors' recommended seeding): longer period,
 *    used for workload streams and statistical sampling.
 * Header-only and free of global state, so pure modules may use it. */
#ifndef LLCPROBE_RNG_H
#define LLCPROBE_RNG_H

#include <stdint.h>

#define LLC_SPLITMIX_GAMMA UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t llc_splitmix_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Next output of the SplitMix64 generator whose state is *state. */
static inline uint64_t llc_splitmix_next(uint64_t *state)
{
    *state += LLC_SPLITMIX_GAMMA;
    return llc_splitmix_mix(*state);
}

/* The hash h(x): the first output of SplitMix64 seeded with x. */
static inline uint64_t llc_splitmix64(uint64_t x)
{
    return llc_splitmix_mix(x + LLC_SPLITMIX_GAMMA);
}

/* The top 53 bits of a draw as a double uniform in [0, 1). */
static inline double llc_rng_unit(uint64_t draw)
{
    return (double)(draw >> 11) * 0x1.0p-53;
}

/* The same on (0, 1]: never 0, so log() of it is finite (geometric and
 * exponential gaps). */
static inline double llc_rng_unit_open0(uint64_t draw)
{
    return (double)((draw >> 11) + 1) * 0x1.0p-53;
}

struct llc_xoshiro {
    uint64_t s[4];
};

static inline void llc_xoshiro_seed(struct llc_xoshiro *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = llc_splitmix_next(&seed);
}

static inline uint64_t llc_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t llc_xoshiro_next(struct llc_xoshiro *g)
{
    uint64_t *s = g->s;
    const uint64_t result = llc_rng_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = llc_rng_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, bound), bound > 0, exactly: rejects the draws of the
 * incomplete top block so every residue is equally likely (for selections
 * whose fairness is part of a documented protocol). */
static inline uint64_t llc_xoshiro_below(struct llc_xoshiro *g, uint64_t bound)
{
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t r;
    do
        r = llc_xoshiro_next(g);
    while (r >= limit);
    return r % bound;
}

/* Uniform in [0, n) by multiply-shift: no division and no loop, with a bias
 * of at most n / 2^64 (for hot loops such as workload generators). */
static inline uint64_t llc_xoshiro_below_fast(struct llc_xoshiro *g, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)llc_xoshiro_next(g) * n) >> 64);
}

#endif
