/* One set-associative cache level (an LLC or one agent's L2): one block of
 * tags, metadata and counters per set, and the replacement policies'
 * primitives, inlined for the access path (sim/path.h). Sets are plain set
 * numbers here; slices are the caller's business (the LLC passes set unit
 * ids).
 *
 * Metadata byte per way, by policy:
 *   LRU          age 0 (MRU) .. ways-1 (LRU); the ages of a set are always a
 *                permutation, invalid ways included.
 *   PLRU         byte i holds tree node i (0..ways-2), root 0, children
 *                2i+1 / 2i+2; 0 = victim on the left.
 *   *RRIP        RRPV 0..3.
 *   RANDOM       unused.
 *
 * Functions taking an explicit policy `p` are always inlined: called with
 * a constant one, they leave no policy branches.
 *
 * Two block layouts (see struct sim_cache): the wide one (uint32 tags,
 * everything of the set in its block) for every level and configuration,
 * and the narrow LLC block of one host cache line for the common case.
 */
#ifndef LLC_SIM_CACHE_H
#define LLC_SIM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/sim.h"
#include "model/sim/rng.h"

/* SSE2 (every x86-64) compares a whole 16-way set at once, branch-free;
 * SIM_PORTABLE forces the plain loops (the tests build both). */
#if defined(__SSE2__) && !defined(SIM_PORTABLE)
#include <emmintrin.h>
#define SIM_SSE2 1
/* The instruction-set copies of the batch path (sim/variants_*.c). */
#if defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#define SIM_AVX512 1
#elif defined(__AVX2__)
#include <immintrin.h>
#define SIM_AVX2 1
#endif
#endif

#define SIM_INLINE static inline __attribute__((always_inline))

#define SIM_INVALID_TAG UINT32_MAX
#define SIM_LSET_MAX_SETS 65536u /* LLC sets an L2 block's uint16 can name */
/* The narrow LLC block (struct sim_cache): 16 ways, one agent, 64 bytes. */
#define SIM_NARROW_WAYS 16u
#define SIM_NARROW_STRIDE 64u
#define SIM_NARROW_META 32u
#define SIM_NARROW_VALID 48u
#define SIM_NARROW_LEADER 50u
#define SIM_NARROW_OCC 51u
#define SIM_NARROW_CTR 56u
#define SIM_NARROW_TAG_BITS 16u
#define SIM_RRPV_MAX 3
#define SIM_RRPV_LONG 2

enum sim_leader { SIM_FOLLOWER = 0, SIM_LEAD_SRRIP = 1, SIM_LEAD_BRRIP = 2 };

/* Hit and miss counters of one (agent, set), in the set's block. 16 bits
 * keep up to six agents' counters in the block's second host cache line
 * (a co-run of 4 to 6 programs touches two host lines per LLC set, not
 * three); the carry, one in 65536 counts of a set, goes to a separate
 * array of high words (see hierarchy.h). */
struct sim_ctr {
    uint16_t hits, misses;
};

struct sim_cache {
    uint32_t sets, ways;
    enum llc_sim_policy policy;
    unsigned plru_levels;
    /* One block per set, `stride` bytes (a multiple of 64), 64-byte
     * aligned: ways uint32 tags (SIM_INVALID_TAG = empty) - one host cache
     * line for 16 ways - then what the rest of an access touches, so that it
     * shares a second line: ways metadata bytes, then
     *   LLC: ways owner bytes, the DRRIP leader byte (enum sim_leader), the
     *        count of valid ways, one occupancy byte per agent (lines it
     *        owns in the set, <= ways) and one struct sim_ctr per agent;
     *   L2:  the leader byte, the count of valid ways and, if the LLC has
     *        <= 2^16 sets, the LLC set of each way's line as uint16 (an L2
     *        victim's LLC set without hashing its address again).
     * The counts spare full sets (nearly all) the search for a free way.
     * With 16 ways (and up to 6 agents) a block is 128 bytes.
     *
     * Narrow (an LLC of 16 ways and one agent whose tags all fit 16 bits,
     * see sim_narrow_fits): one 64-byte block, one host cache line, per
     * set: 16 uint16 tags at 0, 16 metadata bytes at 32, a uint16 mask of
     * the valid ways at 48 (so every 16-bit value is a tag; an empty way's
     * tag is meaningless), the leader byte at 50, the agent's occupancy
     * byte at 51 and its struct sim_ctr at 56. No owner bytes: the one
     * agent owns every line, never shared; owner_off and count_off are
     * unused. A 16-bit tag plus the set identifies a line exactly as the
     * uint32 tag does as long as tag = paddr >> (line bits + index bits)
     * < 2^16, i.e. paddr < 2^(line bits + index bits + 16): 16 GiB for
     * amd32 (64-byte lines, 4096 sets per slice), 8 GiB for intel8. The
     * simulator picks it when its page allocator's memory is within that
     * bound and turns it wide (sim_cache_widen) before the first physical
     * access beyond it. */
    bool narrow;
    uint8_t *blocks;
    size_t stride;
    uint32_t meta_off, owner_off, leader_off, count_off, occ_off, ctr_off;
    uint32_t lset_off; /* 0: none */
    uint32_t leaders;
    uint32_t psel, psel_max, psel_msb;
    uint64_t valid;     /* valid lines in the whole level */
    struct sim_rng rng; /* RANDOM victims, BRRIP epsilon */
};

/* leaders / psel_bits only matter for DRRIP (sets >= 2 * leaders). agents
 * is the number of per-agent counters each block holds; 0 makes an L2
 * (no owners or counters), with LLC sets per way if lset. narrow asks for
 * the narrow LLC layout (16 ways, one agent; the caller checks the tags'
 * range with sim_narrow_fits). */
int sim_cache_init(struct sim_cache *c, uint32_t sets, uint32_t ways, enum llc_sim_policy policy,
                   uint32_t leaders, uint32_t psel_bits, unsigned agents, bool lset, bool narrow,
                   struct sim_rng rng);
/* Whether every physical address below `bytes` has a tag (paddr >>
 * tag_shift, tag_shift = line bits + index bits) of SIM_NARROW_TAG_BITS
 * bits. */
static inline bool sim_narrow_fits(uint64_t bytes, unsigned tag_shift)
{
    return tag_shift + SIM_NARROW_TAG_BITS < 64 &&
           bytes <= 1ULL << (tag_shift + SIM_NARROW_TAG_BITS);
}
/* Turns a narrow LLC (of one agent) into the wide layout, state and
 * counters unchanged. */
int sim_cache_widen(struct sim_cache *c);
void sim_cache_free(struct sim_cache *c);
/* Empties every set and restores the initial metadata (PSEL, leaders and
 * counters stay; occupancy is the caller's). */
void sim_cache_clear(struct sim_cache *c);

SIM_INLINE uint8_t *sim_block(const struct sim_cache *c, uint32_t set)
{
    return c->blocks + (size_t)set * c->stride;
}

static inline uint32_t *sim_tags(const struct sim_cache *c, uint32_t set)
{
    return (uint32_t *)(void *)sim_block(c, set);
}

static inline uint8_t *sim_meta(const struct sim_cache *c, uint32_t set)
{
    return sim_block(c, set) + c->meta_off;
}

/* Owner byte of LLC way w (of a valid line): the one agent's in a narrow
 * block. */
static inline uint8_t sim_owner_of(const struct sim_cache *c, uint32_t set, uint32_t w)
{
    return c->narrow ? 0 : sim_block(c, set)[c->owner_off + w];
}

static inline uint16_t *sim_narrow_valid(const struct sim_cache *c, uint32_t set)
{
    return (uint16_t *)(void *)(sim_block(c, set) + SIM_NARROW_VALID);
}

static inline uint8_t *sim_occ(const struct sim_cache *c, uint32_t set)
{
    return sim_block(c, set) + c->occ_off;
}

static inline struct sim_ctr *sim_ctrs(const struct sim_cache *c, uint32_t set)
{
    return (struct sim_ctr *)(void *)(sim_block(c, set) + c->ctr_off);
}

/* Bit w set where tags[w] == v. */
SIM_INLINE uint64_t sim_match32(const uint32_t *t, uint32_t ways, uint32_t v)
{
    uint64_t m = 0;
#if defined(SIM_AVX512)
    /* One compare into a mask register per set. */
    if (ways == 16)
        return _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(t), _mm512_set1_epi32((int)v));
    if (ways == 8)
        return _mm256_cmpeq_epi32_mask(_mm256_loadu_si256((const __m256i *)(const void *)t),
                                       _mm256_set1_epi32((int)v));
#elif defined(SIM_AVX2)
    if (ways == 16 || ways == 8) {
        const __m256i k8 = _mm256_set1_epi32((int)v);
        const __m256i *p = (const __m256i *)(const void *)t;
        m = (uint32_t)_mm256_movemask_ps(
            _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_loadu_si256(p), k8)));
        if (ways == 16)
            m |= (uint64_t)(uint32_t)_mm256_movemask_ps(
                     _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_loadu_si256(p + 1), k8)))
                 << 8;
        return m;
    }
#endif
#ifdef SIM_SSE2
    const __m128i k = _mm_set1_epi32((int)v);
    if (ways == 16) {
        /* The common geometry: four compares packed into one byte mask. */
        const __m128i *p = (const __m128i *)(const void *)t;
        const __m128i lo = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(p), k),
                                           _mm_cmpeq_epi32(_mm_loadu_si128(p + 1), k));
        const __m128i hi = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(p + 2), k),
                                           _mm_cmpeq_epi32(_mm_loadu_si128(p + 3), k));
        return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(lo, hi));
    }
    if (ways == 8) {
        /* An 8-way L2 (the intel8 preset). */
        const __m128i *p = (const __m128i *)(const void *)t;
        const __m128i lo = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(p), k),
                                           _mm_cmpeq_epi32(_mm_loadu_si128(p + 1), k));
        return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(lo, _mm_setzero_si128()));
    }
    if ((ways & 3) == 0) {
        for (uint32_t w = 0; w < ways; w += 4) {
            const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(t + w));
            m |= (uint64_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, k))) << w;
        }
        return m;
    }
#endif
    for (uint32_t w = 0; w < ways; w++)
        m |= (uint64_t)(t[w] == v) << w;
    return m;
}

/* Whether way w of the set holds a line. */
static inline bool sim_way_valid(const struct sim_cache *c, uint32_t set, uint32_t w)
{
    if (c->narrow)
        return (*sim_narrow_valid(c, set) >> w) & 1u;
    return sim_tags(c, set)[w] != SIM_INVALID_TAG;
}

/* Bit w set where the 16 uint16 tags t[w] == v. */
SIM_INLINE uint64_t sim_match16(const uint16_t *t, uint32_t v)
{
#ifdef SIM_SSE2
    const __m128i k = _mm_set1_epi16((short)v);
    const __m128i *p = (const __m128i *)(const void *)t;
    return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(_mm_loadu_si128(p), k),
                                                       _mm_cmpeq_epi16(_mm_loadu_si128(p + 1), k)));
#else
    uint64_t m = 0;
    for (uint32_t w = 0; w < SIM_NARROW_WAYS; w++)
        m |= (uint64_t)(t[w] == (uint16_t)v) << w;
    return m;
#endif
}

/* Bit w set where meta[w] == v. */
SIM_INLINE uint64_t sim_match8(const uint8_t *b, uint32_t ways, uint8_t v)
{
    uint64_t m = 0;
#ifdef SIM_SSE2
    if (ways == 8) {
        const __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)b);
        return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)v))) & 0xffu;
    }
    if ((ways & 15) == 0) {
        const __m128i k = _mm_set1_epi8((char)v);
        for (uint32_t w = 0; w < ways; w += 16) {
            const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + w));
            m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, k)) << w;
        }
        return m;
    }
#endif
    for (uint32_t w = 0; w < ways; w++)
        m |= (uint64_t)(b[w] == v) << w;
    return m;
}

SIM_INLINE int sim_lowest(uint64_t m)
{
    return m ? __builtin_ctzll(m) : -1;
}

/* Way holding tag, or -1; *free_way is the lowest empty way or -1. */
static inline int sim_cache_find(const struct sim_cache *c, uint32_t set, uint32_t tag,
                                 int *free_way)
{
    if (c->narrow) {
        const uint32_t valid = *sim_narrow_valid(c, set);
        *free_way = sim_lowest(~valid & 0xffffu);
        if (tag >> SIM_NARROW_TAG_BITS)
            return -1;
        return sim_lowest(sim_match16((const uint16_t *)(const void *)sim_block(c, set), tag) &
                          valid);
    }
    const uint32_t *t = sim_tags(c, set);
    *free_way = sim_lowest(sim_match32(t, c->ways, SIM_INVALID_TAG));
    return sim_lowest(sim_match32(t, c->ways, tag));
}

#ifdef SIM_SSE2
/* Byte a in all 16 lanes: one multiply instead of SSE2's unpack chain. */
SIM_INLINE __m128i sim_bcast8(uint8_t a)
{
    return _mm_shuffle_epi32(_mm_cvtsi32_si128((int)(a * 0x01010101u)), 0);
}
#endif

/* LRU ages: every way younger than w's age grows one older, w becomes 0. */
SIM_INLINE void sim_lru_promote(uint8_t *m, uint32_t ways, uint32_t w)
{
    const uint8_t a = m[w];
#ifdef SIM_SSE2
    if (ways == 8) {
        __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)m);
        x = _mm_sub_epi8(x, _mm_cmpgt_epi8(sim_bcast8(a), x));
        _mm_storel_epi64((__m128i *)(void *)m, x);
        m[w] = 0;
        return;
    }
    if ((ways & 15) == 0) {
        /* Ages are < 64, so the signed byte compare is exact. */
        const __m128i av = sim_bcast8(a);
        for (uint32_t i = 0; i < ways; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(m + i));
            x = _mm_sub_epi8(x, _mm_cmpgt_epi8(av, x));
            _mm_storeu_si128((__m128i *)(void *)(m + i), x);
        }
        m[w] = 0;
        return;
    }
#endif
    for (uint32_t i = 0; i < ways; i++)
        m[i] = (uint8_t)(m[i] + (m[i] < a));
    m[w] = 0;
}

/* LRU ages: w becomes the oldest, the ways older than it one younger. */
SIM_INLINE void sim_lru_demote(uint8_t *m, uint32_t ways, uint32_t w)
{
    const uint8_t a = m[w];
#ifdef SIM_SSE2
    if (ways == 8) {
        __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)m);
        x = _mm_add_epi8(x, _mm_cmpgt_epi8(x, sim_bcast8(a)));
        _mm_storel_epi64((__m128i *)(void *)m, x);
        m[w] = (uint8_t)(ways - 1);
        return;
    }
    if ((ways & 15) == 0) {
        const __m128i av = sim_bcast8(a);
        for (uint32_t i = 0; i < ways; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(m + i));
            x = _mm_add_epi8(x, _mm_cmpgt_epi8(x, av));
            _mm_storeu_si128((__m128i *)(void *)(m + i), x);
        }
        m[w] = (uint8_t)(ways - 1);
        return;
    }
#endif
    for (uint32_t i = 0; i < ways; i++)
        m[i] = (uint8_t)(m[i] - (m[i] > a));
    m[w] = (uint8_t)(ways - 1);
}

SIM_INLINE void sim_plru_touch(uint8_t *m, unsigned levels, uint32_t w)
{
    uint32_t node = 0;
    for (unsigned l = 0; l < levels; l++) {
        const uint32_t bit = (w >> (levels - 1 - l)) & 1u;
        m[node] = (uint8_t)!bit;
        node = 2 * node + 1 + bit;
    }
}

SIM_INLINE uint32_t sim_plru_victim(const uint8_t *m, unsigned levels)
{
    uint32_t node = 0, w = 0;
    for (unsigned l = 0; l < levels; l++) {
        const uint32_t bit = m[node];
        w = (w << 1) | bit;
        node = 2 * node + 1 + bit;
    }
    return w;
}

/* Adds age to every RRPV of a set. */
SIM_INLINE void sim_rrip_age(uint8_t *m, uint32_t ways, uint8_t age)
{
#ifdef SIM_SSE2
    if ((ways & 15) == 0) {
        const __m128i av = _mm_set1_epi8((char)age);
        for (uint32_t i = 0; i < ways; i += 16) {
            const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(m + i));
            _mm_storeu_si128((__m128i *)(void *)(m + i), _mm_add_epi8(x, av));
        }
        return;
    }
#endif
    for (uint32_t i = 0; i < ways; i++)
        m[i] = (uint8_t)(m[i] + age);
}

/* First way with RRPV 3, ageing the set until one exists: the oldest RRPV
 * present tells how far to age in one step. */
SIM_INLINE uint32_t sim_rrip_victim(uint8_t *m, uint32_t ways)
{
    for (unsigned v = SIM_RRPV_MAX;; v--) {
        const uint64_t hit = sim_match8(m, ways, (uint8_t)v);
        if (!hit)
            continue;
        if (v < SIM_RRPV_MAX)
            sim_rrip_age(m, ways, (uint8_t)(SIM_RRPV_MAX - v));
        return (uint32_t)__builtin_ctzll(hit);
    }
}

static inline int sim_is_rrip(enum llc_sim_policy p)
{
    return p == LLC_SIM_SRRIP || p == LLC_SIM_BRRIP || p == LLC_SIM_DRRIP;
}

/* RRPV a BRRIP fill gets: distant, long with probability 1/32. */
SIM_INLINE uint8_t sim_brrip_rrpv(struct sim_cache *c)
{
    return (sim_rng_next(&c->rng) & 31u) == 0 ? SIM_RRPV_LONG : SIM_RRPV_MAX;
}

/* Empties way w of block (back-invalidation, flush). */
SIM_INLINE void sim_invalidate_p(struct sim_cache *c, uint8_t *block, uint32_t w,
                                 enum llc_sim_policy p)
{
    bool was;
    if (c->narrow) {
        uint16_t *valid = (uint16_t *)(void *)(block + SIM_NARROW_VALID);
        was = (*valid >> w) & 1u;
        *valid = (uint16_t)(*valid & ~(1u << w));
    } else {
        uint32_t *t = (uint32_t *)(void *)block;
        was = t[w] != SIM_INVALID_TAG;
        block[c->count_off] = (uint8_t)(block[c->count_off] - was);
        t[w] = SIM_INVALID_TAG;
    }
    c->valid -= was;
    uint8_t *m = block + c->meta_off;
    if (p == LLC_SIM_LRU)
        sim_lru_demote(m, c->ways, w);
    else if (sim_is_rrip(p))
        m[w] = SIM_RRPV_MAX;
}

static inline void sim_cache_invalidate(struct sim_cache *c, uint32_t set, uint32_t w)
{
    sim_invalidate_p(c, sim_block(c, set), w, c->policy);
}

#endif
