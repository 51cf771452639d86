/* Precomputed shifts and masks of a cache geometry, for the access path. */
#ifndef LLC_SIM_GEOMETRY_H
#define LLC_SIM_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "llcprobe/sim.h"

struct sim_geo {
    unsigned line_bits, index_bits;
    uint64_t index_mask;
    uint32_t sets_per_slice, slices, slice_mask;
    bool slices_pow2;
    enum llc_sim_hash hash;
    unsigned n_masks;
    uint64_t masks[LLC_SIM_MAX_SLICE_BITS];
    /* XOR hash as byte tables: the hash is linear, so the slice is the XOR
     * of xor_tab[k][byte k of paddr] over the bytes the masks touch (a few
     * loads instead of log2(slices) 64-bit parities). */
    unsigned tab_lo, tab_hi;            /* byte range [tab_lo, tab_hi) */
    uint8_t xor_tab[8][256];
};

/* g must have passed llc_sim_geometry_check(). */
void sim_geo_init(struct sim_geo *sg, const struct llc_sim_geometry *g);

static inline unsigned sim_log2(uint64_t x)
{
    return x ? 63u - (unsigned)__builtin_clzll(x) : 0;
}

static inline bool sim_is_pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

static inline uint32_t sim_geo_slice(const struct sim_geo *g, uint64_t paddr)
{
    if (g->hash == LLC_SIM_HASH_XOR) {
        uint32_t s = 0;
        for (unsigned k = g->tab_lo; k < g->tab_hi; k++)
            s ^= g->xor_tab[k][(paddr >> (8 * k)) & 0xff];
        return s;
    }
    const uint64_t above = paddr >> (g->line_bits + g->index_bits);
    /* Division only for odd slice counts, which no preset uses. */
    return g->slices_pow2 ? (uint32_t)(above & g->slice_mask) : (uint32_t)(above % g->slices);
}

/* Set unit id of a physical address. */
static inline uint32_t sim_geo_set(const struct sim_geo *g, uint64_t paddr)
{
    const uint32_t index = (uint32_t)((paddr >> g->line_bits) & g->index_mask);
    return (sim_geo_slice(g, paddr) << g->index_bits) | index;
}

#endif
