/* Allocation and initial state of a cache level, and DRRIP leader sets. */
#include <errno.h>
#include <string.h>

#include "model/sim/cache.h"
#include "model/sim/geometry.h"
#include "model/sim/mem.h"

/* Complement-select (Qureshi et al.): constituency r of size C leads SRRIP
 * at offset r % C and BRRIP at (C - 1 - r) % C, so leaders spread over the
 * whole index range instead of clustering at low indices. */
static void choose_leaders(struct sim_cache *c, uint32_t leaders)
{
    const uint32_t size = c->sets / leaders;
    for (uint32_t r = 0; r < leaders; r++) {
        const uint32_t base = r * size;
        const uint32_t s_off = r % size;
        uint32_t b_off = (size - 1 - (r % size)) % size;
        if (b_off == s_off)
            b_off = (b_off + 1) % size;
        sim_block(c, base + s_off)[c->leader_off] = SIM_LEAD_SRRIP;
        sim_block(c, base + b_off)[c->leader_off] = SIM_LEAD_BRRIP;
    }
}

void sim_cache_clear(struct sim_cache *c)
{
    for (uint32_t set = 0; set < c->sets; set++) {
        uint8_t *m = sim_meta(c, set);
        if (c->narrow)
            *sim_narrow_valid(c, set) = 0;
        else
            sim_block(c, set)[c->count_off] = 0;
        for (uint32_t w = 0; w < c->ways; w++) {
            if (c->narrow)
                ((uint16_t *)(void *)sim_block(c, set))[w] = 0;
            else
                sim_tags(c, set)[w] = SIM_INVALID_TAG;
            switch (c->policy) {
            case LLC_SIM_LRU:
                m[w] = (uint8_t)w;
                break;
            case LLC_SIM_SRRIP:
            case LLC_SIM_BRRIP:
            case LLC_SIM_DRRIP:
                m[w] = SIM_RRPV_MAX;
                break;
            default:
                m[w] = 0;
                break;
            }
        }
    }
    c->valid = 0;
}

int sim_cache_init(struct sim_cache *c, uint32_t sets, uint32_t ways, enum llc_sim_policy policy,
                   uint32_t leaders, uint32_t psel_bits, unsigned agents, bool lset, bool narrow,
                   struct sim_rng rng)
{
    memset(c, 0, sizeof(*c));
    c->sets = sets;
    c->ways = ways;
    c->policy = policy;
    c->plru_levels = sim_log2(ways);
    c->rng = rng;
    c->leaders = leaders;
    c->narrow = narrow;
    c->meta_off = ways * (uint32_t)sizeof(uint32_t);
    size_t end;
    if (narrow) {
        c->meta_off = SIM_NARROW_META;
        c->leader_off = SIM_NARROW_LEADER;
        c->occ_off = SIM_NARROW_OCC;
        c->ctr_off = SIM_NARROW_CTR;
        end = SIM_NARROW_STRIDE;
    } else if (agents) {
        c->owner_off = c->meta_off + ways;
        c->leader_off = c->owner_off + ways;
        c->count_off = c->leader_off + 1;
        c->occ_off = c->count_off + 1;
        c->ctr_off = (c->occ_off + agents + 7) & ~7u;
        end = c->ctr_off + agents * sizeof(struct sim_ctr);
    } else {
        c->leader_off = c->meta_off + ways;
        c->count_off = c->leader_off + 1;
        c->lset_off = lset ? (c->count_off + 2) & ~1u : 0;
        end = lset ? c->lset_off + ways * sizeof(uint16_t) : c->count_off + 1u;
    }
    c->stride = (end + 63) & ~(size_t)63;
    c->blocks = sim_alloc((size_t)sets * c->stride);
    if (!c->blocks)
        goto fail;
    if (policy == LLC_SIM_DRRIP) {
        choose_leaders(c, leaders);
        c->psel_max = (1u << psel_bits) - 1;
        c->psel_msb = 1u << (psel_bits - 1);
        c->psel = c->psel_msb - 1;
    }
    sim_cache_clear(c);
    return 0;
fail:
    sim_cache_free(c);
    return -ENOMEM;
}

int sim_cache_widen(struct sim_cache *c)
{
    struct sim_cache w;
    const int rc =
        sim_cache_init(&w, c->sets, c->ways, c->policy, c->leaders, 2, 1, false, false, c->rng);
    if (rc < 0)
        return rc;
    for (uint32_t set = 0; set < c->sets; set++) {
        const uint8_t *from = sim_block(c, set);
        uint8_t *to = sim_block(&w, set);
        const uint16_t *tags = (const uint16_t *)(const void *)from;
        const uint32_t valid = *sim_narrow_valid(c, set);
        for (uint32_t way = 0; way < c->ways; way++)
            sim_tags(&w, set)[way] = (valid >> way) & 1u ? tags[way] : SIM_INVALID_TAG;
        memcpy(to + w.meta_off, from + c->meta_off, c->ways);
        memset(to + w.owner_off, 0, c->ways);
        to[w.leader_off] = from[c->leader_off];
        to[w.count_off] = (uint8_t)__builtin_popcount(valid);
        to[w.occ_off] = from[c->occ_off];
        memcpy(to + w.ctr_off, from + c->ctr_off, sizeof(struct sim_ctr));
    }
    w.psel = c->psel;
    w.psel_max = c->psel_max;
    w.psel_msb = c->psel_msb;
    w.valid = c->valid;
    sim_cache_free(c);
    *c = w;
    return 0;
}

void sim_cache_free(struct sim_cache *c)
{
    sim_free(c->blocks);
    memset(c, 0, sizeof(*c));
}
