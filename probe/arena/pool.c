/* The kernel's hugepage pools: how many pages are free, temporary enlargement,
 * and the exact restore, including from a signal handler. */
#include "arena/arena_internal.h"

#include "llcprobe/common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Registry the signal handler walks. A slot is filled while CLAIMED and only
 * then made LIVE, so the handler never sees a half-written one. */
enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_LIVE };
#define POOL_SLOTS 16
static struct {
    atomic_int state;
    int fd;        /* nr_hugepages, opened for writing */
    char text[24]; /* the previous value, "123\n" */
    size_t len;
} pool_slots[POOL_SLOTS];

void llc_arena_emergency_release(void)
{
    const int saved_errno = errno;
    for (int i = 0; i < POOL_SLOTS; i++)
        if (atomic_load(&pool_slots[i].state) == SLOT_LIVE)
            (void)!pwrite(pool_slots[i].fd, pool_slots[i].text, pool_slots[i].len, 0);
    errno = saved_errno;
}

static int slot_register(int fd, uint64_t before)
{
    for (int i = 0; i < POOL_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&pool_slots[i].state, &expected, SLOT_CLAIMED))
            continue;
        pool_slots[i].fd = fd;
        const int n =
            snprintf(pool_slots[i].text, sizeof(pool_slots[i].text), "%" PRIu64 "\n", before);
        pool_slots[i].len = (size_t)n;
        atomic_store(&pool_slots[i].state, SLOT_LIVE);
        return i;
    }
    return -1;
}

/* Returns the slot's fd, which the caller closes. */
static int slot_unregister(int slot)
{
    const int fd = pool_slots[slot].fd;
    atomic_store(&pool_slots[slot].state, SLOT_FREE);
    return fd;
}

static void pool_dir(const char *sysfs_root, size_t page_size, char *dir, size_t len)
{
    snprintf(dir, len, "%s/kernel/mm/hugepages/hugepages-%zukB", sysfs_root ? sysfs_root : "/sys",
             page_size / 1024);
}

static int read_count(const char *dir, const char *name, uint64_t *out, char *err, size_t errlen)
{
    char path[512], buf[64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "re");
    if (!f)
        return llc_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
    const bool ok = fgets(buf, sizeof(buf), f) != NULL;
    fclose(f);
    char *end;
    errno = 0;
    const unsigned long long v = ok ? strtoull(buf, &end, 10) : 0;
    if (!ok || end == buf || errno)
        return llc_errf(err, errlen, -EIO, "%s: not a number", path);
    *out = v;
    return 0;
}

static int write_count(int fd, uint64_t v)
{
    char text[24];
    const int n = snprintf(text, sizeof(text), "%" PRIu64 "\n", v);
    const ssize_t w = pwrite(fd, text, (size_t)n, 0);
    if (w == n)
        return 0;
    return w < 0 ? -errno : -EIO;
}

int llc_pool_available(const char *sysfs_root, size_t page_size, uint64_t *available, char *err,
                       size_t errlen)
{
    char dir[384];
    pool_dir(sysfs_root, page_size, dir, sizeof(dir));
    if (access(dir, F_OK) != 0)
        return llc_errf(err, errlen, -ENOENT, "the kernel offers no %zu KiB hugepages (%s: %s)",
                        page_size / 1024, dir, strerror(errno));
    uint64_t free_pages, resv;
    int rc = read_count(dir, "free_hugepages", &free_pages, err, errlen);
    if (rc == 0)
        rc = read_count(dir, "resv_hugepages", &resv, err, errlen);
    if (rc < 0)
        return rc;
    *available = free_pages > resv ? free_pages - resv : 0;
    return 0;
}

int llc_pool_reserve(const char *sysfs_root, size_t page_size, uint64_t want,
                     struct llc_pool_reservation *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof(*res));
    res->slot = -1;
    uint64_t available;
    int rc = llc_pool_available(sysfs_root, page_size, &available, err, errlen);
    if (rc < 0 || available >= want)
        return rc;
    char dir[384];
    pool_dir(sysfs_root, page_size, dir, sizeof(dir));
    snprintf(res->path, sizeof(res->path), "%s/nr_hugepages", dir);
    rc = read_count(dir, "nr_hugepages", &res->before, err, errlen);
    if (rc < 0)
        return rc;
    const int fd = open(res->path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        return llc_errf(err, errlen, e == EACCES || e == EPERM ? -EPERM : -e,
                        "reserving %" PRIu64
                        " hugepages of %zu KiB needs root: cannot write %s (%s)",
                        want - available, page_size / 1024, res->path, strerror(e));
    }
    res->slot = slot_register(fd, res->before);
    if (res->slot < 0) {
        close(fd);
        return llc_errf(err, errlen, -EMFILE, "more than %d hugepage reservations at once",
                        POOL_SLOTS);
    }
    const uint64_t target = res->before + (want - available);
    rc = write_count(fd, target);
    if (rc < 0 && rc != -ENOMEM) {
        llc_errf(err, errlen, rc, "writing %" PRIu64 " to %s failed: %s", target, res->path,
                 strerror(-rc));
        goto fail;
    }
    rc = read_count(dir, "nr_hugepages", &res->after, err, errlen);
    if (rc < 0)
        goto fail;
    if (res->after < target) {
        rc = llc_errf(err, errlen, -ENOMEM,
                      "asked the kernel for %" PRIu64
                      " more %zu KiB hugepages (nr_hugepages %" PRIu64 " -> %" PRIu64
                      ") but it allocated only %" PRIu64 " (memory too fragmented or too little)",
                      want - available, page_size / 1024, res->before, target,
                      res->after > res->before ? res->after - res->before : 0);
        goto fail;
    }
    return 0;
fail:;
    char ignored[LLC_ERRLEN];
    llc_pool_restore(res, ignored, sizeof(ignored));
    return rc;
}

int llc_pool_restore(struct llc_pool_reservation *res, char *err, size_t errlen)
{
    if (res->slot < 0)
        return 0;
    const int fd = pool_slots[res->slot].fd;
    int rc = write_count(fd, res->before);
    close(slot_unregister(res->slot));
    res->slot = -1;
    if (rc < 0)
        return llc_errf(err, errlen, rc, "could not restore %s to %" PRIu64 ": %s; set it by hand",
                        res->path, res->before, strerror(-rc));
    char dir[448];
    snprintf(dir, sizeof(dir), "%s", res->path);
    *strrchr(dir, '/') = '\0';
    uint64_t now;
    rc = read_count(dir, "nr_hugepages", &now, err, errlen);
    if (rc < 0)
        return rc;
    if (now != res->before)
        return llc_errf(err, errlen, -EBUSY,
                        "wrote %" PRIu64 " to %s but it reads %" PRIu64
                        " (pages in use elsewhere stay as surplus until freed)",
                        res->before, res->path, now);
    return 0;
}
