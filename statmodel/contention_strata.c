/* Per-stratum reuse (docs/METHODS.md §12.6): a program whose sets are used
 * at different rates is described by strata of sets, each with its share
 * of the sets, its share of the program's references and the reuse
 * histogram of those references (distances in all of the program's own
 * references). A stratum is a smaller cache: its sets, the program's
 * references to them and the co-runners' share of theirs. */
#include "contention_strata.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "contention_internal.h"

/* Programs in one equilibrium at most (as the tuple solver). */
#define MAXN 64

/* Cells always solved, and the share of any program's references (or of
 * the sets) that the cells left out beyond them may hold. Measured on
 * predictions of 2-5 stratified sim profiles (LRU, random, DRRIP) against
 * solving every cell: 2.8x faster, miss ratio within 0.0017, occupancy
 * within 0.13% of the LLC, slowdown within 0.36% (16 / 0.02: 1.8x, 0.0004,
 * 0.03%, 0.18%). */
#ifndef LLC_CONTENTION_STRATA_SOLVED
#define LLC_CONTENTION_STRATA_SOLVED 8
#endif
#ifndef LLC_CONTENTION_STRATA_TAIL
#define LLC_CONTENTION_STRATA_TAIL 0.1
#endif

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
                          const struct llc_contention_strata *st, size_t g, double steady,
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
        q->steady = steady;
    sm_contention_party_reshift(q);
}

/* The party of each stratified program in cell c (stratum (c / product of
 * the earlier programs' counts) mod its count); returns the cell's share
 * of the sets. */
static double cell_parties(const struct llc_contention_party *p,
                           const struct llc_contention_strata *const *st, const size_t *strat,
                           size_t ns, size_t c, double (*steady)[LLC_CONTENTION_STRATA_MAX],
                           struct llc_contention_party *q)
{
    double share = 1;
    for (size_t k = 0; k < ns; k++) {
        const size_t i = strat[k], g = c % st[i]->n;
        c /= st[i]->n;
        stratum_party(&p[i], st[i], g, steady[i][g], &q[i]);
        share *= st[i]->s[g].sets;
    }
    return share;
}

struct cell {
    size_t c;
    double mass; /* the largest share of a program's references (or of the sets) in it */
};

static int by_mass(const void *a, const void *b)
{
    const double x = ((const struct cell *)a)->mass, y = ((const struct cell *)b)->mass;
    return (x < y) - (x > y);
}

/* The cells worth an equilibrium, first in cell[]: all of them up to
 * LLC_CONTENTION_STRATA_SOLVED, else the heaviest until those left out hold
 * at most LLC_CONTENTION_STRATA_TAIL of every program's references and of
 * the sets (at least LLC_CONTENTION_STRATA_SOLVED cells), and the heaviest
 * of each stratum none of those holds. */
static size_t cells_to_solve(const struct llc_contention_party *p,
                             const struct llc_contention_strata *const *st, const size_t *strat,
                             size_t ns, size_t cells, struct cell *cell)
{
    for (size_t c = 0; c < cells; c++) {
        double share = 1, w = 1;
        for (size_t k = 0, rest = c; k < ns; k++) {
            const struct llc_contention_stratum *s = &st[strat[k]]->s[rest % st[strat[k]]->n];
            rest /= st[strat[k]]->n;
            share *= s->sets;
            if (p[strat[k]].weight > 0)
                w = fmax(w, s->refs / s->sets);
        }
        cell[c] = (struct cell){.c = c, .mass = share * w};
    }
    if (cells <= LLC_CONTENTION_STRATA_SOLVED)
        return cells;
    qsort(cell, cells, sizeof(*cell), by_mass);
    /* Left-out mass bounds each program's and the sets' share left out. */
    double tail = 0;
    size_t k = cells;
    while (k > LLC_CONTENTION_STRATA_SOLVED &&
           tail + cell[k - 1].mass <= LLC_CONTENTION_STRATA_TAIL)
        tail += cell[--k].mass;
    /* Every stratum of every program in one cell solved at least (its
     * figures are its solved cells' mean): its heaviest cell left out. */
    for (size_t m = 0, div = 1; m < ns; div *= st[strat[m]]->n, m++) {
        for (size_t g = 0; g < st[strat[m]]->n; g++) {
            size_t j = 0;
            while (j < cells && cell[j].c / div % st[strat[m]]->n != g)
                j++;
            if (j < k || j == cells)
                continue;
            const struct cell x = cell[j];
            cell[j] = cell[k];
            cell[k++] = x;
        }
    }
    return k;
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
    struct cell cell[LLC_CONTENTION_STRATA_CELLS];
    const size_t solved = cells_to_solve(p, st, strat, ns, cells, cell);
    /* Sums over the solved cells, per stratum of each stratified program
     * (post-stratified: a stratum's figures are the mean over its solved
     * cells, weighted by its own share) and over all for the others. */
    double num[MAXN][LLC_CONTENTION_STRATA_MAX] = {{0}},
           refw[MAXN][LLC_CONTENTION_STRATA_MAX] = {{0}};
    double occ[MAXN][LLC_CONTENTION_STRATA_MAX] = {{0}},
           setw[MAXN][LLC_CONTENTION_STRATA_MAX] = {{0}};
    size_t row[MAXN], gi[MAXN];
    for (size_t i = 0, u = ns; i < n; i++) {
        row[i] = u++; /* uniform programs: rows ns.. */
        gi[i] = 0;
    }
    for (size_t k = 0; k < ns; k++)
        row[strat[k]] = k;
    /* Each cold stratum's steady share of first touches, once for all
     * cells (a search in its footprint table). */
    double steady[MAXN][LLC_CONTENTION_STRATA_MAX];
    for (size_t k = 0; k < ns; k++) {
        const size_t i = strat[k];
        for (size_t g = 0; g < st[i]->n; g++)
            steady[i][g] = p[i].cold && st[i]->s[g].refs > 0
                               ? llc_contention_steady_share(st[i]->s[g].model, st[i]->s[g].firsts,
                                                             references ? references[i] : 0)
                               : 0;
    }
    double best = -1, mu = 0, kept = 0;
    for (size_t j = 0; j < solved; j++) {
        const double share = cell_parties(p, st, strat, ns, cell[j].c, steady, q);
        for (size_t k = 0, rest = cell[j].c; k < ns; k++) {
            gi[strat[k]] = rest % st[strat[k]]->n;
            rest /= st[strat[k]]->n;
        }
        /* Cells come in order of weight: the previous one's miss rate is
         * a near start for the random model's root search. */
        int rc = sm_contention_equilibrium(q, n, capacity, base, mu, ways, tmp, &ci, err, errlen);
        if (rc)
            return rc;
        mu = ci.mu;
        kept += share;
        /* Program i's references in the cell: share x weight / base weight. */
        for (size_t i = 0; i < n; i++) {
            const double w = p[i].weight > 0 ? q[i].weight / p[i].weight : 0;
            const size_t r = row[i], g = gi[i];
            if (p[i].model && w > 0) {
                num[r][g] += share * w * tmp[i].miss_ratio;
                refw[r][g] += share * w;
            } else if (!p[i].model) {
                out[i].miss_rate += share * tmp[i].miss_rate;
            }
            occ[r][g] += share * tmp[i].occupancy;
            setw[r][g] += share;
        }
        in.mu += share * ci.mu;
        in.occ_error = fmax(in.occ_error, ci.occ_error);
        if (share > best) {
            best = share;
            in.t_star = ci.t_star;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const size_t r = row[i];
        const size_t ng = r < ns ? st[i]->n : 1;
        for (size_t g = 0; g < ng; g++) {
            const double rs = r < ns ? st[i]->s[g].refs : 1, ss = r < ns ? st[i]->s[g].sets : 1;
            if (refw[r][g] > 0)
                out[i].miss_ratio += rs * num[r][g] / refw[r][g];
            if (setw[r][g] > 0)
                out[i].occupancy += ss * occ[r][g] / setw[r][g];
        }
        out[i].miss_rate /= kept;
    }
    in.mu /= kept;
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
