/* Private to statmodel/: the prepared model's layout, the histogram page
 * layout and the module's random generator. */
#ifndef LLC_STATMODEL_INTERNAL_H
#define LLC_STATMODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "llcprobe/rng.h"
#include "llcprobe/statmodel.h"

/* Histogram storage: pages of 32 buckets, allocated on first use. An
 * octave of log buckets is exactly one page. */
#define SM_PAGE 32u
#define SM_PAGES (LLC_STATMODEL_BUCKETS / SM_PAGE)

struct llc_statmodel_hist {
    double n_inf;
    double finite;
    double *page[SM_PAGES];
};

/* Arguments of f beyond which -expm1(-x) rounds to exactly 1. */
#define SM_EXP_CUTOFF 40.0

struct llc_statmodel_model {
    double n_inf, total, finite;
    /* Dense counts of buckets 0..nb-1 (nb = last non-empty bucket + 1). */
    size_t nb;
    double *count;
    double *suffix; /* suffix[b] = sum of count[b..nb-1]; suffix[nb] = 0 */
    /* Non-empty buckets only, increasing distance (the docs/METHODS.md §7.3 reference solver). */
    size_t nz;
    double *nz_mid;
    double *nz_count;
    /* StatStack tables at bucket edges 0..nb (docs/METHODS.md §8.3). */
    size_t ne;
    double *edge, *q, *f;
};

/* Model from dense bucket counts 0..nb-1 (copied) and n_inf (model.c). */
int sm_model_from_dense(const double *count, size_t nb, double n_inf,
                        struct llc_statmodel_model **out, char *err, size_t errlen);

/* Root of fn on [lo, hi] (fn(lo) > 0 >= fn(hi) or the reverse) by GSL
 * Brent with the docs/METHODS.md §7.3 stopping rule (statcache.c). */
int sm_brent(double (*fn)(double, void *), void *param, double lo, double hi, double *root,
             char *err, size_t errlen);
#define SM_EPSABS 1e-12
#define SM_EPSREL 1e-9
#define SM_MAX_ITER 100
/* Lower end of the bracket when R = 0 is a trivial root (docs/METHODS.md §7.3). */
#define SM_R_MIN 1e-12

/* StatCache equation for size `lines` (statcache.c): fills c, n_eff (the
 * cold term) and n, or returns 1 with a closed-form R, or a negative code. */
int sm_statcache_setup(const struct llc_statmodel_model *m, double lines,
                       enum llc_statmodel_cold cold, double *c, double *n_eff, double *n, double *r,
                       char *err, size_t errlen);
void sm_statcache_point(const struct llc_statmodel_model *m, double lines,
                        enum llc_statmodel_cold cold, double r, struct llc_statmodel_point *out);

/* StatCache fast curve solver (statcache_fast.c). */
int sm_statcache_curve(const struct llc_statmodel_model *m, enum llc_statmodel_cold cold,
                       const double *lines, size_t n, struct llc_statmodel_point *out, char *err,
                       size_t errlen);
/* Points of a curve whose r_total is set: fill bytes and r_capacity. */
void sm_point_finish(const struct llc_statmodel_model *m, double lines, double r_total,
                     struct llc_statmodel_point *out);

/* Distinct-lines clamp and monotonicity check of a solved curve (curve.c). */
int sm_curve_finish(const struct llc_statmodel_options *o, const double *lines, size_t n,
                    struct llc_statmodel_point *out, char *err, size_t errlen);
/* docs/METHODS.md §8.4: P(miss) of a reuse with expected stack distance sd in a
 * `ways`-way cache of `lines` lines (statstack.c). */
double sm_assoc_miss(double sd, double lines, unsigned ways);

/* Uniform on (0, 1]: never 0, so log() is finite. */
/* Largest i < n with a[i] <= x, for a increasing and a[0] <= x. */
static inline size_t sm_last_at_most(const double *a, size_t n, double x)
{
    size_t lo = 0, hi = n; /* a[lo] <= x < a[hi] (a[n] taken as +inf) */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static inline double sm_rng_open0(struct llc_xoshiro *r)
{
    return llc_rng_unit_open0(llc_xoshiro_next(r));
}

#endif
