/* The batch path for inclusive hierarchies, where LLC evictions reach into
 * the L2s and so both levels must go access by access: one
 * software-pipelined loop that, for access i, translates and locates access
 * i + SIM_AHEAD_XLATE, prefetches for i + SIM_AHEAD_L2 and
 * i + SIM_AHEAD_LLC, and performs access i.
 *
 * Why this shape: the simulated caches are megabytes of metadata and the
 * stream's page table too, so the path waits on host cache misses unless
 * every block is requested well before it is used, and the host keeps only
 * a couple of dozen misses in flight: they must go to lines that will be
 * used. Prefetches are hints only: a wrong guess costs bandwidth, never
 * correctness. */
#ifndef LLC_SIM_LOCKSTEP_H
#define LLC_SIM_LOCKSTEP_H

#include <errno.h>

#include "model/sim/path.h"

#define SIM_RING 64        /* power of two above every distance below */
#define SIM_AHEAD_PAGE 24  /* page-table slot prefetch, beyond translation */
#define SIM_AHEAD_XLATE 32 /* translation and set, ahead of the access */
#define SIM_AHEAD_L2 20    /* L2 set block */
#define SIM_AHEAD_LLC 8    /* LLC set block, if the L2 will miss */

struct sim_ahead {
    uint64_t paddr;
    uint32_t set;
};

SIM_INLINE void step_prefetch_block(const uint8_t *block, size_t stride)
{
    __builtin_prefetch(block, 1);
    if (stride > 64)
        __builtin_prefetch(block + 64, 1);
}

/* Looks a up in its (now host-cached) L2 set without changing it and
 * prefetches its LLC set block if it will miss. Branch-free: whether an
 * access hits the L2 is a coin toss the host's branch predictor would lose
 * (a needless prefetch of the ring entry itself costs nothing). */
SIM_INLINE void step_prefetch_llc(const struct sim_path *p, const struct sim_ahead *a)
{
    const uint64_t line = a->paddr >> p->line_bits;
    const bool hit =
        path_match(path_l2_block(p, line), p->l2w, (uint32_t)(line >> p->l2_bits)) != 0;
    step_prefetch_block(hit ? (const uint8_t *)a : path_llc_block(p, a->set), hit ? 0 : p->stride);
}

/* Translates and locates addrs[*next] into the ring (prefetching the page
 * table ahead), advancing *next; on failure shrinks *end to it and returns
 * the error. */
SIM_INLINE int step_advance(const struct sim_path *p, uint64_t reject, bool phys,
                            const uint64_t *addrs, size_t n, struct sim_ahead *ring, size_t *next,
                            size_t *end)
{
    struct sim_ahead *a = &ring[*next & (SIM_RING - 1)];
    int rc = 0;
    if (!phys) {
        if (*next + SIM_AHEAD_PAGE < n)
            sim_pages_prefetch(p->pages, p->agent, addrs[*next + SIM_AHEAD_PAGE]);
        rc = path_translate(p, addrs[*next], &a->paddr, &a->set);
    } else if (addrs[*next] & reject) {
        rc = -ERANGE;
    } else {
        a->paddr = addrs[*next];
        a->set = path_set(p, a->paddr);
    }
    if (rc < 0)
        *end = *next;
    else
        ++*next;
    return rc;
}

/* llc_sim_run's work for one agent in an inclusive hierarchy: n addresses,
 * virtual unless phys. The accesses before a failed translation are done,
 * then its error returned (translation and accesses touch disjoint state,
 * so running one ahead of the other changes nothing). */
SIM_INLINE int lockstep_run(struct llc_sim *sim, const struct sim_path *p, const uint64_t *addrs,
                            size_t n, bool phys, uint8_t *levels)
{
    struct sim_ahead ring[SIM_RING];
    const uint64_t reject = sim->paddr_reject;
    const bool latency = sim->cfg.latency.enabled;
    size_t end = n;  /* accesses to perform: n, or up to a failed one */
    size_t next = 0; /* next address to translate */
    int rc = 0;
    while (next < end && next <= SIM_AHEAD_XLATE && rc == 0)
        rc = step_advance(p, reject, phys, addrs, n, ring, &next, &end);
    for (size_t j = 0; j < next && j < SIM_AHEAD_L2; j++)
        step_prefetch_block(path_l2_block(p, ring[j].paddr >> p->line_bits), p->l2_stride);
    for (size_t j = 0; j < next && j < SIM_AHEAD_LLC; j++)
        step_prefetch_llc(p, &ring[j]);
    for (size_t i = 0; i < end; i++) {
        /* Here next > i: access i is translated. */
        if (next < end)
            rc = step_advance(p, reject, phys, addrs, n, ring, &next, &end);
        if (i + SIM_AHEAD_L2 < next) {
            const struct sim_ahead *a = &ring[(i + SIM_AHEAD_L2) & (SIM_RING - 1)];
            step_prefetch_block(path_l2_block(p, a->paddr >> p->line_bits), p->l2_stride);
        }
        if (i + SIM_AHEAD_LLC < next)
            step_prefetch_llc(p, &ring[(i + SIM_AHEAD_LLC) & (SIM_RING - 1)]);
        const struct sim_ahead *a = &ring[i & (SIM_RING - 1)];
        uint64_t evicted = SIM_NO_LINE;
        p->ac->accesses++;
        const int level = path_access_inclusive(sim, p, a->paddr >> p->line_bits, a->set, &evicted);
        if (latency)
            sim_latency_draw(&sim->latency, (unsigned)level);
        if (levels)
            levels[i] = (uint8_t)level;
    }
    return rc;
}

#endif
