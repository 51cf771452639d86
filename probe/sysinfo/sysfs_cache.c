/* Cache descriptions from sysfs: <root>/devices/system/cpu/cpuN/cache/indexM. */
#include "llcprobe/sysinfo.h"
#include "sysinfo/fmt.h"

#include "llcprobe/common.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reads a small sysfs attribute, without the trailing newline. */
static int read_attr(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    const size_t n = fread(buf, 1, len - 1, f);
    const bool failed = ferror(f);
    fclose(f);
    if (failed)
        return llc_errf(err, errlen, -EIO, "%s: read error", path);
    buf[n] = '\0';
    size_t end = n;
    while (end > 0 && isspace((unsigned char)buf[end - 1]))
        buf[--end] = '\0';
    return 0;
}

static int parse_uint(const char *path, const char *s, unsigned *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    const unsigned long v = isdigit((unsigned char)*s) ? strtoul(s, &end, 10) : 0;
    if (!isdigit((unsigned char)*s) || *end != '\0' || errno == ERANGE || v > UINT32_MAX)
        return llc_errf(err, errlen, -EINVAL, "%s: expected a whole number, got \"%s\"", path, s);
    *out = (unsigned)v;
    return 0;
}

static int read_uint(const char *dir, const char *name, unsigned *out, char *err, size_t errlen)
{
    char path[512], buf[64];
    llc_sysinfo_fmt(path, sizeof(path), "%s/%s", dir, name);
    const int rc = read_attr(path, buf, sizeof(buf), err, errlen);
    return rc < 0 ? rc : parse_uint(path, buf, out, err, errlen);
}

/* The kernel prints sizes as "<n>K"; accept M and G too. */
static int read_size(const char *dir, uint64_t *out, char *err, size_t errlen)
{
    char path[512], buf[64];
    llc_sysinfo_fmt(path, sizeof(path), "%s/size", dir);
    int rc = read_attr(path, buf, sizeof(buf), err, errlen);
    if (rc < 0)
        return rc;
    char *end;
    errno = 0;
    const unsigned long long v = isdigit((unsigned char)buf[0]) ? strtoull(buf, &end, 10) : 0;
    if (!isdigit((unsigned char)buf[0]) || errno == ERANGE)
        goto bad;
    uint64_t scale = 1;
    if (*end == 'K')
        scale = 1024;
    else if (*end == 'M')
        scale = 1024 * 1024;
    else if (*end == 'G')
        scale = 1024 * 1024 * 1024;
    if (scale != 1)
        end++;
    if (*end != '\0' || v == 0)
        goto bad;
    *out = (uint64_t)v * scale;
    return 0;
bad:
    return llc_errf(err, errlen, -EINVAL, "%s: expected a size like \"8192K\", got \"%s\"", path,
                    buf);
}

static int read_type(const char *dir, enum llc_cache_type *out, char *err, size_t errlen)
{
    char path[512], buf[64];
    llc_sysinfo_fmt(path, sizeof(path), "%s/type", dir);
    const int rc = read_attr(path, buf, sizeof(buf), err, errlen);
    if (rc < 0)
        return rc;
    if (strcmp(buf, "Data") == 0)
        *out = LLC_CACHE_DATA;
    else if (strcmp(buf, "Instruction") == 0)
        *out = LLC_CACHE_INSTRUCTION;
    else if (strcmp(buf, "Unified") == 0)
        *out = LLC_CACHE_UNIFIED;
    else
        return llc_errf(err, errlen, -EINVAL,
                        "%s: expected Data, Instruction or Unified, got \"%s\"", path, buf);
    return 0;
}

static int read_cpulist(const char *path, struct llc_cpuset *out, char *err, size_t errlen)
{
    char buf[4096], inner[LLC_ERRLEN];
    int rc = read_attr(path, buf, sizeof(buf), err, errlen);
    if (rc < 0)
        return rc;
    rc = llc_cpuset_parse(buf, out, inner, sizeof(inner));
    return rc < 0 ? llc_errf(err, errlen, rc, "%s: %s", path, inner) : 0;
}

/* index numbers present under cpuN/cache, ascending; returns the count. */
static int list_indexes(const char *cache_dir, unsigned *idx, unsigned max, char *err,
                        size_t errlen)
{
    DIR *dir = opendir(cache_dir);
    if (!dir && errno == ENOENT)
        return llc_errf(err, errlen, LLC_SYSFS_NO_CACHE_DIR,
                        "%s: no such directory (the kernel exposes no cacheinfo)", cache_dir);
    if (!dir)
        return llc_errf(err, errlen, -errno, "%s: %s", cache_dir, strerror(errno));
    unsigned n = 0;
    const struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        unsigned v;
        char tail;
        if (sscanf(de->d_name, "index%u%c", &v, &tail) != 1)
            continue;
        if (n == max) {
            closedir(dir);
            return llc_errf(err, errlen, -E2BIG, "%s: more than %u cache indexes", cache_dir, max);
        }
        idx[n++] = v;
    }
    closedir(dir);
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
            const unsigned t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    if (n == 0)
        return llc_errf(err, errlen, LLC_SYSFS_NO_CACHE_DIR, "%s: no index* entries", cache_dir);
    return (int)n;
}

static int read_geometry(const char *dir, struct llc_sysfs_cache *c, char *err, size_t errlen)
{
    int rc;
    if ((rc = read_uint(dir, "level", &c->level, err, errlen)) < 0 ||
        (rc = read_type(dir, &c->type, err, errlen)) < 0 ||
        (rc = read_size(dir, &c->size, err, errlen)) < 0 ||
        (rc = read_uint(dir, "ways_of_associativity", &c->ways, err, errlen)) < 0 ||
        (rc = read_uint(dir, "number_of_sets", &c->sets, err, errlen)) < 0 ||
        (rc = read_uint(dir, "coherency_line_size", &c->line_size, err, errlen)) < 0)
        return rc;
    /* Absent on some architectures; one partition is what it means there. */
    char path[512];
    llc_sysinfo_fmt(path, sizeof(path), "%s/physical_line_partition", dir);
    FILE *probe = fopen(path, "r");
    c->partitions = 1;
    if (probe) {
        fclose(probe);
        if ((rc = read_uint(dir, "physical_line_partition", &c->partitions, err, errlen)) < 0)
            return rc;
    }
    if (c->level == 0 || c->ways == 0 || c->sets == 0 || c->line_size == 0 || c->partitions == 0)
        return llc_errf(err, errlen, -EINVAL,
                        "%s: level, ways, sets, line size and partitions must be non-zero", dir);
    return 0;
}

static int add_domain(struct llc_sysfs_cache *c, const struct llc_cpuset *set, unsigned cpu,
                      const char *path, char *err, size_t errlen)
{
    if (!llc_cpuset_has(set, cpu))
        return llc_errf(err, errlen, -EINVAL, "%s: does not include cpu%u itself", path, cpu);
    for (unsigned d = 0; d < c->n_domains; d++) {
        if (llc_cpuset_equal(&c->domains[d], set))
            return 0;
        for (size_t w = 0; w < LLC_ARRAY_LEN(set->bits); w++)
            if (c->domains[d].bits[w] & set->bits[w]) {
                char a[256], b[256];
                return llc_errf(err, errlen, -EINVAL, "%s: CPUs %s overlap another instance's %s",
                                path, llc_cpuset_format(set, a, sizeof(a)),
                                llc_cpuset_format(&c->domains[d], b, sizeof(b)));
            }
    }
    if (c->n_domains == LLC_SYSINFO_MAX_DOMAINS)
        return llc_errf(err, errlen, -E2BIG, "%s: more than %d instances of L%u", path,
                        LLC_SYSINFO_MAX_DOMAINS, c->level);
    c->domains[c->n_domains++] = *set;
    return 0;
}

static int type_rank(enum llc_cache_type t)
{
    return t == LLC_CACHE_DATA ? 0 : t == LLC_CACHE_INSTRUCTION ? 1 : 2;
}

static void sort_caches(struct llc_cache_topo *t)
{
    for (unsigned i = 1; i < t->n_caches; i++)
        for (unsigned j = i; j > 0; j--) {
            struct llc_sysfs_cache *a = &t->caches[j - 1], *b = &t->caches[j];
            if (a->level < b->level ||
                (a->level == b->level && type_rank(a->type) <= type_rank(b->type)))
                break;
            const struct llc_sysfs_cache tmp = *a;
            *a = *b;
            *b = tmp;
        }
}

static void count_slice_pmus(const char *root, struct llc_cache_topo *t)
{
    char path[512];
    llc_sysinfo_fmt(path, sizeof(path), "%s/bus/event_source/devices", root);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    unsigned cbox = 0, cha = 0;
    const struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        unsigned v;
        char tail;
        if (sscanf(de->d_name, "uncore_cbox_%u%c", &v, &tail) == 1)
            cbox++;
        else if (sscanf(de->d_name, "uncore_cha_%u%c", &v, &tail) == 1)
            cha++;
    }
    closedir(dir);
    if (cha) {
        t->uncore_slice_pmus = cha;
        llc_sysinfo_fmt(t->uncore_slice_kind, sizeof(t->uncore_slice_kind), "uncore_cha");
    } else if (cbox) {
        t->uncore_slice_pmus = cbox;
        llc_sysinfo_fmt(t->uncore_slice_kind, sizeof(t->uncore_slice_kind), "uncore_cbox");
    }
}

int llc_sysfs_read_caches(const char *sysfs_root, struct llc_cache_topo *out, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *root = sysfs_root ? sysfs_root : "/sys";
    /* Every path below is root plus at most ~80 characters, so with this
     * bound none of the 512-byte path buffers can be cut short. */
    if (strlen(root) > LLC_SYSINFO_ROOT_MAX)
        return llc_errf(err, errlen, -ENAMETOOLONG,
                        "sysfs root longer than %d characters: %.40s...", LLC_SYSINFO_ROOT_MAX,
                        root);
    char path[512];
    llc_sysinfo_fmt(path, sizeof(path), "%s/devices/system/cpu/online", root);
    int rc = read_cpulist(path, &out->online, err, errlen);
    if (rc < 0)
        return rc;
    const int first = llc_cpuset_first(&out->online);
    if (first < 0)
        return llc_errf(err, errlen, -EINVAL, "%s: no online CPUs", path);

    unsigned idx[LLC_SYSINFO_MAX_CACHES];
    llc_sysinfo_fmt(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache", root, first);
    rc = list_indexes(path, idx, LLC_SYSINFO_MAX_CACHES, err, errlen);

    if (rc < 0)
        return rc;
    out->n_caches = (unsigned)rc;

    for (unsigned i = 0; i < out->n_caches; i++) {
        struct llc_sysfs_cache *c = &out->caches[i];
        c->index = idx[i];
        llc_sysinfo_fmt(path, sizeof(path), "%s/devices/system/cpu/cpu%d/cache/index%u", root,
                        first, idx[i]);
        if ((rc = read_geometry(path, c, err, errlen)) < 0)
            return rc;
        for (unsigned cpu = 0; cpu < LLC_CPUSET_MAX; cpu++) {
            if (!llc_cpuset_has(&out->online, cpu))
                continue;
            struct llc_cpuset shared;
            llc_sysinfo_fmt(path, sizeof(path),
                            "%s/devices/system/cpu/cpu%u/cache/index%u/shared_cpu_list", root, cpu,
                            idx[i]);
            if ((rc = read_cpulist(path, &shared, err, errlen)) < 0 ||
                (rc = add_domain(c, &shared, cpu, path, err, errlen)) < 0)
                return rc;
        }
    }
    sort_caches(out);
    count_slice_pmus(root, out);
    return 0;
}
