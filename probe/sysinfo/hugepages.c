/* Hugepage facilities: the kernel's pools, libhugetlbfs's view, and a real
 * attempt to map one page of each size, reserving it temporarily if needed. */
#include "llcprobe/sysinfo.h"
#include "sysinfo/fmt.h"
#include "util/cli.h"
#include "util/lockfile.h"

#include "llcprobe/common.h"

#include <stddef.h> /* hugetlbfs.h uses size_t without including it */
#include <hugetlbfs.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

static int read_count(const char *dir, const char *name, uint64_t *out)
{
    char path[512], buf[64];
    llc_sysinfo_fmt(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    const bool ok = fgets(buf, sizeof(buf), f) != NULL;
    fclose(f);
    char *end;
    if (!ok)
        return -EIO;
    *out = strtoull(buf, &end, 10);
    return end == buf ? -EINVAL : 0;
}

static int write_count(const char *dir, const char *name, uint64_t v)
{
    char path[512];
    llc_sysinfo_fmt(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    const int printed = fprintf(f, "%" PRIu64 "\n", v);
    const int closed = fclose(f);
    return printed < 0 || closed != 0 ? -errno : 0;
}

static int map_one(uint64_t size)
{
    const int shift = __builtin_ctzll(size);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT), -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    /* Without MAP_NORESERVE the page is reserved at mmap time, so this touch
     * cannot SIGBUS. */
    *(volatile char *)p = 1;
    munmap(p, size);
    return 0;
}

/* Raises nr_hugepages by one, maps, and puts the old value back. The lock
 * keeps two llcprobe processes from interleaving read-raise-restore, which
 * would leave the pool permanently changed. */
static void reserve_and_map(const char *dir, struct llc_hugepage_size *h)
{
    const size_t n = sizeof(h->detail);
    int rc;
    char why[LLC_ERRLEN];
    const int lock =
        llc_lockfile_acquire(LLC_HUGEPAGE_LOCK_PATH, LLC_LOCK_TIMEOUT_S, why, sizeof(why));
    if (lock < 0) {
        h->attempt = LLC_HUGE_FAILED;
        llc_sysinfo_fmt(h->detail, n, "no free page, and the reservation lock is unavailable: %s",
                        why);
        goto out;
    }
    uint64_t before = 0, after = 0; /* set before use; -O3 cannot see it through the gotos */
    if (read_count(dir, "nr_hugepages", &before) < 0) {
        h->attempt = LLC_HUGE_FAILED;
        llc_sysinfo_fmt(h->detail, n, "cannot read %s/nr_hugepages", dir);
        goto out;
    }
    rc = write_count(dir, "nr_hugepages", before + 1);
    h->reserved_temporarily = rc == 0;
    if (rc < 0) {
        h->attempt = LLC_HUGE_FAILED;
        llc_sysinfo_fmt(h->detail, n, "writing nr_hugepages=%" PRIu64 " failed: %s", before + 1,
                        strerror(-rc));
        goto restore;
    }
    if (read_count(dir, "nr_hugepages", &after) < 0 || after <= before) {
        h->attempt = LLC_HUGE_FAILED;
        llc_sysinfo_fmt(h->detail, n,
                        "no page free; asked the kernel for one more (nr_hugepages %" PRIu64
                        " -> %" PRIu64
                        ") but it could not allocate one (memory too fragmented or too little)",
                        before, before + 1);
        goto restore;
    }
    rc = map_one(h->size);
    h->attempt = rc == 0 ? LLC_HUGE_MAPPED : LLC_HUGE_FAILED;
    h->map_errno = rc == 0 ? 0 : -rc;
    if (rc == 0)
        llc_sysinfo_fmt(h->detail, n,
                        "no page free; reserved one temporarily (nr_hugepages %" PRIu64
                        " -> %" PRIu64 "), mapped and touched it",
                        before, after);
    else
        llc_sysinfo_fmt(h->detail, n,
                        "no page free; reserved one temporarily (nr_hugepages %" PRIu64
                        " -> %" PRIu64 ") but mmap(MAP_HUGETLB) still failed: %s",
                        before, after, strerror(-rc));
restore:
    if (!h->reserved_temporarily)
        goto out;
    rc = write_count(dir, "nr_hugepages", before);
    h->restored = rc == 0 && read_count(dir, "nr_hugepages", &after) == 0 && after == before;
    const size_t used = strlen(h->detail);
    if (h->restored)
        llc_sysinfo_fmt(h->detail + used, n - used, "; restored nr_hugepages to %" PRIu64, before);
    else
        llc_sysinfo_fmt(h->detail + used, n - used,
                        "; FAILED to restore nr_hugepages to %" PRIu64 " (%s)", before,
                        rc < 0 ? strerror(-rc) : "value differs");
out:
    if (lock >= 0)
        close(lock); /* releases the flock */
}

static void try_map(const char *dir, bool allow_reserve, struct llc_hugepage_size *h)
{
    char sz[32];
    llc_format_size(h->size, sz, sizeof(sz));
    const size_t n = sizeof(h->detail);
    int rc = map_one(h->size);
    if (rc == 0) {
        h->attempt = LLC_HUGE_MAPPED;
        llc_sysinfo_fmt(h->detail, n, "mapped and touched one %s page from the existing pool", sz);
        return;
    }
    h->map_errno = -rc;
    if (rc != -ENOMEM || !allow_reserve) {
        h->attempt = LLC_HUGE_FAILED;
        llc_sysinfo_fmt(h->detail, n, "mmap(MAP_HUGETLB, %s) failed: %s%s", sz, strerror(-rc),
                        rc == -ENOMEM ? " (no free page; reserving one was not allowed)" : "");
        return;
    }
    char path[512];
    llc_sysinfo_fmt(path, sizeof(path), "%s/nr_hugepages", dir);
    if (access(path, W_OK) != 0) {
        h->attempt = LLC_HUGE_FAILED;
        llc_sysinfo_fmt(
            h->detail, n,
            "mmap(MAP_HUGETLB, %s) failed: %s, and nr_hugepages is not writable to reserve one "
            "(needs root)",
            sz, strerror(-rc));
        return;
    }
    reserve_and_map(dir, h);
}

static void sort_sizes(struct llc_hugepages *out)
{
    for (unsigned i = 1; i < out->n; i++)
        for (unsigned j = i; j > 0 && out->sizes[j - 1].size > out->sizes[j].size; j--) {
            const struct llc_hugepage_size t = out->sizes[j];
            out->sizes[j] = out->sizes[j - 1];
            out->sizes[j - 1] = t;
        }
}

int llc_hugepages_query(const char *sysfs_root, bool try_map_pages, bool allow_reserve,
                        struct llc_hugepages *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *root = sysfs_root ? sysfs_root : "/sys";
    if (strlen(root) > LLC_SYSINFO_ROOT_MAX) /* keeps every path below within its buffer */
        return llc_errf(err, errlen, -ENAMETOOLONG, "sysfs root longer than %d characters",
                        LLC_SYSINFO_ROOT_MAX);
    char path[512];
    llc_sysinfo_fmt(path, sizeof(path), "%s/kernel/mm/hugepages", root);
    DIR *dir = opendir(path);
    if (!dir) {
        llc_sysinfo_fmt(out->reason, sizeof(out->reason),
                        "%s: %s (kernel without hugetlbfs support?)", path, strerror(errno));
        return 0;
    }
    const struct dirent *de;
    while ((de = readdir(dir)) != NULL && out->n < LLC_SYSINFO_MAX_HUGE_SIZES) {
        unsigned long long kib;
        char tail[4];
        if (sscanf(de->d_name, "hugepages-%llukB%3s", &kib, tail) != 1 || kib == 0)
            continue;
        struct llc_hugepage_size *h = &out->sizes[out->n++];
        h->size = (uint64_t)kib * 1024;
        char sub[768];
        llc_sysinfo_fmt(sub, sizeof(sub), "%s/%s", path, de->d_name);
        read_count(sub, "nr_hugepages", &h->total);
        read_count(sub, "free_hugepages", &h->free);
        read_count(sub, "surplus_hugepages", &h->surplus);
        read_count(sub, "resv_hugepages", &h->reserved);
        read_count(sub, "nr_overcommit_hugepages", &h->overcommit);
    }
    closedir(dir);
    sort_sizes(out);
    if (out->n == 0)
        llc_sysinfo_fmt(out->reason, sizeof(out->reason), "%s lists no hugepage sizes", path);

    out->live = try_map_pages;
    long known[8];
    /* libhugetlbfs describes the running kernel, not a fixture tree. */
    const int n_known = try_map_pages ? gethugepagesizes(known, (int)LLC_ARRAY_LEN(known)) : 0;
    for (unsigned i = 0; i < out->n; i++) {
        struct llc_hugepage_size *h = &out->sizes[i];
        for (int k = 0; k < n_known; k++)
            if ((uint64_t)known[k] == h->size)
                h->libhugetlbfs_lists = true;
        const char *mount =
            h->libhugetlbfs_lists ? hugetlbfs_find_path_for_size((long)h->size) : NULL;
        llc_sysinfo_fmt(h->mount, sizeof(h->mount), "%s", mount ? mount : "");
        if (!try_map_pages) {
            llc_sysinfo_fmt(h->detail, sizeof(h->detail),
                            "mapping not attempted (not describing this machine)");
            continue;
        }
        char sub[768];
        llc_sysinfo_fmt(sub, sizeof(sub), "%s/hugepages-%" PRIu64 "kB", path, h->size / 1024);
        try_map(sub, allow_reserve, h);
    }
    return 0;
}
