/* Shared helpers of the phase tests. cmocka 1.1.5's assert_float_equal
 * compares as float, too coarse for these checks. */
#ifndef PHASE_TEST_H
#define PHASE_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define assert_near(actual, expected, tol)                                              \
    do {                                                                                \
        const double a_ = (actual), e_ = (expected), t_ = (tol);                        \
        if (!(fabs(a_ - e_) <= t_))                                                     \
            fail_msg("%s = %.17g, expected %.17g (tolerance %g)", #actual, a_, e_, t_); \
    } while (0)

#endif
