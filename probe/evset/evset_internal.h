/* Private parts of the eviction-set finder shared by its files. */
#ifndef LLC_EVSET_INTERNAL_H
#define LLC_EVSET_INTERNAL_H

#include <stdint.h>

#include "llcprobe/evset.h"
#include "llcprobe/rng.h"

/* splitmix64: seeded, cheap, enough for shuffles and noise draws. */
struct evset_rng {
    uint64_t state;
};

static inline uint64_t evset_rng_next(struct evset_rng *r)
{
    return llc_splitmix_next(&r->state);
}

static inline struct evset_rng evset_rng_seed(uint64_t seed, uint64_t stream)
{
    struct evset_rng r = {seed ^ (0x6a09e667f3bcc909ULL * (stream + 1))};
    evset_rng_next(&r);
    return r;
}

static inline uint32_t evset_rng_below(struct evset_rng *r, uint32_t n)
{
    return (uint32_t)(((evset_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

static inline double evset_rng_unit(struct evset_rng *r)
{
    return llc_rng_unit(evset_rng_next(r));
}

static inline void evset_shuffle(struct evset_rng *r, uint32_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        const size_t j = evset_rng_below(r, (uint32_t)i);
        const uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

static inline unsigned evset_log2(uint64_t x)
{
    unsigned b = 0;
    while (x > 1) {
        x >>= 1;
        b++;
    }
    return b;
}

struct llc_evset_finder {
    const struct llc_evset_oracle *oracle;
    struct llc_evset_params p;
    const struct llc_evset_line *lines;
    size_t n_lines;
    unsigned line_bits, index_bits;
    unsigned group;       /* G */
    unsigned reduce_size; /* R = W_LLC */
    /* arena lines with a paddr, grouped by index */
    uint32_t *bucket_start; /* sets_per_slice + 1 offsets */
    uint32_t *bucket_ids;
    /* victim LLC: per index, tail_len line ids sharing its L2 set but not
     * its LLC index; tail_state 0 = not built, 1 = ready, 2 = too few lines */
    unsigned tail_len;
    uint32_t *tail_ids;
    uint8_t *tail_state;
    struct evset_rng rng;
    struct llc_evset_counters counters;
    /* scratch for one timed walk: 1 + traversals * (largest set) addresses */
    uint64_t *walk;
    size_t walk_cap;
    uint32_t *order;
    size_t order_cap;
};

/* Set index of a physical address. */
static inline uint32_t evset_index_of(const struct llc_evset_finder *f, uint64_t paddr)
{
    return (uint32_t)((paddr >> f->line_bits) & ((1ULL << f->index_bits) - 1));
}

/* Grows f's walk scratch to hold a walk over n candidates (plus tails). */
int evset_reserve(struct llc_evset_finder *f, size_t n, char *err, size_t errlen);

/* paddr -> line id lookup over the arena (open addressing). */
struct evset_paddr_map {
    uint64_t *keys;
    uint32_t *ids;
    size_t mask;
};
int evset_paddr_map_init(struct evset_paddr_map *m, const struct llc_evset_line *lines, size_t n);
void evset_paddr_map_free(struct evset_paddr_map *m);
/* Line id of paddr, or UINT32_MAX. */
uint32_t evset_paddr_map_find(const struct evset_paddr_map *m, uint64_t paddr);

#endif
