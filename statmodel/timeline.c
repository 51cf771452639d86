/* StatStack on the phase timeline (docs/METHODS.md §9): each sample's expected
 * stack distance summed window run by window run with the footprint of the
 * run's phase, walked back from where the reuse ends. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

/* Samples of one bucket started at one position: expected stack distance
 * at the bucket's edges (linear in between, as F is inside a bucket) and
 * at its representative distance (the associativity correction's). */
struct seg {
    double lo, hi, mid, mass;
};

struct seglist {
    struct seg *v;
    size_t n, cap;
};

struct llc_statmodel_timeline {
    size_t ng;
    double *refs, *n_inf, *total; /* per phase */
    bool *pooled;                 /* modelled by every window's samples */
    struct seglist *own;          /* per phase: the samples taken in its windows */
};

struct run {
    double start, end;
    size_t g;
};

struct walk {
    const struct run *runs;
    size_t nr;
    double end; /* references in the run */
    struct llc_statmodel_model *const *models;
    const double *w; /* mixture weights per phase, sum 1 */
    size_t ng, max_runs;
};

void llc_statmodel_timeline_config_default(struct llc_statmodel_timeline_config *cfg)
{
    *cfg = (struct llc_statmodel_timeline_config){.positions = 4, .max_runs = 64};
}

void llc_statmodel_timeline_destroy(struct llc_statmodel_timeline *t)
{
    if (!t)
        return;
    for (size_t i = 0; t->own && i < t->ng; i++)
        free(t->own[i].v);
    free(t->own);
    free(t->refs);
    free(t->n_inf);
    free(t->total);
    free(t->pooled);
    free(t);
}

/* The reference-weighted mean footprint: stands for windows the walk does
 * not visit (beyond max_runs, or past the end of the run). */
static double mix_footprint(const struct walk *k, double x)
{
    double f = 0;
    for (size_t g = 0; g < k->ng; g++)
        if (k->w[g] > 0)
            f += k->w[g] * llc_statmodel_footprint(k->models[g], x);
    return f;
}

/* Expected stack distance of a reuse of d references starting at t1. */
static double stack_distance(const struct walk *k, double t1, double d)
{
    const double t2 = t1 + d;
    double x = t2 < k->end ? t2 : k->end, sd = 0;
    if (x < t1)
        x = t1;
    if (t2 > x)
        sd += mix_footprint(k, t2 - x);
    /* Last run that starts before x. */
    size_t lo = 0, hi = k->nr;
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (k->runs[mid].start < x)
            lo = mid;
        else
            hi = mid;
    }
    size_t r = lo, walked = 0;
    while (x > t1 && walked < k->max_runs) {
        const struct run *u = &k->runs[r];
        const double y = u->start > t1 ? u->start : t1;
        const struct llc_statmodel_model *m = k->models[u->g];
        sd += llc_statmodel_footprint(m, t2 - y) - llc_statmodel_footprint(m, t2 - x);
        x = y;
        walked++;
        if (r == 0)
            break;
        r--;
    }
    if (x > t1)
        sd += mix_footprint(k, d) - mix_footprint(k, t2 - x);
    return sd;
}

static int cmp_seg(const void *a, const void *b)
{
    const struct seg *x = a, *y = b;
    if (x->lo != y->lo)
        return (x->lo > y->lo) - (x->lo < y->lo);
    if (x->hi != y->hi)
        return (x->hi > y->hi) - (x->hi < y->hi);
    return (x->mid > y->mid) - (x->mid < y->mid);
}

/* Reuses inside one run have the same stack distance from every window:
 * equal segments become one. */
static void merge(struct seglist *l)
{
    if (l->n < 2)
        return;
    qsort(l->v, l->n, sizeof *l->v, cmp_seg);
    size_t n = 1;
    for (size_t i = 1; i < l->n; i++) {
        struct seg *p = &l->v[n - 1];
        if (l->v[i].lo == p->lo && l->v[i].hi == p->hi && l->v[i].mid == p->mid)
            p->mass += l->v[i].mass;
        else
            l->v[n++] = l->v[i];
    }
    l->n = n;
}

static int push(struct seglist *l, struct seg s)
{
    /* Merging first keeps memory near the distinct segments; growing
     * when it frees less than half keeps the sorts O(log n) a push. */
    if (l->n == l->cap) {
        merge(l);
        if (2 * l->n >= l->cap) {
            const size_t cap = l->cap ? 2 * l->cap : 256;
            struct seg *v = realloc(l->v, cap * sizeof *v);
            if (!v)
                return -ENOMEM;
            l->v = v;
            l->cap = cap;
        }
    }
    l->v[l->n++] = s;
    return 0;
}

static size_t group_index(const struct llc_statmodel_groups *g, int id, size_t ng)
{
    for (size_t i = 0; i < ng; i++)
        if (llc_statmodel_groups_id_at(g, i) == id)
            return i;
    return ng;
}

/* Segments of every window's samples; t's per-phase fields are set. */
static int add_samples(struct llc_statmodel_timeline *t, const struct walk *k,
                       const struct llc_statmodel_groups *windows, const size_t *wg,
                       const double *wstart, unsigned positions)
{
    const size_t nw = llc_statmodel_groups_count(windows);
    for (size_t i = 0; i < nw; i++) {
        const int id = llc_statmodel_groups_id_at(windows, i);
        const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(windows, id);
        const double refs = llc_statmodel_groups_refs(windows, id);
        for (size_t b = llc_statmodel_hist_next(h, 0); b < LLC_STATMODEL_BUCKETS;
             b = llc_statmodel_hist_next(h, b + 1)) {
            const double c = llc_statmodel_hist_count(h, b);
            const double lo = (double)llc_statmodel_bucket_lo(b);
            const double width = (double)llc_statmodel_bucket_width(b);
            const double tm = (llc_statmodel_bucket_mid(b) - lo) / width;
            for (unsigned j = 0; j < positions; j++) {
                const double t1 = wstart[i] + refs * (j + 0.5) / positions;
                const double a = stack_distance(k, t1, lo), z = stack_distance(k, t1, lo + width);
                const struct seg s = {
                    .lo = a, .hi = z, .mid = a + tm * (z - a), .mass = c / positions};
                if (push(&t->own[wg[i]], s))
                    return -ENOMEM;
            }
        }
    }
    for (size_t g = 0; g < t->ng; g++)
        merge(&t->own[g]);
    return 0;
}

int llc_statmodel_timeline_create(const struct llc_statmodel_groups *phases,
                                  const struct llc_statmodel_groups *windows, const int *labels,
                                  const struct llc_statmodel_timeline_config *cfg,
                                  struct llc_statmodel_timeline **out, char *err, size_t errlen)
{
    const size_t ng = llc_statmodel_groups_count(phases), nw = llc_statmodel_groups_count(windows);
    if (cfg->positions == 0 || cfg->max_runs == 0)
        return llc_errf(err, errlen, -EINVAL, "phase timeline: %u positions, %zu runs",
                        cfg->positions, cfg->max_runs);
    if (!ng || !nw)
        return llc_errf(err, errlen, -ENODATA, "phase timeline: %zu phases, %zu windows", ng, nw);
    int rc = 0;
    struct llc_statmodel_timeline *t = calloc(1, sizeof *t);
    struct llc_statmodel_model **models = calloc(ng, sizeof *models);
    double *w = calloc(ng, sizeof *w), *wstart = calloc(nw, sizeof *wstart),
           *own_samples = calloc(ng, sizeof *own_samples);
    size_t *wg = calloc(nw, sizeof *wg);
    struct run *runs = calloc(nw, sizeof *runs);
    if (!t || !models || !w || !wstart || !own_samples || !wg || !runs) {
        rc = llc_errf(err, errlen, -ENOMEM, "phase timeline: out of memory");
        goto out;
    }
    t->ng = ng;
    t->refs = calloc(ng, sizeof *t->refs);
    t->n_inf = calloc(ng, sizeof *t->n_inf);
    t->total = calloc(ng, sizeof *t->total);
    t->pooled = calloc(ng, sizeof *t->pooled);
    t->own = calloc(ng, sizeof *t->own);
    if (!t->refs || !t->n_inf || !t->total || !t->pooled || !t->own) {
        rc = llc_errf(err, errlen, -ENOMEM, "phase timeline: out of memory");
        goto out;
    }
    /* Windows in time order, collapsed into runs of one phase. */
    size_t nr = 0;
    double pos = 0;
    for (size_t i = 0; i < nw; i++) {
        const int id = llc_statmodel_groups_id_at(windows, i);
        wg[i] = group_index(phases, labels[i], ng);
        if (wg[i] == ng) {
            rc = llc_errf(err, errlen, -EINVAL, "phase timeline: window %zu has phase %d, unknown",
                          i, labels[i]);
            goto out;
        }
        const double refs = llc_statmodel_groups_refs(windows, id);
        own_samples[wg[i]] += llc_statmodel_hist_total(llc_statmodel_groups_hist(windows, id));
        wstart[i] = pos;
        if (nr && runs[nr - 1].g == wg[i])
            runs[nr - 1].end += refs;
        else
            runs[nr++] = (struct run){.start = pos, .end = pos + refs, .g = wg[i]};
        pos += refs;
    }
    double wsum = 0;
    for (size_t g = 0; g < ng; g++) {
        const int id = llc_statmodel_groups_id_at(phases, g);
        const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(phases, id);
        t->refs[g] = llc_statmodel_groups_refs(phases, id);
        t->n_inf[g] = llc_statmodel_hist_dangling(h);
        t->total[g] = llc_statmodel_hist_total(h);
        t->pooled[g] = id < 0 || !(own_samples[g] > 0);
        /* A phase without samples is given the pooled histogram by
         * regroup; one still empty has no footprint to walk. */
        if (!(t->total[g] > 0)) {
            rc = llc_errf(err, errlen, -ENODATA,
                          "phase timeline: phase %d has no samples (not regrouped?)", id);
            goto out;
        }
        rc = llc_statmodel_prepare(h, &models[g], err, errlen);
        if (rc)
            goto out;
        w[g] = t->refs[g];
        wsum += w[g];
    }
    for (size_t g = 0; g < ng; g++)
        w[g] = wsum > 0 ? w[g] / wsum : 1.0 / (double)ng;
    const struct walk k = {.runs = runs,
                           .nr = nr,
                           .end = pos,
                           .models = models,
                           .w = w,
                           .ng = ng,
                           .max_runs = cfg->max_runs};
    rc = add_samples(t, &k, windows, wg, wstart, cfg->positions);
    if (rc)
        rc = llc_errf(err, errlen, rc, "phase timeline: out of memory");
out:
    for (size_t g = 0; models && g < ng; g++)
        llc_statmodel_release(models[g]);
    free(models);
    free(w);
    free(wstart);
    free(own_samples);
    free(wg);
    free(runs);
    if (rc) {
        llc_statmodel_timeline_destroy(t);
        t = NULL;
    }
    *out = t;
    return rc;
}

/* Mass of a list's samples that miss in a cache of `lines` lines. */
static double missing(const struct seglist *l, double lines, unsigned ways)
{
    double m = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct seg *s = &l->v[i];
        if (ways)
            m += s->mass * sm_assoc_miss(s->mid, lines, ways);
        else if (s->lo >= lines)
            m += s->mass;
        else if (s->hi > lines)
            m += s->mass * (s->hi - lines) / (s->hi - s->lo);
    }
    return m;
}

int llc_statmodel_timeline_curve(const struct llc_statmodel_timeline *t,
                                 const struct llc_statmodel_options *o, const double *lines,
                                 size_t n, struct llc_statmodel_point *mean,
                                 struct llc_statmodel_point *const *groups, char *err,
                                 size_t errlen)
{
    if (o->method != LLC_STATMODEL_STATSTACK)
        return llc_errf(err, errlen, -EINVAL, "phase timeline: StatStack only");
    for (size_t k = 0; k < n; k++)
        if (!(lines[k] >= 1) || !isfinite(lines[k]))
            return llc_errf(err, errlen, -EINVAL, "StatStack: cache of %g lines", lines[k]);
    struct llc_statmodel_point *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return llc_errf(err, errlen, -ENOMEM, "phase timeline: out of memory");
    int rc = 0;
    double wsum = 0;
    for (size_t k = 0; mean && k < n; k++)
        mean[k] = (struct llc_statmodel_point){.lines = lines[k], .bytes = lines[k] * 64.0};
    for (size_t g = 0; g < t->ng; g++)
        wsum += t->refs[g];
    for (size_t g = 0; g < t->ng; g++) {
        const double cold = t->n_inf[g] / t->total[g];
        for (size_t k = 0; k < n; k++) {
            double m = 0;
            for (size_t h = t->pooled[g] ? 0 : g; h < (t->pooled[g] ? t->ng : g + 1); h++)
                m += missing(&t->own[h], lines[k], o->assoc_ways);
            const double r = (t->n_inf[g] + m) / t->total[g];
            tmp[k] = (struct llc_statmodel_point){
                .lines = lines[k], .bytes = lines[k] * 64.0, .r_total = r, .r_capacity = r - cold};
        }
        rc = sm_curve_finish(o, lines, n, tmp, err, errlen);
        if (rc)
            goto out;
        if (groups && groups[g])
            memcpy(groups[g], tmp, n * sizeof *tmp);
        const double w = wsum > 0 ? t->refs[g] / wsum : 1.0 / (double)t->ng;
        for (size_t k = 0; mean && k < n; k++) {
            mean[k].r_total += w * tmp[k].r_total;
            mean[k].r_capacity += w * tmp[k].r_capacity;
        }
    }
out:
    free(tmp);
    return rc;
}
