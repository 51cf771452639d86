/* Per-stratum reuse (docs/METHODS.md §12.6): a program whose sets are used
 * at different rates is described by strata of sets, each with its share
 * of the sets, its share of the program's references and the reuse
 * histogram of those references (distances in all of the program's own
 * references). A stratum is a smaller cache: its sets, the program's
 * references to them and the co-runners' share of theirs. */
#include "contention_strata.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "llcprobe/common.h"
#include "contention_internal.h"

/* Programs in one equilibrium at most (as the tuple solver). */
#define MAXN 64

int llc_contention_strata_check(const struct llc_contention_strata *st, char *err, size_t errlen)
{
    if (!st || st->n == 0)
        return 0;
    if (st->n > LLC_CONTENTION_STRATA_MAX || !st->s)
        return llc_errf(err, errlen, -EINVAL, "%zu strata (1..%d)", st->n,
                        LLC_CONTENTION_STRATA_MAX);
    double sets = 0, refs = 0;
    for (size_t g = 0; g < st->n; g++) {
        const struct llc_contention_stratum *s = &st->s[g];
        if (!(s->sets > 0 && s->sets <= 1) || !(s->refs >= 0 && s->refs <= 1))
            return llc_errf(err, errlen, -EINVAL, "stratum %zu: set share %g, reference share %g",
                            g, s->sets, s->refs);
        if (s->refs > 0 && (!s->model || !(llc_statmodel_model_total(s->model) > 0)))
            return llc_errf(err, errlen, -ENODATA, "stratum %zu: references but no reuse samples",
                            g);
        sets += s->sets;
        refs += s->refs;
    }
    if (fabs(sets - 1) > 1e-6 || fabs(refs - 1) > 1e-6)
        return llc_errf(err, errlen, -EINVAL, "strata: set shares add up to %g, references to %g",
                        sets, refs);
    return 0;
}

/* Dangling share of a stratum's samples: its references that are last
 * touches of a line. */
static double dangling_share(const struct llc_contention_stratum *s)
{
    const double tot = s->model ? llc_statmodel_model_total(s->model) : 0;
    return tot > 0 ? llc_statmodel_model_dangling(s->model) / tot : 0;
}

/* Lines of stratum g per reference of it, relative to the program's: its
 * dangling share over the reference-weighted mean of all strata's (each
 * line has one last touch). */
static double line_scale(const struct llc_contention_strata *st, size_t g)
{
    double all = 0;
    for (size_t h = 0; h < st->n; h++)
        all += st->s[h].refs * dangling_share(&st->s[h]);
    return all > 0 ? dangling_share(&st->s[g]) / all : 0;
}

/* The party of program i in its stratum g: the stratum's reuse, its
 * footprint weighted by refs / sets (references per set of the stratum
 * against the average set), its lines cap by its share of the lines. */
static void stratum_party(const struct llc_contention_party *base,
                          const struct llc_contention_strata *st, size_t g, double references,
                          struct llc_contention_party *q)
{
    const struct llc_contention_stratum *s = &st->s[g];
    *q = *base;
    q->model = s->model;
    q->weight = base->weight * s->refs / s->sets;
    if (!(s->refs > 0)) {
        q->model = base->model; /* weight 0: takes no part */
        return;
    }
    /* 0 (no cap) when none of its samples dangles: its footprint stops
     * growing by itself. */
    q->lines_max = base->lines_max > 0 ? base->lines_max * line_scale(st, g) : 0;
    if (q->cold)
        q->steady = llc_contention_steady_share(s->model, references);
}

int llc_contention_strata_equilibrium(const struct llc_contention_party *p,
                                      const struct llc_contention_strata *const *st,
                                      const double *references, size_t n, double capacity,
                                      enum llc_contention_policy base, unsigned ways,
                                      struct llc_contention_share *out,
                                      struct llc_contention_info *info, char *err, size_t errlen)
{
    if (n == 0 || n > MAXN)
        return llc_errf(err, errlen, -EINVAL, "%zu programs (1..%d)", n, MAXN);
    /* The stratified programs, as many as keep the cells within bounds;
     * the rest are taken as uniform. */
    size_t strat[MAXN], ns = 0, cells = 1;
    for (size_t i = 0; i < n; i++) {
        if (!st || !st[i] || st[i]->n == 0 || !p[i].model)
            continue;
        int rc = llc_contention_strata_check(st[i], err, errlen);
        if (rc)
            return rc;
        if (cells * st[i]->n > LLC_CONTENTION_STRATA_CELLS)
            continue;
        cells *= st[i]->n;
        strat[ns++] = i;
    }
    struct llc_contention_party q[MAXN];
    struct llc_contention_share tmp[MAXN];
    struct llc_contention_info ci, in = {.beta = 1, .converged = true};
    memcpy(q, p, n * sizeof(*q));
    for (size_t i = 0; i < n; i++)
        out[i] =
            (struct llc_contention_share){.rate = p[i].model ? p[i].rate : p[i].lambda, .cpi = NAN};
    double best = -1;
    for (size_t c = 0; c < cells; c++) {
        /* Cell c: stratum (c / prod of earlier counts) mod count of each. */
        double share = 1; /* of the cache's sets */
        size_t rest = c;
        for (size_t k = 0; k < ns; k++) {
            const size_t i = strat[k], g = rest % st[i]->n;
            rest /= st[i]->n;
            stratum_party(&p[i], st[i], g, references ? references[i] : 0, &q[i]);
            share *= st[i]->s[g].sets;
        }
        int rc = sm_contention_equilibrium(q, n, capacity, base, 0, ways, tmp, &ci, err, errlen);
        if (rc)
            return rc;
        /* Program i's references in the cell: share x weight / base weight. */
        for (size_t i = 0; i < n; i++) {
            const double w = p[i].weight > 0 ? q[i].weight / p[i].weight : 0;
            if (p[i].model && w > 0)
                out[i].miss_ratio += share * w * tmp[i].miss_ratio;
            else if (!p[i].model)
                out[i].miss_rate += share * tmp[i].miss_rate;
            out[i].occupancy += share * tmp[i].occupancy;
        }
        in.mu += share * ci.mu;
        in.occ_error = fmax(in.occ_error, ci.occ_error);
        if (share > best) {
            best = share;
            in.t_star = ci.t_star;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i].model) {
            out[i].miss_ratio = fmin(1, out[i].miss_ratio);
            out[i].miss_rate = p[i].rate * out[i].miss_ratio;
        } else {
            out[i].miss_ratio = NAN;
        }
    }
    if (info)
        *info = in;
    return 0;
}

bool sm_contention_has_strata(const struct llc_contention_phase *const *ph, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ph[i]->model && ph[i]->strata && ph[i]->strata->n > 0)
            return true;
    return false;
}

int sm_contention_strata_shares(const struct llc_contention_phase *const *ph,
                                const struct llc_contention_party *p, size_t n, double capacity,
                                enum llc_contention_policy base, unsigned ways,
                                struct llc_contention_share *out, struct llc_contention_info *info,
                                char *err, size_t errlen)
{
    const struct llc_contention_strata *st[MAXN];
    double refs[MAXN];
    if (n > MAXN)
        return llc_errf(err, errlen, -EINVAL, "%zu programs (1..%d)", n, MAXN);
    for (size_t i = 0; i < n; i++) {
        st[i] = ph[i]->strata;
        refs[i] = ph[i]->references;
    }
    return llc_contention_strata_equilibrium(p, st, refs, n, capacity, base, ways, out, info, err,
                                             errlen);
}
