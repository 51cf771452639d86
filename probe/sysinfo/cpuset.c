/* CPU sets as the kernel prints them ("0-3,8,10-11"). */
#include "llcprobe/sysinfo.h"

#include "llcprobe/common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_cpu_number(const char **p, unsigned long *out)
{
    if (!isdigit((unsigned char)**p))
        return -EINVAL;
    char *end;
    errno = 0;
    *out = strtoul(*p, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    *p = end;
    return 0;
}

int llc_cpuset_parse(const char *list, struct llc_cpuset *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *p = list;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || *p == '\n')
        return 0;
    for (;;) {
        unsigned long lo, hi;
        int rc = parse_cpu_number(&p, &lo);
        if (rc < 0)
            return llc_errf(err, errlen, -EINVAL,
                            "bad CPU list \"%s\": expected a number at \"%.10s\"", list, p);
        hi = lo;
        if (*p == '-') {
            p++;
            rc = parse_cpu_number(&p, &hi);
            if (rc < 0)
                return llc_errf(err, errlen, -EINVAL,
                                "bad CPU list \"%s\": expected a range end at \"%.10s\"", list, p);
            if (hi < lo)
                return llc_errf(err, errlen, -EINVAL,
                                "bad CPU list \"%s\": range %lu-%lu runs backwards", list, lo, hi);
        }
        if (hi >= LLC_CPUSET_MAX)
            return llc_errf(err, errlen, -ERANGE,
                            "CPU list \"%s\": CPU %lu beyond the supported %d", list, hi,
                            LLC_CPUSET_MAX);
        for (unsigned long c = lo; c <= hi; c++)
            llc_cpuset_add(out, (unsigned)c);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\n')
            p++;
        if (*p != '\0')
            return llc_errf(err, errlen, -EINVAL, "bad CPU list \"%s\": unexpected \"%.10s\"", list,
                            p);
        return 0;
    }
}

const char *llc_cpuset_format(const struct llc_cpuset *s, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (unsigned c = 0; c < LLC_CPUSET_MAX; c++) {
        if (!llc_cpuset_has(s, c))
            continue;
        unsigned end = c;
        while (end + 1 < LLC_CPUSET_MAX && llc_cpuset_has(s, end + 1))
            end++;
        int n;
        const char *sep = used ? "," : "";
        if (end == c)
            n = snprintf(buf + used, used < len ? len - used : 0, "%s%u", sep, c);
        else
            n = snprintf(buf + used, used < len ? len - used : 0, "%s%u-%u", sep, c, end);
        if (n > 0)
            used += (size_t)n;
        c = end;
    }
    return buf;
}

unsigned llc_cpuset_count(const struct llc_cpuset *s)
{
    unsigned n = 0;
    for (size_t i = 0; i < LLC_ARRAY_LEN(s->bits); i++)
        n += (unsigned)__builtin_popcountll(s->bits[i]);
    return n;
}

bool llc_cpuset_has(const struct llc_cpuset *s, unsigned cpu)
{
    return cpu < LLC_CPUSET_MAX && (s->bits[cpu / 64] >> (cpu % 64) & 1);
}

void llc_cpuset_add(struct llc_cpuset *s, unsigned cpu)
{
    if (cpu < LLC_CPUSET_MAX)
        s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

bool llc_cpuset_equal(const struct llc_cpuset *a, const struct llc_cpuset *b)
{
    return memcmp(a->bits, b->bits, sizeof(a->bits)) == 0;
}

int llc_cpuset_first(const struct llc_cpuset *s)
{
    for (size_t i = 0; i < LLC_ARRAY_LEN(s->bits); i++)
        if (s->bits[i])
            return (int)(i * 64 + (size_t)__builtin_ctzll(s->bits[i]));
    return -1;
}
