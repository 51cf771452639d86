/* One set-associative cache level (an LLC or one agent's L2): flat tag and
 * per-way metadata arrays plus the replacement policies, inlined for the
 * access path. Sets are plain set numbers here; slices are the caller's
 * business (the LLC passes set unit ids).
 *
 * Metadata byte per way, by policy:
 *   LRU          age 0 (MRU) .. ways-1 (LRU); the ages of a set are always a
 *                permutation, invalid ways included.
 *   PLRU         byte i holds tree node i (0..ways-2), root 0, children
 *                2i+1 / 2i+2; 0 = victim on the left.
 *   *RRIP        RRPV 0..3.
 *   RANDOM       unused.
 */
#ifndef LLC_SIM_CACHE_H
#define LLC_SIM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "llcprobe/sim.h"
#include "sim/rng.h"

/* SSE2 (every x86-64) compares a whole 16-way set at once, branch-free;
 * SIM_PORTABLE forces the plain loops (the tests build both). */
#if defined(__SSE2__) && !defined(SIM_PORTABLE)
#include <emmintrin.h>
#define SIM_SSE2 1
#endif

#define SIM_INVALID_TAG UINT32_MAX
#define SIM_RRPV_MAX 3
#define SIM_RRPV_LONG 2

enum sim_leader { SIM_FOLLOWER = 0, SIM_LEAD_SRRIP = 1, SIM_LEAD_BRRIP = 2 };

struct sim_cache {
    uint32_t sets, ways;
    enum llc_sim_policy policy;
    unsigned plru_levels;
    /* One block per set, `stride` bytes (a multiple of 64): ways uint32
     * tags (SIM_INVALID_TAG = empty), then ways metadata bytes, then ways
     * owner bytes (used by the LLC). One block is what an access touches, so
     * keeping it together costs two host cache lines for 16 ways, not three
     * scattered ones. */
    uint8_t *blocks;
    size_t stride;
    uint32_t meta_off, owner_off;
    uint8_t *leader;     /* [sets], DRRIP only: enum sim_leader */
    uint32_t psel, psel_max, psel_msb;
    uint64_t valid;      /* valid lines in the whole level */
    struct sim_rng rng;  /* RANDOM victims, BRRIP epsilon */
};

/* leaders / psel_bits only matter for DRRIP (sets >= 2 * leaders). */
int sim_cache_init(struct sim_cache *c, uint32_t sets, uint32_t ways,
                   enum llc_sim_policy policy, uint32_t leaders, uint32_t psel_bits,
                   struct sim_rng rng);
void sim_cache_free(struct sim_cache *c);
/* Empties every set and restores the initial metadata (PSEL stays). */
void sim_cache_clear(struct sim_cache *c);

static inline uint32_t *sim_tags(const struct sim_cache *c, uint32_t set)
{
    return (uint32_t *)(void *)(c->blocks + (size_t)set * c->stride);
}

static inline uint8_t *sim_meta(const struct sim_cache *c, uint32_t set)
{
    return c->blocks + (size_t)set * c->stride + c->meta_off;
}

static inline uint8_t *sim_owner(const struct sim_cache *c, uint32_t set)
{
    return c->blocks + (size_t)set * c->stride + c->owner_off;
}

/* Bit w set where tags[w] == v. */
static inline uint64_t sim_match32(const uint32_t *t, uint32_t ways, uint32_t v)
{
    uint64_t m = 0;
#ifdef SIM_SSE2
    if ((ways & 3) == 0) {
        const __m128i k = _mm_set1_epi32((int)v);
        for (uint32_t w = 0; w < ways; w += 4) {
            const __m128i x = _mm_loadu_si128((const __m128i *)(t + w));
            m |= (uint64_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, k))) << w;
        }
        return m;
    }
#endif
    for (uint32_t w = 0; w < ways; w++)
        m |= (uint64_t)(t[w] == v) << w;
    return m;
}

/* Bit w set where meta[w] == v. */
static inline uint64_t sim_match8(const uint8_t *b, uint32_t ways, uint8_t v)
{
    uint64_t m = 0;
#ifdef SIM_SSE2
    if ((ways & 15) == 0) {
        const __m128i k = _mm_set1_epi8((char)v);
        for (uint32_t w = 0; w < ways; w += 16) {
            const __m128i x = _mm_loadu_si128((const __m128i *)(b + w));
            m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, k)) << w;
        }
        return m;
    }
#endif
    for (uint32_t w = 0; w < ways; w++)
        m |= (uint64_t)(b[w] == v) << w;
    return m;
}

static inline int sim_lowest(uint64_t m)
{
    return m ? __builtin_ctzll(m) : -1;
}

/* Way holding tag, or -1; *free_way is the lowest empty way or -1. */
static inline int sim_cache_find(const struct sim_cache *c, uint32_t set, uint32_t tag,
                                 int *free_way)
{
    const uint32_t *t = sim_tags(c, set);
    *free_way = sim_lowest(sim_match32(t, c->ways, SIM_INVALID_TAG));
    return sim_lowest(sim_match32(t, c->ways, tag));
}

/* LRU ages: every way younger than w's age grows one older, w becomes 0. */
static inline void sim_lru_promote(uint8_t *m, uint32_t ways, uint32_t w)
{
    const uint8_t a = m[w];
#ifdef SIM_SSE2
    if ((ways & 15) == 0) {
        /* Ages are < 64, so the signed byte compare is exact. */
        const __m128i av = _mm_set1_epi8((char)a);
        for (uint32_t i = 0; i < ways; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(m + i));
            x = _mm_sub_epi8(x, _mm_cmpgt_epi8(av, x));
            _mm_storeu_si128((__m128i *)(m + i), x);
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
static inline void sim_lru_demote(uint8_t *m, uint32_t ways, uint32_t w)
{
    const uint8_t a = m[w];
#ifdef SIM_SSE2
    if ((ways & 15) == 0) {
        const __m128i av = _mm_set1_epi8((char)a);
        for (uint32_t i = 0; i < ways; i += 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(m + i));
            x = _mm_add_epi8(x, _mm_cmpgt_epi8(x, av));
            _mm_storeu_si128((__m128i *)(m + i), x);
        }
        m[w] = (uint8_t)(ways - 1);
        return;
    }
#endif
    for (uint32_t i = 0; i < ways; i++)
        m[i] = (uint8_t)(m[i] - (m[i] > a));
    m[w] = (uint8_t)(ways - 1);
}

static inline void sim_plru_touch(uint8_t *m, unsigned levels, uint32_t w)
{
    uint32_t node = 0;
    for (unsigned l = 0; l < levels; l++) {
        const uint32_t bit = (w >> (levels - 1 - l)) & 1u;
        m[node] = (uint8_t)!bit;
        node = 2 * node + 1 + bit;
    }
}

static inline uint32_t sim_plru_victim(const uint8_t *m, unsigned levels)
{
    uint32_t node = 0, w = 0;
    for (unsigned l = 0; l < levels; l++) {
        const uint32_t bit = m[node];
        w = (w << 1) | bit;
        node = 2 * node + 1 + bit;
    }
    return w;
}

/* First way with RRPV 3, ageing the set until one exists: the oldest RRPV
 * present tells how far to age in one step. */
static inline uint32_t sim_rrip_victim(uint8_t *m, uint32_t ways)
{
    for (unsigned v = SIM_RRPV_MAX;; v--) {
        const uint64_t hit = sim_match8(m, ways, (uint8_t)v);
        if (!hit)
            continue;
        if (v < SIM_RRPV_MAX) {
            const uint8_t age = (uint8_t)(SIM_RRPV_MAX - v);
            for (uint32_t i = 0; i < ways; i++)
                m[i] = (uint8_t)(m[i] + age);
        }
        return (uint32_t)__builtin_ctzll(hit);
    }
}

/* A hit on way w. */
static inline void sim_cache_touch(struct sim_cache *c, uint32_t set, uint32_t w)
{
    uint8_t *m = sim_meta(c, set);
    switch (c->policy) {
    case LLC_SIM_LRU:
        sim_lru_promote(m, c->ways, w);
        break;
    case LLC_SIM_PLRU:
        sim_plru_touch(m, c->plru_levels, w);
        break;
    case LLC_SIM_SRRIP:
    case LLC_SIM_BRRIP:
    case LLC_SIM_DRRIP:
        m[w] = 0;
        break;
    case LLC_SIM_RANDOM:
        break;
    }
}

/* The way a fill replaces: free_way if any, else the policy's victim. */
static inline uint32_t sim_cache_victim(struct sim_cache *c, uint32_t set, int free_way)
{
    if (free_way >= 0)
        return (uint32_t)free_way;
    uint8_t *m = sim_meta(c, set);
    switch (c->policy) {
    case LLC_SIM_LRU:
        return (uint32_t)__builtin_ctzll(sim_match8(m, c->ways, (uint8_t)(c->ways - 1)));
    case LLC_SIM_PLRU:
        return sim_plru_victim(m, c->plru_levels);
    case LLC_SIM_SRRIP:
    case LLC_SIM_BRRIP:
    case LLC_SIM_DRRIP:
        return sim_rrip_victim(m, c->ways);
    case LLC_SIM_RANDOM:
        break;
    }
    return sim_rng_below(&c->rng, c->ways);
}

/* The way a fill of set would replace now, without changing anything; -1 if
 * a way is free or the choice is random. Only a prefetch hint. */
static inline int sim_cache_peek_victim(const struct sim_cache *c, uint32_t set)
{
    const uint32_t *t = sim_tags(c, set);
    const uint8_t *m = sim_meta(c, set);
    if (t[c->ways - 1] == SIM_INVALID_TAG)
        return -1;
    switch (c->policy) {
    case LLC_SIM_LRU:
        return sim_lowest(sim_match8(m, c->ways, (uint8_t)(c->ways - 1)));
    case LLC_SIM_PLRU:
        return (int)sim_plru_victim(m, c->plru_levels);
    case LLC_SIM_SRRIP:
    case LLC_SIM_BRRIP:
    case LLC_SIM_DRRIP: {
        uint32_t best = 0;
        for (uint32_t w = 1; w < c->ways; w++)
            best = m[w] > m[best] ? w : best;
        return (int)best;
    }
    case LLC_SIM_RANDOM:
        break;
    }
    return -1;
}

/* RRPV a BRRIP fill gets: distant, long with probability 1/32. */
static inline uint8_t sim_brrip_rrpv(struct sim_cache *c)
{
    return (sim_rng_next(&c->rng) & 31u) == 0 ? SIM_RRPV_LONG : SIM_RRPV_MAX;
}

static inline uint8_t sim_drrip_rrpv(struct sim_cache *c, uint32_t set)
{
    switch (c->leader[set]) {
    case SIM_LEAD_SRRIP:
        return SIM_RRPV_LONG;
    case SIM_LEAD_BRRIP:
        return sim_brrip_rrpv(c);
    default:
        return (c->psel & c->psel_msb) ? sim_brrip_rrpv(c) : SIM_RRPV_LONG;
    }
}

/* Puts tag into way w (empty, or already emptied of its victim). */
static inline void sim_cache_fill(struct sim_cache *c, uint32_t set, uint32_t w, uint32_t tag)
{
    uint32_t *t = sim_tags(c, set);
    c->valid += t[w] == SIM_INVALID_TAG;
    t[w] = tag;
    uint8_t *m = sim_meta(c, set);
    switch (c->policy) {
    case LLC_SIM_LRU:
        sim_lru_promote(m, c->ways, w);
        break;
    case LLC_SIM_PLRU:
        sim_plru_touch(m, c->plru_levels, w);
        break;
    case LLC_SIM_SRRIP:
        m[w] = SIM_RRPV_LONG;
        break;
    case LLC_SIM_BRRIP:
        m[w] = sim_brrip_rrpv(c);
        break;
    case LLC_SIM_DRRIP:
        m[w] = sim_drrip_rrpv(c, set);
        break;
    case LLC_SIM_RANDOM:
        break;
    }
}

/* Set dueling feedback of a lookup miss in set. */
static inline void sim_cache_missed(struct sim_cache *c, uint32_t set)
{
    if (c->policy != LLC_SIM_DRRIP)
        return;
    const uint8_t lead = c->leader[set];
    if (lead == SIM_LEAD_SRRIP && c->psel < c->psel_max)
        c->psel++;
    else if (lead == SIM_LEAD_BRRIP && c->psel > 0)
        c->psel--;
}

/* Empties way w (eviction, back-invalidation, exclusive move-up, flush). */
static inline void sim_cache_invalidate(struct sim_cache *c, uint32_t set, uint32_t w)
{
    uint32_t *t = sim_tags(c, set);
    c->valid -= t[w] != SIM_INVALID_TAG;
    t[w] = SIM_INVALID_TAG;
    uint8_t *m = sim_meta(c, set);
    if (c->policy == LLC_SIM_LRU)
        sim_lru_demote(m, c->ways, w);
    else if (c->policy >= LLC_SIM_SRRIP)
        m[w] = SIM_RRPV_MAX;
}

#endif
