/* Size grid and working-set graph (docs/METHODS.md §7.4), its monotonicity check, and
 * mixtures of curves: phases (docs/METHODS.md §9) and time slots (docs/METHODS.md §7.5). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

void llc_statmodel_grid_config_default(struct llc_statmodel_grid_config *cfg)
{
    *cfg =
        (struct llc_statmodel_grid_config){.min_lines = 16, .max_lines = 4194304, .per_octave = 8};
}

void llc_statmodel_options_default(struct llc_statmodel_options *o)
{
    *o = (struct llc_statmodel_options){
        .method = LLC_STATMODEL_STATCACHE, .cold = LLC_STATMODEL_COLD_COUNT, .assoc_ways = 0};
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int llc_statmodel_grid(const struct llc_statmodel_grid_config *cfg, double *out, size_t cap,
                       char *err, size_t errlen)
{
    if (!(cfg->min_lines >= 1) || !(cfg->max_lines >= cfg->min_lines) || !isfinite(cfg->max_lines))
        return llc_errf(err, errlen, -EINVAL, "size grid: bad range %g..%g lines", cfg->min_lines,
                        cfg->max_lines);
    if (cfg->per_octave == 0 || cfg->per_octave > 1024)
        return llc_errf(err, errlen, -EINVAL, "size grid: %u points per octave", cfg->per_octave);
    for (size_t i = 0; i < cfg->n_extra; i++)
        if (!(cfg->extra_lines[i] >= 1) || !isfinite(cfg->extra_lines[i]))
            return llc_errf(err, errlen, -EINVAL, "size grid: extra size %g lines",
                            cfg->extra_lines[i]);
    const double octaves = log2(cfg->max_lines / cfg->min_lines);
    /* The small slack keeps max_lines itself when it is min_lines * 2^k. */
    const size_t steps = (size_t)floor(octaves * cfg->per_octave + 1e-9);
    const size_t total = steps + 1 + cfg->n_extra;
    double *v = malloc(total * sizeof *v);
    if (!v)
        return llc_errf(err, errlen, -ENOMEM, "size grid: out of memory");
    for (size_t k = 0; k <= steps; k++)
        v[k] = nearbyint(cfg->min_lines * exp2((double)k / cfg->per_octave));
    for (size_t i = 0; i < cfg->n_extra; i++)
        v[steps + 1 + i] = nearbyint(cfg->extra_lines[i]);
    qsort(v, total, sizeof *v, cmp_double);
    size_t n = 0;
    for (size_t k = 0; k < total; k++)
        if (n == 0 || v[k] != v[n - 1])
            v[n++] = v[k];
    int rc = (int)n;
    if (out || cap) {
        if (cap < n)
            rc = llc_errf(err, errlen, -ENOSPC, "size grid: %zu points, room for %zu", n, cap);
        else
            memcpy(out, v, n * sizeof *v);
    }
    free(v);
    return rc;
}

static int cmp_point(const void *a, const void *b)
{
    return cmp_double(&((const struct llc_statmodel_point *)a)->lines,
                      &((const struct llc_statmodel_point *)b)->lines);
}

int llc_statmodel_check_monotone(const struct llc_statmodel_point *pts, size_t n, double tol,
                                 char *err, size_t errlen)
{
    bool sorted = true;
    for (size_t k = 1; k < n && sorted; k++)
        sorted = pts[k].lines >= pts[k - 1].lines;
    struct llc_statmodel_point *copy = NULL;
    if (!sorted) {
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return llc_errf(err, errlen, -ENOMEM, "curve check: out of memory");
        memcpy(copy, pts, n * sizeof *copy);
        qsort(copy, n, sizeof *copy, cmp_point);
        pts = copy;
    }
    int rc = 0;
    for (size_t k = 1; k < n; k++) {
        if (pts[k].r_total > pts[k - 1].r_total + tol) {
            rc = llc_errf(err, errlen, -ERANGE,
                          "miss ratio rises with cache size: %.12g at %g lines, %.12g at %g lines",
                          pts[k - 1].r_total, pts[k - 1].lines, pts[k].r_total, pts[k].lines);
            break;
        }
    }
    free(copy);
    return rc;
}

/* Two solves, each within the docs/METHODS.md §7.3 tolerance (R <= 1). */
#define SM_MONOTONE_TOL (2 * (SM_EPSABS + SM_EPSREL))

int sm_curve_finish(const struct llc_statmodel_options *o, const double *lines, size_t n,
                    struct llc_statmodel_point *out, char *err, size_t errlen)
{
    for (size_t k = 0; k < n && o->distinct_lines > 0; k++) {
        if (lines[k] >= o->distinct_lines && out[k].r_capacity > 0) {
            out[k].r_total -= out[k].r_capacity;
            out[k].r_capacity = 0;
        }
    }
    return llc_statmodel_check_monotone(out, n, SM_MONOTONE_TOL, err, errlen);
}

int llc_statmodel_curve(const struct llc_statmodel_model *m, const struct llc_statmodel_options *o,
                        const double *lines, size_t n, struct llc_statmodel_point *out, char *err,
                        size_t errlen)
{
    int rc = 0;
    switch (o->method) {
    case LLC_STATMODEL_STATCACHE:
        rc = sm_statcache_curve(m, o->cold, lines, n, out, err, errlen);
        break;
    case LLC_STATMODEL_STATSTACK:
        for (size_t k = 0; k < n && !rc; k++)
            rc = o->assoc_ways ? llc_statmodel_statstack_assoc(m, lines[k], o->assoc_ways, &out[k],
                                                               err, errlen)
                               : llc_statmodel_statstack(m, lines[k], &out[k], err, errlen);
        break;
    default:
        return llc_errf(err, errlen, -EINVAL, "curve: unknown method %d", (int)o->method);
    }
    if (rc)
        return rc;
    return sm_curve_finish(o, lines, n, out, err, errlen);
}

int llc_statmodel_mixture_curve(const struct llc_statmodel_model *const *models,
                                const double *weights, size_t n_models,
                                const struct llc_statmodel_options *o, const double *lines,
                                size_t n, struct llc_statmodel_point *out, char *err, size_t errlen)
{
    double wsum = 0;
    for (size_t i = 0; i < n_models; i++) {
        if (!isfinite(weights[i]) || weights[i] < 0)
            return llc_errf(err, errlen, -EINVAL, "mixture: weight %zu is %g", i, weights[i]);
        wsum += weights[i];
    }
    if (!(wsum > 0))
        return llc_errf(err, errlen, -ENODATA, "mixture: weights sum to 0");
    struct llc_statmodel_point *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return llc_errf(err, errlen, -ENOMEM, "mixture: out of memory");
    int rc = 0;
    for (size_t k = 0; k < n; k++)
        out[k] = (struct llc_statmodel_point){.lines = lines[k], .bytes = lines[k] * 64.0};
    for (size_t i = 0; i < n_models; i++) {
        if (weights[i] == 0)
            continue;
        rc = llc_statmodel_curve(models[i], o, lines, n, tmp, err, errlen);
        if (rc)
            goto out;
        const double w = weights[i] / wsum;
        for (size_t k = 0; k < n; k++) {
            out[k].r_total += w * tmp[k].r_total;
            out[k].r_capacity += w * tmp[k].r_capacity;
        }
    }
out:
    free(tmp);
    return rc;
}

int llc_statmodel_groups_curve(const struct llc_statmodel_groups *g,
                               enum llc_statmodel_weighting weighting,
                               const struct llc_statmodel_options *o, const double *lines, size_t n,
                               struct llc_statmodel_point *out, size_t *skipped, char *err,
                               size_t errlen)
{
    if (weighting != LLC_STATMODEL_WEIGHT_REFS && weighting != LLC_STATMODEL_WEIGHT_EQUAL)
        return llc_errf(err, errlen, -EINVAL, "group curve: unknown weighting %d", (int)weighting);
    const size_t ng = llc_statmodel_groups_count(g);
    int rc = 0;
    size_t used = 0, empty = 0;
    struct llc_statmodel_model **models = calloc(ng ? ng : 1, sizeof *models);
    double *weights = calloc(ng ? ng : 1, sizeof *weights);
    if (!models || !weights) {
        rc = llc_errf(err, errlen, -ENOMEM, "group curve: out of memory");
        goto out;
    }
    for (size_t i = 0; i < ng; i++) {
        const int id = llc_statmodel_groups_id_at(g, i);
        const struct llc_statmodel_hist *h = llc_statmodel_groups_hist(g, id);
        if (!(llc_statmodel_hist_total(h) > 0)) {
            empty++;
            continue;
        }
        rc = llc_statmodel_prepare(h, &models[used], err, errlen);
        if (rc)
            goto out;
        if (o->splice)
            llc_statmodel_splice(models[used], o->splice, o->splice_span);
        weights[used] =
            weighting == LLC_STATMODEL_WEIGHT_REFS ? llc_statmodel_groups_refs(g, id) : 1;
        used++;
    }
    if (skipped)
        *skipped = empty;
    if (!used) {
        rc = llc_errf(err, errlen, -ENODATA, "group curve: no group has samples");
        goto out;
    }
    rc = llc_statmodel_mixture_curve((const struct llc_statmodel_model *const *)models, weights,
                                     used, o, lines, n, out, err, errlen);
out:
    for (size_t i = 0; i < used; i++)
        llc_statmodel_release(models[i]);
    free(models);
    free(weights);
    return rc;
}
