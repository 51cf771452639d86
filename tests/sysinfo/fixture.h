/* Paths of the sysinfo fixtures (tests/fixtures/{sysfs,cpuid}/<name>). */
#ifndef LLC_TEST_SYSINFO_FIXTURE_H
#define LLC_TEST_SYSINFO_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

static inline const char *fixture_path(char *buf, size_t len, const char *kind, const char *name,
                                       const char *suffix)
{
    const char *root = getenv("LLCPROBE_FIXTURES");
    snprintf(buf, len, "%s/%s/%s%s", root ? root : "tests/fixtures", kind, name, suffix);
    return buf;
}

#endif
