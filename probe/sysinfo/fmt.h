/* Bounded formatting for reasons and paths. Reasons are deliberately capped
 * at their buffer size; callers building paths check the result, since a
 * truncated path would name another file. */
#ifndef LLC_SYSINFO_FMT_H
#define LLC_SYSINFO_FMT_H

#include <stddef.h>

/* Longest sysfs root accepted, so that root + any attribute path fits the
 * 512-byte path buffers. */
#define LLC_SYSINFO_ROOT_MAX 320

/* vsnprintf into buf; 0, or -ENAMETOOLONG if the text was cut. */
int llc_sysinfo_fmt(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
