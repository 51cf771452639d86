/* Cache geometry: validation, address -> (slice, index, set, tag), and
 * seeded random linear slice hashes. */
#include <errno.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "model/sim/geometry.h"
#include "model/sim/rng.h"

int llc_sim_geometry_check(const struct llc_sim_geometry *g, char *err, size_t errlen)
{
    if (!sim_is_pow2(g->line_size) || g->line_size < 8 || g->line_size > 4096)
        return llc_errf(err, errlen, -EINVAL, "line size %u is not a power of two in [8, 4096]",
                        g->line_size);
    if (!sim_is_pow2(g->sets_per_slice) || g->sets_per_slice > (1u << 24))
        return llc_errf(err, errlen, -EINVAL, "sets per slice %u is not a power of two <= 2^24",
                        g->sets_per_slice);
    if (g->ways < 1 || g->ways > LLC_SIM_MAX_WAYS)
        return llc_errf(err, errlen, -EINVAL, "ways %u not in [1, %d]", g->ways, LLC_SIM_MAX_WAYS);
    if (g->slices < 1 || g->slices > (1u << LLC_SIM_MAX_SLICE_BITS))
        return llc_errf(err, errlen, -EINVAL, "slices %u not in [1, %d]", g->slices,
                        1 << LLC_SIM_MAX_SLICE_BITS);
    if (g->hash == LLC_SIM_HASH_XOR) {
        if (!sim_is_pow2(g->slices))
            return llc_errf(err, errlen, -EINVAL,
                            "an XOR slice hash needs a power-of-two slice count, not %u",
                            g->slices);
        for (unsigned b = 0; b < sim_log2(g->slices); b++)
            if (!g->slice_masks[b])
                return llc_errf(err, errlen, -EINVAL, "XOR slice mask %u is empty", b);
    } else if (g->hash != LLC_SIM_HASH_MODULO) {
        return llc_errf(err, errlen, -EINVAL, "unknown slice hash %d", (int)g->hash);
    }
    return 0;
}

uint32_t llc_sim_geometry_sets(const struct llc_sim_geometry *g)
{
    return g->slices * g->sets_per_slice;
}

uint64_t llc_sim_geometry_bytes(const struct llc_sim_geometry *g)
{
    return (uint64_t)llc_sim_geometry_sets(g) * g->ways * g->line_size;
}

void sim_geo_init(struct sim_geo *sg, const struct llc_sim_geometry *g)
{
    memset(sg, 0, sizeof(*sg));
    sg->line_bits = sim_log2(g->line_size);
    sg->index_bits = sim_log2(g->sets_per_slice);
    sg->index_mask = g->sets_per_slice - 1;
    sg->sets_per_slice = g->sets_per_slice;
    sg->slices = g->slices;
    sg->slices_pow2 = sim_is_pow2(g->slices);
    sg->slice_mask = sg->slices_pow2 ? g->slices - 1 : 0;
    sg->hash = g->hash;
    if (g->hash == LLC_SIM_HASH_XOR) {
        sg->n_masks = sim_log2(g->slices);
        memcpy(sg->masks, g->slice_masks, sizeof(sg->masks));
        uint64_t all = 0;
        for (unsigned b = 0; b < sg->n_masks; b++)
            all |= sg->masks[b];
        if (!all)
            return;
        const unsigned lo = (unsigned)__builtin_ctzll(all);
        const unsigned span = 64u - (unsigned)__builtin_clzll(all) - lo;
        sg->n_chunks = (span + SIM_GEO_CHUNK_BITS - 1) / SIM_GEO_CHUNK_BITS;
        sg->chunk_lo = lo;
        for (unsigned k = 0; k < sg->n_chunks; k++)
            for (uint64_t v = 0; v < (1u << SIM_GEO_CHUNK_BITS); v++) {
                const unsigned shift = lo + k * SIM_GEO_CHUNK_BITS;
                const uint64_t bits = shift < 64 ? v << shift : 0;
                uint32_t slice = 0;
                for (unsigned b = 0; b < sg->n_masks; b++)
                    slice |= (uint32_t)__builtin_parityll(bits & sg->masks[b]) << b;
                sg->xor_tab[k][v] = (uint8_t)slice;
            }
    }
}

void sim_geo_init_pages(struct sim_geo *sg, unsigned page_bits)
{
    sg->off_shift = sg->chunk_lo < sg->line_bits ? sg->chunk_lo : sg->line_bits;
    const uint64_t sets = (uint64_t)sg->slices * sg->sets_per_slice;
    sg->page_split = sg->hash == LLC_SIM_HASH_XOR &&
                     page_bits <= sg->off_shift + SIM_GEO_OFF_BITS &&
                     sets <= (1ULL << SIM_GEO_PAGE_SET_BITS);
    if (!sg->page_split)
        return;
    for (uint64_t v = 0; v < (1u << SIM_GEO_OFF_BITS); v++) {
        const uint64_t offset = (v << sg->off_shift) & ((1ULL << page_bits) - 1);
        uint32_t slice = 0;
        for (unsigned b = 0; b < sg->n_masks; b++)
            slice |= (uint32_t)__builtin_parityll(offset & sg->masks[b]) << b;
        sg->off_set[v] =
            (slice << sg->index_bits) | (uint32_t)((offset >> sg->line_bits) & sg->index_mask);
    }
}

/* Straight from the definition (parities, no tables), so that the tests'
 * comparisons against the access path check the byte tables too. */
void llc_sim_geometry_locate(const struct llc_sim_geometry *g, uint64_t paddr,
                             struct llc_sim_loc *out)
{
    const unsigned line_bits = sim_log2(g->line_size);
    const unsigned index_bits = sim_log2(g->sets_per_slice);
    const uint64_t line = paddr >> line_bits;
    uint32_t slice = 0;
    if (g->hash == LLC_SIM_HASH_XOR) {
        for (unsigned b = 0; b < sim_log2(g->slices); b++)
            slice |= (uint32_t)__builtin_parityll(paddr & g->slice_masks[b]) << b;
    } else {
        slice = (uint32_t)((line >> index_bits) % g->slices);
    }
    out->slice = slice;
    out->index = (uint32_t)(line & (g->sets_per_slice - 1));
    out->set = out->slice * g->sets_per_slice + out->index;
    out->tag = line >> index_bits;
}

/* Rank over GF(2) of the first n masks, to insist on independent masks:
 * dependent ones would leave some slices empty. */
static unsigned gf2_rank(const uint64_t *masks, unsigned n)
{
    uint64_t rows[LLC_SIM_MAX_SLICE_BITS];
    memcpy(rows, masks, n * sizeof(rows[0]));
    unsigned rank = 0;
    for (int bit = 63; bit >= 0 && rank < n; bit--) {
        const uint64_t b = 1ULL << bit;
        unsigned pivot = rank;
        while (pivot < n && !(rows[pivot] & b))
            pivot++;
        if (pivot == n)
            continue;
        const uint64_t t = rows[pivot];
        rows[pivot] = rows[rank];
        rows[rank] = t;
        for (unsigned r = 0; r < n; r++)
            if (r != rank && (rows[r] & b))
                rows[r] ^= t;
        rank++;
    }
    return rank;
}

int llc_sim_geometry_random_hash(struct llc_sim_geometry *g, uint64_t seed, unsigned lo_bit,
                                 unsigned hi_bit, char *err, size_t errlen)
{
    if (!sim_is_pow2(g->slices) || g->slices < 2 || g->slices > (1u << LLC_SIM_MAX_SLICE_BITS))
        return llc_errf(err, errlen, -EINVAL,
                        "a random XOR hash needs a power-of-two slice count in [2, %d], not %u",
                        1 << LLC_SIM_MAX_SLICE_BITS, g->slices);
    const unsigned n = sim_log2(g->slices);
    if (lo_bit < sim_log2(g->line_size) || hi_bit > LLC_SIM_MAX_PADDR_BITS ||
        hi_bit < lo_bit + n + 2)
        return llc_errf(err, errlen, -EINVAL,
                        "random hash bit range [%u, %u) must lie in [log2(line size), %d) "
                        "and hold at least %u bits",
                        lo_bit, hi_bit, LLC_SIM_MAX_PADDR_BITS, n + 2);
    const uint64_t range = (hi_bit >= 64 ? ~0ULL : (1ULL << hi_bit) - 1) & ~((1ULL << lo_bit) - 1);
    struct sim_rng rng = sim_rng_stream(seed, 0x4a5b);
    uint64_t masks[LLC_SIM_MAX_SLICE_BITS] = {0};
    do {
        for (unsigned b = 0; b < n; b++)
            masks[b] = sim_rng_next(&rng) & range;
    } while (gf2_rank(masks, n) < n);
    g->hash = LLC_SIM_HASH_XOR;
    memset(g->slice_masks, 0, sizeof(g->slice_masks));
    memcpy(g->slice_masks, masks, n * sizeof(masks[0]));
    return 0;
}
