/* Ground truth read-out (per agent, per set), counter reset, presence
 * queries and flushes. */
#include <errno.h>
#include <string.h>

#include "model/sim/hierarchy.h"

static void add_agent(const struct llc_sim *sim, unsigned a, struct llc_sim_agent_stats *out)
{
    const struct sim_agent_ctr *c = &sim->agent[a];
    out->accesses += c->accesses;
    out->l2_hits += c->l2_hits;
    out->l2_misses += c->l2_misses;
    out->llc_hits += c->llc_hits;
    out->llc_misses += c->llc_misses;
    out->llc_fills += c->llc_fills;
    out->llc_evicted += c->llc_evicted;
    out->back_invals += c->back_invals;
    out->llc_occupancy += c->llc_occupancy;
    out->l2_occupancy += sim->has_l2 ? sim->l2[a].valid : 0;
}

int llc_sim_agent_stats(const struct llc_sim *sim, int agent, struct llc_sim_agent_stats *out)
{
    if (agent != LLC_SIM_ALL_AGENTS && (agent < 0 || (unsigned)agent >= sim->cfg.agents))
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    for (unsigned a = 0; a < sim->cfg.agents; a++)
        if (agent == LLC_SIM_ALL_AGENTS || (unsigned)agent == a)
            add_agent(sim, a, out);
    return 0;
}

int llc_sim_set_stats(const struct llc_sim *sim, int agent, struct llc_sim_set_stats *out, size_t n)
{
    if (n != sim->sets)
        return -EINVAL;
    if (agent != LLC_SIM_ALL_AGENTS && (agent < 0 || (unsigned)agent >= sim->cfg.agents))
        return -EINVAL;
    memset(out, 0, n * sizeof(*out));
    for (unsigned a = 0; a < sim->cfg.agents; a++) {
        if (agent != LLC_SIM_ALL_AGENTS && (unsigned)agent != a)
            continue;
        const struct sim_ctr_hi *hi = &sim->ctr_hi[(size_t)a * sim->sets];
        for (uint32_t s = 0; s < sim->sets; s++) {
            const struct sim_ctr *lo = &sim_ctrs(&sim->llc, s)[a];
            out[s].hits += ((uint64_t)hi[s].hits << 16) | lo->hits;
            out[s].misses += ((uint64_t)hi[s].misses << 16) | lo->misses;
            out[s].occupancy += sim_occ(&sim->llc, s)[a];
        }
    }
    return 0;
}

void llc_sim_reset_counters(struct llc_sim *sim)
{
    const unsigned agents = sim->cfg.agents;
    for (uint32_t s = 0; s < sim->sets; s++)
        memset(sim_ctrs(&sim->llc, s), 0, agents * sizeof(struct sim_ctr));
    memset(sim->ctr_hi, 0, (size_t)agents * sim->sets * sizeof(*sim->ctr_hi));
    for (unsigned a = 0; a < agents; a++) {
        const uint64_t occupancy = sim->agent[a].llc_occupancy;
        memset(&sim->agent[a], 0, sizeof(sim->agent[a]));
        sim->agent[a].llc_occupancy = occupancy;
    }
}

uint32_t llc_sim_psel(const struct llc_sim *sim)
{
    return sim->llc.policy == LLC_SIM_DRRIP ? sim->llc.psel : 0;
}

/* LLC way of a physical line, or -1. */
static int llc_way_of(const struct llc_sim *sim, uint64_t paddr, uint32_t *set)
{
    *set = sim_geo_set(&sim->geo, paddr);
    int free_way;
    return sim_cache_find(&sim->llc, *set,
                          (uint32_t)(paddr >> (sim->line_bits + sim->geo.index_bits)), &free_way);
}

unsigned llc_sim_where(const struct llc_sim *sim, unsigned agent, uint64_t paddr, unsigned *owner)
{
    if (paddr & sim->paddr_reject)
        return 0;
    unsigned where = 0;
    const uint64_t line = paddr >> sim->line_bits;
    if (sim->has_l2 && agent < sim->cfg.agents) {
        int free_way;
        const uint32_t set2 = (uint32_t)(line & sim->l2_index_mask);
        if (sim_cache_find(&sim->l2[agent], set2, (uint32_t)(line >> sim->l2_index_bits),
                           &free_way) >= 0)
            where |= 1u;
    }
    uint32_t set;
    const int w = llc_way_of(sim, paddr, &set);
    if (w >= 0) {
        where |= 2u;
        if (owner)
            *owner = sim_owner_of(&sim->llc, set, (uint32_t)w) & SIM_OWNER_AGENT;
    }
    return where;
}

void llc_sim_flush_line(struct llc_sim *sim, uint64_t paddr)
{
    if (paddr & sim->paddr_reject)
        return;
    uint32_t set;
    const int w = llc_way_of(sim, paddr, &set);
    if (w >= 0) {
        const unsigned owner = sim_owner_of(&sim->llc, set, (uint32_t)w) & SIM_OWNER_AGENT;
        sim_occ(&sim->llc, set)[owner]--;
        sim->agent[owner].llc_occupancy--;
        sim_cache_invalidate(&sim->llc, set, (uint32_t)w);
    }
    sim_l2_purge_line(sim, paddr >> sim->line_bits);
}

void llc_sim_flush_all(struct llc_sim *sim)
{
    sim_cache_clear(&sim->llc);
    if (sim->has_l2)
        for (unsigned a = 0; a < sim->cfg.agents; a++)
            sim_cache_clear(&sim->l2[a]);
    for (uint32_t s = 0; s < sim->sets; s++)
        memset(sim_occ(&sim->llc, s), 0, sim->cfg.agents);
    for (unsigned a = 0; a < sim->cfg.agents; a++)
        sim->agent[a].llc_occupancy = 0;
}
