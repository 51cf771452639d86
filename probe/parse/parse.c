/* Numbers and byte sizes in strings (pure: no I/O, no global state). */
#include "parse/parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int llc_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -EINVAL;
    errno = 0;
    char *end = NULL;
    const unsigned long long v = strtoull(s, &end, 0);
    if (errno == ERANGE)
        return -ERANGE;
    if (*end == '\0') {
        *out = v;
        return 0;
    }
    /* Scientific notation: accept only exact integers that fit. */
    if (*end == 'e' || *end == 'E' || *end == '.') {
        double d;
        if (llc_parse_double(s, &d) < 0)
            return -EINVAL;
        if (d < 0 || d >= 18446744073709551616.0 || d != floor(d))
            return d != floor(d) ? -EINVAL : -ERANGE;
        *out = (uint64_t)d;
        return 0;
    }
    return -EINVAL;
}

int llc_parse_u64_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v;
    const int rc = llc_parse_u64(s, &v);
    if (rc < 0)
        return rc;
    if (v < lo || v > hi)
        return -ERANGE;
    *out = v;
    return 0;
}

int llc_parse_double(const char *s, double *out)
{
    if (!s || !*s || *s == ' ')
        return -EINVAL;
    errno = 0;
    char *end = NULL;
    const double v = strtod(s, &end);
    if (*end != '\0' || end == s)
        return -EINVAL;
    if (errno == ERANGE || !isfinite(v))
        return -ERANGE;
    *out = v;
    return 0;
}

int llc_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -EINVAL;
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || v < 0)
        return -EINVAL;
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"", 1},         {"B", 1},       {"K", 0x1p10},   {"KB", 0x1p10}, {"KiB", 0x1p10},
                 {"M", 0x1p20},   {"MB", 0x1p20}, {"MiB", 0x1p20}, {"G", 0x1p30},  {"GB", 0x1p30},
                 {"GiB", 0x1p30}, {"T", 0x1p40},  {"TB", 0x1p40},  {"TiB", 0x1p40}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(end, units[i].suffix) != 0)
            continue;
        const double bytes = v * units[i].scale;
        if (bytes >= 18446744073709551616.0)
            return -ERANGE;
        if (bytes != floor(bytes))
            return -EINVAL;
        *out = (uint64_t)bytes;
        return 0;
    }
    return -EINVAL;
}

const char *llc_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof(names) / sizeof(names[0])) {
        v /= 1024;
        u++;
    }
    if (u == 0 || v == floor(v))
        snprintf(buf, len, "%.0f %s", v, names[u]);
    else
        snprintf(buf, len, "%.3g %s", v, names[u]);
    return buf;
}
