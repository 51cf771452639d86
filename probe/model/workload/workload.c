/* Generator lifecycle, write marking and phase sequencing. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/sim.h"
#include "model/workload/wl_internal.h"

double wl_rng_normal(struct llc_xoshiro *r)
{
    double u1;
    do
        u1 = llc_rng_unit(llc_xoshiro_next(r));
    while (u1 <= 0);
    const double u2 = llc_rng_unit(llc_xoshiro_next(r));
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* Each phase gets its own stream, derived from the parent's seed. */
static uint64_t child_seed(uint64_t seed, unsigned i)
{
    uint64_t x = seed ^ (0xD1B54A32D192ED03ULL * (i + 1));
    return llc_splitmix_next(&x);
}

static int create_leaf(const struct wl_params *p, const struct llc_workload_target *t,
                       uint64_t base, uint64_t seed, struct llc_workload **out, char *err,
                       size_t errlen)
{
    *out = NULL;
    struct llc_workload *w = calloc(1, sizeof(*w));
    if (!w)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    w->kind = p->kind;
    w->p = *p;
    w->base = base;
    w->line_size = t && t->geometry ? t->geometry->line_size : 64;
    llc_xoshiro_seed(&w->rng, seed);
    llc_xoshiro_seed(&w->write_rng, seed ^ 0x5752495445ULL);
    int rc;
    if (wl_kind_is_set_shaped(p->kind)) {
        w->physical = true;
        rc = wl_sets_init(w, t ? t->geometry : NULL, err, errlen);
    } else {
        rc = wl_basic_init(w, err, errlen);
    }
    if (rc < 0) {
        llc_workload_destroy(w);
        return rc;
    }
    *out = w;
    return 0;
}

int llc_workload_create(const char *spec, const struct llc_workload_target *target, uint64_t seed,
                        struct llc_workload **out, char *err, size_t errlen)
{
    *out = NULL;
    struct wl_spec *s = malloc(sizeof(*s));
    struct llc_workload *w = NULL;
    int rc = 0;
    if (!s) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    rc = wl_spec_parse(spec, s, err, errlen);
    if (rc < 0)
        goto out;
    const bool physical = wl_kind_is_set_shaped(s->top.kind) ||
                          (s->top.kind == WL_PHASED && wl_kind_is_set_shaped(s->phase[0].kind));
    const uint64_t base = physical ? (target ? target->phys_base : 0) : LLC_WORKLOAD_VBASE;
    if (s->top.kind != WL_PHASED) {
        rc = create_leaf(&s->top, target, base, seed, &w, err, errlen);
        goto out;
    }
    w = calloc(1, sizeof(*w));
    if (!w) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
        goto out;
    }
    w->kind = WL_PHASED;
    w->physical = physical;
    w->base = base;
    w->nphases = s->nphases;
    for (unsigned i = 0; i < s->nphases; i++) {
        char sub[LLC_ERRLEN];
        rc = create_leaf(&s->phase[i], target, base + i * LLC_WORKLOAD_PHASE_GAP,
                         child_seed(seed, i), &w->child[i], sub, sizeof(sub));
        if (rc < 0) {
            llc_errf(err, errlen, rc, "phased: phase %u: %s", i + 1, sub);
            goto out;
        }
        w->length[i] = s->length[i];
        w->footprint += w->child[i]->footprint;
        w->extent = i * LLC_WORKLOAD_PHASE_GAP + w->child[i]->extent;
    }
    w->left = w->length[0];
out:
    free(s);
    if (rc < 0)
        llc_workload_destroy(w);
    else
        *out = w;
    return rc;
}

void llc_workload_destroy(struct llc_workload *w)
{
    if (!w)
        return;
    for (unsigned i = 0; i < w->nphases; i++)
        llc_workload_destroy(w->child[i]);
    wl_sets_free(&w->sets);
    wl_zipf_free(&w->zipf);
    free(w);
}

static void leaf_fill(struct llc_workload *w, uint64_t *addrs, uint8_t *is_write, size_t n)
{
    if (w->physical)
        wl_sets_fill(w, addrs, n);
    else
        wl_basic_fill(w, addrs, n);
    if (!is_write)
        return;
    if (w->p.write <= 0) {
        memset(is_write, 0, n);
        return;
    }
    /* Writes have their own stream: a given seed gives the same addresses
     * whether or not the caller asks for writes. */
    for (size_t i = 0; i < n; i++)
        is_write[i] = llc_rng_unit(llc_xoshiro_next(&w->write_rng)) < w->p.write;
}

size_t llc_workload_fill(struct llc_workload *w, uint64_t *addrs, uint8_t *is_write, size_t n)
{
    if (w->kind != WL_PHASED) {
        leaf_fill(w, addrs, is_write, n);
        w->emitted += n;
        return n;
    }
    size_t done = 0;
    while (done < n) {
        const size_t take = n - done < w->left ? n - done : (size_t)w->left;
        leaf_fill(w->child[w->cur], addrs + done, is_write ? is_write + done : NULL, take);
        w->child[w->cur]->emitted += take;
        done += take;
        w->left -= take;
        if (w->left == 0) {
            w->cur = (w->cur + 1) % w->nphases;
            w->left = w->length[w->cur];
        }
    }
    w->emitted += n;
    return n;
}

bool llc_workload_is_physical(const struct llc_workload *w)
{
    return w->physical;
}
uint64_t llc_workload_footprint(const struct llc_workload *w)
{
    return w->footprint;
}
uint64_t llc_workload_extent(const struct llc_workload *w)
{
    return w->extent;
}
uint64_t llc_workload_emitted(const struct llc_workload *w)
{
    return w->emitted;
}
unsigned llc_workload_phase(const struct llc_workload *w)
{
    return w->cur;
}
