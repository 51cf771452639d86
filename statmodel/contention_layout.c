/* docs/METHODS.md §12.3 The strata of a layout's own spread: sets holding
 * a Poisson count of a program's lines, in runs of equal probability. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "llcprobe/contention.h"

void llc_contention_layout_strata(double lam, struct llc_contention_layout *out)
{
    llc_contention_layout_strata_runs(lam, LLC_CONTENTION_LAYOUT_STRATA, out);
}

void llc_contention_layout_strata_runs(double lam, size_t runs, struct llc_contention_layout *out)
{
    if (runs < 1 || runs > LLC_CONTENTION_LAYOUT_STRATA)
        runs = LLC_CONTENTION_LAYOUT_STRATA;
    double *w = out->w, *pi = out->pi;
    out->n = 0;
    if (!(lam > 0) || !isfinite(lam)) {
        w[0] = pi[0] = 1;
        out->n = 1;
        return;
    }
    /* k within 12 standard deviations (and 12) of the mean: what is left
     * out is below 1e-15 of the mass. Past lam = 2500 (a CV below 0.02)
     * every `step`-th k stands for the step's k around it: at most 1300
     * terms, the pmf smooth at that scale. */
    const double sd = sqrt(lam), step = fmax(1, floor(sd / 50));
    const double lo = fmax(0, floor(lam - 12 * sd - 12)), hi = ceil(lam + 12 * sd + 12);
    const double ll = log(lam);
    size_t n = 0;
    double sw = 0, sk = 0, cum = 0, pmf = exp(lo * ll - lam - lgamma(lo + 1));
    for (double k = lo; k <= hi;
         k += step, pmf = step > 1 ? exp(k * ll - lam - lgamma(k + 1)) : pmf * (lam / k)) {
        const double mass = pmf * step;
        sw += mass;
        sk += mass * k;
        cum += mass;
        const bool last = n + 1 == runs;
        if ((!last && sw >= 1e-4 && cum >= (double)(n + 1) / (double)runs) || k + step > hi) {
            if (sw > 0) {
                w[n] = sk / sw / lam;
                pi[n++] = sw;
            }
            sw = sk = 0;
        }
    }
    /* (the mass left out, below 1e-15, shared in proportion) */
    for (size_t g = 0; g < n; g++)
        pi[g] /= cum;
    out->n = n;
}
