/* Seeded page allocator: virtual pages of each agent -> physical frames drawn
 * without replacement. The n-th frame handed out is perm(n) for a seeded
 * bijection perm of [0, n_frames) (a 4-round Feistel network over the next
 * even power of two, cycle-walked into range), so frames are unique across
 * agents without a used-frame set, and reproducible from the seed. */
#include <errno.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "sim/geometry.h"
#include "sim/mem.h"
#include "sim/pages.h"
#include "sim/rng.h"

#define SIM_PT_INITIAL_CAP 64

static uint64_t feistel_round(uint64_t half, uint64_t key, unsigned bits)
{
    struct sim_rng r = { half ^ key };
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

static int table_grow(struct sim_page_table *t)
{
    const size_t cap = t->cap ? t->cap * 2 : SIM_PT_INITIAL_CAP;
    struct sim_pt_slot *slots = sim_alloc(cap * sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].key)
            continue;
        size_t s = sim_pt_slot_of(t->slots[i].key, cap);
        while (slots[s].key)
            s = (s + 1) & (cap - 1);
        slots[s] = t->slots[i];
    }
    sim_free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

int64_t sim_pages_entry(struct llc_sim_pages *p, struct sim_page_table *t, uint64_t vpn)
{
    const uint64_t key = vpn + 1;
    size_t s = sim_pt_slot_of(key, t->cap);
    while (t->slots[s].key && t->slots[s].key != key)
        s = (s + 1) & (t->cap - 1);
    if (!t->slots[s].key) {
        if (p->n_used == p->n_frames)
            return -ENOMEM;
        if (2 * (t->count + 1) > t->cap) {
            const int rc = table_grow(t);
            if (rc < 0)
                return rc;
        }
        s = sim_pt_slot_of(key, t->cap);
        while (t->slots[s].key)
            s = (s + 1) & (t->cap - 1);
        t->slots[s].key = key;
        const uint64_t frame = frame_perm(p, p->n_used++);
        const uint64_t set = p->geo ? sim_geo_page_set(p->geo, frame << p->page_bits) : 0;
        t->slots[s].frame = frame | set << SIM_PT_AUX_SHIFT;
        t->count++;
    }
    t->last_key = key;
    t->last_frame = t->slots[s].frame;
    return (int64_t)t->slots[s].frame;
}

int llc_sim_pages_create(uint64_t phys_mem_bytes, uint32_t page_size, unsigned agents,
                         uint64_t seed, struct llc_sim_pages **out,
                         char *err, size_t errlen)
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
        if (table_grow(&p->tables[a]) < 0) {
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
        sim_free(p->tables[a].slots);
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
