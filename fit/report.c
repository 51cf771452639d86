/* Every family fitted to the same data, the best one by AIC and by R^2, and
 * the dispersion check: what `llcprobe fit` reports. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fit_internal.h"
#include "llcprobe/common.h"

void llc_fit_report_destroy(struct llc_fit_report *r)
{
    if (!r)
        return;
    llc_fit_histogram_destroy(r->hist);
    for (size_t f = 0; f < LLC_FIT_FAMILY_COUNT; f++)
        free(r->model[f]);
    free(r);
}

static void pick_best(struct llc_fit_report *r)
{
    r->best_aic = r->best_r2 = LLC_FIT_FAMILY_NONE;
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        const struct llc_fit_family_result *fit = &r->fit[f];
        /* Ties keep the earlier family, so the Gaussian wins them. */
        if (isfinite(fit->aic) && (r->best_aic < 0 || fit->aic < r->fit[r->best_aic].aic))
            r->best_aic = f;
        if (isfinite(fit->r2) && (r->best_r2 < 0 || fit->r2 > r->fit[r->best_r2].r2))
            r->best_r2 = f;
    }
}

int llc_fit_report_create(const double *x, size_t n, const uint8_t *excluded,
                          const struct llc_fit_options *opt, struct llc_fit_report **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    struct llc_fit_report *r = calloc(1, sizeof *r);
    int rc = 0;
    if (!r)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for a fit report");
    if (opt)
        r->options = *opt;
    else
        llc_fit_options_default(&r->options);
    rc = llc_fit_histogram_create(x, n, excluded, r->options.binning, &r->hist, err, errlen);
    if (rc < 0)
        goto out;
    for (int f = 0; f < LLC_FIT_FAMILY_COUNT; f++) {
        r->model[f] = malloc(r->hist->m * sizeof *r->model[f]);
        if (!r->model[f]) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory for model curves");
            goto out;
        }
        rc = llc_fit_family((enum llc_fit_family)f, x, n, excluded, r->hist, &r->options,
                            &r->fit[f], r->model[f], err, errlen);
        if (rc < 0)
            goto out;
    }
    pick_best(r);
    r->gaussian_accepted = r->fit[LLC_FIT_GAUSSIAN].r2 > LLC_FIT_R2_ACCEPT;
    if (r->options.ways) {
        rc = llc_fit_dispersion(x, n, excluded, r->options.ways, &r->dispersion, err, errlen);
        if (rc < 0)
            goto out;
    } else {
        r->dispersion = (struct llc_fit_dispersion){
            .status = LLC_FIT_NOT_APPLICABLE,
            .n = r->hist->n,
            .mean_events = NAN,
            .var_events = NAN,
            .disp = NAN,
            .cv_true = NAN,
            .structure_share = NAN,
            .p_over = NAN,
            .p_under = NAN,
        };
    }
    *out = r;
    r = NULL;
out:
    llc_fit_report_destroy(r);
    return rc;
}
