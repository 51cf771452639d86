/* Histograms keyed by group id (phase, window or time slot) with the
 * references executed in each group (docs/METHODS.md §7.5, §9). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

struct group {
    int id;
    double refs;
    struct llc_statmodel_hist *hist;
};

struct llc_statmodel_groups {
    struct group *v; /* sorted by id */
    size_t n, cap;
};

int llc_statmodel_groups_create(struct llc_statmodel_groups **out, char *err, size_t errlen)
{
    struct llc_statmodel_groups *g = calloc(1, sizeof *g);
    if (!g)
        return llc_errf(err, errlen, -ENOMEM, "reuse groups: out of memory");
    *out = g;
    return 0;
}

void llc_statmodel_groups_destroy(struct llc_statmodel_groups *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        llc_statmodel_hist_destroy(g->v[i].hist);
    free(g->v);
    free(g);
}

/* Index of id, or of where it would go (*found says which). Ids usually
 * arrive in increasing order (slots, windows): check the end first. */
static size_t find(const struct llc_statmodel_groups *g, int id, bool *found)
{
    if (g->n && g->v[g->n - 1].id < id) {
        *found = false;
        return g->n;
    }
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (g->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < g->n && g->v[lo].id == id;
    return lo;
}

int llc_statmodel_groups_ensure(struct llc_statmodel_groups *g, int id,
                                struct llc_statmodel_hist **hist, char *err, size_t errlen)
{
    bool found = false;
    const size_t at = find(g, id, &found);
    if (found) {
        if (hist)
            *hist = g->v[at].hist;
        return 0;
    }
    if (g->n == g->cap) {
        const size_t cap = g->cap ? 2 * g->cap : 8;
        struct group *v = realloc(g->v, cap * sizeof *v);
        if (!v)
            return llc_errf(err, errlen, -ENOMEM, "reuse groups: out of memory");
        g->v = v;
        g->cap = cap;
    }
    struct llc_statmodel_hist *h = NULL;
    const int rc = llc_statmodel_hist_create(&h, err, errlen);
    if (rc)
        return rc;
    memmove(&g->v[at + 1], &g->v[at], (g->n - at) * sizeof *g->v);
    g->v[at] = (struct group){.id = id, .refs = 0, .hist = h};
    g->n++;
    if (hist)
        *hist = h;
    return 0;
}

struct llc_statmodel_hist *llc_statmodel_groups_hist(const struct llc_statmodel_groups *g, int id)
{
    bool found = false;
    const size_t at = find(g, id, &found);
    return found ? g->v[at].hist : NULL;
}

int llc_statmodel_groups_add_refs(struct llc_statmodel_groups *g, int id, double refs, char *err,
                                  size_t errlen)
{
    if (!isfinite(refs) || refs < 0)
        return llc_errf(err, errlen, -EINVAL,
                        "reuse groups: reference count %g is not finite and >= 0", refs);
    const int rc = llc_statmodel_groups_ensure(g, id, NULL, err, errlen);
    if (rc)
        return rc;
    bool found = false;
    g->v[find(g, id, &found)].refs += refs;
    return 0;
}

double llc_statmodel_groups_refs(const struct llc_statmodel_groups *g, int id)
{
    bool found = false;
    const size_t at = find(g, id, &found);
    return found ? g->v[at].refs : 0;
}

size_t llc_statmodel_groups_count(const struct llc_statmodel_groups *g)
{
    return g->n;
}

int llc_statmodel_groups_id_at(const struct llc_statmodel_groups *g, size_t i)
{
    return g->v[i].id;
}

int llc_statmodel_groups_pool(const struct llc_statmodel_groups *g, struct llc_statmodel_hist *dst,
                              char *err, size_t errlen)
{
    llc_statmodel_hist_clear(dst);
    for (size_t i = 0; i < g->n; i++) {
        const int rc = llc_statmodel_hist_merge(dst, g->v[i].hist, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

int llc_statmodel_groups_fold(struct llc_statmodel_groups *g, int from, int to, char *err,
                              size_t errlen)
{
    if (from == to)
        return 0;
    bool found = false;
    if (find(g, from, &found), !found)
        return llc_errf(err, errlen, -ENOENT, "reuse groups: no group %d to fold", from);
    struct llc_statmodel_hist *dst = NULL;
    int rc = llc_statmodel_groups_ensure(g, to, &dst, err, errlen);
    if (rc)
        return rc;
    /* ensure may have moved entries: look both up again. */
    const size_t fi = find(g, from, &found);
    const size_t ti = find(g, to, &found);
    rc = llc_statmodel_hist_merge(dst, g->v[fi].hist, err, errlen);
    if (rc)
        return rc;
    g->v[ti].refs += g->v[fi].refs;
    llc_statmodel_hist_destroy(g->v[fi].hist);
    memmove(&g->v[fi], &g->v[fi + 1], (g->n - fi - 1) * sizeof *g->v);
    g->n--;
    return 0;
}

/* Replaces dst's content with a copy of src. */
static int hist_copy(struct llc_statmodel_hist *dst, const struct llc_statmodel_hist *src,
                     char *err, size_t errlen)
{
    llc_statmodel_hist_clear(dst);
    return llc_statmodel_hist_merge(dst, src, err, errlen);
}

int llc_statmodel_groups_regroup(const struct llc_statmodel_groups *src, const int *labels,
                                 size_t n, struct llc_statmodel_groups *dst, char *err,
                                 size_t errlen)
{
    if (n != src->n)
        return llc_errf(err, errlen, -EINVAL, "regroup: %zu labels for %zu groups", n, src->n);
    if (dst->n)
        return llc_errf(err, errlen, -EINVAL, "regroup: the destination is not empty");
    struct llc_statmodel_hist *pooled = NULL;
    int rc = llc_statmodel_hist_create(&pooled, err, errlen);
    if (rc)
        goto out;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct llc_statmodel_hist *h = NULL;
        rc = llc_statmodel_groups_ensure(dst, labels[i], &h, err, errlen);
        if (rc == 0)
            rc = llc_statmodel_hist_merge(h, src->v[i].hist, err, errlen);
        if (rc == 0)
            rc = llc_statmodel_groups_add_refs(dst, labels[i], src->v[i].refs, err, errlen);
        if (rc == 0)
            rc = llc_statmodel_hist_merge(pooled, src->v[i].hist, err, errlen);
    }
    int given = 0;
    for (size_t i = 0; i < dst->n && rc == 0; i++) {
        struct group *d = &dst->v[i];
        if (d->id >= 0 && llc_statmodel_hist_total(d->hist) > 0)
            continue;
        rc = hist_copy(d->hist, pooled, err, errlen);
        given++;
    }
    if (rc == 0)
        rc = given;
out:
    llc_statmodel_hist_destroy(pooled);
    return rc;
}

/* Mixture cold fraction with every group's dangling count times k. */
static double mixed_cold(const struct llc_statmodel_groups *g, double k)
{
    double w = 0, c = 0;
    for (size_t i = 0; i < g->n; i++) {
        const struct llc_statmodel_hist *h = g->v[i].hist;
        const double total = h->finite + k * h->n_inf;
        if (!(h->finite + h->n_inf > 0))
            continue;
        w += g->v[i].refs;
        c += total > 0 ? g->v[i].refs * k * h->n_inf / total : 0;
    }
    return w > 0 ? c / w : 0;
}

int llc_statmodel_groups_set_cold(struct llc_statmodel_groups *g, uint64_t lines, uint64_t refs,
                                  char *err, size_t errlen)
{
    if (lines == 0 || lines >= refs)
        return llc_errf(err, errlen, -EINVAL,
                        "reuse groups: %" PRIu64 " distinct lines in %" PRIu64 " references", lines,
                        refs);
    const double target = (double)lines / (double)refs;
    if (fabs(mixed_cold(g, 1) - target) <= 1e-12 * target)
        return 0; /* already exact (every reference sampled): no rounding */
    /* mixed_cold rises with k from 0 to the weight of the groups that have
     * dangling samples; the target must lie below that. */
    double hi = 1;
    while (mixed_cold(g, hi) < target && hi < 0x1p60)
        hi *= 2;
    if (!(mixed_cold(g, hi) >= target) || !(mixed_cold(g, 0x1p-60) < target))
        return llc_errf(err, errlen, -EINVAL,
                        "reuse groups: the dangling samples cannot make a cold fraction of %g",
                        target);
    double lo = 0;
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        const double mid = 0.5 * (lo + hi);
        if (mixed_cold(g, mid) < target)
            lo = mid;
        else
            hi = mid;
    }
    const double k = 0.5 * (lo + hi);
    for (size_t i = 0; i < g->n; i++)
        g->v[i].hist->n_inf *= k;
    return 0;
}
