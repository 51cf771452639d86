/* Arena lifecycle: choosing the page size, mapping, touching and locking. */
#include "arena/arena_internal.h"

#include "llcprobe/common.h"

#include <stddef.h> /* hugetlbfs.h uses size_t without including it */
#include <hugetlbfs.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

const char *llc_arena_page_name(enum llc_arena_page p)
{
    switch (p) {
    case LLC_ARENA_PAGE_2M:
        return "2 MiB";
    case LLC_ARENA_PAGE_1G:
        return "1 GiB";
    case LLC_ARENA_PAGE_SMALL:
        return "small";
    }
    return "?";
}

static size_t page_bytes(enum llc_arena_page p, size_t base_page)
{
    switch (p) {
    case LLC_ARENA_PAGE_2M:
        return (size_t)2 << 20;
    case LLC_ARENA_PAGE_1G:
        return (size_t)1 << 30;
    case LLC_ARENA_PAGE_SMALL:
        break;
    }
    return base_page;
}

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

static int map_small(struct llc_arena *a, size_t bytes, char *err, size_t errlen)
{
    a->page_size = a->base_page;
    a->size = round_up(bytes, a->page_size);
    void *p = mmap(NULL, a->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return llc_errf(err, errlen, -errno, "mmap of %zu bytes failed: %s", a->size,
                        strerror(errno));
    a->base = p;
    /* Transparent hugepages would silently change which address bits are
     * ours; keep the page size the one we report. */
    const bool no_thp = madvise(p, a->size, MADV_NOHUGEPAGE) == 0;
    snprintf(a->info.method, sizeof(a->info.method), "anonymous mmap of %zu-byte pages%s",
             a->page_size, no_thp ? " with transparent hugepages disabled for the range" : "");
    return 0;
}

/* libhugetlbfs allocates only the default hugepage size and only through a
 * hugetlbfs mount; anything else goes through MAP_HUGETLB directly. */
static int map_huge(struct llc_arena *a, size_t bytes, char *err, size_t errlen)
{
    a->size = round_up(bytes, a->page_size);
    const char *mount = hugetlbfs_find_path_for_size((long)a->page_size);
    if (mount && gethugepagesize() == (long)a->page_size) {
        void *p = get_huge_pages(a->size, GHP_DEFAULT);
        if (p) {
            a->base = p;
            a->from_libhugetlbfs = true;
            snprintf(a->info.method, sizeof(a->info.method),
                     "libhugetlbfs get_huge_pages() on the hugetlbfs mount %s", mount);
            return 0;
        }
    }
    const int shift = __builtin_ctzll(a->page_size);
    void *p = mmap(NULL, a->size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT), -1, 0);
    if (p == MAP_FAILED)
        return llc_errf(err, errlen, -errno, "mmap(MAP_HUGETLB) of %zu bytes failed: %s", a->size,
                        strerror(errno));
    a->base = p;
    snprintf(a->info.method, sizeof(a->info.method), "mmap(MAP_HUGETLB) directly, %s",
             mount ? "libhugetlbfs having failed to allocate on its mount"
                   : "there being no hugetlbfs mount of this page size for libhugetlbfs to use");
    return 0;
}

static void unmap(struct llc_arena *a)
{
    if (!a->base)
        return;
    if (a->from_libhugetlbfs)
        free_huge_pages(a->base);
    else
        munmap(a->base, a->size);
    a->base = NULL;
}

/* Tries one page size; on failure nothing stays mapped or reserved. */
static int try_page(struct llc_arena *a, size_t bytes, const struct llc_arena_options *opt,
                    enum llc_arena_page page, char *err, size_t errlen)
{
    a->info.page = page;
    a->page_size = page_bytes(page, a->base_page);
    if (page == LLC_ARENA_PAGE_SMALL)
        return map_small(a, bytes, err, errlen);
    const uint64_t need = round_up(bytes, a->page_size) / a->page_size;
    const char *name = llc_arena_page_name(page);
    int rc;
    if (opt->reserve) {
        const uint64_t want = opt->reserve == LLC_ARENA_RESERVE_NEEDED ? need : opt->reserve;
        rc = llc_pool_reserve(opt->sysfs_root, a->page_size, want, &a->pool, err, errlen);
        if (rc < 0)
            return rc;
        a->info.pool_before = a->pool.slot >= 0 ? a->pool.before : 0;
        a->info.pool_raised_to = a->pool.slot >= 0 ? a->pool.after : 0;
    }
    uint64_t available;
    rc = llc_pool_available(opt->sysfs_root, a->page_size, &available, err, errlen);
    if (rc < 0)
        goto fail;
    if (available < need) {
        rc = llc_errf(err, errlen, -ENOMEM,
                      "only %" PRIu64 " %s hugepages are free and %" PRIu64 " are needed%s",
                      available, name, need,
                      opt->reserve ? "" : " (reserve them as root with --reserve)");
        goto fail;
    }
    rc = map_huge(a, bytes, err, errlen);
    if (rc == 0)
        return 0;
fail:;
    char ignored[LLC_ERRLEN];
    llc_pool_restore(&a->pool, ignored, sizeof(ignored));
    a->info.pool_before = a->info.pool_raised_to = 0;
    return rc;
}

static void touch_and_lock(struct llc_arena *a, bool no_mlock)
{
    /* Writing faults in a private frame per page (a read could map the
     * shared zero page, whose frame every untouched page would report). */
    for (size_t off = 0; off < a->size; off += a->base_page)
        ((volatile char *)a->base)[off] = 0;
    const size_t n = sizeof(a->info.lock_note);
    if (no_mlock) {
        snprintf(a->info.lock_note, n, "not locked (mlock disabled by the caller)");
        return;
    }
    if (mlock(a->base, a->size) == 0) {
        a->info.locked = true;
        snprintf(a->info.lock_note, n, "locked in memory with mlock");
        return;
    }
    const int e = errno;
    struct rlimit rl = {0};
    getrlimit(RLIMIT_MEMLOCK, &rl);
    const bool huge = a->info.page != LLC_ARENA_PAGE_SMALL;
    if (rl.rlim_cur == RLIM_INFINITY)
        snprintf(a->info.lock_note, n, "mlock failed (%s)%s", strerror(e),
                 huge ? "; hugepages are never swapped anyway"
                      : ": pages may be swapped out or moved, changing their frames");
    else
        snprintf(a->info.lock_note, n, "mlock failed (%s; RLIMIT_MEMLOCK is %llu KiB)%s",
                 strerror(e), (unsigned long long)rl.rlim_cur / 1024,
                 huge ? "; hugepages are never swapped anyway"
                      : ": pages may be swapped out or moved, changing their frames");
}

int llc_arena_create(size_t bytes, const struct llc_arena_options *opt, struct llc_arena **out,
                     char *err, size_t errlen)
{
    *out = NULL;
    static const struct llc_arena_options defaults = {0};
    if (!opt)
        opt = &defaults;
    if (bytes == 0)
        return llc_errf(err, errlen, -EINVAL, "arena size must be positive");
    if ((unsigned)opt->page > LLC_ARENA_PAGE_SMALL)
        return llc_errf(err, errlen, -EINVAL, "unknown page size choice %d", (int)opt->page);
    struct llc_arena *a = calloc(1, sizeof(*a));
    if (!a)
        return llc_errf(err, errlen, -ENOMEM, "out of memory");
    a->pool.slot = -1;
    a->base_page = (size_t)sysconf(_SC_PAGESIZE);
    int rc;
    char first_reason[LLC_ERRLEN] = "";
    enum llc_arena_page page = opt->page;
    for (;;) {
        rc = try_page(a, bytes, opt, page, err, errlen);
        if (rc == 0 || rc == -EPERM || !opt->allow_fallback || page == LLC_ARENA_PAGE_SMALL)
            break;
        if (!first_reason[0])
            snprintf(first_reason, sizeof(first_reason), "%s", err);
        page = page == LLC_ARENA_PAGE_1G ? LLC_ARENA_PAGE_2M : LLC_ARENA_PAGE_SMALL;
    }
    if (rc < 0)
        goto out;
    if (page != opt->page) {
        a->info.fallback = true;
        snprintf(a->info.fallback_reason, sizeof(a->info.fallback_reason),
                 "%s pages unavailable (%s): using %s pages%s", llc_arena_page_name(opt->page),
                 first_reason, llc_arena_page_name(page),
                 page == LLC_ARENA_PAGE_SMALL
                     ? ", so set-index bits above the 4 KiB page offset are not ours and "
                       "congruence must be found by timing"
                     : "");
    }
    a->info.size = a->size;
    a->info.page_size = a->page_size;
    touch_and_lock(a, opt->no_mlock);
    a->n_frames = a->size / a->base_page;
    a->pfn = calloc(a->n_frames, sizeof(*a->pfn));
    if (!a->pfn) {
        rc = llc_errf(err, errlen, -ENOMEM, "out of memory for %zu frame numbers", a->n_frames);
        goto out;
    }
    /* An unreadable pagemap is recorded in info, not fatal: the in-page bits
     * are still known. */
    llc_arena_read_frames(a, NULL, 0);
    llc_arena_check_contiguity(a);
    *out = a;
    a = NULL;
    rc = 0;
out:
    if (a) {
        char ignored[LLC_ERRLEN];
        llc_arena_release(a, ignored, sizeof(ignored));
    }
    return rc;
}

int llc_arena_release(struct llc_arena *a, char *err, size_t errlen)
{
    if (!a)
        return 0;
    /* Unmap first: a pool shrunk under pages still in use keeps them as
     * surplus and would not read back as restored. */
    unmap(a);
    const int rc = llc_pool_restore(&a->pool, err, errlen);
    free(a->pfn);
    free(a);
    return rc;
}

void *llc_arena_base(const struct llc_arena *a)
{
    return a->base;
}

size_t llc_arena_size(const struct llc_arena *a)
{
    return a->size;
}

size_t llc_arena_page_size(const struct llc_arena *a)
{
    return a->page_size;
}

const struct llc_arena_info *llc_arena_info(const struct llc_arena *a)
{
    return &a->info;
}

bool llc_arena_frames_known(const struct llc_arena *a)
{
    return a->info.frames == LLC_ARENA_FRAMES_KNOWN;
}
