/* SplitMix64: the documented hash masks (§4) and the schedules' seeded
 * exponential draws. Small, fast, and fully specified, so results can be
 * reproduced outside this code. */
#ifndef LLC_PHASE_RNG_H
#define LLC_PHASE_RNG_H

#include <math.h>
#include <stdint.h>

#define LLC_PHASE_SPLITMIX_GAMMA 0x9E3779B97F4A7C15ULL

static inline uint64_t llc_phase_splitmix_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Next output of the generator whose state is *state. */
static inline uint64_t llc_phase_splitmix_next(uint64_t *state)
{
    *state += LLC_PHASE_SPLITMIX_GAMMA;
    return llc_phase_splitmix_mix(*state);
}

/* Uniform in [0,1) with 53 random bits. */
static inline double llc_phase_uniform(uint64_t *state)
{
    return (double)(llc_phase_splitmix_next(state) >> 11) * 0x1.0p-53;
}

/* Exponential with the given mean (inverse CDF; 1-u is in (0,1]). */
static inline double llc_phase_exponential(uint64_t *state, double mean)
{
    return -mean * log1p(-llc_phase_uniform(state));
}

#endif
