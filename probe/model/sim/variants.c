/* Specialised copies of the batch access path: one per (hierarchy mode,
 * LLC policy) for the common geometry (see sim/path.h), and a generic one
 * for every other configuration. sim/variants_avx2.c and
 * sim/variants_avx512.c include this file again for other instruction
 * sets, naming its entry point by SIM_ISA. */
#include "model/sim/lockstep.h"
#include "model/sim/split.h"

#ifndef SIM_ISA
#define SIM_ISA base
#endif
#define SIM_ISA_NAME_(f, isa) f##_##isa
#define SIM_ISA_NAME(f, isa) SIM_ISA_NAME_(f, isa)

/* Inclusion makes the levels go in step (each L2 geometry its own copy
 * of the loop); otherwise the L2 runs ahead. */
SIM_INLINE int run(struct llc_sim *sim, const struct sim_path *p, const uint64_t *addrs, size_t n,
                   bool phys, uint8_t *levels)
{
    if (p->mode != SIM_MODE_INCLUSIVE)
        return split_run(sim, p, addrs, n, phys, levels);
    if (p->fast && p->l2w == 16) {
        const struct sim_path q = path_l2_ways(p, 16);
        return lockstep_run(sim, &q, addrs, n, phys, levels);
    }
    if (p->fast) {
        const struct sim_path q = path_l2_ways(p, 8);
        return lockstep_run(sim, &q, addrs, n, phys, levels);
    }
    return lockstep_run(sim, p, addrs, n, phys, levels);
}

static int generic_batch(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n,
                         bool phys, uint8_t *levels)
{
    const struct sim_path p =
        path_make(sim, agent, false, sim->mode, sim->llc.policy, SIM_LAYOUT_ASIS);
    return run(sim, &p, addrs, n, phys, levels);
}

#define SIM_VARIANT(name, mode, lp, layout)                                               \
    static int name(struct llc_sim *sim, unsigned agent, const uint64_t *addrs, size_t n, \
                    bool phys, uint8_t *levels)                                           \
    {                                                                                     \
        const struct sim_path p = path_make(sim, agent, true, mode, lp, layout);          \
        return run(sim, &p, addrs, n, phys, levels);                                      \
    }

#ifdef SIM_FEW_VARIANTS
/* The sanitizer build: one specialised copy per hierarchy mode (LRU, and
 * DRRIP on the exclusive L3 of the amd32 preset); every other policy runs
 * the generic copy, which is the same source with the geometry and policy
 * read at run time. Instrumenting all 24 inlined copies twice (llc_probe
 * and the portable test library) took the sanitizer build over three
 * minutes of compile time for this file alone; the normal build keeps
 * every copy and checks each against the golden digests. */
SIM_VARIANT(nol2_lru, SIM_MODE_NO_L2, LLC_SIM_LRU, SIM_LAYOUT_ASIS)
SIM_VARIANT(incl_lru, SIM_MODE_INCLUSIVE, LLC_SIM_LRU, SIM_LAYOUT_ASIS)
SIM_VARIANT(excl_lru, SIM_MODE_EXCLUSIVE, LLC_SIM_LRU, SIM_LAYOUT_ASIS)
SIM_VARIANT(excl_drrip, SIM_MODE_EXCLUSIVE, LLC_SIM_DRRIP, SIM_LAYOUT_ASIS)
SIM_VARIANT(nine_lru, SIM_MODE_NINE, LLC_SIM_LRU, SIM_LAYOUT_ASIS)

/* [mode][LLC policy], in enum order; the LLC layout is read at run time. */
static const sim_batch_fn fast_asis[4][6] = {
    {nol2_lru, generic_batch, generic_batch, generic_batch, generic_batch, generic_batch},
    {incl_lru, generic_batch, generic_batch, generic_batch, generic_batch, generic_batch},
    {excl_lru, generic_batch, generic_batch, generic_batch, generic_batch, excl_drrip},
    {nine_lru, generic_batch, generic_batch, generic_batch, generic_batch, generic_batch},
};
#define FAST_TABLE(narrow) fast_asis
#else
#define SIM_MODE_VARIANTS(m, mode, layout)                \
    SIM_VARIANT(m##_lru, mode, LLC_SIM_LRU, layout)       \
    SIM_VARIANT(m##_random, mode, LLC_SIM_RANDOM, layout) \
    SIM_VARIANT(m##_plru, mode, LLC_SIM_PLRU, layout)     \
    SIM_VARIANT(m##_srrip, mode, LLC_SIM_SRRIP, layout)   \
    SIM_VARIANT(m##_brrip, mode, LLC_SIM_BRRIP, layout)   \
    SIM_VARIANT(m##_drrip, mode, LLC_SIM_DRRIP, layout)

/* Narrow LLC blocks (one agent, tags of 16 bits: amd32) and wide ones
 * (several agents, or more memory than 16-bit tags name: intel8). */
SIM_MODE_VARIANTS(nol2, SIM_MODE_NO_L2, SIM_LAYOUT_WIDE)
SIM_MODE_VARIANTS(incl, SIM_MODE_INCLUSIVE, SIM_LAYOUT_WIDE)
SIM_MODE_VARIANTS(excl, SIM_MODE_EXCLUSIVE, SIM_LAYOUT_WIDE)
SIM_MODE_VARIANTS(nine, SIM_MODE_NINE, SIM_LAYOUT_WIDE)
SIM_MODE_VARIANTS(n_nol2, SIM_MODE_NO_L2, SIM_LAYOUT_NARROW)
SIM_MODE_VARIANTS(n_incl, SIM_MODE_INCLUSIVE, SIM_LAYOUT_NARROW)
SIM_MODE_VARIANTS(n_excl, SIM_MODE_EXCLUSIVE, SIM_LAYOUT_NARROW)
SIM_MODE_VARIANTS(n_nine, SIM_MODE_NINE, SIM_LAYOUT_NARROW)

#define SIM_MODE_ENTRIES(m)                                            \
    {                                                                  \
        m##_lru, m##_random, m##_plru, m##_srrip, m##_brrip, m##_drrip \
    }

/* [narrow][mode][LLC policy], in enum order. */
static const sim_batch_fn fast_by_layout[2][4][6] = {
    {SIM_MODE_ENTRIES(nol2), SIM_MODE_ENTRIES(incl), SIM_MODE_ENTRIES(excl),
     SIM_MODE_ENTRIES(nine)},
    {SIM_MODE_ENTRIES(n_nol2), SIM_MODE_ENTRIES(n_incl), SIM_MODE_ENTRIES(n_excl),
     SIM_MODE_ENTRIES(n_nine)},
};
#define FAST_TABLE(narrow) fast_by_layout[narrow]
#endif

sim_batch_fn SIM_ISA_NAME(sim_batch_for, SIM_ISA)(const struct llc_sim *sim)
{
    return sim_path_fast(sim) ? FAST_TABLE(sim->llc.narrow)[sim->mode][sim->llc.policy]
                              : generic_batch;
}
