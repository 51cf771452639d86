#include "util/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int llc_cli_fail(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "llcprobe: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return LLC_EXIT_FAIL;
}

int llc_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "llcprobe: %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'llcprobe %s --help')\n", cmd);
    va_end(ap);
    return LLC_EXIT_USAGE;
}

void llc_cli_warn(bool quiet, const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("llcprobe: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

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

int llc_opt_u64(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
                uint64_t *out)
{
    uint64_t v;
    const int rc = llc_parse_u64(arg, &v);
    if (rc == -ERANGE || (rc == 0 && (v < lo || v > hi)))
        return llc_cli_usage(cmd, "--%s: %s is outside [%" PRIu64 ", %" PRIu64 "]", opt, arg,
                             lo, hi);
    if (rc < 0)
        return llc_cli_usage(cmd, "--%s: '%s' is not a whole number", opt, arg ? arg : "");
    *out = v;
    return 0;
}

int llc_opt_double(const char *cmd, const char *opt, const char *arg, double lo, double hi,
                   double *out)
{
    double v;
    const int rc = llc_parse_double(arg, &v);
    if (rc == -ERANGE || (rc == 0 && !(v >= lo && v <= hi)))
        return llc_cli_usage(cmd, "--%s: %s is outside [%g, %g]", opt, arg, lo, hi);
    if (rc < 0)
        return llc_cli_usage(cmd, "--%s: '%s' is not a number", opt, arg ? arg : "");
    *out = v;
    return 0;
}

int llc_opt_size(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
                 uint64_t *out)
{
    uint64_t v;
    const int rc = llc_parse_size(arg, &v);
    if (rc == -ERANGE || (rc == 0 && (v < lo || v > hi))) {
        char a[32], b[32];
        return llc_cli_usage(cmd, "--%s: %s is outside [%s, %s]", opt, arg,
                             llc_format_size(lo, a, sizeof a), llc_format_size(hi, b, sizeof b));
    }
    if (rc < 0)
        return llc_cli_usage(cmd, "--%s: '%s' is not a size (bytes, K/M/G/T suffixes)", opt,
                             arg ? arg : "");
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
    } units[] = {{"", 1},        {"B", 1},
                 {"K", 0x1p10},  {"KB", 0x1p10}, {"KiB", 0x1p10},
                 {"M", 0x1p20},  {"MB", 0x1p20}, {"MiB", 0x1p20},
                 {"G", 0x1p30},  {"GB", 0x1p30}, {"GiB", 0x1p30},
                 {"T", 0x1p40},  {"TB", 0x1p40}, {"TiB", 0x1p40}};
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

double llc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void llc_progress_begin(struct llc_progress *p, const char *label, bool quiet)
{
    p->active = !quiet && isatty(STDERR_FILENO);
    p->start = llc_now();
    p->last_draw = 0;
    p->label = label;
}

void llc_progress_update(struct llc_progress *p, double fraction)
{
    if (!p->active)
        return;
    const double now = llc_now();
    if (now - p->last_draw < 0.2 && fraction < 1.0)
        return;
    p->last_draw = now;
    if (fraction < 0)
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    const double elapsed = now - p->start;
    const int width = 30;
    const int filled = (int)(fraction * width);
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    if (fraction > 0.01) {
        const double eta = elapsed * (1 - fraction) / fraction;
        fprintf(stderr, "\r%s [%s] %5.1f%%  ETA %4.0fs ", p->label, bar, fraction * 100, eta);
    } else {
        fprintf(stderr, "\r%s [%s] %5.1f%%  ETA    ?s ", p->label, bar, fraction * 100);
    }
    fflush(stderr);
}

void llc_progress_end(struct llc_progress *p)
{
    if (!p->active)
        return;
    fprintf(stderr, "\r%*s\r", 70, "");
    fflush(stderr);
    p->active = false;
}
