/* Helpers shared by the fit/ sources; not part of the public API. */
#ifndef LLC_FIT_INTERNAL_H
#define LLC_FIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llcprobe/fit.h"

static inline bool llc_fitp_usable(const uint8_t *excluded, size_t k)
{
    return !excluded || !excluded[k];
}

/* Allocates *out and copies the usable values into it, in unit order.
 * Fails with -EINVAL on a non-finite usable value, -ENODATA if none is usable. */
int llc_fitp_gather(const double *x, size_t n, const uint8_t *excluded, double **out, size_t *count,
                    char *err, size_t errlen);

/* Log density (log pmf per unit of x for the Poisson families) of a fitted
 * family at x; -INFINITY outside the support. */
double llc_fitp_logpdf(const struct llc_fit_family_result *r, double x);

/* Fills loglik, aic, model (h->m values) and r, r2 of a result
 * whose parameters are set; may downgrade status OK to DEGENERATE when R is
 * undefined. */
void llc_fitp_score(struct llc_fit_family_result *r, const double *v, size_t nv,
                    const struct llc_fit_histogram *h, bool bin_integrated, double *model);

/* Parameter estimators. Each sets param[], method, iterations and, when the
 * data or the estimator rule the family out, status; v holds nv >= 2 values
 * that are not all equal. */
void llc_fitp_fit_gamma(const double *v, size_t nv, struct llc_fit_family_result *r);
int llc_fitp_fit_beta(const double *v, size_t nv, double lo, double hi, bool mle,
                      struct llc_fit_family_result *r); /* 0 or -ENOMEM */
void llc_fitp_fit_student_t(const double *v, size_t nv, struct llc_fit_family_result *r);

/* Key values K1..K_points of docs/METHODS.md §3.1 (key_p: the quantile mode's probabilities,
 * NaN otherwise); sorted holds the nv usable values in increasing order. */
void llc_fitp_keys(enum llc_fit_key_mode mode, size_t points, double mu, double sigma,
                   const double *sorted, size_t nv, double *key, double *key_p);
/* Strata of docs/METHODS.md §4 around the distinct key values, weighted by the profile v. */
void llc_fitp_strata(const double *key, size_t nkeys, const double *v, size_t nv, double mu,
                     struct llc_fit_strata *s);

/* Sample mean and N-1 variance (0 for N < 2). */
void llc_fitp_moments(const double *v, size_t nv, double *mean, double *var);

#endif
