/* Histogram of per-unit values (docs/METHODS.md §2.1): the paper's equal-width bins for
 * rates, integer-aware bins for raw counts. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fit_internal.h"
#include "llcprobe/common.h"

size_t llc_fit_bin_count(size_t n)
{
    if (n <= 1)
        return 1;
    const long m = lround(1.87 * pow((double)(n - 1), 0.4));
    return m < 1 ? 1 : (size_t)m;
}

int llc_fitp_gather(const double *x, size_t n, const uint8_t *excluded, double **out, size_t *count,
                    char *err, size_t errlen)
{
    *out = NULL;
    *count = 0;
    if (!x && n)
        return llc_errf(err, errlen, -EINVAL, "no values given");
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu values", n);
    size_t c = 0;
    for (size_t k = 0; k < n; k++) {
        if (!llc_fitp_usable(excluded, k))
            continue;
        if (!isfinite(x[k])) {
            free(v);
            return llc_errf(err, errlen, -EINVAL, "value of unit %zu is not finite", k);
        }
        v[c++] = x[k];
    }
    if (c == 0) {
        free(v);
        return llc_errf(err, errlen, -ENODATA, "no usable units (%zu given, all excluded)", n);
    }
    *out = v;
    *count = c;
    return 0;
}

bool llc_fit_all_integers(const double *x, size_t n, const uint8_t *excluded)
{
    for (size_t k = 0; k < n; k++)
        if (llc_fitp_usable(excluded, k) && (!isfinite(x[k]) || x[k] != nearbyint(x[k])))
            return false;
    return true;
}

void llc_fit_histogram_destroy(struct llc_fit_histogram *h)
{
    if (!h)
        return;
    free(h->edges);
    free(h->centres);
    free(h->counts);
    free(h->density);
    free(h);
}

size_t llc_fit_histogram_bin(const struct llc_fit_histogram *h, double x)
{
    if (h->m <= 1 || !(h->width > 0))
        return 0;
    const double origin = h->edges[0];
    const double pos = floor((x - origin) / h->width);
    if (!(pos > 0)) /* also catches NaN */
        return 0;
    if (pos >= (double)(h->m - 1))
        return h->m - 1;
    return (size_t)pos;
}

/* Sets binning, m, width and edges; the bins hold nothing yet. */
static int lay_out_bins(struct llc_fit_histogram *h, size_t m_formula, char *err, size_t errlen)
{
    size_t m = m_formula;
    double origin = h->a;
    if (h->binning == LLC_FIT_BINS_INTEGER) {
        /* Whole-number widths give every bin the same number of integers. */
        const double span = h->b - h->a + 1.0;
        h->width = ceil(span / (double)m_formula);
        m = (size_t)ceil(span / h->width);
        origin = h->a - 0.5;
    } else if (h->degenerate) {
        m = 1;
        h->width = 0.0;
    } else {
        h->width = (h->b - h->a) / (double)m;
    }
    h->m = m;
    h->edges = malloc((m + 1) * sizeof *h->edges);
    h->centres = malloc(m * sizeof *h->centres);
    h->counts = calloc(m, sizeof *h->counts);
    h->density = malloc(m * sizeof *h->density);
    if (!h->edges || !h->centres || !h->counts || !h->density)
        return llc_errf(err, errlen, -ENOMEM, "out of memory for %zu bins", m);
    for (size_t i = 0; i <= m; i++)
        h->edges[i] = origin + (double)i * h->width;
    if (h->binning == LLC_FIT_BINS_PAPER)
        h->edges[m] = h->b; /* the last bin is closed at b, whatever the rounding */
    for (size_t i = 0; i < m; i++)
        h->centres[i] = origin + ((double)i + 0.5) * h->width;
    return 0;
}

int llc_fit_histogram_create(const double *x, size_t n, const uint8_t *excluded,
                             enum llc_fit_binning binning, struct llc_fit_histogram **out,
                             char *err, size_t errlen)
{
    *out = NULL;
    double *v = NULL;
    size_t nv = 0;
    struct llc_fit_histogram *h = NULL;
    int rc = llc_fitp_gather(x, n, excluded, &v, &nv, err, errlen);
    if (rc < 0)
        goto out;
    const bool integral = llc_fit_all_integers(x, n, excluded);
    if (binning == LLC_FIT_BINS_AUTO)
        binning = integral ? LLC_FIT_BINS_INTEGER : LLC_FIT_BINS_PAPER;
    if (binning == LLC_FIT_BINS_INTEGER && !integral) {
        rc = llc_errf(err, errlen, -EINVAL, "integer-aware binning needs whole-number values");
        goto out;
    }
    if (binning != LLC_FIT_BINS_INTEGER && binning != LLC_FIT_BINS_PAPER) {
        rc = llc_errf(err, errlen, -EINVAL, "unknown binning %d", (int)binning);
        goto out;
    }
    h = calloc(1, sizeof *h);
    if (!h) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for a histogram");
        goto out;
    }
    h->binning = binning;
    h->n = nv;
    h->a = h->b = v[0];
    for (size_t i = 1; i < nv; i++) {
        h->a = fmin(h->a, v[i]);
        h->b = fmax(h->b, v[i]);
    }
    h->degenerate = h->b == h->a;
    rc = lay_out_bins(h, llc_fit_bin_count(nv), err, errlen);
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < nv; i++)
        h->counts[llc_fit_histogram_bin(h, v[i])]++;
    for (size_t i = 0; i < h->m; i++)
        h->density[i] = h->width > 0 ? (double)h->counts[i] / ((double)nv * h->width) : NAN;
    *out = h;
    h = NULL;
out:
    llc_fit_histogram_destroy(h);
    free(v);
    return rc;
}
