/* The module's two generators, fully specified so that selections and
 * baseline picks can be reproduced outside this code:
 *  - splitmix64(x): the first output of SplitMix64 seeded with x, i.e. the
 *    Stafford variant-13 mixer of x + 0x9E3779B97F4A7C15. Used as the unit
 *    hash h(k) = splitmix64(k ^ seed) of the selection tie-break (§3.2).
 *  - xoshiro256** (Blackman and Vigna), its state filled by successive
 *    SplitMix64 outputs from the seed (the authors' recommended seeding).
 *    Drives Random-n (§5). */
#ifndef LLC_FIT_RNG_H
#define LLC_FIT_RNG_H

#include <stdint.h>

#define LLC_FIT_SPLITMIX_GAMMA UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t llc_fitp_splitmix_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline uint64_t llc_fitp_splitmix64(uint64_t x)
{
    return llc_fitp_splitmix_mix(x + LLC_FIT_SPLITMIX_GAMMA);
}

struct llc_fitp_xoshiro {
    uint64_t s[4];
};

static inline void llc_fitp_xoshiro_seed(struct llc_fitp_xoshiro *g, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 4; i++) {
        state += LLC_FIT_SPLITMIX_GAMMA;
        g->s[i] = llc_fitp_splitmix_mix(state);
    }
}

static inline uint64_t llc_fitp_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t llc_fitp_xoshiro_next(struct llc_fitp_xoshiro *g)
{
    uint64_t *s = g->s;
    const uint64_t result = llc_fitp_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = llc_fitp_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, bound), bound > 0, without modulo bias: rejects the draws
 * of the incomplete top block so every residue is equally likely. */
static inline uint64_t llc_fitp_xoshiro_below(struct llc_fitp_xoshiro *g, uint64_t bound)
{
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t r;
    do
        r = llc_fitp_xoshiro_next(g);
    while (r >= limit);
    return r % bound;
}

#endif
