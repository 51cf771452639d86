/* Deterministic choice of per_point units around each key value (docs/METHODS.md §3.2),
 * with the degenerate cases of docs/METHODS.md §2.5. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fit_internal.h"
#include "llcprobe/rng.h"
#include "llcprobe/common.h"

void llc_fit_select_config_default(struct llc_fit_select_config *cfg)
{
    *cfg = (struct llc_fit_select_config){
        .mode = LLC_FIT_KEYS_AUTO,
        .binning = LLC_FIT_BINS_AUTO,
        .points = 5,
        .per_point = 5,
        .seed = LLC_FIT_DEFAULT_SEED,
        .ways = 0,
        .estimator = LLC_FIT_EST_STRATIFIED_RATIO,
        .pick_mean = true,
    };
}

void llc_fit_selection_destroy(struct llc_fit_selection *s)
{
    if (!s)
        return;
    free(s->unit);
    free(s->label);
    free(s->profile);
    free(s->stratum);
    free(s);
}

/* One usable unit as the ranking sees it. */
struct candidate {
    size_t unit;
    double value;
    uint64_t hash; /* splitmix64(unit ^ seed) */
    size_t rank;   /* position in increasing (value, hash, unit) order */
    bool chosen;
    /* per key: */
    bool in_key; /* in the key's bin (or rank window) */
    double dist; /* |value - K| */
};

static int cmp_by_value(const void *pa, const void *pb)
{
    const struct candidate *x = pa, *y = pb;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->unit > y->unit) - (x->unit < y->unit);
}

/* Candidates of the key first, then by distance, hash and unit id: the
 * ranking of docs/METHODS.md §3.2 step 2, with step 3's outward fill behind it. */
static int cmp_for_key(const void *pa, const void *pb)
{
    const struct candidate *x = *(const struct candidate *const *)pa;
    const struct candidate *y = *(const struct candidate *const *)pb;
    if (x->in_key != y->in_key)
        return x->in_key ? -1 : 1;
    if (x->dist != y->dist)
        return x->dist < y->dist ? -1 : 1;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->unit > y->unit) - (x->unit < y->unit);
}

static int alloc_units(struct llc_fit_selection *s, size_t n, char *err, size_t errlen)
{
    s->unit = malloc((n ? n : 1) * sizeof *s->unit);
    s->label = malloc((n ? n : 1) * sizeof *s->label);
    s->profile = malloc((n ? n : 1) * sizeof *s->profile);
    s->stratum = malloc((n ? n : 1) * sizeof *s->stratum);
    if (!s->unit || !s->label || !s->profile || !s->stratum)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu selected units", n);
    return 0;
}

static void add_unit(struct llc_fit_selection *s, size_t unit, enum llc_fit_key label, double value)
{
    s->unit[s->n] = unit;
    s->label[s->n] = label;
    s->profile[s->n] = value;
    s->stratum[s->n] = llc_fit_stratum_of(&s->strata, value);
    s->n++;
}

/* docs/METHODS.md §2.5, sigma == 0: k_j = floor((j + 1/2) N / want), moved forward past
 * excluded and already chosen units. */
static void select_even(struct llc_fit_selection *s, const double *miss, const uint8_t *excluded,
                        size_t want, bool *taken)
{
    const size_t n = s->n_units;
    for (size_t j = 0; j < want; j++) {
        size_t k = (2 * j + 1) * n / (2 * want);
        while (!llc_fitp_usable(excluded, k) || taken[k])
            k = (k + 1) % n;
        taken[k] = true;
        add_unit(s, k, LLC_FIT_KEY_EVEN, miss[k]);
    }
}

static void select_keys(struct llc_fit_selection *s, struct candidate *c, size_t nv,
                        const struct llc_fit_histogram *h, struct candidate **order)
{
    for (size_t j = 0; j < s->nkeys; j++) {
        const double key = s->key[j];
        const size_t key_bin = llc_fit_histogram_bin(h, key);
        /* pick_mean: the sets of the key's stratum nearest its mean, the
         * sets most like the stratum they stand for. */
        const size_t g = llc_fit_stratum_of(&s->strata, key);
        const double target = s->pick_mean && s->strata.members[g]
                                  ? s->strata.profile_sum[g] / (double)s->strata.members[g]
                                  : key;
        /* Quantile mode: ranks within N/(2m) of p N, measured at rank centres. */
        const double half_window = (double)nv / (2.0 * (double)h->m);
        size_t nfree = 0;
        for (size_t i = 0; i < nv; i++) {
            if (c[i].chosen)
                continue;
            c[i].dist = fabs(c[i].value - target);
            if (s->pick_mean)
                c[i].in_key = llc_fit_stratum_of(&s->strata, c[i].value) == g;
            else if (s->mode == LLC_FIT_KEYS_QUANTILE)
                c[i].in_key =
                    fabs((double)c[i].rank + 0.5 - s->key_p[j] * (double)nv) <= half_window;
            else
                c[i].in_key = llc_fit_histogram_bin(h, c[i].value) == key_bin;
            order[nfree++] = &c[i];
        }
        qsort(order, nfree, sizeof order[0], cmp_for_key);
        for (size_t i = 0; i < s->per_point && i < nfree; i++) {
            order[i]->chosen = true;
            add_unit(s, order[i]->unit, llc_fit_key_label(s->mode, j), order[i]->value);
        }
    }
}

/* R^2 and Disp travel with the selection so later runs can judge it (docs/METHODS.md §3.2). */
static int store_fit_quality(struct llc_fit_selection *s, const double *miss, size_t n,
                             const uint8_t *excluded, const struct llc_fit_histogram *h,
                             unsigned ways, char *err, size_t errlen)
{
    struct llc_fit_family_result g;
    int rc = llc_fit_family(LLC_FIT_GAUSSIAN, miss, n, excluded, h, NULL, &g, NULL, err, errlen);
    if (rc < 0)
        return rc;
    s->r2 = g.r2;
    s->disp = NAN;
    if (ways) {
        struct llc_fit_dispersion d;
        rc = llc_fit_dispersion(miss, n, excluded, ways, &d, err, errlen);
        if (rc < 0)
            return rc;
        s->disp = d.disp;
    }
    return 0;
}

static int check_config(const struct llc_fit_select_config *cfg, char *err, size_t errlen)
{
    if (cfg->points < 1 || cfg->points > LLC_FIT_MAX_KEYS)
        return llc_errf(err, errlen, -EINVAL, "points must be 1..%d, not %zu", LLC_FIT_MAX_KEYS,
                        cfg->points);
    if (cfg->per_point < 1 || cfg->per_point > SIZE_MAX / LLC_FIT_MAX_KEYS)
        return llc_errf(err, errlen, -EINVAL, "per_point must be at least 1, not %zu",
                        cfg->per_point);
    if ((unsigned)cfg->mode > LLC_FIT_KEYS_AUTO)
        return llc_errf(err, errlen, -EINVAL, "unknown key mode %d", (int)cfg->mode);
    if ((unsigned)cfg->estimator >= LLC_FIT_EST_COUNT)
        return llc_errf(err, errlen, -EINVAL, "unknown estimator %d", (int)cfg->estimator);
    return 0;
}

int llc_fit_select(const double *miss, size_t n, const uint8_t *excluded,
                   const struct llc_fit_select_config *cfg, struct llc_fit_selection **out,
                   char *err, size_t errlen)
{
    *out = NULL;
    struct llc_fit_select_config defaults;
    if (!cfg) {
        llc_fit_select_config_default(&defaults);
        cfg = &defaults;
    }
    double *v = NULL, *sorted = NULL;
    size_t nv = 0;
    struct candidate *c = NULL, **order = NULL;
    bool *taken = NULL;
    struct llc_fit_histogram *h = NULL;
    struct llc_fit_selection *s = NULL;
    int rc = check_config(cfg, err, errlen);
    if (rc < 0)
        goto out;
    rc = llc_fitp_gather(miss, n, excluded, &v, &nv, err, errlen);
    if (rc < 0)
        goto out;
    rc = llc_fit_histogram_create(miss, n, excluded, cfg->binning, &h, err, errlen);
    if (rc < 0)
        goto out;
    s = calloc(1, sizeof *s);
    c = calloc(nv, sizeof *c);
    order = malloc(nv * sizeof *order);
    sorted = malloc(nv * sizeof *sorted);
    taken = calloc(n, sizeof *taken);
    if (!s || !c || !order || !sorted || !taken) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for selecting among %zu units", n);
        goto out;
    }
    *s = (struct llc_fit_selection){
        .mode = cfg->mode,
        .estimator = cfg->estimator,
        .pick_mean = cfg->pick_mean,
        .binning = h->binning,
        .seed = cfg->seed,
        .points = cfg->points,
        .per_point = cfg->per_point,
        .n_units = n,
        .n_usable = nv,
        .a = h->a,
        .b = h->b,
        .bins = h->m,
        .nkeys = cfg->points,
    };
    double var;
    llc_fitp_moments(v, nv, &s->mu, &var);
    s->sigma = sqrt(var);
    for (size_t i = 0; i < nv; i++)
        s->profile_total += v[i];
    rc = store_fit_quality(s, miss, n, excluded, h, cfg->ways, err, errlen);
    if (rc < 0)
        goto out;
    /* Keys at mu -+ sigma mean nothing for a distribution that is not a bell
     * (two levels, a long tail): there they can fall outside the data, and
     * the sets nearest them are the extremes, not their stratum's typical
     * members. The method's rule sends such data to quantile keys. */
    if (cfg->mode == LLC_FIT_KEYS_AUTO)
        s->mode = s->r2 > LLC_FIT_R2_ACCEPT ? LLC_FIT_KEYS_SIGMA2 : LLC_FIT_KEYS_QUANTILE;
    if (s->mu == 0) {
        rc = llc_errf(err, errlen, -ENODATA,
                      "mean probe miss count is 0: the target produced no measurable probe misses");
        goto out;
    }
    for (size_t k = 0, i = 0; k < n; k++) {
        if (!llc_fitp_usable(excluded, k))
            continue;
        c[i] = (struct candidate){
            .unit = k, .value = miss[k], .hash = llc_splitmix64((uint64_t)k ^ cfg->seed)};
        i++;
    }
    qsort(c, nv, sizeof *c, cmp_by_value);
    for (size_t i = 0; i < nv; i++) {
        c[i].rank = i;
        sorted[i] = c[i].value;
    }
    llc_fitp_keys(s->mode, cfg->points, s->mu, s->sigma, sorted, nv, s->key, s->key_p);
    /* From the sorted values: the strata's sums then do not depend on
     * the order of the units. */
    llc_fitp_strata(s->key, s->nkeys, sorted, nv, s->mu, &s->strata);

    const size_t want = cfg->points * cfg->per_point;
    rc = alloc_units(s, want < nv ? want : nv, err, errlen);
    if (rc < 0)
        goto out;
    if (nv < want) {
        s->status = LLC_FIT_SELECT_ALL;
        for (size_t k = 0; k < n; k++)
            if (llc_fitp_usable(excluded, k))
                add_unit(s, k, LLC_FIT_KEY_ALL, miss[k]);
    } else if (s->sigma == 0) {
        s->status = LLC_FIT_SELECT_EVEN;
        select_even(s, miss, excluded, want, taken);
    } else {
        s->status = LLC_FIT_SELECT_KEYS;
        select_keys(s, c, nv, h, order);
    }
    *out = s;
    s = NULL;
out:
    llc_fit_selection_destroy(s);
    llc_fit_histogram_destroy(h);
    free(taken);
    free(sorted);
    free(order);
    free(c);
    free(v);
    return rc;
}
