/* llcprobe: conventions shared by every module.
 *
 * Functions return 0 (or a positive count) on success and a negative
 * errno-style code on failure; on failure they fill the caller's message
 * buffer with one line saying why (no "llcprobe:" prefix, no newline).
 */
#ifndef LLCPROBE_COMMON_H
#define LLCPROBE_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Size of the message buffers passed around with (char *err, size_t errlen). */
#define LLC_ERRLEN 512

/* Fills err (if any) with the formatted message and returns code, so that
 * error paths read `return llc_errf(err, errlen, -EINVAL, "bad %s", x);`. */
static inline int llc_errf(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static inline int llc_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

#define LLC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
