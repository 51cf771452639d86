/* Seeded pseudo-random streams of the simulator (splitmix64: one add and a
 * few multiplies, good enough statistically and cheap in the access path). */
#ifndef LLC_SIM_RNG_H
#define LLC_SIM_RNG_H

#include <stdint.h>

#include "llcprobe/rng.h"

struct sim_rng {
    uint64_t state;
};

static inline uint64_t sim_rng_next(struct sim_rng *r)
{
    return llc_splitmix_next(&r->state);
}

/* Independent stream number `stream` of a seed, so that enabling one
 * consumer of randomness never shifts the numbers another one sees. */
static inline struct sim_rng sim_rng_stream(uint64_t seed, uint64_t stream)
{
    struct sim_rng r = {seed ^ (0xd1342543de82ef95ULL * (stream + 1))};
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
    return llc_rng_unit(sim_rng_next(r));
}

#endif
