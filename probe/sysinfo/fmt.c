#include "sysinfo/fmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int llc_sysinfo_fmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
