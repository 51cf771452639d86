/* Whole-cache totals from the selected units (docs/METHODS.md §4): the paper's scale-up,
 * the stratified estimators (stratum means; stratum ratios to the profile,
 * the default headline) and the ratio estimator. */
#include <errno.h>
#include <math.h>

#include "fit_internal.h"
#include "llcprobe/common.h"

int llc_fit_scale_up(const double *x_sel, size_t n, double population, double *total, char *err,
                     size_t errlen)
{
    if (n == 0)
        return llc_errf(err, errlen, -EINVAL, "scale-up needs at least one selected unit");
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x_sel[i];
    *total = population / (double)n * sum;
    return 0;
}

int llc_fit_ratio(const double *x_sel, const double *profile_sel, size_t n, double profile_total,
                  double *total, char *err, size_t errlen)
{
    double sx = 0, sp = 0;
    for (size_t i = 0; i < n; i++) {
        sx += x_sel[i];
        sp += profile_sel[i];
    }
    if (sp == 0) {
        *total = NAN;
        return llc_errf(err, errlen, -EDOM,
                        "ratio estimator: the selected units' profile values sum to 0");
    }
    *total = profile_total * sx / sp;
    return 0;
}

static void move(double *pi, double *ps, size_t from, size_t to)
{
    pi[to] += pi[from];
    ps[to] += ps[from];
    pi[from] = ps[from] = 0;
}

/* Moves the weight (and profile sum) of strata without selected units
 * towards the centre, so every weight ends on a stratum that has a mean. */
static void merge_empty(const struct llc_fit_strata *s, const size_t *sampled, double *pi,
                        double *ps)
{
    for (size_t g = 0; g < s->centre; g++)
        if (!sampled[g])
            move(pi, ps, g, g + 1);
    for (size_t g = s->count - 1; g > s->centre; g--)
        if (!sampled[g])
            move(pi, ps, g, g - 1);
    if (sampled[s->centre])
        return;
    /* Nothing sampled at the centre either: its weight goes to the nearest
     * stratum that has units, the lower one on a tie. */
    for (size_t d = 1; d < s->count; d++) {
        if (d <= s->centre && sampled[s->centre - d]) {
            move(pi, ps, s->centre, s->centre - d);
            return;
        }
        if (s->centre + d < s->count && sampled[s->centre + d]) {
            move(pi, ps, s->centre, s->centre + d);
            return;
        }
    }
    pi[s->centre] = ps[s->centre] = 0;
}

int llc_fit_stratified_total(const struct llc_fit_strata *s, const double *profile_sel,
                             const double *x_sel, size_t n, double population,
                             struct llc_fit_stratified *out, char *err, size_t errlen)
{
    if (s->count == 0 || s->count > LLC_FIT_MAX_KEYS || s->centre >= s->count)
        return llc_errf(err, errlen, -EINVAL, "invalid strata (%zu)", s->count);
    if (n == 0)
        return llc_errf(err, errlen, -EINVAL, "the stratified estimator needs selected units");
    *out = (struct llc_fit_stratified){.count = s->count};
    double sum[LLC_FIT_MAX_KEYS] = {0}, psel[LLC_FIT_MAX_KEYS] = {0}, ps[LLC_FIT_MAX_KEYS];
    for (size_t i = 0; i < n; i++) {
        const size_t g = llc_fit_stratum_of(s, profile_sel[i]);
        out->sampled[g]++;
        sum[g] += x_sel[i];
        psel[g] += profile_sel[i];
    }
    for (size_t g = 0; g < s->count; g++) {
        out->pi[g] = s->pi[g];
        ps[g] = s->profile_sum[g];
    }
    merge_empty(s, out->sampled, out->pi, ps);
    double t = 0, tr = 0;
    for (size_t g = 0; g < s->count; g++) {
        if (!out->sampled[g])
            continue;
        const double mean_term = population * out->pi[g] * sum[g] / (double)out->sampled[g];
        t += mean_term;
        /* The stratum's profile total scaled by how its chosen units moved
         * from the profile: a set chosen above its stratum's mean no longer
         * pulls the stratum up. */
        tr += psel[g] > 0 ? ps[g] * sum[g] / psel[g] : mean_term;
    }
    out->total = t;
    out->ratio_total = tr;
    return 0;
}

int llc_fit_estimate(const struct llc_fit_selection *sel, const double *x_sel,
                     struct llc_fit_estimates *out, char *err, size_t errlen)
{
    const double population = (double)sel->n_usable;
    int rc = llc_fit_scale_up(x_sel, sel->n, population, &out->scale_up, err, errlen);
    if (rc < 0)
        return rc;
    rc = llc_fit_stratified_total(&sel->strata, sel->profile, x_sel, sel->n, population,
                                  &out->strata, err, errlen);
    if (rc < 0)
        return rc;
    out->stratified = out->strata.total;
    out->stratified_ratio = out->strata.ratio_total;
    /* An undefined ratio is reported as NaN, not as a failure of the others. */
    char ignored[LLC_ERRLEN];
    llc_fit_ratio(x_sel, sel->profile, sel->n, sel->profile_total, &out->ratio, ignored,
                  sizeof ignored);
    switch (sel->estimator) {
    case LLC_FIT_EST_STRATIFIED:
        out->headline = out->stratified;
        break;
    case LLC_FIT_EST_RATIO:
        out->headline = out->ratio;
        break;
    case LLC_FIT_EST_SCALE_UP:
        out->headline = out->scale_up;
        break;
    case LLC_FIT_EST_STRATIFIED_RATIO:
    default:
        out->headline = out->stratified_ratio;
        break;
    }
    return 0;
}
