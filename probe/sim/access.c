/* The access path: L2 lookup, LLC lookup, fills, evictions, inclusion
 * (back-invalidation or victim fills) and the ground-truth counters. Kept in
 * one file of static inline functions so the compiler can flatten it. */
#include <errno.h>
#include <string.h>

#include "sim/hierarchy.h"

#define SIM_RUN_CHUNK 256
#define SIM_PREFETCH_FAR 12
#define SIM_PREFETCH_NEAR 6
#define SIM_TRANSLATE_AHEAD 16

static inline struct sim_set_ctr *ctr_of(struct llc_sim *sim, unsigned agent, uint32_t set)
{
    return &sim->set_ctr[(size_t)agent * sim->sets + set];
}

/* Line number held by LLC way w of set. */
static inline uint64_t llc_line_at(const struct llc_sim *sim, uint32_t set, uint32_t w)
{
    const uint64_t tag = sim_tags(&sim->llc, set)[w];
    return (tag << sim->geo.index_bits) | (set & sim->geo.index_mask);
}

/* Empties LLC way w and debits its owner's occupancy. */
static inline void llc_drop(struct llc_sim *sim, uint32_t set, uint32_t w)
{
    const unsigned owner = sim_owner(&sim->llc, set)[w] & SIM_OWNER_AGENT;
    ctr_of(sim, owner, set)->occupancy--;
    sim->agent[owner].llc_occupancy--;
    sim_cache_invalidate(&sim->llc, set, w);
}

/* Removes line from agent's L2 if there; true if it was. */
static inline bool l2_remove(struct llc_sim *sim, unsigned agent, uint64_t line)
{
    struct sim_cache *l2 = &sim->l2[agent];
    const uint32_t set2 = (uint32_t)(line & sim->l2_index_mask);
    int free_way;
    const int w = sim_cache_find(l2, set2, (uint32_t)(line >> sim->l2_index_bits), &free_way);
    if (w < 0)
        return false;
    sim_cache_invalidate(l2, set2, (uint32_t)w);
    return true;
}

void sim_l2_purge_line(struct llc_sim *sim, uint64_t line)
{
    if (!sim->has_l2)
        return;
    for (unsigned a = 0; a < sim->cfg.agents; a++)
        l2_remove(sim, a, line);
}

static void back_invalidate(struct llc_sim *sim, uint64_t line, uint8_t owner)
{
    if (!(owner & SIM_OWNER_SHARED)) {
        const unsigned a = owner & SIM_OWNER_AGENT;
        sim->agent[a].back_invals += l2_remove(sim, a, line);
        return;
    }
    for (unsigned a = 0; a < sim->cfg.agents; a++)
        sim->agent[a].back_invals += l2_remove(sim, a, line);
}

/* Frees LLC way w of set for a fill; returns the evicted line's address. */
static inline uint64_t llc_evict(struct llc_sim *sim, uint32_t set, uint32_t w)
{
    if (sim_tags(&sim->llc, set)[w] == SIM_INVALID_TAG)
        return SIM_NO_LINE;
    const uint64_t line = llc_line_at(sim, set, w);
    const uint8_t owner = sim_owner(&sim->llc, set)[w];
    sim->agent[owner & SIM_OWNER_AGENT].llc_evicted++;
    llc_drop(sim, set, w);
    if (sim->cfg.inclusion == LLC_SIM_INCLUSIVE && sim->has_l2)
        back_invalidate(sim, line, owner);
    return line << sim->line_bits;
}

/* Fills tag into set for agent; returns the evicted line's address. */
static inline uint64_t llc_insert(struct llc_sim *sim, uint32_t set, uint32_t tag, int free_way,
                                  unsigned agent)
{
    const uint32_t w = sim_cache_victim(&sim->llc, set, free_way);
    const uint64_t evicted = llc_evict(sim, set, w);
    sim_cache_fill(&sim->llc, set, w, tag);
    sim_owner(&sim->llc, set)[w] = (uint8_t)agent;
    ctr_of(sim, agent, set)->occupancy++;
    sim->agent[agent].llc_occupancy++;
    sim->agent[agent].llc_fills++;
    return evicted;
}

/* Exclusive hierarchy: an L2 victim of agent goes into the LLC unless the
 * LLC already has it (another agent's copy came back first). */
static inline uint64_t llc_take_victim(struct llc_sim *sim, unsigned agent, uint64_t line)
{
    const uint64_t paddr = line << sim->line_bits;
    const uint32_t set = sim_geo_set(&sim->geo, paddr);
    const uint32_t tag = (uint32_t)(line >> sim->geo.index_bits);
    int free_way;
    if (sim_cache_find(&sim->llc, set, tag, &free_way) >= 0)
        return SIM_NO_LINE;
    return llc_insert(sim, set, tag, free_way, agent);
}

/* Fills line into agent's L2 (known absent); returns the L2 victim's line
 * number or SIM_NO_LINE. free_way may be stale-negative: the caller passes
 * -1 again after something may have emptied a way, so we rescan then. */
static inline uint64_t l2_insert(struct llc_sim *sim, unsigned agent, uint64_t line, int free_way,
                                 bool rescan)
{
    struct sim_cache *l2 = &sim->l2[agent];
    const uint32_t set2 = (uint32_t)(line & sim->l2_index_mask);
    const uint32_t tag2 = (uint32_t)(line >> sim->l2_index_bits);
    if (free_way < 0 && rescan)
        free_way = sim_lowest(sim_match32(sim_tags(l2, set2), l2->ways,
                                          SIM_INVALID_TAG));
    const uint32_t w = sim_cache_victim(l2, set2, free_way);
    const uint32_t old = sim_tags(l2, set2)[w];
    uint64_t victim = SIM_NO_LINE;
    if (old != SIM_INVALID_TAG) {
        victim = ((uint64_t)old << sim->l2_index_bits) | set2;
        sim_cache_invalidate(l2, set2, w);
    }
    sim_cache_fill(l2, set2, w, tag2);
    return victim;
}

static inline int access_phys(struct llc_sim *sim, unsigned agent, uint64_t paddr,
                              struct llc_sim_result *res)
{
    if (paddr & sim->paddr_reject)
        return -ERANGE;
    const uint64_t line = paddr >> sim->line_bits;
    struct sim_agent_ctr *ac = &sim->agent[agent];
    const uint32_t set = sim_geo_set(&sim->geo, paddr);
    res->paddr = paddr;
    res->set = set;
    res->llc_victim = SIM_NO_LINE;
    ac->accesses++;

    int free2 = -1;
    if (sim->has_l2) {
        struct sim_cache *l2 = &sim->l2[agent];
        const uint32_t set2 = (uint32_t)(line & sim->l2_index_mask);
        const int w2 = sim_cache_find(l2, set2, (uint32_t)(line >> sim->l2_index_bits), &free2);
        if (w2 >= 0) {
            sim_cache_touch(l2, set2, (uint32_t)w2);
            ac->l2_hits++;
            res->level = LLC_SIM_HIT_L2;
            return LLC_SIM_HIT_L2;
        }
        ac->l2_misses++;
    }

    const uint32_t tag = (uint32_t)(line >> sim->geo.index_bits);
    int free_way;
    const int w = sim_cache_find(&sim->llc, set, tag, &free_way);
    struct sim_set_ctr *ctr = ctr_of(sim, agent, set);
    const bool exclusive = sim->cfg.inclusion == LLC_SIM_EXCLUSIVE;
    if (w >= 0) {
        ac->llc_hits++;
        ctr->hits++;
        res->level = LLC_SIM_HIT_LLC;
        if (exclusive) {
            llc_drop(sim, set, (uint32_t)w);
            const uint64_t victim = l2_insert(sim, agent, line, free2, false);
            if (victim != SIM_NO_LINE)
                res->llc_victim = llc_take_victim(sim, agent, victim);
            return LLC_SIM_HIT_LLC;
        }
        sim_cache_touch(&sim->llc, set, (uint32_t)w);
        uint8_t *owner = &sim_owner(&sim->llc, set)[w];
        if ((*owner & SIM_OWNER_AGENT) != agent)
            *owner |= SIM_OWNER_SHARED;
        if (sim->has_l2)
            l2_insert(sim, agent, line, free2, false);
        return LLC_SIM_HIT_LLC;
    }

    ac->llc_misses++;
    ctr->misses++;
    sim_cache_missed(&sim->llc, set);
    res->level = LLC_SIM_HIT_DRAM;
    if (exclusive) {
        const uint64_t victim = l2_insert(sim, agent, line, free2, false);
        if (victim != SIM_NO_LINE)
            res->llc_victim = llc_take_victim(sim, agent, victim);
        return LLC_SIM_HIT_DRAM;
    }
    const uint64_t invals_before = ac->back_invals;
    res->llc_victim = llc_insert(sim, set, tag, free_way, agent);
    if (sim->has_l2)
        l2_insert(sim, agent, line, free2, ac->back_invals != invals_before);
    return LLC_SIM_HIT_DRAM;
}

static inline void finish(struct llc_sim *sim, struct llc_sim_result *res)
{
    res->latency = sim->cfg.latency.enabled ? sim_latency_draw(&sim->latency, res->level) : 0;
}

int llc_sim_access_phys(struct llc_sim *sim, unsigned agent, uint64_t paddr,
                        struct llc_sim_result *res)
{
    if (agent >= sim->cfg.agents)
        return -EINVAL;
    struct llc_sim_result local;
    struct llc_sim_result *r = res ? res : &local;
    const int level = access_phys(sim, agent, paddr, r);
    if (level >= 0)
        finish(sim, r);
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
    uint64_t paddr;
    const int rc = llc_sim_translate(sim, agent, vaddr, &paddr);
    if (rc < 0)
        return rc;
    return llc_sim_access_phys(sim, agent, paddr, res);
}

/* Prefetching. The simulated LLC is megabytes of metadata, so the access
 * path is bound by host cache misses, and the host has only about a dozen
 * outstanding misses per core: they must go to lines that will be used.
 * Far ahead: the agent's L2 set (small, usually host-cached). Near ahead:
 * look the line up in that L2 (read-only); only if it misses, prefetch its
 * LLC set block and counters, and in an exclusive hierarchy the LLC set the
 * L2's current victim will go to. Hints only: a wrong guess costs bandwidth,
 * never correctness. */
static inline void prefetch_llc_set(const struct llc_sim *sim, unsigned agent, uint32_t set)
{
    const uint8_t *block = (const uint8_t *)sim_tags(&sim->llc, set);
    __builtin_prefetch(block, 1);
    if (sim->llc.stride > 64)
        __builtin_prefetch(block + 64, 1);
    __builtin_prefetch(&sim->set_ctr[(size_t)agent * sim->sets + set], 1);
}

static inline void prefetch_far(const struct llc_sim *sim, unsigned agent, uint64_t paddr)
{
    if (sim->has_l2) {
        const struct sim_cache *l2 = &sim->l2[agent];
        __builtin_prefetch(sim_tags(l2, (uint32_t)((paddr >> sim->line_bits) & sim->l2_index_mask)));
    }
}

static inline void prefetch_near(const struct llc_sim *sim, unsigned agent, uint64_t paddr)
{
    const uint64_t line = paddr >> sim->line_bits;
    if (!sim->has_l2) {
        prefetch_llc_set(sim, agent, sim_geo_set(&sim->geo, paddr));
        return;
    }
    const struct sim_cache *l2 = &sim->l2[agent];
    const uint32_t set2 = (uint32_t)(line & sim->l2_index_mask);
    const uint32_t *t2 = sim_tags(l2, set2);
    if (sim_match32(t2, l2->ways, (uint32_t)(line >> sim->l2_index_bits)))
        return;
    prefetch_llc_set(sim, agent, sim_geo_set(&sim->geo, paddr));
    if (sim->cfg.inclusion != LLC_SIM_EXCLUSIVE)
        return;
    const int w = sim_cache_peek_victim(l2, set2);
    if (w >= 0) {
        const uint64_t victim = ((uint64_t)t2[w] << sim->l2_index_bits) | set2;
        prefetch_llc_set(sim, agent, sim_geo_set(&sim->geo, victim << sim->line_bits));
    }
}

int llc_sim_run(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n, bool phys,
                uint8_t *levels)
{
    if (agent >= sim->cfg.agents)
        return -EINVAL;
    uint64_t chunk[SIM_RUN_CHUNK];
    for (size_t done = 0; done < n;) {
        const size_t m = n - done < SIM_RUN_CHUNK ? n - done : SIM_RUN_CHUNK;
        const uint64_t *pa = addrs + done;
        size_t ready = m;
        int rc = 0;
        if (!phys) {
            /* Translating a chunk ahead allocates pages in the same order as
             * single accesses would, so results do not depend on chunking. */
            for (size_t i = 0; i < m; i++) {
                if (i + SIM_TRANSLATE_AHEAD < m)
                    sim_pages_prefetch(sim->pages, agent, addrs[done + i + SIM_TRANSLATE_AHEAD]);
                rc = sim_pages_translate(sim->pages, agent, addrs[done + i], &chunk[i]);
                if (rc < 0) {
                    ready = i;
                    break;
                }
            }
            pa = chunk;
        }
        for (size_t i = 0; i < ready && i < SIM_PREFETCH_FAR; i++)
            prefetch_far(sim, agent, pa[i]);
        for (size_t i = 0; i < ready && i < SIM_PREFETCH_NEAR; i++)
            prefetch_near(sim, agent, pa[i]);
        for (size_t i = 0; i < ready; i++) {
            if (i + SIM_PREFETCH_FAR < ready)
                prefetch_far(sim, agent, pa[i + SIM_PREFETCH_FAR]);
            if (i + SIM_PREFETCH_NEAR < ready)
                prefetch_near(sim, agent, pa[i + SIM_PREFETCH_NEAR]);
            struct llc_sim_result r;
            const int level = access_phys(sim, agent, pa[i], &r);
            if (level < 0)
                return level;
            if (sim->cfg.latency.enabled)
                finish(sim, &r);
            if (levels)
                levels[done + i] = (uint8_t)level;
        }
        if (rc < 0)
            return rc;
        done += m;
    }
    return 0;
}
