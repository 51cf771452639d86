/* Seeded synthetic per-unit data for the fit tests (GSL's MT19937). */
#ifndef LLC_FIT_TESTDATA_H
#define LLC_FIT_TESTDATA_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

/* cmocka's assert_float_equal compares floats; these tests need doubles.
 * Used inside cmocka tests only (fail_msg comes from cmocka.h). */
#define assert_near(a, b, tol)                                                              \
    do {                                                                                    \
        const double a_ = (a), b_ = (b), t_ = (tol);                                        \
        if (!(fabs(a_ - b_) <= t_) && !(a_ == b_))                                          \
            fail_msg("%s = %.17g, %s = %.17g, differ by more than %g", #a, a_, #b, b_, t_); \
    } while (0)

enum testdist { TD_NORMAL, TD_GAMMA, TD_POISSON, TD_BETA, TD_T, TD_LOGNORMAL };

/* n draws of the given distribution; p0, p1 as GSL's parameters, then
 * affine: x = shift + scale * draw. Caller frees. */
static inline double *
testdata(/* cmocka's assert_float_equal compares floats; these tests need doubles.
          * Used inside cmocka tests only (fail_msg comes from cmocka.h). */
#define assert_near(a, b, tol)                                                              \
    do {                                                                                    \
        const double a_ = (a), b_ = (b), t_ = (tol);                                        \
        if (!(fabs(a_ - b_) <= t_) && !(a_ == b_))                                          \
            fail_msg("%s = %.17g, %s = %.17g, differ by more than %g", #a, a_, #b, b_, t_); \
    } while (0)

         enum testdist d, size_t n, double p0, double p1, double shift, double scale,
         unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    double *x = malloc(n * sizeof *x);
    for (size_t k = 0; k < n; k++) {
        double v = 0;
        switch (d) {
        case TD_NORMAL:
            v = p0 + gsl_ran_gaussian(r, p1);
            break;
        case TD_GAMMA:
            v = gsl_ran_gamma(r, p0, p1);
            break;
        case TD_POISSON:
            v = gsl_ran_poisson(r, p0);
            break;
        case TD_BETA:
            v = gsl_ran_beta(r, p0, p1);
            break;
        case TD_T:
            v = gsl_ran_tdist(r, p0);
            break;
        case TD_LOGNORMAL:
            v = gsl_ran_lognormal(r, p0, p1);
            break;
        }
        x[k] = shift + scale * v;
    }
    gsl_rng_free(r);
    return x;
}

#endif
