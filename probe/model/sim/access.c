/* The access API: single accesses, batches (sim/batch.h, specialised in
 * sim/variants.c), translation, and the L2 removals of inclusion and
 * flushes. The path itself is sim/path.h. */
#include <errno.h>
#include <string.h>

#include "model/sim/path.h"

/* Removes line from agent's L2 if there; true if it was. */
static bool l2_remove(struct llc_sim *sim, unsigned agent, uint64_t line)
{
    struct sim_cache *l2 = &sim->l2[agent];
    const uint32_t set2 = (uint32_t)(line & sim->l2_index_mask);
    const uint64_t hit =
        sim_match32(sim_tags(l2, set2), l2->ways, (uint32_t)(line >> sim->l2_index_bits));
    if (!hit)
        return false;
    sim_cache_invalidate(l2, set2, (uint32_t)__builtin_ctzll(hit));
    return true;
}

void sim_l2_purge_line(struct llc_sim *sim, uint64_t line)
{
    if (!sim->has_l2)
        return;
    for (unsigned a = 0; a < sim->cfg.agents; a++)
        l2_remove(sim, a, line);
}

void sim_back_invalidate(struct llc_sim *sim, uint64_t line, uint8_t owner)
{
    if (!(owner & SIM_OWNER_SHARED)) {
        const unsigned a = owner & SIM_OWNER_AGENT;
        sim->agent[a].back_invals += l2_remove(sim, a, line);
        return;
    }
    for (unsigned a = 0; a < sim->cfg.agents; a++)
        sim->agent[a].back_invals += l2_remove(sim, a, line);
}

/* Every few million accesses: has a stop been asked for? A long simulation
 * then ends through its caller's cleanup instead of ignoring the signal. */
#define SIM_STOP_CHECK_EVERY ((uint64_t)1 << 22)

static int stop_check(struct llc_sim *sim, uint64_t n)
{
    if (n < sim->stop_countdown) {
        sim->stop_countdown -= n;
        return 0;
    }
    sim->stop_countdown = SIM_STOP_CHECK_EVERY;
    return sim->cfg.stop && *sim->cfg.stop ? -EINTR : 0;
}

int llc_sim_access_phys(struct llc_sim *sim, unsigned agent, uint64_t paddr,
                        struct llc_sim_result *res)
{
    if (agent >= sim->cfg.agents)
        return -EINVAL;
    if (stop_check(sim, 1) < 0)
        return -EINTR;
    if (paddr & sim->paddr_reject)
        return -ERANGE;
    const int rc = sim_make_room(sim, paddr);
    if (rc < 0)
        return rc;
    struct llc_sim_result local;
    struct llc_sim_result *r = res ? res : &local;
    const struct sim_path p =
        path_make(sim, agent, false, sim->mode, sim->llc.policy, SIM_LAYOUT_ASIS);
    const int level = path_access(sim, &p, paddr, sim_geo_set(&sim->geo, paddr), r);
    r->latency = sim->cfg.latency.enabled ? sim_latency_draw(&sim->latency, (unsigned)level) : 0;
    return level;
}

int llc_sim_translate(struct llc_sim *sim, unsigned agent, uint64_t vaddr, uint64_t *paddr)
{
    if (agent >= sim->cfg.agents)
        return -EINVAL;
    return sim_pages_translate(sim->pages, agent, vaddr, paddr);
}

int llc_sim_access(struct llc_sim *sim, unsigned agent, uint64_t vaddr, struct llc_sim_result *res)
{
    uint64_t paddr = 0;
    const int rc = llc_sim_translate(sim, agent, vaddr, &paddr);
    if (rc < 0)
        return rc;
    return llc_sim_access_phys(sim, agent, paddr, res);
}

int llc_sim_run(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n, bool phys,
                uint8_t *levels)
{
    if (agent >= sim->cfg.agents)
        return -EINVAL;
    if (stop_check(sim, n) < 0)
        return -EINTR;
    for (size_t i = 0; phys && sim->narrow_reject && i < n; i++) {
        const int rc = sim_make_room(sim, addrs[i]);
        if (rc < 0)
            return rc;
    }
    return sim->batch(sim, agent, addrs, n, phys, levels);
}
