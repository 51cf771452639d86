/* The simulator object: the LLC, the private L2s, ownership and the ground
 * truth counters. Private to probe/model/sim (tests may read it to recount). */
#ifndef LLC_SIM_HIERARCHY_H
#define LLC_SIM_HIERARCHY_H

#include <stdbool.h>
#include <stdint.h>

#include "llcprobe/sim.h"
#include "model/sim/cache.h"
#include "model/sim/geometry.h"
#include "model/sim/isa.h"
#include "model/sim/latency.h"
#include "model/sim/pages.h"

/* Owner byte of an LLC line (sim_owner_of): agent id, plus a flag saying another agent's L2
 * may hold a copy (then back-invalidation must look in every L2, else only
 * in the owner's). */
#define SIM_OWNER_AGENT 0x3fu
#define SIM_OWNER_SHARED 0x80u

#define SIM_NO_LINE UINT64_MAX

/* High words of the per-set hit and miss counters (struct sim_ctr in the
 * LLC blocks holds the low 16 bits), [agent * sets + set]. Touched only on
 * a carry, so it stays out of the blocks and out of the host caches. */
struct sim_ctr_hi {
    uint32_t hits, misses;
};

/* The hierarchy shapes the access path is specialised for. */
enum sim_mode {
    SIM_MODE_NO_L2 = 0,
    SIM_MODE_INCLUSIVE,
    SIM_MODE_EXCLUSIVE,
    SIM_MODE_NINE,
};

struct sim_agent_ctr {
    uint64_t accesses, l2_hits, l2_misses, llc_hits, llc_misses;
    uint64_t llc_fills, llc_evicted, back_invals, llc_occupancy;
};

/* llc_sim_run's work after its argument checks, specialised for a
 * configuration (sim/variants.c). */
typedef int (*sim_batch_fn)(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n,
                            bool phys, uint8_t *levels);

struct llc_sim {
    /* Accesses left until the next look at a pending SIGINT/SIGTERM/SIGHUP
     * (cfg.stop); then the access or batch returns -EINTR. */
    uint64_t stop_countdown;
    struct llc_sim_config cfg;
    struct sim_geo geo;
    unsigned line_bits;
    bool has_l2;
    unsigned l2_index_bits;
    uint64_t l2_index_mask;
    uint64_t paddr_reject; /* bits that must be 0 in a physical address */
    /* Narrow LLC: bits of an (accepted) physical address whose tag needs
     * more than 16 bits, so the LLC must widen first; 0 once wide. */
    uint64_t narrow_reject;
    uint32_t sets;
    struct sim_cache llc;
    struct sim_cache *l2;      /* [agents] or NULL */
    struct sim_ctr_hi *ctr_hi; /* [agents * sets] */
    enum sim_mode mode;
    sim_batch_fn batch;
    struct sim_agent_ctr agent[LLC_SIM_MAX_AGENTS];
    struct llc_sim_pages *pages;
    struct sim_latency latency;
};

/* Chosen once per simulator, so the hot loop has no mode or policy
 * branches; also picks the copy built for the best instruction set the
 * host has. */
sim_batch_fn sim_batch_for(const struct llc_sim *sim);

sim_batch_fn sim_batch_for_base(const struct llc_sim *sim);
#ifdef SIM_ISA_VARIANTS
sim_batch_fn sim_batch_for_avx2(const struct llc_sim *sim);
sim_batch_fn sim_batch_for_avx512(const struct llc_sim *sim);
#endif

/* The best level the host runs (and SIM_ISA_VARIANTS built), capped by
 * sim_isa_limit. */
enum sim_isa sim_isa_best(void);
/* For tests, before creating simulators: the highest level later ones
 * may use, so every copy can be checked on one host. */
void sim_isa_limit(enum sim_isa max);

unsigned sim_config_paddr_bits(const struct llc_sim_config *c);

/* For tests, before creating simulators: whether later ones may use the
 * narrow LLC layout (default yes), so both layouts can be checked. */
void sim_narrow_allow(bool allow);

/* Makes the LLC able to hold physical address paddr (widening a narrow
 * one whose tags cannot name it); 0 or -ENOMEM. */
int sim_make_room(struct llc_sim *sim, uint64_t paddr);

/* Removes a line from every L2 (flush, not inclusion: no counters). */
void sim_l2_purge_line(struct llc_sim *sim, uint64_t line);

#endif
