/* SplitMix64 (include/llcprobe/rng.h) serves the documented hash masks (docs/METHODS.md §10.4)
 * and the schedules' seeded exponential draws: fully specified, so results
 * can be reproduced outside this code. */
#ifndef LLC_PHASE_RNG_H
#define LLC_PHASE_RNG_H

#include <math.h>
#include <stdint.h>

#include "llcprobe/rng.h"

/* Exponential with the given mean (inverse CDF; 1-u is in (0,1]). */
static inline double llc_phase_exponential(uint64_t *state, double mean)
{
    return -mean * log1p(-llc_rng_unit(llc_splitmix_next(state)));
}

#endif
