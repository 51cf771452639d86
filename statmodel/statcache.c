/* StatCache (docs/METHODS.md §7): random replacement, fully associative, L lines. This is
 * the reference solver, exactly as docs/METHODS.md §7.3 describes it: -expm1 per non-empty
 * bucket and GSL Brent on [0,1] or, when R = 0 is a trivial root, on
 * g(R)/R over [1e-12, 1]. statcache_fast.c solves whole curves faster and
 * is tested against this file. */
#include <errno.h>
#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

int sm_brent(double (*fn)(double, void *), void *param, double lo, double hi, double *root,
             char *err, size_t errlen)
{
    int rc = 0;
    gsl_root_fsolver *solver = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!solver)
        return llc_errf(err, errlen, -ENOMEM, "StatCache: out of memory for the root solver");
    gsl_function f = {.function = fn, .params = param};
    if (gsl_root_fsolver_set(solver, &f, lo, hi) != GSL_SUCCESS) {
        rc = llc_errf(err, errlen, -EDOM, "StatCache: [%g, %g] does not bracket a root", lo, hi);
        goto out;
    }
    for (int iter = 0; iter < SM_MAX_ITER; iter++) {
        if (gsl_root_fsolver_iterate(solver) != GSL_SUCCESS) {
            rc = llc_errf(err, errlen, -EDOM, "StatCache: root solver failed");
            goto out;
        }
        if (gsl_root_test_interval(gsl_root_fsolver_x_lower(solver),
                                   gsl_root_fsolver_x_upper(solver), SM_EPSABS,
                                   SM_EPSREL) == GSL_SUCCESS) {
            *root = gsl_root_fsolver_root(solver);
            goto out;
        }
    }
    rc = llc_errf(err, errlen, -EDOM, "StatCache: no convergence in %d iterations", SM_MAX_ITER);
out:
    gsl_root_fsolver_free(solver);
    return rc;
}

struct ref_eq {
    const struct llc_statmodel_model *m;
    double c;     /* -log1p(-1/L) */
    double n_eff; /* n_inf, or 0 when cold is ignored */
    double n;     /* N of the equation */
};

static double ref_g(double r, void *param)
{
    const struct ref_eq *q = param;
    double s = q->n_eff;
    for (size_t i = 0; i < q->m->nz; i++)
        s -= q->m->nz_count[i] * expm1(-q->c * q->m->nz_mid[i] * r);
    return s - q->n * r;
}

static double ref_h(double r, void *param)
{
    return ref_g(r, param) / r;
}

/* Equation parameters for size L, or a closed-form answer in *r (returns 1). */
int sm_statcache_setup(const struct llc_statmodel_model *m, double lines,
                       enum llc_statmodel_cold cold, double *c, double *n_eff, double *n, double *r,
                       char *err, size_t errlen)
{
    if (!(m->total > 0))
        return llc_errf(err, errlen, -ENODATA, "StatCache: no reuse samples");
    if (!(lines >= 1) || !isfinite(lines))
        return llc_errf(err, errlen, -EINVAL, "StatCache: cache of %g lines", lines);
    if (cold != LLC_STATMODEL_COLD_COUNT && cold != LLC_STATMODEL_COLD_IGNORE)
        return llc_errf(err, errlen, -EINVAL, "StatCache: unknown cold mode %d", (int)cold);
    *n_eff = cold == LLC_STATMODEL_COLD_COUNT ? m->n_inf : 0;
    *n = cold == LLC_STATMODEL_COLD_COUNT ? m->total : m->finite;
    if (!(m->finite > 0)) {
        if (cold == LLC_STATMODEL_COLD_IGNORE)
            return llc_errf(err, errlen, -ENODATA,
                            "StatCache: only dangling samples and cold misses ignored");
        *r = 1; /* all samples cold */
        return 1;
    }
    if (lines == 1) {
        /* One line: every reuse with d > 0 misses. */
        const double d0 = m->nb && m->nz_mid[0] == 0 ? m->nz_count[0] : 0;
        *r = (*n_eff + m->finite - d0) / *n;
        return 1;
    }
    *c = -log1p(-1.0 / lines);
    return 0;
}

/* R of the equation to the reported point (see the header for IGNORE). */
void sm_statcache_point(const struct llc_statmodel_model *m, double lines,
                        enum llc_statmodel_cold cold, double r, struct llc_statmodel_point *out)
{
    const double r_total =
        cold == LLC_STATMODEL_COLD_COUNT ? r : r * m->finite / m->total + m->n_inf / m->total;
    sm_point_finish(m, lines, r_total, out);
}

int llc_statmodel_statcache(const struct llc_statmodel_model *m, double lines,
                            enum llc_statmodel_cold cold, struct llc_statmodel_point *out,
                            char *err, size_t errlen)
{
    struct ref_eq q = {.m = m};
    double r = 0;
    int rc = sm_statcache_setup(m, lines, cold, &q.c, &q.n_eff, &q.n, &r, err, errlen);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (ref_g(1, &q) >= 0) {
            r = 1; /* every reuse is so long that even R = 1 balances */
        } else if (q.n_eff > 0) {
            rc = sm_brent(ref_g, &q, 0, 1, &r, err, errlen);
        } else if (ref_h(SM_R_MIN, &q) <= 0) {
            r = 0; /* mean reuse distance below ~L: everything fits */
        } else {
            rc = sm_brent(ref_h, &q, SM_R_MIN, 1, &r, err, errlen);
        }
        if (rc)
            return rc;
    }
    sm_statcache_point(m, lines, cold, r, out);
    return 0;
}
