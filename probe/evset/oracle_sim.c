/* Eviction-test oracle backed by the simulator: timings come from its
 * latency model, and an optional second agent adds random background
 * traffic between the probe's accesses, as co-runners do on a shared LLC. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evset/evset_internal.h"
#include "llcprobe/common.h"
#include "llcprobe/sim.h"

struct sim_oracle {
    struct llc_sim *sim;
    struct llc_evset_sim_config cfg;
    struct evset_rng rng;
    unsigned line_bits;
    uint64_t noise_lines;
};

void llc_evset_sim_config_default(struct llc_evset_sim_config *c)
{
    memset(c, 0, sizeof(*c));
    c->noise_agent = 1;
    c->seed = 1;
}

static int sim_access(struct sim_oracle *so, uint64_t addr, struct llc_sim_result *res)
{
    return so->cfg.virtual_addrs ? llc_sim_access(so->sim, so->cfg.agent, addr, res)
                                 : llc_sim_access_phys(so->sim, so->cfg.agent, addr, res);
}

static int noise(struct sim_oracle *so)
{
    if (so->cfg.noise_rate <= 0)
        return 0;
    /* integer part always, fractional part with that probability: mean = rate */
    unsigned k = (unsigned)so->cfg.noise_rate;
    if (evset_rng_unit(&so->rng) < so->cfg.noise_rate - k)
        k++;
    for (unsigned i = 0; i < k; i++) {
        const uint64_t line = evset_rng_next(&so->rng) % so->noise_lines;
        const int rc = llc_sim_access_phys(so->sim, so->cfg.noise_agent,
                                           so->cfg.noise_base + (line << so->line_bits), NULL);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int sim_timed_walk(void *ctx, const uint64_t *addrs, size_t n, uint64_t victim,
                          uint32_t *ticks, char *err, size_t errlen)
{
    struct sim_oracle *so = ctx;
    for (size_t i = 0; i < n; i++) {
        int rc = sim_access(so, addrs[i], NULL);
        if (rc >= 0)
            rc = noise(so);
        if (rc < 0)
            return llc_errf(err, errlen, rc, "simulated access to 0x%llx failed",
                            (unsigned long long)addrs[i]);
    }
    struct llc_sim_result res;
    const int rc = sim_access(so, victim, &res);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "simulated access to victim 0x%llx failed",
                        (unsigned long long)victim);
    *ticks = res.latency;
    return 0;
}

static void sim_flush(void *ctx, uint64_t addr)
{
    struct sim_oracle *so = ctx;
    uint64_t paddr = addr;
    if (so->cfg.virtual_addrs && llc_sim_translate(so->sim, so->cfg.agent, addr, &paddr) < 0)
        return;
    llc_sim_flush_line(so->sim, paddr);
}

static void sim_destroy(void *ctx)
{
    free(ctx);
}

static const struct llc_evset_oracle_ops sim_ops = {
    .timed_walk = sim_timed_walk,
    .flush = sim_flush,
    .destroy = sim_destroy,
};

/* A random stream over a region a few times the L2 but well inside the LLC
 * gives both memory loads (first touches) and LLC hits; the simulator says
 * which level served each, as a histogram of known hits and misses would on
 * hardware. The lines are flushed afterwards. */
static int sim_calibrate(struct sim_oracle *so, struct llc_evset_calibration *out, char *err,
                         size_t errlen)
{
    const struct llc_sim_config *c = llc_sim_config_of(so->sim);
    const uint64_t llc_lines = llc_sim_geometry_bytes(&c->llc) / c->llc.line_size;
    uint64_t region = c->l2_sets ? 4ULL * c->l2_sets * c->l2_ways : 1024;
    if (region > llc_lines / 2)
        region = llc_lines / 2 ? llc_lines / 2 : 1;
    const size_t steps = (size_t)(4 * region) < 4096 ? 4096 : (size_t)(4 * region);
    const uint64_t limit = c->phys_mem_bytes >> so->line_bits;
    uint64_t *lines = malloc(region * sizeof(*lines));
    uint32_t *hit = malloc(steps * sizeof(*hit));
    uint32_t *miss = malloc(steps * sizeof(*miss));
    size_t n_hit = 0, n_miss = 0;
    int rc = 0;
    if (!lines || !hit || !miss) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for calibration");
        goto out;
    }
    struct evset_rng rng = evset_rng_seed(so->cfg.seed, 7);
    for (uint64_t i = 0; i < region; i++)
        lines[i] = (evset_rng_next(&rng) % limit) << so->line_bits;
    for (size_t s = 0; s < steps; s++) {
        struct llc_sim_result res;
        rc =
            llc_sim_access_phys(so->sim, so->cfg.agent, lines[evset_rng_next(&rng) % region], &res);
        if (rc < 0) {
            rc = llc_errf(err, errlen, rc, "calibration access failed");
            goto out;
        }
        if (res.level == LLC_SIM_HIT_LLC)
            hit[n_hit++] = res.latency;
        else if (res.level == LLC_SIM_HIT_DRAM)
            miss[n_miss++] = res.latency;
    }
    for (uint64_t i = 0; i < region; i++)
        llc_sim_flush_line(so->sim, lines[i]);
    rc = llc_evset_calibrate(hit, n_hit, miss, n_miss, out, err, errlen);
out:
    free(lines);
    free(hit);
    free(miss);
    return rc;
}

int llc_evset_oracle_sim(struct llc_sim *sim, const struct llc_evset_sim_config *cfg,
                         struct llc_evset_oracle **out, struct llc_evset_calibration *calib,
                         char *err, size_t errlen)
{
    const struct llc_sim_config *c = llc_sim_config_of(sim);
    if (!c->latency.enabled)
        return llc_errf(err, errlen, -EINVAL,
                        "the simulator's latency model is off: "
                        "eviction tests need timings");
    if (cfg->agent >= c->agents)
        return llc_errf(err, errlen, -EINVAL, "agent %u out of range (%u agents)", cfg->agent,
                        c->agents);
    if (cfg->noise_rate > 0) {
        if (cfg->noise_agent >= c->agents || cfg->noise_agent == cfg->agent)
            return llc_errf(err, errlen, -EINVAL, "noise agent %u must be another of the %u agents",
                            cfg->noise_agent, c->agents);
        if (cfg->noise_bytes < c->llc.line_size)
            return llc_errf(err, errlen, -EINVAL, "noise region of %llu bytes is too small",
                            (unsigned long long)cfg->noise_bytes);
    }
    struct sim_oracle *so = calloc(1, sizeof(*so));
    struct llc_evset_oracle *o = calloc(1, sizeof(*o));
    int rc = 0;
    if (!so || !o) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    so->sim = sim;
    so->cfg = *cfg;
    so->rng = evset_rng_seed(cfg->seed, 3);
    so->line_bits = evset_log2(c->llc.line_size);
    so->noise_lines = cfg->noise_bytes >> so->line_bits;
    o->ops = &sim_ops;
    o->ctx = so;
    o->threshold = cfg->threshold;
    if (!o->threshold) {
        struct llc_evset_calibration cal;
        rc = sim_calibrate(so, &cal, err, errlen);
        if (rc < 0)
            goto out;
        o->threshold = cal.threshold;
        if (calib)
            *calib = cal;
    }
    *out = o;
    o = NULL;
    so = NULL;
out:
    free(so);
    free(o);
    return rc;
}
