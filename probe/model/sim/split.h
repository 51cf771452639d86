/* The batch path for hierarchies without inclusion (exclusive, NINE, no
 * L2): per chunk of accesses, translate and locate them all, run the
 * agent's L2 over the chunk, then replay only its misses against the LLC.
 *
 * Exact: the L2 half of an access never depends on the LLC (see
 * path_l2_part), each level draws from its own random stream, and the
 * agent counters are sums; so doing a chunk's L2 work before its LLC work
 * changes no state or counter. Faster: each pass is a short loop over data
 * it can prefetch exactly (the page table ahead in the first, the
 * host-cached L2 in the second, the LLC blocks of known misses and victims
 * in the third) instead of guessing at them and mispredicting hits. */
#ifndef LLC_SIM_SPLIT_H
#define LLC_SIM_SPLIT_H

#include <errno.h>

#include "model/sim/path.h"

#define SIM_SPLIT_CHUNK 256
#define SIM_SPLIT_LLC_AHEAD 8 /* LLC set blocks, in L2 misses */

SIM_INLINE void split_prefetch_block(const uint8_t *block, size_t stride)
{
    __builtin_prefetch(block, 1);
    if (stride > 64)
        __builtin_prefetch(block + 64, 1);
}

/* The LLC blocks an L2 miss will touch. */
SIM_INLINE void split_prefetch_llc(const struct sim_path *p, const struct sim_l2_miss *m)
{
    split_prefetch_block(path_llc_block(p, m->set), p->stride);
    if (p->mode == SIM_MODE_EXCLUSIVE && m->victim != SIM_NO_LINE)
        split_prefetch_block(path_llc_block(p, m->victim_set), p->stride);
}

/* Prefetches the page-table entries of addrs[0..n), a chunk before they
 * are translated: a tight loop keeps many of these misses in flight, and
 * the chunk's L2 and LLC passes run while they arrive. The directory is
 * read once: no page is mapped until the chunk's translation. */
SIM_INLINE void split_prefetch_pages(const struct sim_path *p, const uint64_t *addrs, size_t n,
                                     const uint64_t **slot)
{
    const struct sim_pt_dir *const dir = p->pt->dir;
    const size_t mask = p->pt->cap - 1;
    const unsigned page_bits = p->page_bits;
    for (size_t i = 0; i < n; i++) {
        const uint64_t *e = sim_pt_lookup(dir, mask, addrs[i] >> page_bits);
        __builtin_prefetch(e);
        slot[i] = e;
    }
}

/* Lines and LLC sets of addrs[0..n) (virtual unless phys; their
 * page-table entries from the prefetch in slot); returns how many are ready
 * and in *rc the error that stopped the rest, if any. Pages are allocated
 * in access order, as single accesses would. */
SIM_INLINE size_t split_prepare(const struct sim_path *p, uint64_t reject, bool phys,
                                const uint64_t *addrs, size_t n, const uint64_t *const *slot,
                                uint64_t *line, uint32_t *set, int *rc)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t paddr = addrs[i];
        if (phys) {
            if (paddr & reject) {
                *rc = -ERANGE;
                return i;
            }
            set[i] = path_set(p, paddr);
        } else {
            const int r = path_translate_at(p, paddr, slot[i], &paddr, &set[i]);
            if (r < 0) {
                *rc = r;
                return i;
            }
        }
        line[i] = paddr >> p->line_bits;
    }
    return n;
}

/* The L2 pass over a chunk: levels of the L2 hits into out, the misses
 * (and where they are in the chunk) into miss / miss_at; returns how many
 * missed. No prefetch for it: the L2s are small enough to stay in the
 * host's caches. */
SIM_INLINE size_t split_l2_pass(const struct sim_path *p, const uint64_t *line, const uint32_t *set,
                                size_t ready, uint8_t *out, struct sim_l2_miss *miss,
                                uint16_t *miss_at)
{
    size_t k = 0;
    if (p->fast && p->mode != SIM_MODE_NO_L2 && p->l2p == LLC_SIM_LRU && p->l2_lset_off) {
        /* Branch-free in the lookup's outcome (path_l2_part_lru): every
         * access writes the next miss slot and level, a miss keeps them
         * (the LLC pass overwrites a miss's level). */
        for (size_t i = 0; i < ready; i++) {
            struct sim_l2_miss *mi = &miss[k];
            const bool hit = path_l2_part_lru(p, line[i], set[i], mi);
            out[i] = LLC_SIM_HIT_L2;
            miss_at[k] = (uint16_t)i;
            /* Early in the chunk only; a hit's needless prefetch is harmless. */
            if (k < SIM_SPLIT_LLC_AHEAD)
                split_prefetch_llc(p, mi);
            k += !hit;
        }
        p->ac->l2_hits += ready - k;
        p->ac->l2_misses += k;
        return k;
    }
    for (size_t i = 0; i < ready; i++) {
        struct sim_l2_miss *mi = &miss[k];
        if (p->mode == SIM_MODE_NO_L2) {
            *mi = (struct sim_l2_miss){line[i], set[i], 0, SIM_NO_LINE};
        } else if (path_l2_part(p, line[i], set[i], mi)) {
            out[i] = LLC_SIM_HIT_L2;
            continue;
        }
        /* The LLC pass prefetches SIM_SPLIT_LLC_AHEAD misses ahead: the
         * first ones now. */
        if (k < SIM_SPLIT_LLC_AHEAD)
            split_prefetch_llc(p, mi);
        miss_at[k++] = (uint16_t)i;
    }
    return k;
}

/* llc_sim_run's work for one agent in a hierarchy without inclusion. */
SIM_INLINE int split_run(struct llc_sim *sim, const struct sim_path *p, const uint64_t *addrs,
                         size_t n, bool phys, uint8_t *levels)
{
    uint64_t line[SIM_SPLIT_CHUNK];
    uint32_t set[SIM_SPLIT_CHUNK];
    uint8_t lv[SIM_SPLIT_CHUNK];
    struct sim_l2_miss miss[SIM_SPLIT_CHUNK];
    uint16_t miss_at[SIM_SPLIT_CHUNK];
    const uint64_t *slots[2][SIM_SPLIT_CHUNK]; /* page-table entries: this chunk's, the next's */
    const uint64_t reject = sim->paddr_reject;
    const bool latency = sim->cfg.latency.enabled;
    if (!phys)
        split_prefetch_pages(p, addrs, n < SIM_SPLIT_CHUNK ? n : SIM_SPLIT_CHUNK, slots[0]);
    for (size_t done = 0, c = 0; done < n; c ^= 1) {
        const uint64_t *const *slot = slots[c];
        const uint64_t **next_slot = slots[c ^ 1];
        const size_t m = n - done < SIM_SPLIT_CHUNK ? n - done : SIM_SPLIT_CHUNK;
        int rc = 0;
        size_t ready;
        /* Copies of the loop without per-access mode tests. */
        if (phys) {
            ready = split_prepare(p, reject, true, addrs + done, m, slot, line, set, &rc);
        } else if (p->page_split) {
            const struct sim_path q = path_page_split(p, true);
            ready = split_prepare(&q, reject, false, addrs + done, m, slot, line, set, &rc);
        } else {
            const struct sim_path q = path_page_split(p, false);
            ready = split_prepare(&q, reject, false, addrs + done, m, slot, line, set, &rc);
        }
        /* The next chunk's page-table entries, arriving during this chunk's
         * L2 and LLC passes (ready == m == SIM_SPLIT_CHUNK whenever there is
         * a next chunk). */
        const size_t rest = n - done - m;
        if (!phys && rc == 0)
            split_prefetch_pages(p, addrs + done + m,
                                 rest < SIM_SPLIT_CHUNK ? rest : SIM_SPLIT_CHUNK, next_slot);
        uint8_t *out = levels ? levels + done : lv;
        p->ac->accesses += ready;

        size_t k;
        if (p->fast && p->mode != SIM_MODE_NO_L2 && p->l2w == 16) {
            const struct sim_path q = path_l2_ways(p, 16);
            k = split_l2_pass(&q, line, set, ready, out, miss, miss_at);
        } else if (p->fast && p->mode != SIM_MODE_NO_L2) {
            const struct sim_path q = path_l2_ways(p, 8);
            k = split_l2_pass(&q, line, set, ready, out, miss, miss_at);
        } else {
            k = split_l2_pass(p, line, set, ready, out, miss, miss_at);
        }

        for (size_t j = 0; j < k; j++) {
            if (j + SIM_SPLIT_LLC_AHEAD < k)
                split_prefetch_llc(p, &miss[j + SIM_SPLIT_LLC_AHEAD]);
            uint64_t evicted;
            out[miss_at[j]] = (uint8_t)path_llc_part(sim, p, &miss[j], &evicted);
        }

        if (latency)
            for (size_t i = 0; i < ready; i++)
                sim_latency_draw(&sim->latency, out[i]);
        if (rc < 0)
            return rc;
        done += m;
    }
    return 0;
}

#endif
