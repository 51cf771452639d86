/* The hardware backends' statistics and verdicts, as pure functions of
 * measured numbers. */
#include "maphw/maphw_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"

size_t llc_maphw_mean_sd(const double *x, size_t n, double *mean, double *sd)
{
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) {
            sum += x[i];
            k++;
        }
    if (!k) {
        *mean = *sd = NAN;
        return 0;
    }
    const double m = sum / (double)k;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            ss += (x[i] - m) * (x[i] - m);
    *mean = m;
    *sd = k > 1 ? sqrt(ss / (double)(k - 1)) : 0;
    return k;
}

void llc_maphw_rule_default(struct llc_maphw_rule *r)
{
    r->min_effect = 3.0;
    r->sd_floor = 0.01;
    r->min_samples = 3;
}

bool llc_maphw_selftest_verdict(const char *backend, const char *what, const double *aggr,
                                size_t n_aggr, const double *idle, size_t n_idle,
                                const struct llc_maphw_rule *rule, struct llc_map_selftest *st)
{
    double am, asd, im, isd;
    const size_t na = llc_maphw_mean_sd(aggr, n_aggr, &am, &asd);
    const size_t ni = llc_maphw_mean_sd(idle, n_idle, &im, &isd);
    st->ran = true;
    st->aggressor_rate = am;
    st->idle_rate = im;
    st->idle_sd = isd;
    const double sd = isd > rule->sd_floor ? isd : rule->sd_floor;
    st->effect = na && ni ? (am - im) / sd : NAN;
    const bool enough = na >= rule->min_samples && ni >= rule->min_samples;
    st->passed = enough && isfinite(st->effect) && st->effect >= rule->min_effect;
    if (!enough) {
        snprintf(st->text, sizeof(st->text),
                 "%s: self-test failed: only %zu aggressor and %zu idle dwells had accesses "
                 "(%zu of each needed)",
                 backend, na, ni, rule->min_samples);
        return false;
    }
    snprintf(st->text, sizeof(st->text),
             "%s: self-test %s: aggressor set %.1f%% %s vs idle %.1f%% ± %.1f%% (effect %.1f sd, "
             "%s %.1f; sd floor %.1f%%; %zu + %zu dwells)",
             backend, st->passed ? "passed" : "failed", 100 * am, what, 100 * im, 100 * isd,
             st->effect, st->passed ? ">=" : "needs >=", rule->min_effect, 100 * rule->sd_floor, na,
             ni);
    return st->passed;
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int llc_maphw_walk_verdict(const char *backend, const char *check, unsigned walk, size_t units,
                           uint32_t *ticks, size_t n, uint32_t l2_bound, uint32_t dram_threshold,
                           char *text, size_t len)
{
    if (!n) {
        snprintf(text, len, "%s: %s failed: no timed accesses", backend, check);
        return -EINVAL;
    }
    qsort(ticks, n, sizeof(*ticks), cmp_u32);
    size_t fast = 0, slow = 0;
    for (size_t i = 0; i < n; i++) {
        fast += l2_bound && ticks[i] < l2_bound;
        slow += ticks[i] > dram_threshold;
    }
    const double f_fast = (double)fast / (double)n, f_slow = (double)slow / (double)n;
    const bool pass = f_slow <= 0.05 && f_fast <= 0.10;
    char l2[64];
    if (l2_bound)
        snprintf(l2, sizeof(l2), "%.1f%% L2-fast (< %u ticks)", 100 * f_fast, l2_bound);
    else
        snprintf(l2, sizeof(l2), "L2 hits not told apart");
    snprintf(text, len,
             "%s: %s %s: %u-line walks over %zu sets, %zu timed accesses: %.1f%% "
             "from memory (> %u ticks; 5%% allowed), %s, median %u ticks",
             backend, check, pass ? "passed" : "failed", walk, units, n, 100 * f_slow,
             dram_threshold, l2, ticks[n / 2]);
    return pass ? 1 : 0;
}

int llc_maphw_recheck(uint32_t current, const struct llc_evset_calibration *fresh, uint32_t *next,
                      char *err, size_t errlen)
{
    if (!fresh->separable)
        return llc_errf(err, errlen, -EIO,
                        "timing: threshold re-check failed: LLC-hit median %u (p90 %u) ticks, "
                        "memory median %u (p10 %u) ticks, %.1f%% misclassified at %u (was %u)",
                        fresh->hit_median, fresh->hit_p90, fresh->miss_median, fresh->miss_p10,
                        100 * fresh->error_rate, fresh->threshold, current);
    *next = fresh->threshold;
    return 0;
}
