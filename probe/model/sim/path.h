/* The access path: translation, L2 lookup, LLC lookup, fills, evictions,
 * inclusion (back-invalidation or victim fills) and the ground-truth
 * counters.
 *
 * Everything here is always inlined into a few callers (sim/variants.c,
 * sim/access.c) that first copy what the path needs into a local struct
 * sim_path: the hierarchy mode and LLC policy as constants, and for the
 * common geometry (a 16-way LLC, an LRU L2 of 16 or 8 ways, 64-byte lines,
 * <= 6 agents, an XOR slice hash over <= 40 bits) the ways, offsets,
 * strides and hash shape as constants too. Being local, its fields stay in
 * registers: read through `sim`, each would be reloaded after every
 * metadata byte store, which may alias anything. */
#ifndef LLC_SIM_PATH_H
#define LLC_SIM_PATH_H

#include <assert.h>

#include "model/sim/hierarchy.h"
#include "model/sim/latency.h"

/* The common geometry's constants: a 16-way LLC, either narrow (sim/cache.h)
 * or of wide 128-byte blocks (meta at 64, owner at 80, leader at 96, valid
 * count at 97, occupancy at 98, counters at 104: up to 6 agents), 64-byte
 * lines, an LRU L2 of 16 or 8 ways (see path_l2_ways). */
#define SIM_FAST_WAYS 16u
#define SIM_FAST_STRIDE 128u
#define SIM_FAST_CTR_OFF 104u
#define SIM_FAST_LINE_BITS 6u

/* Which LLC block layout a copy of the path has as constants: the one of
 * the simulator at hand (read at run time), or a fixed one. */
enum sim_layout { SIM_LAYOUT_ASIS = 0, SIM_LAYOUT_WIDE, SIM_LAYOUT_NARROW };

struct sim_path {
    bool fast; /* the common geometry's constants */
    enum sim_mode mode;
    enum llc_sim_policy lp, l2p;
    uint32_t lw, l2w; /* ways */
    unsigned line_bits;
    struct sim_cache *llc;
    uint8_t *blocks;
    size_t stride;
    bool narrow; /* the LLC's layout (sim/cache.h) */
    uint32_t meta_off, owner_off, leader_off, count_off, occ_off, ctr_off;
    unsigned index_bits;
    uint64_t index_mask;
    const struct sim_geo *geo;
    unsigned chunk_lo;
    const uint8_t *xor_tab;
    struct sim_ctr_hi *ctr_hi;
    uint32_t sets;
    /* the agent's L2 (mode != SIM_MODE_NO_L2) */
    struct sim_cache *l2;
    uint8_t *l2_blocks;
    size_t l2_stride;
    uint32_t l2_leader_off, l2_count_off, l2_lset_off;
    unsigned l2_bits;
    uint64_t l2_mask;
    unsigned agent;
    bool alone; /* the only agent, lines with one set */
    struct sim_agent_ctr *ac;
    /* the agent's page table (batches of virtual addresses) */
    struct llc_sim_pages *pages;
    struct sim_page_table *pt;
    unsigned page_bits;
    bool page_split; /* see struct sim_geo */
    const uint32_t *off_set;
    unsigned off_shift;
};

/* Whether sim has the common geometry the constants above describe. */
static inline bool sim_path_fast(const struct llc_sim *sim)
{
    return sim->geo.hash == LLC_SIM_HASH_XOR && sim->geo.n_chunks <= SIM_GEO_FEW_CHUNKS &&
           sim->llc.ways == SIM_FAST_WAYS &&
           (sim->llc.narrow ||
            (sim->llc.stride == SIM_FAST_STRIDE && sim->llc.ctr_off == SIM_FAST_CTR_OFF)) &&
           sim->line_bits == SIM_FAST_LINE_BITS &&
           (!sim->has_l2 || ((sim->l2[0].ways == 16 || sim->l2[0].ways == 8) &&
                             sim->l2[0].lset_off && sim->l2[0].policy == LLC_SIM_LRU));
}

/* The LLC block layout offsets of a wide 16-way block (sim_cache_init). */
#define P_META(w) ((w)*4u)
#define P_OWNER(w) ((w)*5u)
#define P_LEADER(w) ((w)*6u)
#define P_COUNT(w) ((w)*6u + 1u)
#define P_OCC(w) ((w)*6u + 2u)

/* fast: the common geometry; layout: the LLC's, if known (then fast). */
SIM_INLINE struct sim_path path_make(struct llc_sim *sim, unsigned agent, bool fast,
                                     enum sim_mode mode, enum llc_sim_policy lp,
                                     enum sim_layout layout)
{
    const struct sim_cache *llc = &sim->llc;
    const bool narrow = layout == SIM_LAYOUT_ASIS ? llc->narrow : layout == SIM_LAYOUT_NARROW;
    const bool wide16 = layout == SIM_LAYOUT_WIDE;
    struct sim_path p = {
        .fast = fast,
        .mode = mode,
        .lp = lp,
        .lw = fast ? SIM_FAST_WAYS : sim->llc.ways,
        .line_bits = fast ? SIM_FAST_LINE_BITS : sim->line_bits,
        .llc = &sim->llc,
        .blocks = sim->llc.blocks,
        .stride = layout == SIM_LAYOUT_NARROW ? SIM_NARROW_STRIDE
                  : wide16                    ? SIM_FAST_STRIDE
                                              : llc->stride,
        .narrow = narrow,
        .meta_off = layout == SIM_LAYOUT_NARROW ? SIM_NARROW_META
                    : wide16                    ? P_META(SIM_FAST_WAYS)
                                                : llc->meta_off,
        .owner_off = wide16 ? P_OWNER(SIM_FAST_WAYS) : llc->owner_off,
        .leader_off = layout == SIM_LAYOUT_NARROW ? SIM_NARROW_LEADER
                      : wide16                    ? P_LEADER(SIM_FAST_WAYS)
                                                  : llc->leader_off,
        .count_off = wide16 ? P_COUNT(SIM_FAST_WAYS) : llc->count_off,
        .occ_off = layout == SIM_LAYOUT_NARROW ? SIM_NARROW_OCC
                   : wide16                    ? P_OCC(SIM_FAST_WAYS)
                                               : llc->occ_off,
        .ctr_off = layout == SIM_LAYOUT_NARROW ? SIM_NARROW_CTR
                   : wide16                    ? SIM_FAST_CTR_OFF
                                               : llc->ctr_off,
        .index_bits = sim->geo.index_bits,
        .index_mask = sim->geo.index_mask,
        .geo = &sim->geo,
        .chunk_lo = sim->geo.chunk_lo,
        .xor_tab = &sim->geo.xor_tab[0][0],
        .ctr_hi = sim->ctr_hi,
        .sets = sim->sets,
        .agent = agent,
        .alone = sim->cfg.agents == 1 && sim_geo_line_sets(&sim->geo),
        .ac = &sim->agent[agent],
        .pages = sim->pages,
        .pt = &sim->pages->tables[agent],
        .page_bits = sim->pages->page_bits,
        .page_split = sim->pages->geo != NULL,
        .off_set = sim->geo.off_set,
        .off_shift = sim->geo.off_shift,
    };
    if (mode != SIM_MODE_NO_L2) {
        p.l2 = &sim->l2[agent];
        p.l2p = fast ? LLC_SIM_LRU : p.l2->policy;
        p.l2w = p.l2->ways;
        p.l2_blocks = p.l2->blocks;
        p.l2_stride = p.l2->stride;
        p.l2_leader_off = p.l2->leader_off;
        p.l2_count_off = p.l2->count_off;
        p.l2_lset_off = p.l2->lset_off;
        p.l2_bits = sim->l2_index_bits;
        p.l2_mask = sim->l2_index_mask;
    }
    return p;
}

/* p with the L2 geometry of an L2 of `ways` (16 or 8) in constants: the
 * L2 block layout of sim_cache_init (meta at 4w, leader at 5w, valid count
 * at 5w + 1, LLC sets at 5w + 2), 128 or 64 bytes. */
SIM_INLINE struct sim_path path_l2_ways(const struct sim_path *p, uint32_t ways)
{
    struct sim_path q = *p;
    q.l2w = ways;
    q.l2_leader_off = ways * 5;
    q.l2_count_off = ways * 5 + 1;
    q.l2_lset_off = ways * 5 + 2;
    q.l2_stride = ways == 16 ? 128 : 64;
    return q;
}

/* p with page_split (and, for 4 KiB pages, the page size) as constants. */
SIM_INLINE struct sim_path path_page_split(const struct sim_path *p, bool split)
{
    struct sim_path q = *p;
    q.page_split = split;
    return q;
}

/* LLC set unit of paddr. */
SIM_INLINE uint32_t path_set(const struct sim_path *p, uint64_t paddr)
{
    if (!p->fast) /* else an XOR hash in SIM_GEO_FEW_CHUNKS tables */
        return sim_geo_set(p->geo, paddr);
    const uint64_t b = paddr >> p->chunk_lo;
    const uint64_t m = (1u << SIM_GEO_CHUNK_BITS) - 1;
    const uint8_t *x = p->xor_tab;
    const uint32_t slice = x[b & m] ^ x[(1u << SIM_GEO_CHUNK_BITS) + ((b >> 10) & m)] ^
                           x[(2u << SIM_GEO_CHUNK_BITS) + ((b >> 20) & m)] ^
                           x[(3u << SIM_GEO_CHUNK_BITS) + ((b >> 30) & m)];
    return (slice << p->index_bits) | (uint32_t)((paddr >> p->line_bits) & p->index_mask);
}

/* Translates vaddr of the agent into *paddr and its LLC set *set, reading
 * first the page-table entry `at` (sim_pages_prefetch's answer for vaddr):
 * entries stay put, so an unmapped one there (or sim_pt_unmapped, if the
 * page's leaf did not exist yet) only means taking the full lookup, which
 * maps it. */
SIM_INLINE int path_translate_at(const struct sim_path *p, uint64_t vaddr, const uint64_t *at,
                                 uint64_t *paddr, uint32_t *set)
{
    const uint64_t offset = vaddr & ((1ULL << p->page_bits) - 1);
    uint64_t e = *at;
    if (!e) {
        const int rc = sim_pages_entry(p->pages, p->pt, vaddr >> p->page_bits, &e);
        if (rc < 0)
            return rc;
    }
    *paddr = ((e & SIM_PT_FRAME_MASK) << p->page_bits) | offset;
    if (p->page_split) {
        *set = (uint32_t)(e >> SIM_PT_SET_SHIFT) ^ p->off_set[offset >> p->off_shift];
    } else {
        *set = path_set(p, *paddr);
    }
    return 0;
}

/* Translates vaddr of the agent into *paddr and its LLC set *set. */
SIM_INLINE int path_translate(const struct sim_path *p, uint64_t vaddr, uint64_t *paddr,
                              uint32_t *set)
{
    return path_translate_at(p, vaddr, sim_pt_find(p->pt, vaddr >> p->page_bits), paddr, set);
}

SIM_INLINE uint8_t *path_llc_block(const struct sim_path *p, uint32_t set)
{
    return p->blocks + (size_t)set * p->stride;
}

SIM_INLINE uint8_t *path_l2_block(const struct sim_path *p, uint64_t line)
{
    return p->l2_blocks + (size_t)(line & p->l2_mask) * p->l2_stride;
}

SIM_INLINE uint64_t path_match(const uint8_t *block, uint32_t ways, uint32_t v)
{
    return sim_match32((const uint32_t *)(const void *)block, ways, v);
}

/* Lowest free way of a block whose valid-way count is at count_off, or -1. */
SIM_INLINE int path_free_way(const uint8_t *block, uint32_t ways, uint32_t count_off)
{
    if (block[count_off] == ways)
        return -1;
    return sim_lowest(path_match(block, ways, SIM_INVALID_TAG));
}

/* The LLC block's valid ways (narrow blocks), tags and the lookups. */
SIM_INLINE uint16_t *path_valid(uint8_t *block)
{
    return (uint16_t *)(void *)(block + SIM_NARROW_VALID);
}

SIM_INLINE uint64_t path_llc_match(const struct sim_path *p, const uint8_t *block, uint32_t tag)
{
    if (p->narrow)
        return sim_match16((const uint16_t *)(const void *)block, tag) &
               *(const uint16_t *)(const void *)(block + SIM_NARROW_VALID);
    return path_match(block, p->lw, tag);
}

SIM_INLINE int path_llc_free_way(const struct sim_path *p, uint8_t *block)
{
    if (p->narrow) {
        const uint32_t valid = *path_valid(block);
        return valid == 0xffffu ? -1 : __builtin_ctz(~valid);
    }
    return path_free_way(block, p->lw, p->count_off);
}

/* Policy operations on the metadata bytes m of a set. */
SIM_INLINE void path_touch(struct sim_cache *c, uint8_t *m, uint32_t ways, uint32_t w,
                           enum llc_sim_policy pol)
{
    if (pol == LLC_SIM_LRU)
        sim_lru_promote(m, ways, w);
    else if (pol == LLC_SIM_PLRU)
        sim_plru_touch(m, c->plru_levels, w);
    else if (sim_is_rrip(pol))
        m[w] = 0;
}

SIM_INLINE uint32_t path_victim(struct sim_cache *c, uint8_t *m, uint32_t ways, int free_way,
                                enum llc_sim_policy pol)
{
    if (free_way >= 0)
        return (uint32_t)free_way;
    if (pol == LLC_SIM_LRU)
        return (uint32_t)__builtin_ctzll(sim_match8(m, ways, (uint8_t)(ways - 1)));
    if (pol == LLC_SIM_PLRU)
        return sim_plru_victim(m, c->plru_levels);
    if (sim_is_rrip(pol))
        return sim_rrip_victim(m, ways);
    return sim_rng_below(&c->rng, ways);
}

/* Replacement state of a fill into way w (the tag is the caller's). Also
 * right when w still holds the victim being replaced: invalidating it first
 * would not change the result (LRU: demoting the victim and then promoting
 * it is promoting it from its own age, the ages being a permutation; RRIP
 * and PLRU overwrite). */
SIM_INLINE void path_fill_meta(struct sim_cache *c, uint8_t *m, const uint8_t *leader,
                               uint32_t ways, uint32_t w, enum llc_sim_policy pol)
{
    if (pol == LLC_SIM_LRU) {
        sim_lru_promote(m, ways, w);
    } else if (pol == LLC_SIM_PLRU) {
        sim_plru_touch(m, c->plru_levels, w);
    } else if (pol == LLC_SIM_SRRIP) {
        m[w] = SIM_RRPV_LONG;
    } else if (pol == LLC_SIM_BRRIP) {
        m[w] = sim_brrip_rrpv(c);
    } else if (pol == LLC_SIM_DRRIP) {
        const uint8_t lead = *leader;
        if (lead == SIM_LEAD_SRRIP)
            m[w] = SIM_RRPV_LONG;
        else if (lead == SIM_LEAD_BRRIP || (c->psel & c->psel_msb))
            m[w] = sim_brrip_rrpv(c);
        else
            m[w] = SIM_RRPV_LONG;
    }
}

/* Empties valid way w of an LLC block. */
SIM_INLINE void path_llc_invalidate(const struct sim_path *p, uint8_t *block, uint32_t w)
{
    p->llc->valid--;
    if (p->narrow) {
        *path_valid(block) = (uint16_t)(*path_valid(block) & ~(1u << w));
    } else {
        block[p->count_off]--;
        ((uint32_t *)(void *)block)[w] = SIM_INVALID_TAG;
    }
    uint8_t *m = block + p->meta_off;
    if (p->lp == LLC_SIM_LRU)
        sim_lru_demote(m, p->lw, w);
    else if (sim_is_rrip(p->lp))
        m[w] = SIM_RRPV_MAX;
}

/* An LLC hit on way w that stays: replacement state, and sharing (narrow
 * blocks have one agent, who shares with no one). */
SIM_INLINE void path_llc_hit(const struct sim_path *p, uint8_t *block, uint32_t w)
{
    path_touch(p->llc, block + p->meta_off, p->lw, w, p->lp);
    if (p->narrow)
        return;
    uint8_t *owner = block + p->owner_off + w;
    if ((*owner & SIM_OWNER_AGENT) != p->agent)
        *owner |= SIM_OWNER_SHARED;
}

/* Counts a hit or miss of the agent in an LLC block; the high word lives
 * outside the block (struct sim_ctr_hi). */
SIM_INLINE void path_count(const struct sim_path *p, uint8_t *block, uint32_t set, bool hit)
{
    struct sim_ctr *c = (struct sim_ctr *)(void *)(block + p->ctr_off) + p->agent;
    uint16_t *lo = hit ? &c->hits : &c->misses;
    if (__builtin_expect(++*lo == 0, 0)) {
        struct sim_ctr_hi *h = &p->ctr_hi[(size_t)p->agent * p->sets + set];
        ++*(hit ? &h->hits : &h->misses);
    }
}

/* Inclusion: an LLC victim leaves the L2s that may hold it (rare enough
 * to stay out of line). */
void sim_back_invalidate(struct llc_sim *sim, uint64_t line, uint8_t owner);

/* Fills tag into the LLC set (block) for the agent, replacing free_way or
 * the policy's victim; returns the evicted line's address or SIM_NO_LINE. */
SIM_INLINE uint64_t path_llc_insert(struct llc_sim *sim, const struct sim_path *p, uint8_t *block,
                                    uint32_t set, uint32_t tag, int free_way)
{
    const uint32_t ways = p->lw;
    uint32_t *t = (uint32_t *)(void *)block;
    uint16_t *t16 = (uint16_t *)(void *)block;
    uint8_t *own = block + p->owner_off;
    uint8_t *occ = block + p->occ_off;
    uint8_t *m = block + p->meta_off;
    const uint32_t w = path_victim(p->llc, m, ways, free_way, p->lp);
    const uint32_t old = p->narrow ? t16[w] : t[w];
    const bool was_valid = p->narrow ? (*path_valid(block) >> w) & 1u : old != SIM_INVALID_TAG;
    uint64_t evicted = SIM_NO_LINE;
    if (was_valid) {
        const uint64_t line = ((uint64_t)old << p->index_bits) | (set & p->index_mask);
        const uint8_t owner = p->narrow ? 0 : own[w];
        const unsigned o = owner & SIM_OWNER_AGENT;
        sim->agent[o].llc_evicted++;
        /* A narrow block's one agent replaces its own line: occupancy
         * stays (the increments below are skipped too). */
        if (!p->narrow) {
            occ[o]--;
            sim->agent[o].llc_occupancy--;
        }
        /* The victim's way is refilled below: no invalidation in between
         * (see path_fill_meta), and back-invalidation only reads the L2s. */
        if (p->mode == SIM_MODE_INCLUSIVE)
            sim_back_invalidate(sim, line, owner);
        evicted = line << p->line_bits;
    } else {
        p->llc->valid++;
        if (p->narrow)
            *path_valid(block) = (uint16_t)(*path_valid(block) | 1u << w);
        else
            block[p->count_off]++;
    }
    if (p->narrow) {
        /* sim_make_room widened the LLC before any longer tag came. */
        assert(!(tag >> SIM_NARROW_TAG_BITS));
        t16[w] = (uint16_t)tag;
    } else {
        t[w] = tag;
        own[w] = (uint8_t)p->agent;
    }
    path_fill_meta(p->llc, m, block + p->leader_off, ways, w, p->lp);
    if (!p->narrow || !was_valid) {
        occ[p->agent]++;
        p->ac->llc_occupancy++;
    }
    p->ac->llc_fills++;
    return evicted;
}

/* Exclusive hierarchy: an L2 victim (in LLC set `set`) goes into the LLC
 * unless the LLC already has it (another agent's copy came back first). */
SIM_INLINE uint64_t path_take_victim(struct llc_sim *sim, const struct sim_path *p, uint64_t line,
                                     uint32_t set)
{
    const uint32_t tag = (uint32_t)(line >> p->index_bits);
    uint8_t *block = path_llc_block(p, set);
    /* A lone agent's L2 and the LLC never share a line (a line leaves the
     * LLC when it moves up, and leaves the L2 only to come down), so only
     * other agents can have put it there - unless a line's addresses have
     * different sets, when a lookup can miss a copy in another set. */
    if (!p->alone && path_llc_match(p, block, tag))
        return SIM_NO_LINE;
    return path_llc_insert(sim, p, block, set, tag, path_llc_free_way(p, block));
}

/* Fills line (in LLC set `set`) into the agent's L2, known absent from its
 * set b2; returns the L2 victim's line number or SIM_NO_LINE, and in an
 * exclusive hierarchy the victim's LLC set in *vset. free_way is the
 * lowest free way at lookup time; with rescan (something may have emptied
 * a way since), a negative one is looked for again. */
SIM_INLINE uint64_t path_l2_insert(const struct sim_path *p, uint8_t *b2, uint64_t line,
                                   uint32_t set, int free_way, bool rescan, uint32_t *vset)
{
    uint32_t *t2 = (uint32_t *)(void *)b2;
    uint16_t *lset = (uint16_t *)(void *)(b2 + p->l2_lset_off);
    if (free_way < 0 && rescan)
        free_way = path_free_way(b2, p->l2w, p->l2_count_off);
    uint8_t *m2 = b2 + P_META(p->l2w);
    const uint32_t w = path_victim(p->l2, m2, p->l2w, free_way, p->l2p);
    const uint32_t old = t2[w];
    uint64_t victim = SIM_NO_LINE;
    if (old != SIM_INVALID_TAG) {
        victim = ((uint64_t)old << p->l2_bits) | (line & p->l2_mask);
        if (p->mode == SIM_MODE_EXCLUSIVE)
            *vset = p->l2_lset_off ? lset[w] : path_set(p, victim << p->line_bits);
    } else {
        p->l2->valid++;
        b2[p->l2_count_off]++;
    }
    t2[w] = (uint32_t)(line >> p->l2_bits);
    if (p->l2_lset_off)
        lset[w] = (uint16_t)set;
    path_fill_meta(p->l2, m2, b2 + p->l2_leader_off, p->l2w, w, p->l2p);
    return victim;
}

/* Set dueling feedback of an LLC miss in block (DRRIP). */
SIM_INLINE void path_llc_missed(const struct sim_path *p, const uint8_t *block)
{
    if (p->lp != LLC_SIM_DRRIP)
        return;
    struct sim_cache *c = p->llc;
    const uint8_t lead = block[p->leader_off];
    if (lead == SIM_LEAD_SRRIP && c->psel < c->psel_max)
        c->psel++;
    else if (lead == SIM_LEAD_BRRIP && c->psel > 0)
        c->psel--;
}

/* What an L2 miss leaves for the LLC (hierarchies without inclusion). */
struct sim_l2_miss {
    uint64_t line;
    uint32_t set;        /* the line's LLC set */
    uint32_t victim_set; /* exclusive: the L2 victim's LLC set */
    uint64_t victim;     /* exclusive: L2 victim line or SIM_NO_LINE */
};

/* The L2 half of an access in a hierarchy without inclusion: there the L2
 * never looks at the LLC (no back-invalidation; a miss fills it whatever
 * the LLC answers), so an agent's L2 evolves from its own accesses alone
 * and a batch can run it ahead of the LLC. True on a hit; on a miss fills
 * the line and describes the LLC's work in *m. */
SIM_INLINE bool path_l2_part(const struct sim_path *p, uint64_t line, uint32_t set,
                             struct sim_l2_miss *m)
{
    uint8_t *b2 = path_l2_block(p, line);
    const uint64_t hit2 = path_match(b2, p->l2w, (uint32_t)(line >> p->l2_bits));
    if (hit2) {
        path_touch(p->l2, b2 + P_META(p->l2w), p->l2w, (uint32_t)__builtin_ctzll(hit2), p->l2p);
        p->ac->l2_hits++;
        return true;
    }
    p->ac->l2_misses++;
    const int free2 = path_free_way(b2, p->l2w, p->l2_count_off);
    m->line = line;
    m->set = set;
    m->victim = path_l2_insert(p, b2, line, set, free2, false, &m->victim_set);
    return false;
}

/* path_l2_part for an LRU L2 that keeps its lines' LLC sets (the common
 * geometry), without a branch on the lookup: whether an access hits the
 * L2 is a coin toss the host's branch predictor would lose. A hit promotes
 * its way; a miss fills the lowest free way or the oldest one and promotes
 * it; rewriting a hit way with its own tag and LLC set (a line has one set
 * when the L2 keeps sets) changes nothing, so both are one sequence with
 * the way chosen by a select. *m is written either way, for the caller to
 * keep on a miss; the agent's L2 counters are the caller's too. */
SIM_INLINE bool path_l2_part_lru(const struct sim_path *p, uint64_t line, uint32_t set,
                                 struct sim_l2_miss *m)
{
    uint8_t *b2 = path_l2_block(p, line);
    uint32_t *t2 = (uint32_t *)(void *)b2;
    uint16_t *lset = (uint16_t *)(void *)(b2 + p->l2_lset_off);
    uint8_t *m2 = b2 + P_META(p->l2w);
    const uint32_t tag = (uint32_t)(line >> p->l2_bits);
    const uint64_t hit = path_match(b2, p->l2w, tag);
    const int free2 = path_free_way(b2, p->l2w, p->l2_count_off);
    const uint32_t fill = path_victim(p->l2, m2, p->l2w, free2, LLC_SIM_LRU);
    const uint32_t w = hit ? (uint32_t)__builtin_ctzll(hit) : fill;
    const uint32_t old = t2[w];
    if (old == SIM_INVALID_TAG) { /* a miss into a free way: only while the set fills */
        p->l2->valid++;
        b2[p->l2_count_off]++;
    }
    m->line = line;
    m->set = set;
    m->victim =
        old == SIM_INVALID_TAG ? SIM_NO_LINE : ((uint64_t)old << p->l2_bits) | (line & p->l2_mask);
    m->victim_set = lset[w];
    t2[w] = tag;
    lset[w] = (uint16_t)set;
    sim_lru_promote(m2, p->l2w, w);
    return hit != 0;
}

/* The LLC half of an access that missed the L2 (or of any access without
 * an L2), hierarchies without inclusion; returns the level and stores the
 * LLC's victim address in *evicted. */
SIM_INLINE int path_llc_part(struct llc_sim *sim, const struct sim_path *p,
                             const struct sim_l2_miss *m, uint64_t *evicted)
{
    struct sim_agent_ctr *ac = p->ac;
    const uint32_t set = m->set;
    const uint32_t tag = (uint32_t)(m->line >> p->index_bits);
    uint8_t *block = path_llc_block(p, set);
    const uint64_t hit = path_llc_match(p, block, tag);
    int level;
    *evicted = SIM_NO_LINE;
    if (hit) {
        const uint32_t w = (uint32_t)__builtin_ctzll(hit);
        ac->llc_hits++;
        path_count(p, block, set, true);
        level = LLC_SIM_HIT_LLC;
        if (p->mode == SIM_MODE_EXCLUSIVE) {
            /* The line moves up into the L2 (filled by the L2 half). */
            const unsigned owner = p->narrow ? 0 : block[p->owner_off + w] & SIM_OWNER_AGENT;
            block[p->occ_off + owner]--;
            sim->agent[owner].llc_occupancy--;
            path_llc_invalidate(p, block, w);
        } else {
            path_llc_hit(p, block, w);
        }
    } else {
        ac->llc_misses++;
        path_count(p, block, set, false);
        path_llc_missed(p, block);
        level = LLC_SIM_HIT_DRAM;
        if (p->mode != SIM_MODE_EXCLUSIVE) {
            *evicted = path_llc_insert(sim, p, block, set, tag, path_llc_free_way(p, block));
        }
    }
    if (p->mode == SIM_MODE_EXCLUSIVE && m->victim != SIM_NO_LINE)
        *evicted = path_take_victim(sim, p, m->victim, m->victim_set);
    return level;
}

/* One access in an inclusive hierarchy, where LLC evictions reach into the
 * L2s and so the levels must go in step. */
SIM_INLINE int path_access_inclusive(struct llc_sim *sim, const struct sim_path *p, uint64_t line,
                                     uint32_t set, uint64_t *evicted)
{
    struct sim_agent_ctr *ac = p->ac;
    uint8_t *b2 = path_l2_block(p, line);
    const uint64_t hit2 = path_match(b2, p->l2w, (uint32_t)(line >> p->l2_bits));
    if (hit2) {
        path_touch(p->l2, b2 + P_META(p->l2w), p->l2w, (uint32_t)__builtin_ctzll(hit2), p->l2p);
        ac->l2_hits++;
        return LLC_SIM_HIT_L2;
    }
    ac->l2_misses++;
    const int free2 = path_free_way(b2, p->l2w, p->l2_count_off);
    const uint32_t tag = (uint32_t)(line >> p->index_bits);
    uint8_t *block = path_llc_block(p, set);
    const uint64_t hit = path_llc_match(p, block, tag);
    uint32_t vset;
    if (hit) {
        const uint32_t w = (uint32_t)__builtin_ctzll(hit);
        ac->llc_hits++;
        path_count(p, block, set, true);
        path_llc_hit(p, block, w);
        path_l2_insert(p, b2, line, set, free2, false, &vset);
        return LLC_SIM_HIT_LLC;
    }
    ac->llc_misses++;
    path_count(p, block, set, false);
    path_llc_missed(p, block);
    const int free_way = path_llc_free_way(p, block);
    const uint64_t invals_before = ac->back_invals;
    *evicted = path_llc_insert(sim, p, block, set, tag, free_way);
    /* Back-invalidation may have emptied a way of this very L2 set. */
    path_l2_insert(p, b2, line, set, free2, ac->back_invals != invals_before, &vset);
    return LLC_SIM_HIT_DRAM;
}

/* One access to paddr (< 2^paddr_bits) in LLC set `set`. */
SIM_INLINE int path_access(struct llc_sim *sim, const struct sim_path *p, uint64_t paddr,
                           uint32_t set, struct llc_sim_result *res)
{
    const uint64_t line = paddr >> p->line_bits;
    res->paddr = paddr;
    res->set = set;
    res->llc_victim = SIM_NO_LINE;
    p->ac->accesses++;
    int level;
    if (p->mode == SIM_MODE_INCLUSIVE) {
        level = path_access_inclusive(sim, p, line, set, &res->llc_victim);
    } else {
        struct sim_l2_miss m = {line, set, 0, SIM_NO_LINE};
        if (p->mode != SIM_MODE_NO_L2 && path_l2_part(p, line, set, &m))
            level = LLC_SIM_HIT_L2;
        else
            level = path_llc_part(sim, p, &m, &res->llc_victim);
    }
    res->level = (uint8_t)level;
    return level;
}

#endif
