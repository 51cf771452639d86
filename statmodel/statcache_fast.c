/* StatCache curves fast (docs/METHODS.md §7.3 "Cost"): one evaluation of g costs a few
 * microseconds instead of one expm1 per bucket, and each size needs a
 * handful of evaluations:
 *  - exp(-x d) over the exact bins and over the equally spaced midpoints of
 *    an octave is a geometric sequence; it is advanced in expm1 form,
 *    e' = e + s (1 + e), which keeps the relative precision of 1 - exp
 *    that cancellation would destroy;
 *  - buckets with x d > 40 have f = 1 to double precision: a suffix sum;
 *  - sizes ascend, R is non-increasing in L, so the previous R bounds the
 *    root from above; g is concave, so Newton steps from above stay above
 *    the root and converge monotonically;
 *  - the result is certified like gsl_root_test_interval: a point within
 *    the docs/METHODS.md §7.3 tolerance below it must have g > 0. Anything unexpected
 *    falls back to GSL Brent. */
#include <errno.h>
#include <math.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

struct fast_eq {
    const struct llc_statmodel_model *m;
    double c, n_eff, n;
};

/* s = sum h f(d R), dd = sum h d (1 - f(d R)), with x = c R. */
static void sums(const struct llc_statmodel_model *m, double x, double *s_out, double *dd_out)
{
    const double *cnt = m->count;
    const size_t nexact = m->nb < LLC_STATMODEL_EXACT_LIMIT ? m->nb : LLC_STATMODEL_EXACT_LIMIT;
    size_t cut = nexact;
    if (x * (double)nexact > SM_EXP_CUTOFF)
        cut = (size_t)(SM_EXP_CUTOFF / x) + 1;
    double s = 0, dd = 0;
    /* Four interleaved sequences d, d+1, d+2, d+3 stepping by 4: shorter
     * dependency chains. */
    const double s4 = expm1(-4 * x);
    double e[4] = {0, expm1(-x), expm1(-2 * x), expm1(-3 * x)};
    size_t d = 0;
    for (; d + 4 <= cut; d += 4) {
        for (int k = 0; k < 4; k++) {
            const double h = cnt[d + k];
            s -= h * e[k];
            dd += h * (double)(d + k) * (1 + e[k]);
            e[k] += s4 * (1 + e[k]);
        }
    }
    for (int k = 0; d < cut; d++, k++) {
        s -= cnt[d] * e[k];
        dd += cnt[d] * (double)d * (1 + e[k]);
    }
    if (cut < nexact || m->nb <= LLC_STATMODEL_EXACT_LIMIT) {
        *s_out = s + m->suffix[cut];
        *dd_out = dd;
        return;
    }
    for (size_t base = LLC_STATMODEL_EXACT_LIMIT; base < m->nb; base += LLC_STATMODEL_SUBBUCKETS) {
        const int oct = 10 + (int)((base - LLC_STATMODEL_EXACT_LIMIT) / LLC_STATMODEL_SUBBUCKETS);
        const double w = ldexp(1, oct - 5);
        const double m0 = ldexp(1, oct) + (w - 1) / 2;
        if (x * m0 > SM_EXP_CUTOFF) {
            s += m->suffix[base];
            break;
        }
        double ee = expm1(-x * m0);
        const double step = expm1(-x * w);
        const size_t end =
            base + LLC_STATMODEL_SUBBUCKETS < m->nb ? base + LLC_STATMODEL_SUBBUCKETS : m->nb;
        double mid = m0;
        for (size_t b = base; b < end; b++, mid += w) {
            s -= cnt[b] * ee;
            dd += cnt[b] * mid * (1 + ee);
            ee += step * (1 + ee);
        }
    }
    *s_out = s;
    *dd_out = dd;
}

/* g(R) and g'(R). */
static double g_and_slope(const struct fast_eq *q, double r, double *slope)
{
    double s = 0, dd = 0;
    sums(q->m, q->c * r, &s, &dd);
    if (slope)
        *slope = q->c * dd - q->n;
    return q->n_eff + s - q->n * r;
}

static double fast_g(double r, void *param)
{
    return g_and_slope(param, r, NULL);
}

static double fast_h(double r, void *param)
{
    return fast_g(r, param) / r;
}

static double tolerance(double lo)
{
    return SM_EPSABS + SM_EPSREL * fabs(lo);
}

/* Root in [lo, hi] where g(lo) > 0 >= g(hi) (g_hi, slope_hi given). */
static int newton_from_above(const struct fast_eq *q, double lo, double hi, double g_hi,
                             double slope_hi, double *root, char *err, size_t errlen)
{
    for (int iter = 0; iter < SM_MAX_ITER; iter++) {
        if (hi - lo < tolerance(lo)) {
            *root = hi;
            return 0;
        }
        double x = slope_hi < 0 ? hi - g_hi / slope_hi : NAN;
        const bool newton = x > lo && x < hi;
        if (!newton)
            x = lo + (hi - lo) / 2;
        double slope = 0;
        const double gx = g_and_slope(q, x, &slope);
        if (gx > 0) {
            lo = x; /* only by rounding: concavity keeps Newton above */
            continue;
        }
        const double step = hi - x;
        hi = x;
        g_hi = gx;
        slope_hi = slope;
        if (gx == 0) {
            *root = x;
            return 0;
        }
        /* Quadratic convergence: after a step this small the iterate is
         * within rounding of the root; certify from below. */
        if (newton && step < tolerance(hi) && hi - lo >= tolerance(lo)) {
            const double below = hi - 0.5 * tolerance(hi);
            if (below > lo) {
                double slope_below = 0;
                const double g_below = g_and_slope(q, below, &slope_below);
                if (g_below > 0) {
                    lo = below;
                } else {
                    hi = below;
                    g_hi = g_below;
                    slope_hi = slope_below;
                }
            }
        }
    }
    /* Did not settle: Brent on the bracket we kept. */
    return q->n_eff > 0 ? sm_brent(fast_g, (void *)q, lo, hi, root, err, errlen)
                        : sm_brent(fast_h, (void *)q, lo, hi, root, err, errlen);
}

/* R for one size; hi0 is an upper bound from a smaller size (or 1). */
static int solve_one(const struct fast_eq *q, double hi0, double *r, char *err, size_t errlen)
{
    double lo = 0;
    if (q->n_eff <= 0) {
        if (fast_h(SM_R_MIN, (void *)q) <= 0) {
            *r = 0; /* mean reuse distance below ~L: everything fits */
            return 0;
        }
        lo = SM_R_MIN;
    }
    double hi = hi0 > lo && hi0 < 1 ? hi0 : 1;
    double slope = 0;
    double g_hi = g_and_slope(q, hi, &slope);
    if (g_hi > 0 && hi < 1) {
        lo = hi; /* the bound was off by rounding */
        hi = 1;
        g_hi = g_and_slope(q, hi, &slope);
    }
    if (g_hi >= 0) {
        *r = hi; /* at R = 1 only if every reuse is far longer than L */
        return 0;
    }
    return newton_from_above(q, lo, hi, g_hi, slope, r, err, errlen);
}

int sm_statcache_curve(const struct llc_statmodel_model *m, enum llc_statmodel_cold cold,
                       const double *lines, size_t n, struct llc_statmodel_point *out, char *err,
                       size_t errlen)
{
    double prev_r = 1, prev_lines = 0;
    for (size_t k = 0; k < n; k++) {
        struct fast_eq q = {.m = m};
        double r = 1;
        int rc = sm_statcache_setup(m, lines[k], cold, &q.c, &q.n_eff, &q.n, &r, err, errlen);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            rc = solve_one(&q, lines[k] >= prev_lines ? prev_r : 1, &r, err, errlen);
            if (rc)
                return rc;
        }
        sm_statcache_point(m, lines[k], cold, r, &out[k]);
        prev_r = r;
        prev_lines = lines[k];
    }
    return 0;
}
