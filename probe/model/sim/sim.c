/* Simulator lifecycle: building the hierarchy from a config and freeing it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "model/sim/hierarchy.h"
#include "model/sim/mem.h"

/* Stream numbers of the seeded generators (see sim/rng.h). */
#define SIM_STREAM_LLC 1
#define SIM_STREAM_L2_BASE 100

/* Tests only (sim_isa_limit): read when a simulator is created. */
static enum sim_isa isa_limit = SIM_ISA_AVX512;

static bool narrow_allowed = true;

void sim_narrow_allow(bool allow)
{
    narrow_allowed = allow;
}

int sim_make_room(struct llc_sim *sim, uint64_t paddr)
{
    if (!(paddr & sim->narrow_reject) || (paddr & sim->paddr_reject))
        return 0;
    const int rc = sim_cache_widen(&sim->llc);
    if (rc < 0)
        return rc;
    sim->narrow_reject = 0;
    sim->batch = sim_batch_for(sim);
    return 0;
}

void sim_isa_limit(enum sim_isa max)
{
    isa_limit = max;
}

enum sim_isa sim_isa_best(void)
{
    enum sim_isa best = SIM_ISA_BASE;
#ifdef SIM_ISA_VARIANTS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
        __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt"))
        best = SIM_ISA_AVX2;
    if (best == SIM_ISA_AVX2 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        best = SIM_ISA_AVX512;
#endif
    return best < isa_limit ? best : isa_limit;
}

sim_batch_fn sim_batch_for(const struct llc_sim *sim)
{
    switch (sim_isa_best()) {
#ifdef SIM_ISA_VARIANTS
    case SIM_ISA_AVX512:
        return sim_batch_for_avx512(sim);
    case SIM_ISA_AVX2:
        return sim_batch_for_avx2(sim);
#endif
    default:
        return sim_batch_for_base(sim);
    }
}

int llc_sim_create(const struct llc_sim_config *c, struct llc_sim **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc = llc_sim_config_check(c, err, errlen);
    if (rc < 0)
        return rc;
    struct llc_sim *sim = calloc(1, sizeof(*sim));
    if (!sim)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for the simulator");
    sim->cfg = *c;
    sim_geo_init(&sim->geo, &c->llc);
    sim->line_bits = sim->geo.line_bits;
    sim->sets = llc_sim_geometry_sets(&c->llc);
    sim->paddr_reject = ~((1ULL << sim_config_paddr_bits(c)) - 1);
    /* Virtual accesses stay below phys_mem_bytes; a physical one beyond
     * what 16-bit tags name widens the LLC first (sim_make_room). */
    const unsigned tag_shift = sim->line_bits + sim->geo.index_bits;
    const bool narrow = narrow_allowed && c->llc.ways == SIM_NARROW_WAYS && c->agents == 1 &&
                        sim_narrow_fits(c->phys_mem_bytes, tag_shift);
    if (narrow)
        sim->narrow_reject = ~((1ULL << (tag_shift + SIM_NARROW_TAG_BITS)) - 1);
    rc = sim_cache_init(&sim->llc, sim->sets, c->llc.ways, c->llc_policy, c->drrip_leaders,
                        c->psel_bits, c->agents, false, narrow,
                        sim_rng_stream(c->seed, SIM_STREAM_LLC));
    if (rc < 0)
        goto out;
    rc = -ENOMEM;
    const size_t agent_sets = (size_t)c->agents * sim->sets;
    sim->ctr_hi = sim_alloc(agent_sets * sizeof(*sim->ctr_hi));
    if (!sim->ctr_hi)
        goto out;
    if (c->l2_sets) {
        sim->has_l2 = true;
        sim->l2_index_bits = sim_log2(c->l2_sets);
        sim->l2_index_mask = c->l2_sets - 1;
        /* L2 blocks can keep their lines' LLC sets if a line has one set
         * (no slice mask bit inside a line) that fits their uint16. */
        const bool lset = sim->sets <= SIM_LSET_MAX_SETS && sim_geo_line_sets(&sim->geo);
        sim->l2 = calloc(c->agents, sizeof(*sim->l2));
        if (!sim->l2)
            goto out;
        for (unsigned a = 0; a < c->agents; a++) {
            rc = sim_cache_init(&sim->l2[a], c->l2_sets, c->l2_ways, c->l2_policy, c->drrip_leaders,
                                c->psel_bits, 0, lset, false,
                                sim_rng_stream(c->seed, SIM_STREAM_L2_BASE + a));
            if (rc < 0)
                goto out;
        }
    }
    rc = llc_sim_pages_create(c->phys_mem_bytes, c->page_size, c->agents, c->seed, &sim->pages, err,
                              errlen);
    if (rc < 0)
        goto out;
    sim_geo_init_pages(&sim->geo, sim->pages->page_bits);
    if (sim->geo.page_split)
        sim->pages->geo = &sim->geo;
    sim_latency_init(&sim->latency, &c->latency, c->seed);
    if (!sim->has_l2)
        sim->mode = SIM_MODE_NO_L2;
    else if (c->inclusion == LLC_SIM_INCLUSIVE)
        sim->mode = SIM_MODE_INCLUSIVE;
    else if (c->inclusion == LLC_SIM_EXCLUSIVE)
        sim->mode = SIM_MODE_EXCLUSIVE;
    else
        sim->mode = SIM_MODE_NINE;
    sim->batch = sim_batch_for(sim);
    *out = sim;
    sim = NULL;
    rc = 0;
out:
    if (rc == -ENOMEM)
        llc_errf(err, errlen, rc, "out of memory for the simulator's %u sets", sim ? sim->sets : 0);
    llc_sim_destroy(sim);
    return rc;
}

void llc_sim_destroy(struct llc_sim *sim)
{
    if (!sim)
        return;
    sim_cache_free(&sim->llc);
    if (sim->l2)
        for (unsigned a = 0; a < sim->cfg.agents; a++)
            sim_cache_free(&sim->l2[a]);
    free(sim->l2);
    sim_free(sim->ctr_hi);
    llc_sim_pages_destroy(sim->pages);
    free(sim);
}

const struct llc_sim_config *llc_sim_config_of(const struct llc_sim *sim)
{
    return &sim->cfg;
}

uint32_t llc_sim_sets(const struct llc_sim *sim)
{
    return sim->sets;
}

unsigned llc_sim_paddr_bits(const struct llc_sim *sim)
{
    return sim_config_paddr_bits(&sim->cfg);
}
