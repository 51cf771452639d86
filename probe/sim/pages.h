/* Per-agent page tables of the simulator (see llc_sim_pages in sim.h). The
 * structure is here so the access path can inline lookups. */
#ifndef LLC_SIM_PAGES_H
#define LLC_SIM_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "llcprobe/sim.h"

/* A slot's `frame` is the frame number and, in the bits from
 * SIM_PT_AUX_SHIFT up, the LLC set of the frame's first byte when the
 * allocator serves a simulator whose hash splits at pages (see struct
 * sim_geo): the page's set and its offset's then give any address's set
 * without hashing it whole. Frames are < 2^40 (52-bit addresses, 4 KiB
 * pages). */
#define SIM_PT_AUX_SHIFT 40
#define SIM_PT_FRAME_MASK ((1ULL << SIM_PT_AUX_SHIFT) - 1)

struct sim_pt_slot {
    uint64_t key;         /* vpn + 1, 0 = empty slot (open addressing) */
    uint64_t frame;       /* frame | page set << SIM_PT_AUX_SHIFT */
};

struct sim_page_table {
    struct sim_pt_slot *slots;
    size_t cap, count;    /* cap is a power of two, > 0 */
    uint64_t last_key;    /* vpn + 1 of the last translation, 0 = none */
    uint64_t last_frame;  /* as in the slot */
};

struct sim_geo;

struct llc_sim_pages {
    unsigned page_bits;
    uint64_t n_frames, n_used;
    unsigned half_bits;               /* Feistel halves; domain 2^(2*half_bits) */
    uint64_t round_keys[4];
    unsigned agents;
    struct sim_page_table *tables;
    const struct sim_geo *geo;        /* page sets in the slots, or NULL */
};

static inline size_t sim_pt_slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
}

/* Hint: the slot a later translation of vaddr will probe first; returns
 * its index, which that translation may reuse (sim/path.h). */
static inline size_t sim_pages_prefetch(const struct llc_sim_pages *p, unsigned agent, uint64_t vaddr)
{
    const struct sim_page_table *t = &p->tables[agent];
    const size_t slot = sim_pt_slot_of((vaddr >> p->page_bits) + 1, t->cap);
    __builtin_prefetch(&t->slots[slot]);
    return slot;
}

/* The slot value (frame and page set, < 2^63) of vpn, allocating a frame if
 * new, or a negative error code. */
int64_t sim_pages_entry(struct llc_sim_pages *p, struct sim_page_table *t, uint64_t vpn);

/* agent must be < p->agents. */
static inline int sim_pages_translate(struct llc_sim_pages *p, unsigned agent, uint64_t vaddr,
                                      uint64_t *paddr)
{
    struct sim_page_table *t = &p->tables[agent];
    const uint64_t vpn = vaddr >> p->page_bits;
    const uint64_t offset = vaddr & ((1ULL << p->page_bits) - 1);
    if (t->last_key == vpn + 1) {
        *paddr = ((t->last_frame & SIM_PT_FRAME_MASK) << p->page_bits) | offset;
        return 0;
    }
    const int64_t e = sim_pages_entry(p, t, vpn);
    if (e < 0)
        return (int)e;
    *paddr = (((uint64_t)e & SIM_PT_FRAME_MASK) << p->page_bits) | offset;
    return 0;
}

#endif
