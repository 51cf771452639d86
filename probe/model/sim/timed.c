/* The timed co-run kernel's entry points (include/llcprobe/sim.h): argument
 * checks and scratch buffers around the hot loops (sim/timed_kernel.c). */
#include <errno.h>
#include <stdlib.h>

#include "model/sim/timed.h"

int llc_sim_run_timed(struct llc_sim *sim, struct llc_sim_timed_agent *ag, unsigned n)
{
    if (n == 0 || n > sim->cfg.agents)
        return -EINVAL;
    return sim_timed_run(sim, ag, n);
}

int llc_sim_locate_batch(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n,
                         bool phys, uint64_t *paddr, uint32_t *set)
{
    if (agent >= sim->cfg.agents)
        return -EINVAL;
    return sim_timed_locate(sim, agent, addrs, n, phys, paddr, set);
}

int llc_sim_timed_prep_create(uint32_t cap, struct llc_sim_timed_prep **out)
{
    struct llc_sim_timed_prep *q = calloc(1, sizeof(*q));
    if (q) {
        q->cap = cap;
        q->hit = malloc(cap);
        q->miss = malloc(cap * sizeof(*q->miss));
        q->misses = malloc(cap * sizeof(*q->misses));
    }
    if (!q || !q->hit || !q->miss || !q->misses) {
        llc_sim_timed_prep_destroy(q);
        return -ENOMEM;
    }
    *out = q;
    return 0;
}

void llc_sim_timed_prep_destroy(struct llc_sim_timed_prep *q)
{
    if (!q)
        return;
    free(q->hit);
    free(q->miss);
    free(q->misses);
    free(q);
}

static int timed_l2(struct llc_sim *sim, unsigned agent, struct llc_sim_timed_agent *ag)
{
    return sim_timed_l2(sim, agent, ag);
}

int llc_sim_timed_prepare(struct llc_sim *sim, unsigned agent, struct llc_sim_timed_agent *ag)
{
    struct llc_sim_timed_prep *q = ag->prep;
    if (!q || agent >= sim->cfg.agents || ag->len > q->cap)
        return -EINVAL;
    q->ready = false;
    q->n_misses = q->next = 0;
    if (sim->mode == SIM_MODE_INCLUSIVE)
        return 0;
    for (uint32_t i = ag->pos; i < ag->len; i++) {
        const uint64_t paddr = ag->paddr[i];
        if (paddr & sim->paddr_reject)
            return -ERANGE;
        if (paddr & sim->narrow_reject) {
            const int rc = sim_make_room(sim, paddr);
            if (rc < 0)
                return rc;
        }
    }
    const int rc = timed_l2(sim, agent, ag);
    if (rc < 0)
        return rc;
    q->ready = true;
    return 1;
}
