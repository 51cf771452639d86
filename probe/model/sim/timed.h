/* The timed co-run kernel's pieces shared by sim/timed.c (the public
 * entry points) and sim/timed_kernel.c (the hot loops). */
#ifndef LLC_SIM_TIMED_H
#define LLC_SIM_TIMED_H

#include "model/sim/path.h"

struct llc_sim_timed_prep {
    uint32_t cap;
    bool ready;               /* the buffer's L2 half is done */
    uint8_t *hit;             /* per access: served by the L2 */
    struct sim_l2_miss *miss; /* per access, for the misses */
    uint32_t *misses;         /* the L2 misses' indices, in order */
    uint32_t n_misses, next;  /* how many; the next one to issue */
};

/* llc_sim_run_timed after its argument checks. */
int sim_timed_run(struct llc_sim *sim, struct llc_sim_timed_agent *ag, unsigned n);
/* The L2 pass of llc_sim_timed_prepare (the room for every address made). */
int sim_timed_l2(struct llc_sim *sim, unsigned agent, struct llc_sim_timed_agent *ag);
/* llc_sim_locate_batch after its argument checks. */
int sim_timed_locate(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n,
                     bool phys, uint64_t *paddr, uint32_t *set);

#endif
