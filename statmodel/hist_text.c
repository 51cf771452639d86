/* Compact text form of a reuse histogram and its strict parser. The probe
 * side stores this string in its JSON/CSV files. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llcprobe/common.h"
#include "sm_internal.h"

#define HIST_MAGIC "rdhist 1 inf="

int llc_statmodel_hist_format(const struct llc_statmodel_hist *h, char *buf, size_t cap, char *err,
                              size_t errlen)
{
    if (!buf && cap)
        return llc_errf(err, errlen, -EINVAL, "reuse histogram: NULL buffer of size %zu", cap);
    size_t len = 0;
    /* snprintf into the remaining space (or nothing) so that one pass both
     * measures and writes. */
#define APPEND(...)                                                                         \
    do {                                                                                    \
        const int k =                                                                       \
            snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, __VA_ARGS__); \
        if (k < 0)                                                                          \
            return llc_errf(err, errlen, -EIO, "reuse histogram: formatting failed");       \
        len += (size_t)k;                                                                   \
    } while (0)
    APPEND("%s%.17g", HIST_MAGIC, h->n_inf);
    for (size_t b = llc_statmodel_hist_next(h, 0); b < LLC_STATMODEL_BUCKETS;
         b = llc_statmodel_hist_next(h, b + 1))
        APPEND(" %" PRIu64 ":%.17g", llc_statmodel_bucket_lo(b), llc_statmodel_hist_count(h, b));
#undef APPEND
    if (len > INT32_MAX)
        return llc_errf(err, errlen, -EOVERFLOW, "reuse histogram: text too long");
    if (cap && len >= cap)
        return llc_errf(err, errlen, -ENOSPC,
                        "reuse histogram: text needs %zu bytes, buffer has %zu", len + 1, cap);
    return (int)len;
}

/* A count: plain decimal or exponent notation starting with a digit (no
 * sign, hex, inf or nan, which strtod would accept). */
static int parse_count(const char *p, const char **end, double *out)
{
    if (*p < '0' || *p > '9')
        return -EINVAL;
    errno = 0;
    char *e = NULL;
    const double v = strtod(p, &e);
    if (e == p || errno == ERANGE || !isfinite(v))
        return -EINVAL;
    for (const char *c = p; c < e; c++)
        if (!strchr("0123456789.eE+-", *c))
            return -EINVAL;
    *out = v;
    *end = e;
    return 0;
}

static int parse_u64(const char *p, const char **end, uint64_t *out)
{
    if (*p < '0' || *p > '9')
        return -EINVAL;
    errno = 0;
    char *e = NULL;
    const unsigned long long v = strtoull(p, &e, 10);
    if (errno == ERANGE)
        return -ERANGE;
    *out = v;
    *end = e;
    return 0;
}

static int parse_into(const char *text, struct llc_statmodel_hist *h, char *err, size_t errlen)
{
    const size_t magic = strlen(HIST_MAGIC);
    if (strncmp(text, HIST_MAGIC, magic) != 0)
        return llc_errf(err, errlen, -EINVAL, "reuse histogram text: does not start with \"%s\"",
                        HIST_MAGIC);
    const char *p = text + magic;
    double n_inf = 0;
    if (parse_count(p, &p, &n_inf) || n_inf < 0)
        return llc_errf(err, errlen, -EINVAL,
                        "reuse histogram text: offset %zu: bad dangling count", (size_t)(p - text));
    size_t prev = 0;
    bool first = true;
    while (*p) {
        const size_t at = (size_t)(p - text);
        if (*p != ' ')
            return llc_errf(err, errlen, -EINVAL,
                            "reuse histogram text: offset %zu: expected a space", at);
        p++;
        uint64_t lo = 0;
        int rc = parse_u64(p, &p, &lo);
        if (rc)
            return llc_errf(err, errlen, -EINVAL,
                            "reuse histogram text: offset %zu: bad bucket edge", at + 1);
        const size_t b = llc_statmodel_bucket_of(lo);
        if (llc_statmodel_bucket_lo(b) != lo)
            return llc_errf(err, errlen, -EINVAL,
                            "reuse histogram text: offset %zu: %" PRIu64 " is not a bucket edge",
                            at + 1, lo);
        if (!first && b <= prev)
            return llc_errf(err, errlen, -EINVAL,
                            "reuse histogram text: offset %zu: bucket %" PRIu64
                            " not after the previous one",
                            at + 1, lo);
        if (*p != ':')
            return llc_errf(err, errlen, -EINVAL, "reuse histogram text: offset %zu: expected ':'",
                            (size_t)(p - text));
        p++;
        double count = 0;
        const char *cstart = p;
        if (parse_count(p, &p, &count) || !(count > 0))
            return llc_errf(
                err, errlen, -EINVAL,
                "reuse histogram text: offset %zu: bad count (positive number expected)",
                (size_t)(cstart - text));
        rc = llc_statmodel_hist_add(h, lo, count, err, errlen);
        if (rc)
            return rc;
        prev = b;
        first = false;
    }
    h->n_inf = n_inf;
    return 0;
}

int llc_statmodel_hist_parse(const char *text, struct llc_statmodel_hist *h, char *err,
                             size_t errlen)
{
    llc_statmodel_hist_clear(h);
    if (!text)
        return llc_errf(err, errlen, -EINVAL, "reuse histogram text: NULL");
    const int rc = parse_into(text, h, err, errlen);
    if (rc)
        llc_statmodel_hist_clear(h);
    return rc;
}
