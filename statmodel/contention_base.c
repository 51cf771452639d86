/* Baselines of Chandra, Guo, Kim and Solihin (HPCA 2005), docs/METHODS.md §12.8: frequency
 * of access (FOA) and stack distance competition (SDC), on per-set LRU
 * stack-distance profiles derived from StatStack. */
#include "llcprobe/contention.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"

/* C[1..ways] (hits at LRU position k, per reference) and C[ways + 1]
 * (misses): each reuse bucket's mass goes to position floor(F(d) / sets)
 * + 1, F the expected stack distance at the bucket's distance (its single
 * distance, or its middle); dangling samples miss. F is read off the table
 * as llc_statmodel_footprint interpolates it (the same value: the bucket's
 * edge, or the mean of its two ends, the edges being integers), without
 * its search. */
static void set_profile(const struct llc_statmodel_model *m, unsigned ways, double sets, double *c)
{
    const double *e, *q, *f;
    size_t ne;
    double slope;
    llc_statmodel_footprint_table(m, &e, &q, &f, &ne, &slope);
    for (unsigned k = 0; k <= ways + 1; k++)
        c[k] = 0;
    c[ways + 1] = q[ne - 1];
    for (size_t i = 0; i + 1 < ne; i++) {
        const double mass = q[i] - q[i + 1];
        if (!(mass > 0))
            continue;
        const double w = e[i + 1] - e[i];
        const double fd = w > 1 ? f[i] + 0.5 * (f[i + 1] - f[i]) : e[i] > 0 ? f[i] : 0;
        const double pos = floor(fd / sets) + 1;
        c[pos > ways ? ways + 1 : (unsigned)pos] += mass;
    }
}

/* Miss ratio with x (real) ways: positions beyond x miss, the partial
 * position counts by its fraction. */
static double misses_with(const double *c, unsigned ways, double x)
{
    double hit = 0;
    const double whole = floor(x);
    for (unsigned k = 1; k <= ways && k <= whole; k++)
        hit += c[k];
    if (whole < ways)
        hit += (x - whole) * c[(unsigned)whole + 1];
    return fmax(0, 1 - hit);
}

int llc_contention_baseline(const struct llc_contention_phase *const *ph, const double *freq,
                            size_t n, const struct llc_contention_config *cfg,
                            enum llc_contention_baseline which, struct llc_contention_share *out,
                            char *err, size_t errlen)
{
    const unsigned ways = cfg->ways;
    if (n == 0 || ways == 0 || !(cfg->capacity >= ways))
        return llc_errf(err, errlen, -EINVAL, "baseline: %zu programs, %g lines, %u ways", n,
                        cfg->capacity, ways);
    const double sets = cfg->capacity / ways;
    double *c = calloc(n * (ways + 2), sizeof(double));
    double *acc = calloc(n, sizeof(double)), *share = calloc(n, sizeof(double));
    unsigned *p = calloc(n, sizeof(unsigned));
    int rc = 0;
    if (!c || !acc || !share || !p) {
        rc = llc_errf(err, errlen, -ENOMEM, "baseline: out of memory");
        goto out;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ph[i]->model || !(llc_statmodel_model_total(ph[i]->model) > 0)) {
            rc = llc_errf(err, errlen, -EINVAL, "baseline: program %zu has no reuse profile", i);
            goto out;
        }
        set_profile(ph[i]->model, ways, sets, &c[i * (ways + 2)]);
        /* Access frequency alone: the whole cache to itself. */
        const double mr = misses_with(&c[i * (ways + 2)], ways, ways);
        acc[i] = ph[i]->api * freq[i] / (ph[i]->cpi0 + ph[i]->api * mr * ph[i]->penalty);
        sum += acc[i];
    }
    if (which == LLC_CONTENTION_FOA) {
        for (size_t i = 0; i < n; i++)
            share[i] = sum > 0 ? ways * acc[i] / sum : (double)ways / (double)n;
    } else {
        /* SDC: ways go one at a time to the program whose next stack
         * position has the most hits per second (ties: lower index). */
        for (size_t i = 0; i < n; i++)
            p[i] = 1;
        for (unsigned w = 0; w < ways; w++) {
            size_t best = 0;
            double bv = -1;
            for (size_t i = 0; i < n; i++) {
                const double v = p[i] <= ways ? acc[i] * c[i * (ways + 2) + p[i]] : -1;
                if (v > bv) {
                    bv = v;
                    best = i;
                }
            }
            p[best]++;
        }
        for (size_t i = 0; i < n; i++)
            share[i] = p[i] - 1;
    }
    for (size_t i = 0; i < n; i++) {
        const double mr = misses_with(&c[i * (ways + 2)], ways, share[i]);
        const double cpi = ph[i]->cpi0 + ph[i]->api * mr * ph[i]->penalty;
        out[i] = (struct llc_contention_share){.miss_ratio = mr,
                                               .cpi = cpi,
                                               .rate = ph[i]->api * freq[i] / cpi,
                                               .occupancy = share[i] * sets};
        out[i].miss_rate = out[i].rate * mr;
    }
out:
    free(c);
    free(acc);
    free(share);
    free(p);
    return rc;
}
