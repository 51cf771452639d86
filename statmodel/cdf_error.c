/* CDF error of docs/METHODS.md §9.1: the area between the quantile functions of per-window
 * reference and estimated miss ratios (1-Wasserstein distance). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

struct weighted {
    double value, weight;
};

static int cmp_value(const void *a, const void *b)
{
    const double x = ((const struct weighted *)a)->value, y = ((const struct weighted *)b)->value;
    return (x > y) - (x < y);
}

int llc_statmodel_cdf_error(const double *ref, const double *est, const double *weights, size_t n,
                            double *out, char *err, size_t errlen)
{
    if (!n)
        return llc_errf(err, errlen, -ENODATA, "CDF error: no windows");
    double total = 0;
    for (size_t k = 0; k < n; k++) {
        const double w = weights ? weights[k] : 1;
        if (!isfinite(ref[k]) || !isfinite(est[k]) || !isfinite(w) || w < 0)
            return llc_errf(err, errlen, -EINVAL,
                            "CDF error: window %zu: ref %g, est %g, weight %g", k, ref[k], est[k],
                            w);
        total += w;
    }
    if (!(total > 0))
        return llc_errf(err, errlen, -EINVAL, "CDF error: window weights sum to 0");
    struct weighted *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return llc_errf(err, errlen, -ENOMEM, "CDF error: out of memory");
    }
    for (size_t k = 0; k < n; k++) {
        const double w = weights ? weights[k] : 1;
        a[k] = (struct weighted){ref[k], w};
        b[k] = (struct weighted){est[k], w};
    }
    qsort(a, n, sizeof *a, cmp_value);
    qsort(b, n, sizeof *b, cmp_value);
    /* Walk both step functions over the shared weight axis. */
    double area = 0, left_a = a[0].weight, left_b = b[0].weight;
    size_t i = 0, j = 0;
    while (i < n && j < n) {
        const double step = left_a < left_b ? left_a : left_b;
        area += step * fabs(a[i].value - b[j].value);
        left_a -= step;
        left_b -= step;
        if (left_a <= 0 && ++i < n)
            left_a = a[i].weight;
        if (left_b <= 0 && ++j < n)
            left_b = b[j].weight;
    }
    free(a);
    free(b);
    *out = area / total;
    return 0;
}
