/* Fitting one family to the usable values (docs/METHODS.md §2.2, §2.6) and scoring it on
 * the histogram of the same data (docs/METHODS.md §2.3). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fit_internal.h"
#include "llcprobe/common.h"

void llc_fit_options_default(struct llc_fit_options *opt)
{
    *opt = (struct llc_fit_options){
        .binning = LLC_FIT_BINS_AUTO,
        .bin_integrated = false,
        .beta_mle = false,
        .ways = 0,
    };
}

/* Parameter layout per family: names, how many, how many are estimated. */
static const struct {
    const char *name[LLC_FIT_MAX_PARAMS];
    size_t nparams, nfree;
} layout[LLC_FIT_FAMILY_COUNT] = {
    [LLC_FIT_GAUSSIAN] = {{"mu", "sigma"}, 2, 2},
    [LLC_FIT_GAMMA] = {{"alpha", "theta"}, 2, 2},
    [LLC_FIT_POISSON] = {{"lambda"}, 1, 1},
    [LLC_FIT_POISSON_EVENTS] = {{"lambda", "ways"}, 2, 1},
    [LLC_FIT_BETA] = {{"alpha", "beta", "lo", "hi"}, 4, 2},
    [LLC_FIT_STUDENT_T] = {{"mu", "scale", "nu"}, 3, 3},
    [LLC_FIT_LOGNORMAL] = {{"zeta", "sigma"}, 2, 2},
};

const char *llc_fit_param_name(enum llc_fit_family f, size_t i)
{
    if ((unsigned)f >= LLC_FIT_FAMILY_COUNT || i >= layout[f].nparams)
        return NULL;
    return layout[f].name[i];
}

static void fit_gaussian(const double *v, size_t nv, struct llc_fit_family_result *r)
{
    double var;
    llc_fitp_moments(v, nv, &r->param[0], &var);
    r->param[1] = sqrt(var);
    r->method = LLC_FIT_METHOD_SAMPLE_MOMENTS;
    if (!(var > 0))
        r->status = LLC_FIT_DEGENERATE;
}

static void fit_poisson(const double *v, size_t nv, struct llc_fit_family_result *r)
{
    r->method = LLC_FIT_METHOD_MLE;
    for (size_t k = 0; k < nv; k++) {
        if (v[k] < 0 || v[k] != nearbyint(v[k])) {
            r->status = LLC_FIT_NOT_APPLICABLE; /* a pmf over counts */
            return;
        }
    }
    double var;
    llc_fitp_moments(v, nv, &r->param[0], &var);
    if (!(r->param[0] > 0))
        r->status = LLC_FIT_DEGENERATE;
}

/* Under LRU one foreign insertion costs the probe about W misses (docs/METHODS.md §2.4), so
 * the events behind miss_k are miss_k / W, rounded to whole events. */
static void fit_poisson_events(const double *v, size_t nv, unsigned ways,
                               struct llc_fit_family_result *r)
{
    r->method = LLC_FIT_METHOD_MLE;
    r->param[1] = ways;
    if (ways == 0) {
        r->status = LLC_FIT_NOT_APPLICABLE;
        return;
    }
    double sum = 0;
    for (size_t k = 0; k < nv; k++) {
        const double events = floor(v[k] / ways + 0.5);
        if (events < 0) {
            r->status = LLC_FIT_NOT_APPLICABLE;
            return;
        }
        sum += events;
    }
    r->param[0] = sum / (double)nv;
    if (!(r->param[0] > 0))
        r->status = LLC_FIT_DEGENERATE;
}

static void fit_lognormal(const double *v, size_t nv, struct llc_fit_family_result *r)
{
    r->method = LLC_FIT_METHOD_MLE;
    double sum = 0;
    for (size_t k = 0; k < nv; k++) {
        if (!(v[k] > 0)) {
            r->status = LLC_FIT_NOT_APPLICABLE;
            return;
        }
        sum += log(v[k]);
    }
    const double zeta = sum / (double)nv;
    double ss = 0;
    for (size_t k = 0; k < nv; k++)
        ss += (log(v[k]) - zeta) * (log(v[k]) - zeta);
    r->param[0] = zeta;
    r->param[1] = sqrt(ss / (double)nv);
    if (!(r->param[1] > 0))
        r->status = LLC_FIT_DEGENERATE;
}

static void init_result(enum llc_fit_family f, size_t nv, struct llc_fit_family_result *r)
{
    *r = (struct llc_fit_family_result){
        .family = f,
        .status = LLC_FIT_OK,
        .method = LLC_FIT_METHOD_NONE,
        .n = nv,
        .nparams = layout[f].nparams,
        .nfree = layout[f].nfree,
        .loglik = NAN,
        .aic = NAN,
        .r = NAN,
        .r2 = NAN,
    };
    for (size_t i = 0; i < LLC_FIT_MAX_PARAMS; i++)
        r->param[i] = NAN;
}

static int estimate(enum llc_fit_family f, const double *v, size_t nv,
                    const struct llc_fit_histogram *h, const struct llc_fit_options *opt,
                    struct llc_fit_family_result *r)
{
    switch (f) {
    case LLC_FIT_GAUSSIAN:
        fit_gaussian(v, nv, r);
        break;
    case LLC_FIT_GAMMA:
        llc_fitp_fit_gamma(v, nv, r);
        break;
    case LLC_FIT_POISSON:
        fit_poisson(v, nv, r);
        break;
    case LLC_FIT_POISSON_EVENTS:
        fit_poisson_events(v, nv, opt->ways, r);
        break;
    case LLC_FIT_BETA:
        /* Half a bin of margin keeps every u strictly inside (0,1). */
        return llc_fitp_fit_beta(v, nv, h->a - h->width / 2, h->b + h->width / 2, opt->beta_mle, r);
    case LLC_FIT_STUDENT_T:
        llc_fitp_fit_student_t(v, nv, r);
        break;
    case LLC_FIT_LOGNORMAL:
        fit_lognormal(v, nv, r);
        break;
    default:
        break;
    }
    return 0;
}

int llc_fit_family(enum llc_fit_family f, const double *x, size_t n, const uint8_t *excluded,
                   const struct llc_fit_histogram *h, const struct llc_fit_options *opt,
                   struct llc_fit_family_result *out, double *model, char *err, size_t errlen)
{
    double *v = NULL, *scratch = NULL;
    size_t nv = 0;
    struct llc_fit_options defaults;
    if (!opt) {
        llc_fit_options_default(&defaults);
        opt = &defaults;
    }
    if ((unsigned)f >= LLC_FIT_FAMILY_COUNT)
        return llc_errf(err, errlen, -EINVAL, "unknown distribution family %d", (int)f);
    if (!h || !out)
        return llc_errf(err, errlen, -EINVAL, "histogram and result are required");
    int rc = llc_fitp_gather(x, n, excluded, &v, &nv, err, errlen);
    if (rc < 0)
        goto out;
    if (nv != h->n) {
        rc = llc_errf(err, errlen, -EINVAL, "histogram holds %zu units, data %zu", h->n, nv);
        goto out;
    }
    if (!model) {
        model = scratch = malloc(h->m * sizeof *model);
        if (!scratch) {
            rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu bins", h->m);
            goto out;
        }
    }
    init_result(f, nv, out);
    for (size_t i = 0; i < h->m; i++)
        model[i] = NAN;
    if (h->degenerate || nv < 2) {
        /* docs/METHODS.md §2.5: all units equal; nothing to fit, but mu is still the value. */
        out->status = LLC_FIT_DEGENERATE;
        if (f == LLC_FIT_GAUSSIAN) {
            out->param[0] = h->a;
            out->param[1] = 0.0;
            out->method = LLC_FIT_METHOD_SAMPLE_MOMENTS;
        }
        goto out;
    }
    rc = estimate(f, v, nv, h, opt, out);
    if (rc < 0) {
        rc = llc_errf(err, errlen, rc, "out of memory fitting the %s family",
                      llc_fit_family_name(f));
        goto out;
    }
    if (out->status == LLC_FIT_OK)
        llc_fitp_score(out, v, nv, h, opt->bin_integrated, model);
out:
    free(scratch);
    free(v);
    return rc;
}
