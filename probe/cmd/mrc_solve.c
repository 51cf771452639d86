/* llcprobe mrc: the size grid and the curves solved from the samples (pooled,
 * per time slot, per phase). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/mrc_cmd.h"
#include "llcprobe/common.h"
#include "llcprobe/statmodel.h"
#include "llcprobe/trace.h"
#include "mrc/mrc.h"
#include "util/cli.h"
#include "util/stopsig.h"

/* The sizes to solve: --sizes, or the default grid plus the machine's caches. */
int mrc_size_grid(const struct mrc_args *a, const struct llc_mrc_cache *caches, size_t n_caches,
                  double **out, size_t *n, char *err, size_t errlen)
{
    if (a->sizes) {
        *out = malloc(a->n_sizes * sizeof **out);
        if (!*out)
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        memcpy(*out, a->sizes, a->n_sizes * sizeof **out);
        *n = a->n_sizes;
        return 0;
    }
    double extra[3];
    struct llc_statmodel_grid_config g;
    llc_statmodel_grid_config_default(&g);
    for (size_t i = 0; i < n_caches; i++)
        extra[i] = (double)caches[i].bytes / 64.0;
    g.extra_lines = extra;
    g.n_extra = n_caches;
    const int count = llc_statmodel_grid(&g, NULL, 0, err, errlen);
    if (count < 0)
        return count;
    *out = malloc((size_t)count * sizeof **out);
    if (!*out)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    const int rc = llc_statmodel_grid(&g, *out, (size_t)count, err, errlen);
    if (rc < 0) {
        free(*out);
        *out = NULL;
        return rc;
    }
    *n = (size_t)rc;
    return 0;
}

/* distinct: the run's distinct lines when exact (else 0): no reuse sees more. */
void mrc_series_options(const struct mrc_args *a, uint64_t distinct, enum llc_statmodel_method m,
                        struct llc_statmodel_options *o)
{
    llc_statmodel_options_default(o);
    o->method = m;
    o->cold = a->cold;
    o->assoc_ways = m == LLC_STATMODEL_STATSTACK ? a->ways : 0;
    o->distinct_lines = (double)distinct;
}

int mrc_solve(const struct mrc_args *a, const struct llc_statmodel_hist *h,
              const struct llc_statmodel_model *model, struct llc_mrc_result *r, char *err,
              size_t errlen)
{
    const enum llc_statmodel_method methods[] = {LLC_STATMODEL_STATCACHE, LLC_STATMODEL_STATSTACK};
    const bool want[] = {a->statcache, a->statstack};
    for (size_t i = 0; i < LLC_ARRAY_LEN(methods); i++) {
        if (!want[i])
            continue;
        struct llc_mrc_series *s = &r->series[r->n_series++];
        s->method = methods[i];
        s->points = calloc(r->n, sizeof *s->points);
        if (!s->points)
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        struct llc_statmodel_options o;
        mrc_series_options(a, r->distinct_lines, s->method, &o);
        int rc = llc_statmodel_curve(model, &o, r->lines, r->n, s->points, err, errlen);
        if (rc < 0)
            return rc;
        if (!a->band)
            continue;
        s->band_lo = calloc(r->n, sizeof *s->band_lo);
        s->band_hi = calloc(r->n, sizeof *s->band_hi);
        if (!s->band_lo || !s->band_hi)
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        struct llc_statmodel_bootstrap_config b;
        llc_statmodel_bootstrap_config_default(&b);
        b.replicates = a->replicates;
        if (r->distinct_lines && r->distinct_lines < r->refs)
            b.cold_fraction = (double)r->distinct_lines / (double)r->refs;
        b.seed = a->seed;
        rc =
            llc_statmodel_bootstrap(h, &b, &o, r->lines, r->n, s->band_lo, s->band_hi, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Series i of every phase with samples, and their mixture, on the timeline. */
static int timeline_curves(const struct llc_statmodel_timeline *tl,
                           const struct llc_statmodel_options *o, const struct llc_mrc_result *r,
                           const struct llc_statmodel_groups *groups, struct llc_mrc_groupset *gs,
                           unsigned i, char *err, size_t errlen)
{
    struct llc_statmodel_point **pts = calloc(gs->n ? gs->n : 1, sizeof *pts);
    if (!pts)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    int rc = 0;
    for (size_t j = 0; j < gs->n && rc == 0; j++) {
        const int id = llc_statmodel_groups_id_at(groups, j);
        if (!(llc_statmodel_hist_total(llc_statmodel_groups_hist(groups, id)) > 0))
            continue;
        pts[j] = gs->groups[j].points[i] = calloc(r->n, sizeof *pts[j]);
        if (!pts[j])
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
    }
    gs->skipped = 0;
    if (rc == 0)
        rc = llc_statmodel_timeline_curve(tl, o, r->lines, r->n, gs->mean[i], pts, err, errlen);
    free(pts);
    return rc;
}

/* One curve per group that has samples, and the groups' reference-weighted
 * mean: the slot average of docs/METHODS.md §7.5 (slots are equal but for the last, shorter
 * one) or the phase mixture of docs/METHODS.md §9. */
int mrc_solve_groups(const struct mrc_args *a, const struct llc_statmodel_groups *groups,
                     const struct llc_statmodel_model *splice, double span,
                     const struct llc_statmodel_timeline *tl, struct llc_mrc_result *r,
                     struct llc_mrc_groupset *gs, char *err, size_t errlen)
{
    const size_t n = llc_statmodel_groups_count(groups);
    struct llc_statmodel_model *model = NULL;
    int rc = 0;
    gs->groups = calloc(n ? n : 1, sizeof *gs->groups);
    if (!gs->groups)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    gs->n = n;
    for (unsigned i = 0; i < r->n_series; i++) {
        struct llc_statmodel_options o;
        mrc_series_options(a, r->distinct_lines, r->series[i].method, &o);
        o.splice = splice;
        o.splice_span = span;
        gs->mean[i] = calloc(r->n, sizeof *gs->mean[i]);
        if (!gs->mean[i]) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
            goto out;
        }
        if (tl && o.method == LLC_STATMODEL_STATSTACK)
            rc = timeline_curves(tl, &o, r, groups, gs, i, err, errlen);
        else
            rc = llc_statmodel_groups_curve(groups, LLC_STATMODEL_WEIGHT_REFS, &o, r->lines, r->n,
                                            gs->mean[i], &gs->skipped, err, errlen);
        if (rc < 0)
            goto out;
    }
    for (size_t j = 0; j < n; j++) {
        struct llc_mrc_group *g = &gs->groups[j];
        g->id = llc_statmodel_groups_id_at(groups, j);
        const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(groups, g->id);
        g->refs = llc_statmodel_groups_refs(groups, g->id);
        g->samples = llc_statmodel_hist_total(h);
        g->dangling = llc_statmodel_hist_dangling(h);
        if (!(g->samples > 0))
            continue;
        rc = llc_statmodel_prepare(h, &model, err, errlen);
        if (rc < 0)
            goto out;
        if (splice)
            llc_statmodel_splice(model, splice, span);
        for (unsigned i = 0; i < r->n_series; i++) {
            struct llc_statmodel_options o;
            mrc_series_options(a, r->distinct_lines, r->series[i].method, &o);
            if (g->points[i])
                continue; /* solved on the timeline */
            g->points[i] = calloc(r->n, sizeof *g->points[i]);
            if (!g->points[i]) {
                rc = llc_errf(err, errlen, -ENOMEM, "out of memory");
                goto out;
            }
            rc = llc_statmodel_curve(model, &o, r->lines, r->n, g->points[i], err, errlen);
            if (rc < 0)
                goto out;
        }
        llc_statmodel_release(model);
        model = NULL;
    }
out:
    llc_statmodel_release(model);
    return rc;
}

int mrc_phase_timeline(const struct mrc_input *in, struct llc_statmodel_timeline **out, char *err,
                       size_t errlen)
{
    *out = NULL;
    const char *splice = getenv("LLCPROBE_MRC_PHASE_SPLICE");
    if (splice && strcmp(splice, "1") == 0)
        return 0;
    return llc_mrc_phase_timeline(&in->phase_run, out, err, errlen);
}

/* Mean window length in references: past it a reuse spans other windows,
 * whose phases the pooled footprint stands for (the splice rule, kept for
 * comparison: LLCPROBE_MRC_PHASE_SPLICE=1). */
double mrc_phase_span(const struct mrc_input *in)
{
    const size_t n = in->phase_run.n_windows;
    return n ? (double)in->refs / (double)n : 0;
}

/* docs/METHODS.md §9: per-phase curves; their mixture becomes the headline series and the
 * pooled curves move aside. */
int mrc_solve_phases(const struct mrc_args *a, const struct mrc_input *in,
                     const struct llc_statmodel_model *pooled,
                     const struct llc_statmodel_timeline *tl, struct llc_mrc_result *r, char *err,
                     size_t errlen)
{
    const struct llc_mrc_phase_run *pr = &in->phase_run;
    r->phase_run = pr;
    r->phase_window = pr->window;
    const int rc = mrc_solve_groups(a, pr->phases, tl ? NULL : pooled, mrc_phase_span(in), tl, r,
                                    &r->phases, err, errlen);
    if (rc < 0)
        return rc;
    for (size_t j = 0; j < r->phases.n; j++) {
        struct llc_mrc_group *g = &r->phases.groups[j];
        g->windows = llc_mrc_phase_windows_of(pr, g->id);
        double own = 0;
        for (size_t w = 0; w < pr->n_windows; w++)
            own += pr->windows[w].phase == g->id ? pr->windows[w].samples : 0;
        g->pooled = g->id < 0 || !(own > 0);
    }
    for (unsigned i = 0; i < r->n_series; i++) {
        struct llc_statmodel_point *mix = malloc(r->n * sizeof *mix);
        if (!mix)
            return llc_errf(err, errlen, -ENOMEM, "out of memory");
        memcpy(mix, r->phases.mean[i], r->n * sizeof *mix);
        r->pooled[i] = r->series[i].points;
        r->series[i].points = mix;
    }
    return 0;
}

void mrc_free_groups(struct llc_mrc_groupset *gs)
{
    for (size_t j = 0; gs->groups && j < gs->n; j++)
        for (unsigned i = 0; i < LLC_MRC_MAX_MODELS; i++)
            free(gs->groups[j].points[i]);
    for (unsigned i = 0; i < LLC_MRC_MAX_MODELS; i++)
        free(gs->mean[i]);
    free(gs->groups);
}
