/* A profile's reuse distances in each phase's own references
 * (docs/METHODS.md §12.7): a sampler counts every reference of the
 * program, so a reuse that spans other phases' windows is longer in its
 * histogram than in the references of its phase, which is what the
 * phase's model runs on. */
#include "llcprobe/profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"

int llc_profile_own_distances(struct llc_profile *p, const struct llc_statmodel_reuse *r, size_t n,
                              struct llc_statmodel_hist **(*pick)(void *ctx, struct llc_profile *p,
                                                                  size_t phase, int group),
                              void *ctx, char *err, size_t errlen)
{
    struct llc_statmodel_own_clock *clock = NULL;
    int rc = llc_statmodel_own_clock_create(p->windows.references, p->windows.phase_of,
                                            p->windows.count, &clock, err, errlen);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const int id = llc_statmodel_own_clock_label(clock, r[k].pos);
        const long j = id < 0 ? -1 : llc_profile_phase_index(p, id);
        struct llc_statmodel_hist **h = j < 0 ? NULL : pick(ctx, p, (size_t)j, r[k].group);
        if (!h)
            continue;
        if (!*h && (rc = llc_statmodel_hist_create(h, err, errlen)) < 0)
            break;
        rc = llc_statmodel_hist_add(*h, llc_statmodel_own_distance(clock, r[k].pos, r[k].distance),
                                    1.0, err, errlen);
    }
    llc_statmodel_own_clock_destroy(clock);
    return rc;
}

/* own gets h's dangling samples; unless its finite ones are h's, it is
 * dropped (its samples were not all logged: the phase is modelled with
 * what it recorded). */
static int complete(struct llc_statmodel_hist **own, const struct llc_statmodel_hist *h, char *err,
                    size_t errlen)
{
    if (!*own)
        return 0;
    const double want = llc_statmodel_hist_finite(h), got = llc_statmodel_hist_finite(*own);
    if (got != want) {
        llc_statmodel_hist_destroy(*own);
        *own = NULL;
        return 0;
    }
    /* called again after the strata are filed: adds what is missing */
    const double add = llc_statmodel_hist_dangling(h) - llc_statmodel_hist_dangling(*own);
    return add > 0 ? llc_statmodel_hist_add_dangling(*own, add, err, errlen) : 0;
}

int llc_profile_own_complete(struct llc_profile *p, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < p->n_phases; j++) {
        struct llc_profile_phase *ph = &p->phases[j];
        rc = complete(&ph->rdhist_own, ph->rdhist, err, errlen);
        for (size_t s = 0; rc == 0 && s < ph->n_strata; s++)
            rc = complete(&ph->strata[s].rdhist_own, ph->strata[s].rdhist, err, errlen);
    }
    return rc;
}

/* Half-octave bin of an own distance (0 for 0 and 1). */
static size_t span_bin(double d)
{
    const double b = d > 1 ? floor(2 * log2(d)) + 1 : 0;
    return b < LLC_PROFILE_SPAN_BINS - 1 ? (size_t)b : LLC_PROFILE_SPAN_BINS - 1;
}

struct span_sums {
    double n[LLC_PROFILE_SPAN_BINS], met[LLC_PROFILE_SPAN_BINS], d[LLC_PROFILE_SPAN_BINS];
    double *refs; /* [bin * stride + h] */
};

/* Each phase's bins with samples into its spans. */
static int store_spans(struct llc_profile *p, struct span_sums *sum, char *err, size_t errlen)
{
    const size_t stride = p->n_phases + 1;
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < p->n_phases; j++) {
        const struct span_sums *s = &sum[j];
        size_t nb = 0;
        for (size_t b = 0; b < LLC_PROFILE_SPAN_BINS; b++)
            nb += s->n[b] > 0;
        struct llc_profile_phase *ph = &p->phases[j];
        if ((rc = llc_profile_alloc_spans(p, ph, nb, err, errlen)) < 0)
            break;
        size_t k = 0;
        for (size_t b = 0; b < LLC_PROFILE_SPAN_BINS; b++) {
            if (!(s->n[b] > 0))
                continue;
            ph->spans.distance[k] = s->d[b] / s->n[b];
            ph->spans.samples[k] = s->n[b];
            ph->spans.share[k] = s->met[b] / s->n[b];
            for (size_t h = 0; h < stride; h++)
                ph->spans.refs[k * stride + h] =
                    s->met[b] > 0 ? s->refs[b * stride + h] / s->met[b] : 0;
            k++;
        }
    }
    return rc;
}

int llc_profile_own_spans(struct llc_profile *p, const struct llc_statmodel_reuse *r, size_t n,
                          char *err, size_t errlen)
{
    const size_t stride = p->n_phases + 1;
    struct llc_statmodel_own_clock *clock = NULL;
    struct span_sums *sum = calloc(p->n_phases ? p->n_phases : 1, sizeof(*sum));
    double *by_label = malloc(stride * sizeof(double));
    long *index = malloc(stride * sizeof(long));
    int rc = sum && by_label && index ? 0 : llc_errf(err, errlen, -ENOMEM, "out of memory");
    for (size_t j = 0; rc == 0 && j < p->n_phases; j++)
        if (!(sum[j].refs = calloc(LLC_PROFILE_SPAN_BINS * stride, sizeof(double))))
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
    if (rc == 0)
        rc = llc_statmodel_own_clock_create(p->windows.references, p->windows.phase_of,
                                            p->windows.count, &clock, err, errlen);
    size_t nl = 0;
    const int *ids = rc == 0 ? llc_statmodel_own_clock_labels(clock, &nl) : NULL;
    for (size_t l = 0; rc == 0 && l < nl; l++)
        index[l] = llc_profile_phase_index(p, ids[l]);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const int id = llc_statmodel_own_clock_label(clock, r[k].pos);
        const long j = id < 0 ? -1 : llc_profile_phase_index(p, id);
        if (j < 0)
            continue;
        const double rest = llc_statmodel_own_clock_span(clock, r[k].pos, r[k].distance, by_label);
        double own = 0, other = rest;
        struct span_sums *s = &sum[j];
        for (size_t l = 0; l < nl; l++) {
            if (index[l] == j)
                own = by_label[l];
            else
                other += by_label[l];
        }
        const size_t b = span_bin(own);
        s->n[b]++;
        s->d[b] += own;
        if (!(other > 0))
            continue;
        s->met[b]++;
        for (size_t l = 0; l < nl; l++)
            if (index[l] != j && index[l] >= 0)
                s->refs[b * stride + (size_t)index[l]] += by_label[l];
        s->refs[b * stride + p->n_phases] += rest;
    }
    if (rc == 0)
        rc = store_spans(p, sum, err, errlen);
    for (size_t j = 0; sum && j < p->n_phases; j++)
        free(sum[j].refs);
    free(sum);
    free(by_label);
    free(index);
    llc_statmodel_own_clock_destroy(clock);
    return rc;
}
