/* The solved-hash shortcut of llc_evset_build: solve from the verified
 * classes, relabel them, and compute every missing unit from physical
 * addresses, verifying as many as asked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evset/build.h"
#include "llcprobe/common.h"

int evset_try_solve(struct evset_build *b)
{
    const struct llc_evset_params *p = &b->f->p;
    size_t n = 0;
    for (size_t c = 0; c < b->n_cls; c++)
        n += b->cls[c].verified ? b->g + 1 : 0;
    uint64_t *paddrs = malloc((n ? n : 1) * sizeof(*paddrs));
    uint32_t *class_of = malloc((n ? n : 1) * sizeof(*class_of));
    int ret = 0;
    if (!paddrs || !class_of) {
        snprintf(b->rep.hash_note, sizeof(b->rep.hash_note), "out of memory");
        ret = -1;
        goto out;
    }
    n = 0;
    for (size_t c = 0; c < b->n_cls; c++) {
        if (!b->cls[c].verified)
            continue;
        for (unsigned k = 0; k <= b->g; k++) {
            const uint32_t id = k < b->g ? b->cls[c].lines[k] : b->cls[c].victim;
            paddrs[n] = b->f->lines[id].paddr;
            class_of[n++] = (uint32_t)c;
        }
    }
    struct llc_evset_hash h;
    const int rc =
        llc_evset_hash_solve(paddrs, class_of, n, p->line_size, p->sets_per_slice, p->slices,
                             b->domain, &h, b->rep.hash_note, sizeof(b->rep.hash_note));
    if (rc == -EAGAIN)
        goto out;
    if (rc < 0) {
        ret = -1;
        goto out;
    }
    b->rep.hash_solved = true;
    b->rep.hash = h;
    b->rep.hash_note[0] = '\0';
    for (size_t c = 0; c < b->n_cls; c++)
        b->cls[c].label = llc_evset_hash_label(&h, b->f->lines[b->cls[c].lines[0]].paddr);
    ret = 1;
out:
    free(paddrs);
    free(class_of);
    return ret;
}

int evset_fill_from_hash(struct evset_build *b, char *err, size_t errlen)
{
    const struct llc_evset_params *p = &b->f->p;
    const unsigned labels = 1u << b->rep.hash.bits;
    const unsigned need = b->g + 1; /* the set and a victim to verify it with */
    uint32_t *have = calloc(labels, sizeof(*have));
    uint32_t *pick = malloc((size_t)labels * need * sizeof(*pick));
    bool *taken = calloc(labels, sizeof(*taken));
    int rc = 0;
    if (!have || !pick || !taken) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t index = 0; index < p->sets_per_slice; index++) {
        if (b->per_index[index] >= p->slices)
            continue;
        memset(have, 0, labels * sizeof(*have));
        memset(taken, 0, labels * sizeof(*taken));
        for (size_t c = 0; c < b->n_cls; c++)
            if (b->cls[c].index == index)
                taken[b->cls[c].label] = true;
        for (uint32_t k = b->f->bucket_start[index]; k < b->f->bucket_start[index + 1]; k++) {
            const uint32_t id = b->f->bucket_ids[k];
            if (b->owner[id] != EVSET_FREE)
                continue;
            const uint32_t l = llc_evset_hash_label(&b->rep.hash, b->f->lines[id].paddr);
            if (!taken[l] && have[l] < need)
                pick[(size_t)l * need + have[l]++] = id;
        }
        for (uint32_t l = 0; l < labels && l < p->slices; l++) {
            if (taken[l] || have[l] < need)
                continue;
            const uint32_t *lines = pick + (size_t)l * need;
            double rate = -1;
            bool verified = false;
            if (p->hash_verify_fraction > 0 && evset_rng_unit(&b->rng) < p->hash_verify_fraction) {
                rc = evset_verify(b, lines[b->g], lines, &rate, err, errlen);
                if (rc < 0)
                    goto out;
                if (!rc) {
                    b->rep.hash_rejected++;
                    continue;
                }
                verified = true;
            }
            rc = evset_class_add(b, index, LLC_EVSET_HASHED, lines[b->g], lines, rate, verified);
            if (rc < 0) {
                rc = llc_errf(err, errlen, rc, "out of memory");
                goto out;
            }
            b->cls[rc].label = l;
            b->rep.hashed++;
        }
    }
    rc = 0;
out:
    free(have);
    free(pick);
    free(taken);
    return rc;
}
