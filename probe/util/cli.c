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

int llc_opt_u64(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
                uint64_t *out)
{
    uint64_t v;
    const int rc = llc_parse_u64(arg, &v);
    if (rc == -ERANGE || (rc == 0 && (v < lo || v > hi)))
        return llc_cli_usage(cmd, "--%s: %s is outside [%" PRIu64 ", %" PRIu64 "]", opt, arg, lo,
                             hi);
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

void llc_join_argv(char *const *argv, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; argv[i] && len + 1 < cap; i++) {
        const int n = snprintf(out + len, cap - len, "%s%s", i ? " " : "", argv[i]);
        if (n < 0)
            break;
        len += (size_t)n < cap - len ? (size_t)n : cap - len - 1;
    }
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
