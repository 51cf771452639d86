/* The finder's lifecycle and its eviction test: load the victim, walk the
 * candidates in a fresh random order (the same order each pass, like the
 * stress probe's cyclic walk), time the victim; repeat and vote. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evset/evset_internal.h"
#include "llcprobe/common.h"

void llc_evset_params_default(struct llc_evset_params *p)
{
    memset(p, 0, sizeof(*p));
    p->line_size = 64;
    p->slices = 1;
    p->page_size = 4096;
    p->trials = 5;
    p->vote = 0.8;
    p->traversals = 2;
    p->verify_trials = 20;
    p->verify_min = 0.9;
    p->max_backtracks = 64;
    p->reuse_offsets = true;
    p->solve_hash = true;
    p->hash_verify_fraction = 1.0;
    p->seed = 1;
}

unsigned llc_evset_group_size(bool exclusive_llc, unsigned w_l2, unsigned w_llc)
{
    return exclusive_llc ? w_l2 + w_llc : w_llc;
}

static bool is_pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

static int check_params(const struct llc_evset_params *p, char *err, size_t errlen)
{
    if (!is_pow2(p->line_size) || !is_pow2(p->sets_per_slice))
        return llc_errf(err, errlen, -EINVAL,
                        "line size %u and sets per slice %u must be powers "
                        "of two",
                        p->line_size, p->sets_per_slice);
    if (!is_pow2(p->page_size) || p->page_size < p->line_size)
        return llc_errf(err, errlen, -EINVAL,
                        "page size %u must be a power of two >= the line size", p->page_size);
    if (p->slices < 1 || p->slices > (1u << LLC_EVSET_MAX_HASH_BITS))
        return llc_errf(err, errlen, -EINVAL, "slices %u not in [1, %d]", p->slices,
                        1 << LLC_EVSET_MAX_HASH_BITS);
    if (p->llc_ways < 1)
        return llc_errf(err, errlen, -EINVAL, "LLC ways must be >= 1");
    if (p->victim_llc) {
        if (!p->l2_ways || !is_pow2(p->l2_sets))
            return llc_errf(err, errlen, -EINVAL,
                            "a victim LLC needs the L2's ways and "
                            "(power-of-two) sets");
        if (p->l2_sets >= p->sets_per_slice)
            return llc_errf(err, errlen, -EINVAL,
                            "victim LLC: L2 sets (%u) must be fewer than "
                            "LLC sets per slice (%u), so that lines sharing an L2 set but not an "
                            "LLC index exist for the tail",
                            p->l2_sets, p->sets_per_slice);
    }
    if (p->trials < 1 || p->traversals < 1 || p->verify_trials < 1)
        return llc_errf(err, errlen, -EINVAL, "trials, traversals and verify trials must be >= 1");
    if (!(p->vote > 0 && p->vote <= 1) || !(p->verify_min > 0 && p->verify_min <= 1))
        return llc_errf(err, errlen, -EINVAL, "vote and verify_min must lie in (0, 1]");
    if (!(p->hash_verify_fraction >= 0 && p->hash_verify_fraction <= 1))
        return llc_errf(err, errlen, -EINVAL, "hash_verify_fraction must lie in [0, 1]");
    return 0;
}

int llc_evset_finder_create(const struct llc_evset_oracle *oracle,
                            const struct llc_evset_params *params,
                            const struct llc_evset_line *lines, size_t n_lines,
                            struct llc_evset_finder **out, char *err, size_t errlen)
{
    const int rc = check_params(params, err, errlen);
    if (rc < 0)
        return rc;
    if (!oracle || !oracle->ops || !oracle->ops->timed_walk)
        return llc_errf(err, errlen, -EINVAL, "no oracle");
    if (n_lines >= UINT32_MAX)
        return llc_errf(err, errlen, -EINVAL, "too many lines (%zu)", n_lines);
    struct llc_evset_finder *f = calloc(1, sizeof(*f));
    if (!f)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    f->oracle = oracle;
    f->p = *params;
    f->lines = lines;
    f->n_lines = n_lines;
    f->line_bits = evset_log2(params->line_size);
    f->index_bits = evset_log2(params->sets_per_slice);
    f->rng = evset_rng_seed(params->seed, 11);
    f->group = llc_evset_group_size(params->victim_llc, params->l2_ways, params->llc_ways);
    f->reduce_size = params->llc_ways;
    f->tail_len = params->victim_llc ? 2 * params->l2_ways : 0;
    const uint32_t sets = params->sets_per_slice;
    f->bucket_start = calloc((size_t)sets + 1, sizeof(*f->bucket_start));
    f->bucket_ids = malloc((n_lines ? n_lines : 1) * sizeof(*f->bucket_ids));
    f->tail_state = calloc(sets, sizeof(*f->tail_state));
    f->tail_ids = malloc(((size_t)sets * f->tail_len + 1) * sizeof(*f->tail_ids));
    if (!f->bucket_start || !f->bucket_ids || !f->tail_state || !f->tail_ids) {
        llc_evset_finder_destroy(f);
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu lines", n_lines);
    }
    for (size_t i = 0; i < n_lines; i++)
        if (lines[i].paddr != LLC_EVSET_NO_PADDR)
            f->bucket_start[evset_index_of(f, lines[i].paddr) + 1]++;
    for (uint32_t s = 0; s < sets; s++)
        f->bucket_start[s + 1] += f->bucket_start[s];
    uint32_t *fill = calloc(sets, sizeof(*fill));
    if (!fill) {
        llc_evset_finder_destroy(f);
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n_lines; i++) {
        if (lines[i].paddr == LLC_EVSET_NO_PADDR)
            continue;
        const uint32_t s = evset_index_of(f, lines[i].paddr);
        f->bucket_ids[f->bucket_start[s] + fill[s]++] = (uint32_t)i;
    }
    free(fill);
    *out = f;
    return 0;
}

unsigned llc_evset_finder_group_size(const struct llc_evset_finder *f)
{
    return f->group;
}

unsigned llc_evset_finder_reduce_size(const struct llc_evset_finder *f)
{
    return f->reduce_size;
}

void llc_evset_finder_destroy(struct llc_evset_finder *f)
{
    if (!f)
        return;
    free(f->walk);
    free(f->order);
    free(f->bucket_start);
    free(f->bucket_ids);
    free(f->tail_ids);
    free(f->tail_state);
    free(f);
}

void llc_evset_finder_counters(const struct llc_evset_finder *f, struct llc_evset_counters *out)
{
    *out = f->counters;
}

int evset_reserve(struct llc_evset_finder *f, size_t n, char *err, size_t errlen)
{
    const size_t walk = 1 + (size_t)f->p.traversals * (n + f->tail_len);
    if (walk > f->walk_cap) {
        uint64_t *w = realloc(f->walk, walk * sizeof(*w));
        if (!w)
            return llc_errf(err, errlen, -ENOMEM, "out of memory for a walk of %zu", walk);
        f->walk = w;
        f->walk_cap = walk;
    }
    if (n > f->order_cap) {
        uint32_t *o = realloc(f->order, n * sizeof(*o));
        if (!o)
            return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu candidates", n);
        f->order = o;
        f->order_cap = n;
    }
    return 0;
}

/* The tail for victims of one index: lines of the index that differs in the
 * lowest LLC-index bit above the L2 index, so they share the victim's L2 set
 * and never its LLC set. NULL (and a message) if the arena has too few. */
static const uint32_t *tail_for(struct llc_evset_finder *f, uint32_t index, char *err,
                                size_t errlen)
{
    uint32_t *tail = f->tail_ids + (size_t)index * f->tail_len;
    if (f->tail_state[index] == 0) {
        const uint32_t j = index ^ f->p.l2_sets;
        const uint32_t avail = f->bucket_start[j + 1] - f->bucket_start[j];
        f->tail_state[index] = avail >= f->tail_len ? 1 : 2;
        if (f->tail_state[index] == 1)
            memcpy(tail, f->bucket_ids + f->bucket_start[j], f->tail_len * sizeof(*tail));
    }
    if (f->tail_state[index] == 2) {
        llc_errf(err, errlen, -ENOSPC,
                 "the arena has fewer than %u lines at index %u for the "
                 "L2 tail of index %u",
                 f->tail_len, index ^ f->p.l2_sets, index);
        return NULL;
    }
    return tail;
}

/* One timed trial: 1 if victim was evicted, 0 if not, < 0 on oracle error. */
static int trial(struct llc_evset_finder *f, uint32_t victim, const uint32_t *set, size_t n,
                 bool with_tail, char *err, size_t errlen)
{
    const uint32_t *tail = NULL;
    if (with_tail && f->tail_len) {
        tail = tail_for(f, evset_index_of(f, f->lines[victim].paddr), err, errlen);
        if (!tail)
            return -ENOSPC;
    }
    memcpy(f->order, set, n * sizeof(*set));
    evset_shuffle(&f->rng, f->order, n);
    const uint64_t v = f->lines[victim].addr;
    size_t k = 0;
    f->walk[k++] = v;
    for (unsigned t = 0; t < f->p.traversals; t++) {
        for (size_t i = 0; i < n; i++)
            f->walk[k++] = f->lines[f->order[i]].addr;
        for (size_t i = 0; tail && i < f->tail_len; i++)
            f->walk[k++] = f->lines[tail[i]].addr;
    }
    /* a fresh fill, so every trial starts from the same state of the victim */
    if (f->oracle->ops->flush)
        f->oracle->ops->flush(f->oracle->ctx, v);
    uint32_t ticks = 0;
    const int rc = f->oracle->ops->timed_walk(f->oracle->ctx, f->walk, k, v, &ticks, err, errlen);
    if (rc < 0)
        return rc;
    f->counters.trials++;
    f->counters.accesses += k;
    return ticks > f->oracle->threshold;
}

int llc_evset_evicts(struct llc_evset_finder *f, uint32_t victim, const uint32_t *set, size_t n,
                     char *err, size_t errlen)
{
    int rc = evset_reserve(f, n, err, errlen);
    if (rc < 0)
        return rc;
    f->counters.tests++;
    const unsigned trials = f->p.trials;
    unsigned need = (unsigned)ceil(f->p.vote * trials - 1e-9);
    if (need < 1)
        need = 1;
    unsigned yes = 0, no = 0;
    /* stop as soon as the vote is decided */
    while (yes < need && no <= trials - need) {
        rc = trial(f, victim, set, n, true, err, errlen);
        if (rc < 0)
            return rc;
        if (rc)
            yes++;
        else
            no++;
    }
    return yes >= need;
}

int llc_evset_eviction_rate(struct llc_evset_finder *f, uint32_t victim, const uint32_t *set,
                            size_t n, unsigned trials, double *rate, char *err, size_t errlen)
{
    int rc = evset_reserve(f, n, err, errlen);
    if (rc < 0)
        return rc;
    if (!trials)
        return llc_errf(err, errlen, -EINVAL, "no trials");
    unsigned yes = 0;
    for (unsigned t = 0; t < trials; t++) {
        rc = trial(f, victim, set, n, false, err, errlen);
        if (rc < 0)
            return rc;
        yes += (unsigned)rc;
    }
    *rate = (double)yes / trials;
    return 0;
}
