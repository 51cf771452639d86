/* Per-agent page tables of the simulator (see llc_sim_pages in sim.h). The
 * structure is here so the access path can inline lookups. */
#ifndef LLC_SIM_PAGES_H
#define LLC_SIM_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "llcprobe/sim.h"

/* A page's entry is its frame number and, in the bits from
 * SIM_PT_SET_SHIFT up, the LLC set of the frame's first byte when the
 * allocator serves a simulator whose hash splits at pages (see struct
 * sim_geo): the page's set and its offset's then give any address's set
 * without hashing it whole. Frames are < 2^40 (52-bit addresses, 4 KiB
 * pages), sets < 2^23; bit SIM_PT_AUX_SHIFT marks a mapped page, so 0 is
 * an unmapped one. */
#define SIM_PT_AUX_SHIFT 40
#define SIM_PT_FRAME_MASK ((1ULL << SIM_PT_AUX_SHIFT) - 1)
#define SIM_PT_MAPPED (1ULL << SIM_PT_AUX_SHIFT)
#define SIM_PT_SET_SHIFT (SIM_PT_AUX_SHIFT + 1)

/* A page table is a radix of one level under a hash: leaves of
 * SIM_PT_LEAF_PAGES entries cover aligned runs of virtual pages, and an
 * open-addressing directory, small enough to stay in the host's L1 for
 * clustered address spaces, maps a run to its leaf. A translation thus
 * reads 8 bytes of a dense leaf (the bench's 64 Ki pages: 512 KiB) instead
 * of a 16-byte slot in a hash twice the pages' count: fewer, and more
 * reusable, host cache lines. 256 pages (2 KiB) per leaf bounds what a
 * sparse address space wastes: at worst 2 KiB per page. */
#define SIM_PT_LEAF_BITS 8
#define SIM_PT_LEAF_PAGES (1u << SIM_PT_LEAF_BITS)

struct sim_pt_dir {
    uint64_t key;   /* run (vpn >> SIM_PT_LEAF_BITS) + 1, 0 = empty slot */
    uint64_t *leaf; /* SIM_PT_LEAF_PAGES entries */
};

struct sim_page_table {
    struct sim_pt_dir *dir;
    size_t cap, count;   /* directory slots (a power of two, > 0), leaves */
    uint64_t last_key;   /* vpn + 1 of the last translation, 0 = none */
    uint64_t last_frame; /* its entry */
};

struct sim_geo;

struct llc_sim_pages {
    unsigned page_bits;
    uint64_t n_frames, n_used;
    unsigned half_bits; /* Feistel halves; domain 2^(2*half_bits) */
    uint64_t round_keys[4];
    unsigned agents;
    struct sim_page_table *tables;
    const struct sim_geo *geo; /* page sets in the entries, or NULL */
};

static inline size_t sim_pt_slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
}

/* The entry every page of a run without a leaf reads: unmapped. */
extern const uint64_t sim_pt_unmapped;

/* The entry of vpn's page in a directory of mask + 1 slots;
 * sim_pt_unmapped if its run has no leaf yet (so readers need no NULL
 * test). Loops doing many lookups pass the directory in locals: read
 * through the table, it would be reloaded after every store they make. */
static inline const uint64_t *sim_pt_lookup(const struct sim_pt_dir *dir, size_t mask, uint64_t vpn)
{
    const uint64_t key = (vpn >> SIM_PT_LEAF_BITS) + 1;
    for (size_t s = sim_pt_slot_of(key, mask + 1);; s = (s + 1) & mask) {
        if (dir[s].key == key)
            return &dir[s].leaf[vpn & (SIM_PT_LEAF_PAGES - 1)];
        if (!dir[s].key)
            return &sim_pt_unmapped;
    }
}

/* The entry of vpn's page in t (see sim_pt_lookup). */
static inline const uint64_t *sim_pt_find(const struct sim_page_table *t, uint64_t vpn)
{
    return sim_pt_lookup(t->dir, t->cap - 1, vpn);
}

/* Hint: fetches the entry a later translation of vaddr will read and
 * returns it for that translation to reuse (sim/path.h): leaves never move
 * or go before the table does. */
static inline const uint64_t *sim_pages_prefetch(const struct llc_sim_pages *p, unsigned agent,
                                                 uint64_t vaddr)
{
    const uint64_t *e = sim_pt_find(&p->tables[agent], vaddr >> p->page_bits);
    __builtin_prefetch(e);
    return e;
}

/* Stores in *e the entry (frame and page set) of vpn, allocating a frame
 * if new; 0 or a negative error code. */
int sim_pages_entry(struct llc_sim_pages *p, struct sim_page_table *t, uint64_t vpn, uint64_t *e);

/* agent must be < p->agents. */
static inline int sim_pages_translate(struct llc_sim_pages *p, unsigned agent, uint64_t vaddr,
                                      uint64_t *paddr)
{
    struct sim_page_table *t = &p->tables[agent];
    const uint64_t vpn = vaddr >> p->page_bits;
    const uint64_t offset = vaddr & ((1ULL << p->page_bits) - 1);
    uint64_t e = t->last_frame;
    if (t->last_key != vpn + 1) {
        const int rc = sim_pages_entry(p, t, vpn, &e);
        if (rc < 0)
            return rc;
    }
    *paddr = ((e & SIM_PT_FRAME_MASK) << p->page_bits) | offset;
    return 0;
}

#endif
