/* Seeded access latencies: per-level mean, bounded near-Gaussian noise and
 * rare outliers, enough for timing-based algorithms (thresholds, eviction
 * tests) to face realistic overlap-free but noisy data. */
#include <math.h>

#include "model/sim/latency.h"

#define SIM_LATENCY_STREAM 2

void sim_latency_init(struct sim_latency *l, const struct llc_sim_latency *cfg, uint64_t seed)
{
    l->mean[LLC_SIM_HIT_L2] = cfg->l2_mean;
    l->mean[LLC_SIM_HIT_LLC] = cfg->llc_mean;
    l->mean[LLC_SIM_HIT_DRAM] = cfg->dram_mean;
    l->sd[LLC_SIM_HIT_L2] = cfg->l2_sd;
    l->sd[LLC_SIM_HIT_LLC] = cfg->llc_sd;
    l->sd[LLC_SIM_HIT_DRAM] = cfg->dram_sd;
    l->outlier_prob = cfg->outlier_prob;
    l->outlier_cycles = cfg->outlier_cycles;
    l->rng = sim_rng_stream(seed, SIM_LATENCY_STREAM);
}

uint32_t sim_latency_draw(struct sim_latency *l, unsigned level)
{
    /* Irwin-Hall(4) centred: variance 4/12, so scale by sqrt(3) for unit sd. */
    double u = -2.0;
    for (int i = 0; i < 4; i++)
        u += sim_rng_unit(&l->rng);
    double t = l->mean[level] + u * sqrt(3.0) * l->sd[level];
    if (l->outlier_prob > 0 && sim_rng_unit(&l->rng) < l->outlier_prob)
        t += l->outlier_cycles;
    return t < 1.0 ? 1u : (uint32_t)lround(t);
}
