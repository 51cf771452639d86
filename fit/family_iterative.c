/* The iterative estimators of docs/METHODS.md §2.6: gamma MLE (Newton on the shape), beta
 * MLE (2-D Newton) and Student t (EM per grid value of nu). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multiroots.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_psi.h>
#include <gsl/gsl_vector.h>

#include "fit_internal.h"

#define NEWTON_MAX_ITER 100
#define NEWTON_REL_TOL 1e-10
#define EM_MAX_ITER 10000
#define EM_REL_TOL 1e-10

/* ---- gamma ---------------------------------------------------------------- */

struct gamma_eq {
    double s;         /* ln(mean x) - mean(ln x) */
    bool left_domain; /* Newton stepped to alpha <= 0 */
};

/* g(alpha) = ln alpha - psi(alpha) - s, decreasing and convex in alpha. */
static void gamma_fdf(double alpha, void *params, double *f, double *df)
{
    struct gamma_eq *eq = params;
    if (!(alpha > 0)) {
        /* Finite stand-ins keep GSL from raising an error; the flag ends the loop. */
        eq->left_domain = true;
        *f = 1.0;
        *df = -1.0;
        return;
    }
    *f = log(alpha) - gsl_sf_psi(alpha) - eq->s;
    *df = 1.0 / alpha - gsl_sf_psi_1(alpha);
}

static double gamma_f(double alpha, void *params)
{
    double f, df;
    gamma_fdf(alpha, params, &f, &df);
    return f;
}

static double gamma_df(double alpha, void *params)
{
    double f, df;
    gamma_fdf(alpha, params, &f, &df);
    return df;
}

/* GSL's gamma and beta densities cancel terms of size shape * ln(x); past
 * this shape the cancellation leaves no correct digit. Such data are
 * Gaussian to within rounding anyway. */
#define MAX_EVALUABLE_SHAPE 1e10

static void check_shape(struct llc_fit_family_result *r)
{
    if (r->status == LLC_FIT_OK && fmax(r->param[0], r->param[1]) > MAX_EVALUABLE_SHAPE)
        r->status = LLC_FIT_NOT_APPLICABLE;
}

static void gamma_moments(const double *v, size_t nv, struct llc_fit_family_result *r)
{
    double mu, var;
    llc_fitp_moments(v, nv, &mu, &var);
    r->method = LLC_FIT_METHOD_MOM;
    if (!(mu > 0) || !(var > 0)) {
        r->status = LLC_FIT_NOT_APPLICABLE;
        return;
    }
    r->param[0] = mu * mu / var;
    r->param[1] = var / mu;
}

void llc_fitp_fit_gamma(const double *v, size_t nv, struct llc_fit_family_result *r)
{
    double sum = 0, sum_log = 0;
    for (size_t k = 0; k < nv; k++) {
        if (!(v[k] > 0)) {
            gamma_moments(v, nv, r); /* the likelihood needs ln x */
            check_shape(r);
            return;
        }
        sum += v[k];
        sum_log += log(v[k]);
    }
    const double mean = sum / (double)nv;
    struct gamma_eq eq = {.s = log(mean) - sum_log / (double)nv};
    r->method = LLC_FIT_METHOD_MLE;
    /* s is about CV^2 / 2; below its rounding error (CV < ~1e-7) the MLE is
     * noise, while the moments are still exact. */
    if (!(eq.s > 64 * DBL_EPSILON * fmax(1.0, fabs(log(mean))))) {
        gamma_moments(v, nv, r);
        check_shape(r);
        return;
    }
    /* Minka's start is within 1.5% of the root, so Newton stays in alpha > 0. */
    double alpha = (3 - eq.s + sqrt((eq.s - 3) * (eq.s - 3) + 24 * eq.s)) / (12 * eq.s);
    gsl_function_fdf fn = {.f = gamma_f, .df = gamma_df, .fdf = gamma_fdf, .params = &eq};
    gsl_root_fdfsolver *solver = gsl_root_fdfsolver_alloc(gsl_root_fdfsolver_newton);
    if (!solver) {
        r->status = LLC_FIT_NO_CONVERGENCE;
        return;
    }
    gsl_root_fdfsolver_set(solver, &fn, alpha);
    int status = GSL_CONTINUE;
    unsigned iter = 0;
    while (status == GSL_CONTINUE && iter < NEWTON_MAX_ITER) {
        iter++;
        if (gsl_root_fdfsolver_iterate(solver) != GSL_SUCCESS || eq.left_domain)
            break;
        const double prev = alpha;
        alpha = gsl_root_fdfsolver_root(solver);
        status = gsl_root_test_delta(alpha, prev, 0, NEWTON_REL_TOL);
        /* For large alpha, g is about 1/(2 alpha), and rounding in
         * ln alpha - psi(alpha) keeps the step above 1e-10 alpha: stop
         * once the residual is at that rounding floor. */
        if (status == GSL_CONTINUE && alpha > 0 &&
            fabs(gamma_f(alpha, &eq)) <= 64 * DBL_EPSILON * fmax(1.0, fabs(log(alpha))))
            status = GSL_SUCCESS;
    }
    gsl_root_fdfsolver_free(solver);
    r->iterations = iter;
    if (status != GSL_SUCCESS || eq.left_domain || !(alpha > 0)) {
        r->status = LLC_FIT_NO_CONVERGENCE;
        return;
    }
    r->param[0] = alpha;
    r->param[1] = mean / alpha;
    check_shape(r);
}

/* ---- beta ----------------------------------------------------------------- */

struct beta_eq {
    double mean_log_u, mean_log_1mu;
};

/* Unknowns are ln alpha and ln beta: Newton then cannot leave alpha, beta > 0,
 * and converges to the same root as Newton in (alpha, beta). */
#define BETA_LOG_BOUND 50.0
#define BETA_MLE_MAX_SHAPE 1e6

static int beta_fdf(const gsl_vector *t, void *params, gsl_vector *f, gsl_matrix *J)
{
    const struct beta_eq *eq = params;
    const double t0 = gsl_vector_get(t, 0), t1 = gsl_vector_get(t, 1);
    if (!(fabs(t0) < BETA_LOG_BOUND) || !(fabs(t1) < BETA_LOG_BOUND))
        return GSL_EDOM;
    const double a = exp(t0), b = exp(t1);
    const double psi_ab = gsl_sf_psi(a + b), tri_ab = gsl_sf_psi_1(a + b);
    if (f) {
        gsl_vector_set(f, 0, gsl_sf_psi(a) - psi_ab - eq->mean_log_u);
        gsl_vector_set(f, 1, gsl_sf_psi(b) - psi_ab - eq->mean_log_1mu);
    }
    if (J) {
        gsl_matrix_set(J, 0, 0, (gsl_sf_psi_1(a) - tri_ab) * a);
        gsl_matrix_set(J, 0, 1, -tri_ab * b);
        gsl_matrix_set(J, 1, 0, -tri_ab * a);
        gsl_matrix_set(J, 1, 1, (gsl_sf_psi_1(b) - tri_ab) * b);
    }
    return GSL_SUCCESS;
}

static int beta_f(const gsl_vector *t, void *params, gsl_vector *f)
{
    return beta_fdf(t, params, f, NULL);
}

static int beta_df(const gsl_vector *t, void *params, gsl_matrix *J)
{
    return beta_fdf(t, params, NULL, J);
}

/* Refines (alpha, beta) in r->param; false if Newton fails. */
static bool beta_newton(const double *u, size_t nv, struct llc_fit_family_result *r)
{
    struct beta_eq eq = {0, 0};
    for (size_t k = 0; k < nv; k++) {
        eq.mean_log_u += log(u[k]) / (double)nv;
        eq.mean_log_1mu += log1p(-u[k]) / (double)nv;
    }
    gsl_multiroot_function_fdf fn = {
        .f = beta_f, .df = beta_df, .fdf = beta_fdf, .n = 2, .params = &eq};
    gsl_multiroot_fdfsolver *solver =
        gsl_multiroot_fdfsolver_alloc(gsl_multiroot_fdfsolver_newton, 2);
    gsl_vector *t = gsl_vector_alloc(2);
    bool ok = false;
    if (!solver || !t)
        goto out;
    gsl_vector_set(t, 0, log(r->param[0]));
    gsl_vector_set(t, 1, log(r->param[1]));
    if (gsl_multiroot_fdfsolver_set(solver, &fn, t) != GSL_SUCCESS)
        goto out;
    int status = GSL_CONTINUE;
    unsigned iter = 0;
    while (status == GSL_CONTINUE && iter < NEWTON_MAX_ITER) {
        iter++;
        if (gsl_multiroot_fdfsolver_iterate(solver) != GSL_SUCCESS)
            break;
        status = gsl_multiroot_test_delta(solver->dx, solver->x, NEWTON_REL_TOL, 0);
    }
    r->iterations = iter;
    if (status != GSL_SUCCESS)
        goto out;
    r->param[0] = exp(gsl_vector_get(solver->x, 0));
    r->param[1] = exp(gsl_vector_get(solver->x, 1));
    ok = true;
out:
    gsl_vector_free(t);
    gsl_multiroot_fdfsolver_free(solver);
    return ok;
}

int llc_fitp_fit_beta(const double *v, size_t nv, double lo, double hi, bool mle,
                      struct llc_fit_family_result *r)
{
    r->param[2] = lo;
    r->param[3] = hi;
    r->method = LLC_FIT_METHOD_MOM;
    double *u = malloc(nv * sizeof *u);
    if (!u)
        return -ENOMEM;
    for (size_t k = 0; k < nv; k++)
        u[k] = (v[k] - lo) / (hi - lo);
    double ubar, var;
    llc_fitp_moments(u, nv, &ubar, &var);
    if (!(var > 0) || !(var < ubar * (1 - ubar))) {
        r->status = LLC_FIT_NOT_APPLICABLE;
        goto out;
    }
    const double c = ubar * (1 - ubar) / var - 1;
    r->param[0] = ubar * c;
    r->param[1] = (1 - ubar) * c;
    check_shape(r);
    if (r->status != LLC_FIT_OK)
        goto out;
    /* A failed refinement leaves the moment estimates, and method says so.
     * Above BETA_MLE_MAX_SHAPE the trigamma differences of the Jacobian lose
     * their precision (it can turn singular, an abort in GSL's LU solver)
     * while the shape is already near-Gaussian: keep the moments there. */
    if (mle && fmax(r->param[0], r->param[1]) <= BETA_MLE_MAX_SHAPE) {
        const double mom[2] = {r->param[0], r->param[1]};
        if (beta_newton(u, nv, r)) {
            r->method = LLC_FIT_METHOD_MLE;
        } else {
            r->param[0] = mom[0];
            r->param[1] = mom[1];
        }
    }
out:
    free(u);
    return 0;
}

/* ---- Student t ------------------------------------------------------------ */

static const double t_nu_grid[] = {1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 100};

/* EM for location and scale at fixed nu, from the sample moments. Returns
 * the iterations, or 0 if it did not converge. */
static unsigned t_em(const double *v, size_t nv, double nu, double *mu, double *scale)
{
    double var;
    llc_fitp_moments(v, nv, mu, &var);
    *scale = sqrt(var);
    for (unsigned iter = 1; iter <= EM_MAX_ITER; iter++) {
        double sw = 0, swx = 0;
        for (size_t k = 0; k < nv; k++) {
            const double z = (v[k] - *mu) / *scale;
            const double w = (nu + 1) / (nu + z * z);
            sw += w;
            swx += w * v[k];
        }
        const double mu_new = swx / sw;
        /* The scale uses the new location (and the weights of the old one). */
        double sw2 = 0;
        for (size_t k = 0; k < nv; k++) {
            const double z = (v[k] - *mu) / *scale;
            const double w = (nu + 1) / (nu + z * z);
            sw2 += w * (v[k] - mu_new) * (v[k] - mu_new);
        }
        const double scale_new = sqrt(sw2 / (double)nv);
        const bool done = fabs(mu_new - *mu) <= EM_REL_TOL * *scale &&
                          fabs(scale_new - *scale) <= EM_REL_TOL * *scale;
        *mu = mu_new;
        *scale = scale_new;
        if (!(scale_new > 0))
            return 0;
        if (done)
            return iter;
    }
    return 0;
}

void llc_fitp_fit_student_t(const double *v, size_t nv, struct llc_fit_family_result *r)
{
    r->method = LLC_FIT_METHOD_EM;
    double best_ll = -INFINITY;
    bool found = false;
    for (size_t g = 0; g < sizeof t_nu_grid / sizeof t_nu_grid[0]; g++) {
        struct llc_fit_family_result trial = *r;
        const unsigned iter = t_em(v, nv, t_nu_grid[g], &trial.param[0], &trial.param[1]);
        if (!iter)
            continue;
        trial.param[2] = t_nu_grid[g];
        double ll = 0;
        for (size_t k = 0; k < nv; k++)
            ll += llc_fitp_logpdf(&trial, v[k]);
        if (ll > best_ll) {
            best_ll = ll;
            found = true;
            r->param[0] = trial.param[0];
            r->param[1] = trial.param[1];
            r->param[2] = trial.param[2];
            r->iterations = iter;
        }
    }
    if (!found)
        r->status = LLC_FIT_NO_CONVERGENCE;
}
