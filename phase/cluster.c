/* Leader-follower clustering of signature vectors (docs/METHODS.md §10.6), unbounded or with at
 * most K_max clusters. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "llcprobe/phase.h"

struct llc_phase_lf {
    struct llc_phase_lf_config cfg;
    size_t count;      /* slots in use */
    size_t capacity;   /* slots allocated */
    double *centroids; /* capacity x dim */
    uint64_t *members;
    int *phase;
    uint64_t *last_used; /* clock value of the last join or creation */
    uint64_t clock;
    size_t next_id;
};

int llc_phase_lf_create(const struct llc_phase_lf_config *cfg, struct llc_phase_lf **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    if (cfg->dim == 0)
        return llc_errf(err, errlen, -EINVAL, "vector dimension must be positive");
    if (!(cfg->theta > 0.0 && cfg->theta <= 1.0))
        return llc_errf(err, errlen, -EINVAL, "theta %g outside (0,1]", cfg->theta);
    struct llc_phase_lf *lf = calloc(1, sizeof *lf);
    if (!lf)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    lf->cfg = *cfg;
    *out = lf;
    return 0;
}

void llc_phase_lf_destroy(struct llc_phase_lf *lf)
{
    if (!lf)
        return;
    free(lf->centroids);
    free(lf->members);
    free(lf->phase);
    free(lf->last_used);
    free(lf);
}

static int grow(struct llc_phase_lf *lf)
{
    size_t cap = lf->capacity ? 2 * lf->capacity : 8;
    if (lf->cfg.max_clusters && cap > lf->cfg.max_clusters)
        cap = lf->cfg.max_clusters;
    if (cap > SIZE_MAX / sizeof(double) / lf->cfg.dim)
        return -ENOMEM;
    double *c = realloc(lf->centroids, cap * lf->cfg.dim * sizeof *c);
    if (!c)
        return -ENOMEM;
    lf->centroids = c;
    uint64_t *m = realloc(lf->members, cap * sizeof *m);
    if (!m)
        return -ENOMEM;
    lf->members = m;
    int *p = realloc(lf->phase, cap * sizeof *p);
    if (!p)
        return -ENOMEM;
    lf->phase = p;
    uint64_t *u = realloc(lf->last_used, cap * sizeof *u);
    if (!u)
        return -ENOMEM;
    lf->last_used = u;
    lf->capacity = cap;
    return 0;
}

/* Nearest cluster by d~, ties to the lowest slot; -1 if there are none. */
static long nearest(const struct llc_phase_lf *lf, const double *v, double *dist)
{
    long best = -1;
    double best_d = INFINITY;
    for (size_t j = 0; j < lf->count; j++) {
        const double d = llc_phase_distance(v, lf->centroids + j * lf->cfg.dim, lf->cfg.dim);
        if (d < best_d) {
            best_d = d;
            best = (long)j;
        }
    }
    *dist = best < 0 ? -1.0 : best_d;
    return best;
}

static void maybe_stabilise(struct llc_phase_lf *lf, size_t j)
{
    if (lf->phase[j] == LLC_PHASE_TRANSITION && lf->members[j] >= lf->cfg.transition_threshold)
        lf->phase[j] = (int)lf->next_id++;
}

/* Slot for a new cluster: a fresh one, or when bounded and full the least
 * recently matched (ties -> lowest slot). */
static int new_slot(struct llc_phase_lf *lf, size_t *slot, bool *evicted)
{
    *evicted = false;
    if (lf->cfg.max_clusters && lf->count == lf->cfg.max_clusters) {
        size_t victim = 0;
        for (size_t j = 1; j < lf->count; j++)
            if (lf->last_used[j] < lf->last_used[victim])
                victim = j;
        *slot = victim;
        *evicted = true;
        return 0;
    }
    if (lf->count == lf->capacity) {
        const int rc = grow(lf);
        if (rc < 0)
            return rc;
    }
    *slot = lf->count++;
    return 0;
}

int llc_phase_lf_classify(struct llc_phase_lf *lf, const double *v, struct llc_phase_match *m,
                          char *err, size_t errlen)
{
    const size_t dim = lf->cfg.dim;
    double dist;
    const long j = nearest(lf, v, &dist);
    *m = (struct llc_phase_match){.distance = dist};

    if (j >= 0 && dist < lf->cfg.theta) {
        double *c = lf->centroids + (size_t)j * dim;
        const double weight = 1.0 / (double)(lf->members[j] + 1);
        for (size_t i = 0; i < dim; i++)
            c[i] += (v[i] - c[i]) * weight;
        lf->members[j]++;
        lf->last_used[j] = ++lf->clock;
        maybe_stabilise(lf, (size_t)j);
        m->cluster = j;
        m->phase = lf->phase[j];
        return 0;
    }

    size_t slot;
    const int rc = new_slot(lf, &slot, &m->evicted);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "cannot grow the cluster table to %zu clusters",
                        lf->count + 1);
    memcpy(lf->centroids + slot * dim, v, dim * sizeof *v);
    lf->members[slot] = 1;
    lf->last_used[slot] = ++lf->clock;
    /* An evicted cluster's id is retired: ids stay unambiguous in traces. */
    lf->phase[slot] = LLC_PHASE_TRANSITION;
    maybe_stabilise(lf, slot);
    m->cluster = (long)slot;
    m->phase = lf->phase[slot];
    m->created = true;
    return 0;
}

int llc_phase_lf_match(const struct llc_phase_lf *lf, const double *v, double threshold,
                       struct llc_phase_match *m)
{
    double dist;
    const long j = nearest(lf, v, &dist);
    *m = (struct llc_phase_match){.phase = LLC_PHASE_UNCLASSIFIED, .cluster = -1, .distance = dist};
    if (j >= 0 && dist < threshold) {
        m->cluster = j;
        m->phase = lf->phase[j];
    }
    return 0;
}

size_t llc_phase_lf_count(const struct llc_phase_lf *lf)
{
    return lf->count;
}

size_t llc_phase_lf_phases(const struct llc_phase_lf *lf)
{
    return lf->next_id;
}

const double *llc_phase_lf_centroid(const struct llc_phase_lf *lf, size_t cluster)
{
    return cluster < lf->count ? lf->centroids + cluster * lf->cfg.dim : NULL;
}

uint64_t llc_phase_lf_members(const struct llc_phase_lf *lf, size_t cluster)
{
    return cluster < lf->count ? lf->members[cluster] : 0;
}

int llc_phase_lf_phase(const struct llc_phase_lf *lf, size_t cluster)
{
    return cluster < lf->count ? lf->phase[cluster] : LLC_PHASE_UNCLASSIFIED;
}
