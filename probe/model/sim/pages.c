/* Seeded page allocator: virtual pages of each agent -> physical frames drawn
 * without replacement. The n-th frame handed out is perm(n) for a seeded
 * bijection perm of [0, n_frames) (a 4-round Feistel network over the next
 * even power of two, cycle-walked into range), so frames are unique across
 * agents without a used-frame set, and reproducible from the seed. */
#include <errno.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "model/sim/geometry.h"
#include "model/sim/mem.h"
#include "model/sim/pages.h"
#include "model/sim/rng.h"

#define SIM_PT_INITIAL_CAP 16 /* directory slots */

static uint64_t feistel_round(uint64_t half, uint64_t key, unsigned bits)
{
    struct sim_rng r = {half ^ key};
    return sim_rng_next(&r) & ((1ULL << bits) - 1);
}

static uint64_t frame_perm(const struct llc_sim_pages *p, uint64_t n)
{
    const unsigned hb = p->half_bits;
    const uint64_t half_mask = (1ULL << hb) - 1;
    uint64_t x = n;
    do {
        uint64_t left = x >> hb, right = x & half_mask;
        for (unsigned i = 0; i < 4; i++) {
            const uint64_t next = left ^ feistel_round(right, p->round_keys[i], hb);
            left = right;
            right = next;
        }
        x = (left << hb) | right;
    } while (x >= p->n_frames);
    return x;
}

/* Doubles the directory (or creates it); leaves stay where they are. */
static int dir_grow(struct sim_page_table *t)
{
    const size_t cap = t->cap ? t->cap * 2 : SIM_PT_INITIAL_CAP;
    struct sim_pt_dir *dir = sim_alloc(cap * sizeof(*dir));
    if (!dir)
        return -ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->dir[i].key)
            continue;
        size_t s = sim_pt_slot_of(t->dir[i].key, cap);
        while (dir[s].key)
            s = (s + 1) & (cap - 1);
        dir[s] = t->dir[i];
    }
    sim_free(t->dir);
    t->dir = dir;
    t->cap = cap;
    return 0;
}

const uint64_t sim_pt_unmapped = 0;

/* The entry of vpn, adding an empty leaf for its run if it has none. */
static uint64_t *entry_slot(struct sim_page_table *t, uint64_t vpn)
{
    const uint64_t key = (vpn >> SIM_PT_LEAF_BITS) + 1;
    for (size_t s = sim_pt_slot_of(key, t->cap); t->dir[s].key; s = (s + 1) & (t->cap - 1))
        if (t->dir[s].key == key)
            return &t->dir[s].leaf[vpn & (SIM_PT_LEAF_PAGES - 1)];
    if (2 * (t->count + 1) > t->cap && dir_grow(t) < 0)
        return NULL;
    uint64_t *leaf = sim_alloc(SIM_PT_LEAF_PAGES * sizeof(*leaf));
    if (!leaf)
        return NULL;
    size_t s = sim_pt_slot_of(key, t->cap);
    while (t->dir[s].key)
        s = (s + 1) & (t->cap - 1);
    t->dir[s].key = key;
    t->dir[s].leaf = leaf;
    t->count++;
    return &leaf[vpn & (SIM_PT_LEAF_PAGES - 1)];
}

int sim_pages_entry(struct llc_sim_pages *p, struct sim_page_table *t, uint64_t vpn, uint64_t *e)
{
    uint64_t entry = *sim_pt_find(t, vpn);
    if (!entry) {
        if (p->n_used == p->n_frames)
            return -ENOMEM;
        uint64_t *slot = entry_slot(t, vpn);
        if (!slot)
            return -ENOMEM;
        const uint64_t frame = frame_perm(p, p->n_used++);
        const uint64_t set = p->geo ? sim_geo_page_set(p->geo, frame << p->page_bits) : 0;
        entry = frame | SIM_PT_MAPPED | set << SIM_PT_SET_SHIFT;
        *slot = entry;
    }
    t->last_key = vpn + 1;
    t->last_frame = entry;
    *e = entry;
    return 0;
}

int llc_sim_pages_create(uint64_t phys_mem_bytes, uint32_t page_size, unsigned agents,
                         uint64_t seed, struct llc_sim_pages **out, char *err, size_t errlen)
{
    *out = NULL;
    if (page_size != 4096 && page_size != (2u << 20))
        return llc_errf(err, errlen, -EINVAL, "page size %u is neither 4096 nor 2097152",
                        page_size);
    if (phys_mem_bytes < 2ULL * page_size || phys_mem_bytes > (1ULL << LLC_SIM_MAX_PADDR_BITS))
        return llc_errf(err, errlen, -EINVAL,
                        "physical memory of %llu bytes is not in [2 pages, 2^%d]",
                        (unsigned long long)phys_mem_bytes, LLC_SIM_MAX_PADDR_BITS);
    if (agents < 1 || agents > LLC_SIM_MAX_AGENTS)
        return llc_errf(err, errlen, -EINVAL, "agents %u not in [1, %d]", agents,
                        LLC_SIM_MAX_AGENTS);
    struct llc_sim_pages *p = calloc(1, sizeof(*p));
    if (!p)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    p->tables = calloc(agents, sizeof(*p->tables));
    if (!p->tables) {
        free(p);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    p->agents = agents;
    p->page_bits = sim_log2(page_size);
    p->n_frames = phys_mem_bytes >> p->page_bits;
    const unsigned frame_bits = sim_log2(p->n_frames - 1) + 1;
    p->half_bits = (frame_bits + 1) / 2;
    struct sim_rng rng = sim_rng_stream(seed, 0x9a6e);
    for (unsigned i = 0; i < 4; i++)
        p->round_keys[i] = sim_rng_next(&rng);
    /* Tables exist from the start, so lookups need not check for one. */
    for (unsigned a = 0; a < agents; a++) {
        if (dir_grow(&p->tables[a]) < 0) {
            llc_sim_pages_destroy(p);
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        }
    }
    *out = p;
    return 0;
}

void llc_sim_pages_destroy(struct llc_sim_pages *p)
{
    if (!p)
        return;
    for (unsigned a = 0; a < p->agents; a++) {
        const struct sim_page_table *t = &p->tables[a];
        for (size_t i = 0; i < t->cap; i++)
            sim_free(t->dir[i].leaf);
        sim_free(t->dir);
    }
    free(p->tables);
    free(p);
}

int llc_sim_pages_translate(struct llc_sim_pages *p, unsigned agent, uint64_t vaddr,
                            uint64_t *paddr)
{
    if (agent >= p->agents)
        return -EINVAL;
    return sim_pages_translate(p, agent, vaddr, paddr);
}

uint64_t llc_sim_pages_used(const struct llc_sim_pages *p)
{
    return p->n_used;
}
