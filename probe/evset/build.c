/* The whole map: index by index, reduce a pool of same-index lines to one
 * eviction set per slice, pruning each found class from the pool; carry each
 * set to the other line offsets of its pages; solve the slice hash once
 * enough classes are known and compute the rest. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evset/build.h"
#include "llcprobe/common.h"
#include "util/clock.h"

int evset_class_add(struct evset_build *b, uint32_t index, uint8_t source, uint32_t victim,
                    const uint32_t *lines, double rate, bool verified)
{
    if (b->n_cls == b->cap_cls) {
        const size_t cap = b->cap_cls ? 2 * b->cap_cls : 64;
        struct evset_class *c = realloc(b->cls, cap * sizeof(*c));
        if (!c)
            return -ENOMEM;
        b->cls = c;
        b->cap_cls = cap;
    }
    uint32_t *copy = malloc(b->g * sizeof(*copy));
    if (!copy)
        return -ENOMEM;
    memcpy(copy, lines, b->g * sizeof(*copy));
    const uint32_t id = (uint32_t)b->n_cls++;
    b->cls[id] =
        (struct evset_class){index, b->per_index[index]++, source, verified, rate, victim, copy};
    b->owner[victim] = id;
    for (unsigned k = 0; k < b->g; k++)
        b->owner[lines[k]] = id;
    return (int)id;
}

int evset_verify(struct evset_build *b, uint32_t victim, const uint32_t *lines, double *rate,
                 char *err, size_t errlen)
{
    const int rc = llc_evset_eviction_rate(b->f, victim, lines, b->g, b->f->p.verify_trials, rate,
                                           err, errlen);
    if (rc < 0)
        return rc;
    b->rep.checked++;
    return *rate >= b->f->p.verify_min;
}

/* Same-index arena lines still in no class, shuffled, at most pool_max. */
static size_t collect_pool(struct evset_build *b, uint32_t index, uint32_t *pool, size_t cap)
{
    size_t n = 0;
    const struct llc_evset_finder *f = b->f;
    for (uint32_t k = f->bucket_start[index]; k < f->bucket_start[index + 1]; k++)
        if (b->owner[f->bucket_ids[k]] == EVSET_FREE)
            pool[n++] = f->bucket_ids[k];
    evset_shuffle(&b->rng, pool, n);
    return n < cap ? n : cap;
}

/* Lines of rest[from..n) still free that the congruence test puts with set
 * (R lines), appended to b->found; how many, or a negative code. */
static int prune(struct evset_build *b, const uint32_t *set, const uint32_t *rest, size_t from,
                 size_t n, char *err, size_t errlen)
{
    size_t found = 0;
    for (size_t k = from; k < n; k++) {
        if (b->owner[rest[k]] != EVSET_FREE)
            continue;
        const int rc = llc_evset_evicts(b->f, rest[k], set, b->f->reduce_size, err, errlen);
        if (rc < 0)
            return rc;
        if (rc)
            b->found[found++] = rest[k];
    }
    return (int)found;
}

/* All classes of one index from one pool: reduce to R lines, prune the
 * pool of their slice's lines (which also completes a victim-LLC set from R
 * to G lines), verify the G lines as the probe will walk them. */
static int find_index(struct evset_build *b, uint32_t index, char *err, size_t errlen)
{
    const struct llc_evset_params *p = &b->f->p;
    const unsigned r = b->f->reduce_size, g = b->g;
    const size_t bucket = b->f->bucket_start[index + 1] - b->f->bucket_start[index];
    const size_t pool_max = p->pool_max ? p->pool_max : 3ull * p->slices * (g + 1);
    uint32_t *pool = malloc((bucket ? bucket : 1) * sizeof(*pool));
    uint32_t *rest = malloc((bucket ? bucket : 1) * sizeof(*rest));
    int rc = 0;
    if (!pool || !rest) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for a pool of %zu lines", bucket);
        goto out;
    }
    const size_t n_pool = collect_pool(b, index, pool, pool_max);
    const unsigned max_failures = p->max_failures ? p->max_failures : 2 * p->slices;
    unsigned failures = 0;
    while (b->per_index[index] < p->slices && failures < max_failures) {
        size_t n = 0;
        for (size_t k = 0; k < n_pool; k++)
            if (b->owner[pool[k]] == EVSET_FREE)
                rest[n++] = pool[k];
        if (n < g + 1)
            break;
        const uint32_t victim = rest[0];
        uint32_t *set = b->scratch;
        rc = llc_evset_reduce(b->f, victim, rest + 1, n - 1, set, err, errlen);
        if (rc < 0 && rc != -ESRCH)
            goto out;
        int found = 0;
        const bool last = b->per_index[index] + 1 >= p->slices;
        if (rc == 0 && (g > r || !last)) {
            /* the reduced lines are taken; skip them while pruning */
            for (unsigned k = 0; k < r; k++)
                b->owner[set[k]] = EVSET_DROPPED;
            found = prune(b, set, rest, 1, n, err, errlen);
            for (unsigned k = 0; k < r; k++)
                b->owner[set[k]] = EVSET_FREE;
            if (found < 0) {
                rc = found;
                goto out;
            }
            for (unsigned k = r; k < g && (int)(k - r) < found; k++)
                set[k] = b->found[k - r];
            if ((unsigned)found < g - r)
                rc = -ESRCH; /* the pool lacks this slice's lines for a full set */
        }
        double rate = 0;
        if (rc == 0) {
            rc = evset_verify(b, victim, set, &rate, err, errlen);
            if (rc < 0)
                goto out;
            rc = rc ? 0 : -ESRCH;
        }
        if (rc == -ESRCH) {
            /* its slice has too few lines left here, or noise won: no class */
            b->owner[victim] = EVSET_DROPPED;
            b->rep.reduce_failures++;
            failures++;
            rc = 0;
            continue;
        }
        rc = evset_class_add(b, index, LLC_EVSET_REDUCED, victim, set, rate, true);
        if (rc < 0) {
            rc = llc_errf(err, errlen, rc, "out of memory");
            goto out;
        }
        b->rep.reduced++;
        for (int k = (int)(g - r); k < found; k++)
            b->owner[b->found[k]] = (uint32_t)rc;
    }
    rc = 0;
out:
    free(pool);
    free(rest);
    return rc;
}

/* The frames of class c at every other line offset of their pages: a
 * candidate set for index ^ d, kept if it verifies. */
static int reuse_offsets(struct evset_build *b, uint32_t c, char *err, size_t errlen)
{
    const struct llc_evset_params *p = &b->f->p;
    const uint32_t page_lines = p->page_size / p->line_size;
    const uint32_t span = page_lines < p->sets_per_slice ? page_lines : p->sets_per_slice;
    uint32_t *moved = b->scratch;
    for (uint32_t d = 1; d < span; d++) {
        const uint32_t index = b->cls[c].index ^ d;
        if (b->per_index[index] >= p->slices)
            continue;
        const uint64_t delta = (uint64_t)d << b->f->line_bits;
        bool usable = true;
        for (unsigned k = 0; k <= b->g && usable; k++) {
            const uint32_t from = k < b->g ? b->cls[c].lines[k] : b->cls[c].victim;
            const uint32_t to = evset_paddr_map_find(&b->map, b->f->lines[from].paddr ^ delta);
            usable = to != UINT32_MAX && b->owner[to] == EVSET_FREE;
            moved[k] = to;
        }
        if (!usable) /* not in the arena, or already part of a class there */
            continue;
        b->rep.reuse_tried++;
        double rate;
        int rc = evset_verify(b, moved[b->g], moved, &rate, err, errlen);
        if (rc < 0)
            return rc;
        if (!rc)
            continue;
        b->rep.reuse_held++;
        rc = evset_class_add(b, index, LLC_EVSET_REUSED, moved[b->g], moved, rate, true);
        if (rc < 0)
            return llc_errf(err, errlen, rc, "out of memory");
    }
    return 0;
}

static int prepare(struct evset_build *b, struct llc_evset_finder *f, char *err, size_t errlen)
{
    const uint32_t sets = f->p.sets_per_slice;
    memset(b, 0, sizeof(*b));
    b->f = f;
    b->g = f->group;
    b->rng = evset_rng_seed(f->p.seed, 23);
    b->owner = malloc((f->n_lines ? f->n_lines : 1) * sizeof(*b->owner));
    b->per_index = calloc(sets, sizeof(*b->per_index));
    b->scratch = malloc(((size_t)b->g + 1) * sizeof(*b->scratch));
    b->found = malloc((f->n_lines ? f->n_lines : 1) * sizeof(*b->found));
    if (!b->owner || !b->per_index || !b->scratch || !b->found ||
        evset_paddr_map_init(&b->map, f->lines, f->n_lines) < 0)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu lines", f->n_lines);
    const uint64_t above = ~((1ULL << (f->line_bits + f->index_bits)) - 1);
    uint64_t first = LLC_EVSET_NO_PADDR;
    for (size_t i = 0; i < f->n_lines; i++) {
        const uint64_t pa = f->lines[i].paddr;
        b->owner[i] = pa == LLC_EVSET_NO_PADDR ? EVSET_DROPPED : EVSET_FREE;
        if (pa == LLC_EVSET_NO_PADDR)
            continue;
        if (first == LLC_EVSET_NO_PADDR)
            first = pa;
        b->domain |= (pa ^ first) & above;
    }
    if (first == LLC_EVSET_NO_PADDR)
        return llc_errf(err, errlen, -EINVAL, "no arena line has a physical address");
    b->rep.units = sets * f->p.slices;
    return 0;
}

static void release(struct evset_build *b)
{
    for (size_t c = 0; c < b->n_cls; c++)
        free(b->cls[c].lines);
    free(b->cls);
    free(b->owner);
    free(b->per_index);
    free(b->found);
    free(b->scratch);
    evset_paddr_map_free(&b->map);
}

static int assemble(struct evset_build *b, struct llc_evset_result **out, char *err, size_t errlen)
{
    const struct llc_evset_params *p = &b->f->p;
    struct llc_evset_result *r = calloc(1, sizeof(*r));
    if (r) {
        r->sets = calloc(b->rep.units, sizeof(*r->sets));
        r->lines = calloc((size_t)b->rep.units * b->g, sizeof(*r->lines));
    }
    if (!r || !r->sets || !r->lines) {
        llc_evset_result_free(r);
        return llc_errf(err, errlen, -ENOMEM, "out of memory for the result");
    }
    r->group_size = b->g;
    r->sets_per_slice = p->sets_per_slice;
    r->slices = p->slices;
    for (uint32_t u = 0; u < b->rep.units; u++)
        r->sets[u] = (struct llc_evset_set){.index = u % p->sets_per_slice,
                                            .label = u / p->sets_per_slice,
                                            .source = LLC_EVSET_NONE,
                                            .verify_rate = -1,
                                            .first = (size_t)u * b->g,
                                            .victim_paddr = LLC_EVSET_NO_PADDR};
    for (size_t c = 0; c < b->n_cls; c++) {
        const struct evset_class *k = &b->cls[c];
        if (k->label >= p->slices)
            continue; /* a hash label beyond a non-power-of-two slice count */
        struct llc_evset_set *s = &r->sets[k->label * p->sets_per_slice + k->index];
        s->source = k->source;
        s->verified = k->verified;
        s->verify_rate = k->rate;
        s->victim_paddr = b->f->lines[k->victim].paddr;
        for (unsigned i = 0; i < b->g; i++)
            r->lines[s->first + i] = b->f->lines[k->lines[i]];
        b->rep.found++;
        b->rep.verified += k->verified;
    }
    r->report = b->rep;
    *out = r;
    return 0;
}

int llc_evset_build(struct llc_evset_finder *f, struct llc_evset_result **out, char *err,
                    size_t errlen)
{
    const double t0 = llc_now();
    struct evset_build b;
    int rc = prepare(&b, f, err, errlen);
    if (rc < 0)
        goto out;
    const struct llc_evset_params *p = &f->p;
    snprintf(b.rep.hash_note, sizeof(b.rep.hash_note), "%s",
             p->solve_hash ? "not tried" : "disabled");
    bool give_up_hash = !p->solve_hash;
    for (uint32_t index = 0; index < p->sets_per_slice && !b.rep.hash_solved; index++) {
        if (b.per_index[index] >= p->slices)
            continue;
        const size_t before = b.n_cls;
        rc = find_index(&b, index, err, errlen);
        if (rc < 0)
            goto out;
        const size_t found_here = b.n_cls;
        for (size_t c = before; c < found_here && p->reuse_offsets; c++) {
            rc = reuse_offsets(&b, (uint32_t)c, err, errlen);
            if (rc < 0)
                goto out;
        }
        if (!give_up_hash && b.n_cls > before)
            give_up_hash = evset_try_solve(&b) < 0;
    }
    if (b.rep.hash_solved) {
        rc = evset_fill_from_hash(&b, err, errlen);
        if (rc < 0)
            goto out;
    }
    llc_evset_finder_counters(f, &b.rep.counters);
    b.rep.build_seconds = llc_now() - t0;
    rc = assemble(&b, out, err, errlen);
    if (rc == 0) {
        struct llc_evset_report *r = &(*out)->report;
        r->verified_fraction = r->units ? (double)r->verified / r->units : 0;
        r->pass_rate = r->checked ? (double)r->verified / r->checked : 0;
        r->coverage = r->units ? (double)r->found / r->units : 0;
    }
out:
    release(&b);
    return rc;
}
