/* Precomputed shifts and masks of a cache geometry, for the access path. */
#ifndef LLC_SIM_GEOMETRY_H
#define LLC_SIM_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "llcprobe/sim.h"

#define SIM_GEO_CHUNK_BITS 10
#define SIM_GEO_MAX_CHUNKS 7 /* ceil(64 / SIM_GEO_CHUNK_BITS) */
#define SIM_GEO_FEW_CHUNKS 4 /* enough for masks spanning <= 40 bits */
#define SIM_GEO_OFF_BITS 12  /* page offset bits off_set covers */
/* Room for a set in a page-table slot (sim/pages.h: values < 2^63). */
#define SIM_GEO_PAGE_SET_BITS 23

struct sim_geo {
    unsigned line_bits, index_bits;
    uint64_t index_mask;
    uint32_t sets_per_slice, slices, slice_mask;
    bool slices_pow2;
    enum llc_sim_hash hash;
    unsigned n_masks;
    uint64_t masks[LLC_SIM_MAX_SLICE_BITS];
    /* XOR hash as tables: the hash is linear, so the slice is the XOR of
     * xor_tab[k][chunk k of paddr >> chunk_lo] over 10-bit chunks (4 loads
     * for the presets' masks instead of log2(slices) 64-bit parities; the
     * tables of chunks beyond the masks are zeros). */
    unsigned n_chunks, chunk_lo;
    uint8_t xor_tab[SIM_GEO_MAX_CHUNKS][1u << SIM_GEO_CHUNK_BITS];
    /* Linear hash, pages small enough and at most 2^SIM_GEO_PAGE_SET_BITS
     * sets: set(paddr) = page_set(page) ^ off_set[page offset >> off_shift]
     * (the slice by linearity, the index bits being disjoint; the page's
     * part is kept in the page table, see sim/pages.h), one load and one
     * XOR per translated access. */
    bool page_split;
    unsigned off_shift;
    uint32_t off_set[1u << SIM_GEO_OFF_BITS];
};

/* g must have passed llc_sim_geometry_check(). */
void sim_geo_init(struct sim_geo *sg, const struct llc_sim_geometry *g);
/* Sets up page_split / off_set for pages of 2^page_bits bytes. */
void sim_geo_init_pages(struct sim_geo *sg, unsigned page_bits);

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
        /* Unrolled with constant shifts: this runs once or twice per
         * access. */
        const uint64_t b = paddr >> g->chunk_lo;
        const uint64_t m = (1u << SIM_GEO_CHUNK_BITS) - 1;
        uint32_t s = g->xor_tab[0][b & m] ^ g->xor_tab[1][(b >> 10) & m] ^
                     g->xor_tab[2][(b >> 20) & m] ^ g->xor_tab[3][(b >> 30) & m];
        if (g->n_chunks > SIM_GEO_FEW_CHUNKS)
            s ^= g->xor_tab[4][(b >> 40) & m] ^ g->xor_tab[5][(b >> 50) & m] ^
                 g->xor_tab[6][(b >> 60) & m];
        return s;
    }
    const uint64_t above = paddr >> (g->line_bits + g->index_bits);
    /* Division only for odd slice counts, which no preset uses. */
    return g->slices_pow2 ? (uint32_t)(above & g->slice_mask) : (uint32_t)(above % g->slices);
}

/* Whether every address of a line has the line's set (no XOR mask bit
 * below the line size). */
static inline bool sim_geo_line_sets(const struct sim_geo *g)
{
    uint64_t low = 0;
    for (unsigned b = 0; b < g->n_masks; b++)
        low |= g->masks[b] & ((1ULL << g->line_bits) - 1);
    return g->hash != LLC_SIM_HASH_XOR || low == 0;
}

/* Set unit id of a physical address. */
static inline uint32_t sim_geo_set(const struct sim_geo *g, uint64_t paddr);

/* A page's part of its addresses' sets (page_split): the set of its first
 * byte. */
static inline uint32_t sim_geo_page_set(const struct sim_geo *g, uint64_t page_paddr)
{
    return sim_geo_set(g, page_paddr);
}

/* Set unit id of a physical address. */
static inline uint32_t sim_geo_set(const struct sim_geo *g, uint64_t paddr)
{
    const uint32_t index = (uint32_t)((paddr >> g->line_bits) & g->index_mask);
    return (sim_geo_slice(g, paddr) << g->index_bits) | index;
}

#endif
