/* The sampling baselines Gaussian-25 is compared with (docs/METHODS.md §5): Global,
 * Random-n and Continuous-n, and the paper's deviation D (eq. 8). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fit_internal.h"
#include "llcprobe/rng.h"
#include "llcprobe/common.h"

double llc_fit_global_total(const double *x, size_t n, const uint8_t *excluded)
{
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        if (llc_fitp_usable(excluded, k))
            sum += x[k];
    return sum;
}

static size_t count_usable(size_t n, const uint8_t *excluded)
{
    size_t c = 0;
    for (size_t k = 0; k < n; k++)
        c += llc_fitp_usable(excluded, k);
    return c;
}

int llc_fit_random_units(size_t n, const uint8_t *excluded, size_t n_pick, uint64_t seed,
                         size_t *units, char *err, size_t errlen)
{
    const size_t usable = count_usable(n, excluded);
    if (n_pick == 0 || n_pick > usable)
        return llc_errf(err, errlen, -EINVAL, "cannot pick %zu of %zu usable units", n_pick,
                        usable);
    size_t *pool = malloc(usable * sizeof *pool);
    if (!pool)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu units", usable);
    for (size_t k = 0, i = 0; k < n; k++)
        if (llc_fitp_usable(excluded, k))
            pool[i++] = k;
    struct llc_xoshiro g;
    llc_xoshiro_seed(&g, seed);
    /* Partial Fisher-Yates: the first n_pick slots end up a uniform sample. */
    for (size_t i = 0; i < n_pick; i++) {
        const size_t j = i + (size_t)llc_xoshiro_below(&g, usable - i);
        const size_t t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
        units[i] = pool[i];
    }
    free(pool);
    return 0;
}

int llc_fit_continuous_units(size_t n, const uint8_t *excluded, size_t start, size_t n_pick,
                             size_t *units, char *err, size_t errlen)
{
    const size_t usable = count_usable(n, excluded);
    if (n_pick == 0 || n_pick > usable || start >= n)
        return llc_errf(err, errlen, -EINVAL, "cannot take %zu of %zu usable units from unit %zu",
                        n_pick, usable, start);
    for (size_t i = 0, k = start; i < n_pick; k = (k + 1) % n)
        if (llc_fitp_usable(excluded, k))
            units[i++] = k;
    return 0;
}

struct llc_fit_deviation llc_fit_deviation(double total, double global)
{
    const double diff = fabs(total - global);
    if (global == 0)
        return (struct llc_fit_deviation){.abs_diff = diff, .percent = NAN, .defined = false};
    return (struct llc_fit_deviation){
        .abs_diff = diff, .percent = diff / fabs(global) * 100.0, .defined = true};
}

/* Folds the scale-up total of one pick into the summary. */
static void add_trial(struct llc_fit_baseline_summary *s, const double *x, const size_t *units,
                      size_t n_pick, double population)
{
    double sum = 0;
    for (size_t i = 0; i < n_pick; i++)
        sum += x[units[i]];
    const double total = population / (double)n_pick * sum;
    const struct llc_fit_deviation d = llc_fit_deviation(total, s->global);
    if (s->trials == 0) {
        s->first_total = total;
        s->first_percent = d.percent;
        s->first_abs = d.abs_diff;
        s->worst_percent = d.percent;
        s->worst_abs = d.abs_diff;
    }
    s->worst_percent = fmax(s->worst_percent, d.percent);
    s->worst_abs = fmax(s->worst_abs, d.abs_diff);
    s->mean_percent += d.percent; /* NaN throughout when G == 0 */
    s->mean_abs += d.abs_diff;
    s->trials++;
}

static void finish(struct llc_fit_baseline_summary *s)
{
    s->mean_percent /= (double)s->trials;
    s->mean_abs /= (double)s->trials;
}

static int start_summary(const double *x, size_t n, const uint8_t *excluded,
                         struct llc_fit_baseline_summary *out, size_t **units, size_t n_pick,
                         char *err, size_t errlen)
{
    double *v = NULL;
    size_t nv = 0;
    const int rc = llc_fitp_gather(x, n, excluded, &v, &nv, err, errlen);
    free(v);
    if (rc < 0)
        return rc;
    if (n_pick == 0 || n_pick > nv)
        return llc_errf(err, errlen, -EINVAL, "cannot pick %zu of %zu usable units", n_pick, nv);
    *out = (struct llc_fit_baseline_summary){.global = llc_fit_global_total(x, n, excluded)};
    *units = malloc(n_pick * sizeof **units);
    if (!*units)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu units", n_pick);
    return (int)nv;
}

int llc_fit_eval_random(const double *x, size_t n, const uint8_t *excluded, size_t n_pick,
                        size_t seeds, struct llc_fit_baseline_summary *out, char *err,
                        size_t errlen)
{
    size_t *units = NULL;
    if (seeds == 0)
        return llc_errf(err, errlen, -EINVAL, "Random-n needs at least one seed");
    int rc = start_summary(x, n, excluded, out, &units, n_pick, err, errlen);
    if (rc < 0)
        goto out;
    const double population = rc;
    for (size_t seed = 0; seed < seeds; seed++) {
        rc = llc_fit_random_units(n, excluded, n_pick, seed, units, err, errlen);
        if (rc < 0)
            goto out;
        add_trial(out, x, units, n_pick, population);
    }
    finish(out);
    rc = 0;
out:
    free(units);
    return rc;
}

int llc_fit_eval_continuous(const double *x, size_t n, const uint8_t *excluded, size_t n_pick,
                            struct llc_fit_baseline_summary *out, char *err, size_t errlen)
{
    size_t *units = NULL;
    int rc = start_summary(x, n, excluded, out, &units, n_pick, err, errlen);
    if (rc < 0)
        goto out;
    const double population = rc;
    for (size_t start = 0; start + n_pick <= n; start += n_pick) {
        rc = llc_fit_continuous_units(n, excluded, start, n_pick, units, err, errlen);
        if (rc < 0)
            goto out;
        add_trial(out, x, units, n_pick, population);
    }
    finish(out);
    rc = 0;
out:
    free(units);
    return rc;
}
