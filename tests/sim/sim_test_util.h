/* Helpers shared by the sim tests: tiny hand-checkable configurations. */
#ifndef SIM_TEST_UTIL_H
#define SIM_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"

/* One slice, modulo hash, 64-byte lines, no L2, LRU, 1 agent. */
static inline struct llc_sim_config tiny_config(uint32_t sets, uint32_t ways,
                                                enum llc_sim_policy policy)
{
    struct llc_sim_config c;
    llc_sim_config_default(&c);
    c.llc.sets_per_slice = sets;
    c.llc.slices = 1;
    c.llc.ways = ways;
    c.llc.hash = LLC_SIM_HASH_MODULO;
    c.llc_policy = policy;
    c.phys_mem_bytes = 1ULL << 30;
    return c;
}

static inline struct llc_sim *make_sim(const struct llc_sim_config *c)
{
    char err[LLC_ERRLEN] = "";
    struct llc_sim *sim = NULL;
    const int rc = llc_sim_create(c, &sim, err, sizeof(err));
    if (rc < 0)
        fail_msg("llc_sim_create: %s", err);
    return sim;
}

/* Physical address of line `tag` in set `set` of a one-slice LLC. */
static inline uint64_t line_addr(uint32_t sets, uint32_t set, uint64_t tag)
{
    return ((tag * sets) + set) * 64;
}

/* Access; returns the level and stores the LLC victim (or UINT64_MAX). */
static inline int touch(struct llc_sim *sim, unsigned agent, uint64_t paddr, uint64_t *victim)
{
    struct llc_sim_result r;
    const int level = llc_sim_access_phys(sim, agent, paddr, &r);
    assert_true(level >= 0);
    if (victim)
        *victim = r.llc_victim;
    return level;
}

#endif
