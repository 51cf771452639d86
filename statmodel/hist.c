/* Reuse-distance histogram (docs/METHODS.md §6.4): exact bins below 1024, 32 log-linear
 * buckets per power of two above, dangling count n_inf. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

size_t llc_statmodel_bucket_of(uint64_t distance)
{
    if (distance < LLC_STATMODEL_EXACT_LIMIT)
        return (size_t)distance;
    const unsigned e = 63u - (unsigned)__builtin_clzll(distance); /* >= 10 */
    const unsigned sub = (unsigned)(distance >> (e - 5u)) & (LLC_STATMODEL_SUBBUCKETS - 1u);
    return LLC_STATMODEL_EXACT_LIMIT + (size_t)(e - 10u) * LLC_STATMODEL_SUBBUCKETS + sub;
}

uint64_t llc_statmodel_bucket_lo(size_t b)
{
    if (b < LLC_STATMODEL_EXACT_LIMIT)
        return b;
    const size_t k = b - LLC_STATMODEL_EXACT_LIMIT;
    const unsigned e = 10u + (unsigned)(k / LLC_STATMODEL_SUBBUCKETS);
    const uint64_t sub = k % LLC_STATMODEL_SUBBUCKETS;
    return (LLC_STATMODEL_SUBBUCKETS + sub) << (e - 5u);
}

uint64_t llc_statmodel_bucket_width(size_t b)
{
    if (b < LLC_STATMODEL_EXACT_LIMIT)
        return 1;
    const unsigned e = 10u + (unsigned)((b - LLC_STATMODEL_EXACT_LIMIT) / LLC_STATMODEL_SUBBUCKETS);
    return UINT64_C(1) << (e - 5u);
}

double llc_statmodel_bucket_mid(size_t b)
{
    return (double)llc_statmodel_bucket_lo(b) + (double)(llc_statmodel_bucket_width(b) - 1) / 2.0;
}

int llc_statmodel_hist_create(struct llc_statmodel_hist **out, char *err, size_t errlen)
{
    struct llc_statmodel_hist *h = calloc(1, sizeof *h);
    if (!h)
        return llc_errf(err, errlen, -ENOMEM, "reuse histogram: out of memory");
    *out = h;
    return 0;
}

void llc_statmodel_hist_clear(struct llc_statmodel_hist *h)
{
    for (size_t p = 0; p < SM_PAGES; p++) {
        free(h->page[p]);
        h->page[p] = NULL;
    }
    h->n_inf = 0;
    h->finite = 0;
}

void llc_statmodel_hist_destroy(struct llc_statmodel_hist *h)
{
    if (!h)
        return;
    llc_statmodel_hist_clear(h);
    free(h);
}

static int check_count(double count, char *err, size_t errlen)
{
    if (!isfinite(count) || count < 0)
        return llc_errf(err, errlen, -EINVAL, "reuse histogram: count %g is not finite and >= 0",
                        count);
    return 0;
}

static int add_to_bucket(struct llc_statmodel_hist *h, size_t b, double count, char *err,
                         size_t errlen)
{
    if (count == 0)
        return 0;
    double **page = &h->page[b / SM_PAGE];
    if (!*page) {
        *page = calloc(SM_PAGE, sizeof **page);
        if (!*page)
            return llc_errf(err, errlen, -ENOMEM, "reuse histogram: out of memory");
    }
    (*page)[b % SM_PAGE] += count;
    h->finite += count;
    return 0;
}

int llc_statmodel_hist_add(struct llc_statmodel_hist *h, uint64_t distance, double count, char *err,
                           size_t errlen)
{
    const int rc = check_count(count, err, errlen);
    if (rc)
        return rc;
    if (distance == LLC_STATMODEL_COLD) {
        h->n_inf += count;
        return 0;
    }
    return add_to_bucket(h, llc_statmodel_bucket_of(distance), count, err, errlen);
}

int llc_statmodel_hist_add_dangling(struct llc_statmodel_hist *h, double count, char *err,
                                    size_t errlen)
{
    return llc_statmodel_hist_add(h, LLC_STATMODEL_COLD, count, err, errlen);
}

int llc_statmodel_hist_merge(struct llc_statmodel_hist *dst, const struct llc_statmodel_hist *src,
                             char *err, size_t errlen)
{
    if (dst == src)
        return llc_errf(err, errlen, -EINVAL, "reuse histogram: cannot merge into itself");
    for (size_t p = 0; p < SM_PAGES; p++) {
        if (!src->page[p])
            continue;
        for (size_t i = 0; i < SM_PAGE; i++) {
            const int rc = add_to_bucket(dst, p * SM_PAGE + i, src->page[p][i], err, errlen);
            if (rc)
                return rc;
        }
    }
    dst->n_inf += src->n_inf;
    return 0;
}

int llc_statmodel_hist_scale(struct llc_statmodel_hist *h, double factor, char *err, size_t errlen)
{
    if (!isfinite(factor) || factor <= 0)
        return llc_errf(err, errlen, -EINVAL,
                        "reuse histogram: scale factor %g is not finite and > 0", factor);
    for (size_t p = 0; p < SM_PAGES; p++) {
        if (!h->page[p])
            continue;
        for (size_t i = 0; i < SM_PAGE; i++)
            h->page[p][i] *= factor;
    }
    h->finite *= factor;
    h->n_inf *= factor;
    return 0;
}

int llc_statmodel_hist_set_cold(struct llc_statmodel_hist *h, uint64_t lines, uint64_t refs,
                                char *err, size_t errlen)
{
    if (lines == 0 || lines > refs)
        return llc_errf(err, errlen, -EINVAL,
                        "reuse histogram: %" PRIu64 " distinct lines in %" PRIu64 " references",
                        lines, refs);
    if (lines == refs) {
        /* No reference is ever reused: every sample is dangling. */
        const double all = h->finite + h->n_inf;
        llc_statmodel_hist_clear(h);
        h->n_inf = all;
        return 0;
    }
    if (!(h->finite > 0))
        return llc_errf(err, errlen, -EINVAL,
                        "reuse histogram: no reused sample to set the cold fraction beside");
    const double f = (double)lines / (double)refs;
    h->n_inf = h->finite * f / (1 - f);
    return 0;
}

int llc_statmodel_hist_set_pairs(struct llc_statmodel_hist *h,
                                 const struct llc_statmodel_bucket_count *pairs, size_t n,
                                 double n_inf, char *err, size_t errlen)
{
    llc_statmodel_hist_clear(h);
    int rc = check_count(n_inf, err, errlen);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (pairs[i].bucket >= LLC_STATMODEL_BUCKETS) {
            llc_statmodel_hist_clear(h);
            return llc_errf(err, errlen, -EINVAL,
                            "reuse histogram: pair %zu: bucket %zu out of range (< %u)", i,
                            pairs[i].bucket, (unsigned)LLC_STATMODEL_BUCKETS);
        }
        rc = check_count(pairs[i].count, err, errlen);
        if (!rc)
            rc = add_to_bucket(h, pairs[i].bucket, pairs[i].count, err, errlen);
        if (rc) {
            llc_statmodel_hist_clear(h);
            return rc;
        }
    }
    h->n_inf = n_inf;
    return 0;
}

double llc_statmodel_hist_count(const struct llc_statmodel_hist *h, size_t bucket)
{
    if (bucket >= LLC_STATMODEL_BUCKETS || !h->page[bucket / SM_PAGE])
        return 0;
    return h->page[bucket / SM_PAGE][bucket % SM_PAGE];
}

double llc_statmodel_hist_dangling(const struct llc_statmodel_hist *h)
{
    return h->n_inf;
}

double llc_statmodel_hist_finite(const struct llc_statmodel_hist *h)
{
    return h->finite;
}

double llc_statmodel_hist_total(const struct llc_statmodel_hist *h)
{
    return h->finite + h->n_inf;
}

size_t llc_statmodel_hist_next(const struct llc_statmodel_hist *h, size_t from)
{
    for (size_t b = from; b < LLC_STATMODEL_BUCKETS;) {
        const double *page = h->page[b / SM_PAGE];
        if (!page) {
            b = (b / SM_PAGE + 1) * SM_PAGE;
            continue;
        }
        if (page[b % SM_PAGE] > 0)
            return b;
        b++;
    }
    return LLC_STATMODEL_BUCKETS;
}
