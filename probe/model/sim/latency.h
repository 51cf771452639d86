/* Latency model of the simulator (see struct llc_sim_latency in sim.h). */
#ifndef LLC_SIM_LATENCY_H
#define LLC_SIM_LATENCY_H

#include <stdint.h>

#include "llcprobe/sim.h"
#include "model/sim/rng.h"

struct sim_latency {
    double mean[3], sd[3]; /* by enum llc_sim_level */
    double outlier_prob, outlier_cycles;
    struct sim_rng rng;
};

void sim_latency_init(struct sim_latency *l, const struct llc_sim_latency *cfg, uint64_t seed);
uint32_t sim_latency_draw(struct sim_latency *l, unsigned level);

#endif
