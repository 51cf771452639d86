/* Seeded pseudo-random streams of the simulator (splitmix64: one add and a
 * few multiplies, good enough statistically and cheap in the access path). */
#ifndef LLC_SIM_RNG_H
#define LLC_SIM_RNG_H

#include <stdint.h>

struct sim_rng {
    uint64_t state;
};

static inline uint64_t sim_rng_next(struct sim_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Independent stream number `stream` of a seed, so that enabling one
 * consumer of randomness never shifts the numbers another one sees. */
static inline struct sim_rng sim_rng_stream(uint64_t seed, uint64_t stream)
{
    struct sim_rng r = { seed ^ (0xd1342543de82ef95ULL * (stream + 1)) };
    r.state = sim_rng_next(&r);
    return r;
}

/* Uniform in [0, n) without division (multiply-shift; bias < n / 2^32). */
static inline uint32_t sim_rng_below(struct sim_rng *r, uint32_t n)
{
    return (uint32_t)(((sim_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in [0, 1). */
static inline double sim_rng_unit(struct sim_rng *r)
{
    return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
