/* Raw CPUID values: executed on this CPU, or read from a text dump so the
 * decoder can be tested on machines we do not have. */
#include "llcprobe/sysinfo.h"

#include "llcprobe/common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

const struct llc_cpuid_leaf *llc_cpuid_get(const struct llc_cpuid_dump *d, uint32_t leaf,
                                           uint32_t subleaf)
{
    for (unsigned i = 0; i < d->n; i++)
        if (d->leaves[i].leaf == leaf && d->leaves[i].subleaf == subleaf)
            return &d->leaves[i];
    return NULL;
}

static int dump_add(struct llc_cpuid_dump *d, const struct llc_cpuid_leaf *l)
{
    if (d->n >= LLC_CPUID_MAX_LEAVES)
        return -E2BIG;
    d->leaves[d->n++] = *l;
    return 0;
}

static bool blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

static int parse_line(const char *line, unsigned lineno, struct llc_cpuid_dump *out, char *err,
                      size_t errlen)
{
    struct llc_cpuid_leaf l;
    int used = 0;
    const int got = sscanf(line, " %x %x: eax=%x ebx=%x ecx=%x edx=%x%n", &l.leaf, &l.subleaf,
                           &l.eax, &l.ebx, &l.ecx, &l.edx, &used);
    if (got != 6 || !blank(line + used))
        return llc_errf(
            err, errlen, -EINVAL,
            "line %u: expected \"0xLEAF 0xSUB: eax=0x.. ebx=0x.. ecx=0x.. edx=0x..\", got \"%.60s\"",
            lineno, line);
    if (llc_cpuid_get(out, l.leaf, l.subleaf))
        return llc_errf(err, errlen, -EINVAL, "line %u: leaf 0x%x subleaf 0x%x appears twice",
                        lineno, l.leaf, l.subleaf);
    if (dump_add(out, &l) < 0)
        return llc_errf(err, errlen, -E2BIG, "line %u: more than %d leaves", lineno,
                        LLC_CPUID_MAX_LEAVES);
    return 0;
}

int llc_cpuid_dump_parse(const char *text, struct llc_cpuid_dump *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    unsigned lineno = 0;
    bool seen_cpu_header = false;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[256];
        lineno++;
        if (len >= sizeof(line))
            return llc_errf(err, errlen, -EINVAL, "line %u: longer than %zu characters", lineno,
                            sizeof(line) - 1);
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (nl ? 1 : 0);

        const char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '\0' || *s == '#')
            continue;
        if (strncmp(s, "CPU", 3) == 0) {
            if (seen_cpu_header)
                break; /* only the first CPU's leaves */
            seen_cpu_header = true;
            continue;
        }
        const int rc = parse_line(line, lineno, out, err, errlen);
        if (rc < 0)
            return rc;
    }
    if (out->n == 0)
        return llc_errf(err, errlen, -EINVAL, "no CPUID leaves in the dump");
    return 0;
}

int llc_cpuid_dump_read(const char *path, struct llc_cpuid_dump *out, char *err, size_t errlen)
{
    char *text = NULL;
    int rc = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    /* Dumps are a few hundred lines; 1 MiB is far beyond any real one. */
    const size_t cap = 1 << 20;
    text = malloc(cap + 1);
    if (!text) {
        rc = llc_errf(err, errlen, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    const size_t n = fread(text, 1, cap, f);
    if (ferror(f)) {
        rc = llc_errf(err, errlen, -EIO, "%s: read error", path);
        goto out;
    }
    if (n == cap) {
        rc = llc_errf(err, errlen, -EFBIG, "%s: larger than 1 MiB, not a CPUID dump", path);
        goto out;
    }
    text[n] = '\0';
    char inner[LLC_ERRLEN];
    rc = llc_cpuid_dump_parse(text, out, inner, sizeof(inner));
    if (rc < 0)
        llc_errf(err, errlen, rc, "%s: %s", path, inner);
out:
    free(text);
    fclose(f);
    return rc;
}

int llc_cpuid_dump_write(const struct llc_cpuid_dump *d, FILE *out)
{
    for (unsigned i = 0; i < d->n; i++) {
        const struct llc_cpuid_leaf *l = &d->leaves[i];
        if (fprintf(out, "   0x%08x 0x%02x: eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n", l->leaf,
                    l->subleaf, l->eax, l->ebx, l->ecx, l->edx) < 0)
            return -EIO;
    }
    return 0;
}

#if defined(__x86_64__) || defined(__i386__)
static int live_leaf(struct llc_cpuid_dump *d, uint32_t leaf, uint32_t subleaf)
{
    struct llc_cpuid_leaf l = {.leaf = leaf, .subleaf = subleaf};
    __cpuid_count(leaf, subleaf, l.eax, l.ebx, l.ecx, l.edx);
    return dump_add(d, &l);
}

/* Cache leaves list one cache per subleaf until a null type. */
static int live_cache_leaf(struct llc_cpuid_dump *d, uint32_t leaf)
{
    for (uint32_t sub = 0; sub < 16; sub++) {
        const int rc = live_leaf(d, leaf, sub);
        if (rc < 0 || (d->leaves[d->n - 1].eax & 0x1f) == 0)
            return rc;
    }
    return 0;
}

int llc_cpuid_dump_live(struct llc_cpuid_dump *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = 0;
    uint32_t a, b, c, d;
    __cpuid(0, a, b, c, d);
    const uint32_t max_basic = a < 0x20 ? a : 0x20;
    for (uint32_t leaf = 0; leaf <= max_basic && rc == 0; leaf++)
        rc = leaf == 4 ? live_cache_leaf(out, leaf) : live_leaf(out, leaf, 0);

    __cpuid(1, a, b, c, d);
    if (rc == 0 && (c >> 31 & 1)) {
        /* Hypervisor leaves exist only under a hypervisor; otherwise these
         * indexes return the highest basic leaf's values. */
        __cpuid(0x40000000, a, b, c, d);
        const uint32_t max_hv = a < 0x40000010 ? a : 0x40000010;
        for (uint32_t leaf = 0x40000000; leaf <= max_hv && rc == 0; leaf++)
            rc = live_leaf(out, leaf, 0);
    }

    __cpuid(0x80000000, a, b, c, d);
    const uint32_t max_ext = a < 0x80000021 ? a : 0x80000021;
    for (uint32_t leaf = 0x80000000; leaf <= max_ext && leaf >= 0x80000000 && rc == 0; leaf++)
        rc = leaf == 0x8000001D ? live_cache_leaf(out, leaf) : live_leaf(out, leaf, 0);
    if (rc < 0)
        return llc_errf(err, errlen, rc, "more than %d CPUID leaves", LLC_CPUID_MAX_LEAVES);
    return 0;
}
#else
int llc_cpuid_dump_live(struct llc_cpuid_dump *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    return llc_errf(err, errlen, -ENOTSUP, "CPUID exists only on x86");
}
#endif
